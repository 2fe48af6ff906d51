-- GpuPreAgg over star joins shaped like the Star Schema Benchmark's
-- (bench/ssb): char(n) dimension columns in the quals and the GROUP BY,
-- integer join keys, a fact table that is an Arrow file (record batches
-- sorted by date, as ssb.py load writes lineorder.arrow) or a heap table.
-- Every result is compared with pg_strom off.
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.gpu_context_cost = 0;
SET pg_strom.cpu_engine_in_service = on;
CREATE TABLE st_date AS
  SELECT (y * 10000 + 101 + d)::int AS d_datekey, y AS d_year
    FROM generate_series(1992, 1998) y, generate_series(0, 99) d;
CREATE TABLE st_supp (s_suppkey int, s_nation char(15), s_region char(12));
INSERT INTO st_supp SELECT k, 'NATION' || (k % 25), 'REGION' || (k % 25 / 5) FROM generate_series(1, 2000) k;
CREATE TABLE st_part (p_partkey int, p_category char(7), p_brand1 char(9));
INSERT INTO st_part SELECT k, 'MFGR#' || (k % 25 / 5 + 1) || (k % 5 + 1), 'MFGR#' || (k % 25 / 5 + 1) || (k % 5 + 1) || (k / 25 % 40 + 1)
  FROM generate_series(1, 20000) k;
ANALYZE st_date, st_supp, st_part;

-- The fact table as an Arrow file of 4 record batches of 30,000 rows
-- (one INSERT each), sorted by date.  The GPU service reads the columns
-- from the file itself, a whole record batch per chunk whatever
-- pg_strom.chunk_rows says, so a GpuPreAgg returns its partial groups per
-- record batch, and the planner counts them so (it counted them per
-- chunk_rows rows: 120 chunks here, each with every group, and put the
-- aggregation above a GpuJoin that forms every joined row instead).
\! rm -f /tmp/pgstrom_arrow_test/w/st_lo.arrow /tmp/pgstrom_arrow_test/w/st_lo.arrow.pgstrom-undo
CREATE FOREIGN TABLE st_lo (lo_orderdate int, lo_partkey int, lo_suppkey int, lo_revenue int) SERVER arrow_fdw
  OPTIONS (file '/tmp/pgstrom_arrow_test/w/st_lo.arrow', writable 'true');
INSERT INTO st_lo SELECT (1992 + i * 7 / 120000) * 10000 + 101 + i % 100, 1 + (i * 7919) % 20000, 1 + (i * 31) % 2000, i % 1000
  FROM generate_series(0, 29999) i;
INSERT INTO st_lo SELECT (1992 + i * 7 / 120000) * 10000 + 101 + i % 100, 1 + (i * 7919) % 20000, 1 + (i * 31) % 2000, i % 1000
  FROM generate_series(30000, 59999) i;
INSERT INTO st_lo SELECT (1992 + i * 7 / 120000) * 10000 + 101 + i % 100, 1 + (i * 7919) % 20000, 1 + (i * 31) % 2000, i % 1000
  FROM generate_series(60000, 89999) i;
INSERT INTO st_lo SELECT (1992 + i * 7 / 120000) * 10000 + 101 + i % 100, 1 + (i * 7919) % 20000, 1 + (i * 31) % 2000, i % 1000
  FROM generate_series(90000, 119999) i;
SELECT count(*) AS batches, sum(rows) AS rows FROM pgstrom.arrow_fdw_metadata_info('st_lo');
ANALYZE st_lo;
ALTER FOREIGN TABLE st_lo OPTIONS (ADD parallel_workers '2');
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET pg_strom.chunk_rows = 1000;
-- SSB Q4.1's shape: GROUP BY d_year, s_nation (char(15)) over three joins
SELECT * FROM explain_masked($$SELECT d_year, s_nation, sum(lo_revenue), count(*)
  FROM st_lo, st_date, st_supp, st_part
 WHERE lo_orderdate = d_datekey AND lo_suppkey = s_suppkey AND lo_partkey = p_partkey
   AND s_region = 'REGION1' AND p_category <> 'MFGR#55'
 GROUP BY d_year, s_nation$$);
CREATE TABLE st_q41 AS SELECT d_year, s_nation, sum(lo_revenue), count(*)
  FROM st_lo, st_date, st_supp, st_part
 WHERE lo_orderdate = d_datekey AND lo_suppkey = s_suppkey AND lo_partkey = p_partkey
   AND s_region = 'REGION1' AND p_category <> 'MFGR#55'
 GROUP BY d_year, s_nation;
SET pg_strom.enabled = off;
SELECT count(*) AS q41_differ FROM ((TABLE st_q41 EXCEPT ALL
  SELECT d_year, s_nation, sum(lo_revenue), count(*) FROM st_lo, st_date, st_supp, st_part
   WHERE lo_orderdate = d_datekey AND lo_suppkey = s_suppkey AND lo_partkey = p_partkey
     AND s_region = 'REGION1' AND p_category <> 'MFGR#55' GROUP BY d_year, s_nation)
  UNION ALL (SELECT d_year, s_nation, sum(lo_revenue), count(*) FROM st_lo, st_date, st_supp, st_part
   WHERE lo_orderdate = d_datekey AND lo_suppkey = s_suppkey AND lo_partkey = p_partkey
     AND s_region = 'REGION1' AND p_category <> 'MFGR#55' GROUP BY d_year, s_nation
  EXCEPT ALL TABLE st_q41)) x;
SELECT count(*) AS groups FROM st_q41;
SET pg_strom.enabled = on;
-- SSB Q2.2's shape: a range of char(9) brands, few rows estimated to
-- join and about as many groups.  A GpuJoin returning the joined rows
-- would have the backend read the record batches from the file to form
-- them (the GPU service reads its own copy of the columns); GpuPreAgg
-- returns groups made on the device, which the planner now counts in.
SELECT * FROM explain_masked($$SELECT d_year, p_brand1, sum(lo_revenue)
  FROM st_lo, st_date, st_part, st_supp
 WHERE lo_orderdate = d_datekey AND lo_partkey = p_partkey AND lo_suppkey = s_suppkey
   AND p_brand1 BETWEEN 'MFGR#2221' AND 'MFGR#2228' AND s_region = 'REGION4'
 GROUP BY d_year, p_brand1$$);
CREATE TABLE st_q22 AS SELECT d_year, p_brand1, sum(lo_revenue)
  FROM st_lo, st_date, st_part, st_supp
 WHERE lo_orderdate = d_datekey AND lo_partkey = p_partkey AND lo_suppkey = s_suppkey
   AND p_brand1 BETWEEN 'MFGR#2221' AND 'MFGR#2228' AND s_region = 'REGION4'
 GROUP BY d_year, p_brand1;
SET pg_strom.enabled = off;
SELECT count(*) AS q22_differ FROM ((TABLE st_q22 EXCEPT ALL
  SELECT d_year, p_brand1, sum(lo_revenue) FROM st_lo, st_date, st_part, st_supp
   WHERE lo_orderdate = d_datekey AND lo_partkey = p_partkey AND lo_suppkey = s_suppkey
     AND p_brand1 BETWEEN 'MFGR#2221' AND 'MFGR#2228' AND s_region = 'REGION4' GROUP BY d_year, p_brand1)
  UNION ALL (SELECT d_year, p_brand1, sum(lo_revenue) FROM st_lo, st_date, st_part, st_supp
   WHERE lo_orderdate = d_datekey AND lo_partkey = p_partkey AND lo_suppkey = s_suppkey
     AND p_brand1 BETWEEN 'MFGR#2221' AND 'MFGR#2228' AND s_region = 'REGION4' GROUP BY d_year, p_brand1
  EXCEPT ALL TABLE st_q22)) x;
SELECT count(*) AS groups FROM st_q22;
SET pg_strom.enabled = on;
-- SSB Q1.2's shape with a range of dates on the fact table (batches
-- skipped by their statistics).  The GPU service reads the columns
-- itself, so the device's work is the same whatever the number of
-- processes: it is costed as for the most workers the scan could have, in
-- the serial plan too.  (Costed undivided there, a device-heavy cost made
-- a parallel GpuScan under PostgreSQL's Hash Join and Aggregate look
-- cheaper; a higher gpu_tuple_cost shows it at this size.)
SET pg_strom.gpu_tuple_cost = 0.05;
SELECT * FROM explain_masked($$SELECT sum(lo_revenue) FROM st_lo, st_date
 WHERE lo_orderdate = d_datekey AND d_year = 1994 AND lo_orderdate BETWEEN 19940101 AND 19940131$$);
SELECT sum(lo_revenue), count(*) FROM st_lo, st_date
 WHERE lo_orderdate = d_datekey AND d_year = 1994 AND lo_orderdate BETWEEN 19940101 AND 19940131;
SET pg_strom.enabled = off;
SELECT sum(lo_revenue), count(*) FROM st_lo, st_date
 WHERE lo_orderdate = d_datekey AND d_year = 1994 AND lo_orderdate BETWEEN 19940101 AND 19940131;
SET pg_strom.enabled = on;
RESET pg_strom.gpu_tuple_cost;
RESET pg_strom.chunk_rows;
RESET parallel_setup_cost;
RESET max_parallel_workers_per_gather;

-- The same fact table as a heap table, all-visible: char(n) dimension
-- columns in the quals and the GROUP BY plan as text ones do; the same
-- query over text copies of the dimensions plans alike.  (At this scale,
-- with chunks of 1000 rows each returning every group, the partial groups'
-- keys read from the dimensions' rows on the host cost more than the
-- combined GROUP BY saves: a GpuJoin under PostgreSQL's HashAggregate.)
CREATE TABLE st_heap AS SELECT * FROM st_lo;
VACUUM (FREEZE, ANALYZE) st_heap;
CHECKPOINT;
CREATE TABLE st_supp_t AS SELECT s_suppkey, s_nation::text AS s_nation, s_region::text AS s_region FROM st_supp;
CREATE TABLE st_part_t AS SELECT p_partkey, p_category::text AS p_category, p_brand1::text AS p_brand1 FROM st_part;
ANALYZE st_supp_t, st_part_t;
SET max_parallel_workers_per_gather = 0;
-- SSB Q3.1's shape (two char(15) grouping columns of two dimensions)
SELECT * FROM explain_masked($$SELECT s_nation, p_category, d_year, sum(lo_revenue) FROM st_heap, st_supp, st_part, st_date
 WHERE lo_suppkey = s_suppkey AND lo_partkey = p_partkey AND lo_orderdate = d_datekey
   AND s_region = 'REGION2' AND p_category >= 'MFGR#3' GROUP BY s_nation, p_category, d_year$$);
-- the same with text columns: the grouping keys read from the dimensions'
-- rows on the host cost a GpuPreAgg more per byte, and so few joined rows
-- come back from the heap direct path here that a GpuJoin under
-- PostgreSQL's aggregation costs less
SELECT * FROM explain_masked($$SELECT s_nation, p_category, d_year, sum(lo_revenue) FROM st_heap, st_supp_t, st_part_t, st_date
 WHERE lo_suppkey = s_suppkey AND lo_partkey = p_partkey AND lo_orderdate = d_datekey
   AND s_region = 'REGION2' AND p_category >= 'MFGR#3' GROUP BY s_nation, p_category, d_year$$);
CREATE TABLE st_q31 AS SELECT s_nation, p_category, d_year, sum(lo_revenue) FROM st_heap, st_supp, st_part, st_date
 WHERE lo_suppkey = s_suppkey AND lo_partkey = p_partkey AND lo_orderdate = d_datekey
   AND s_region = 'REGION2' AND p_category >= 'MFGR#3' GROUP BY s_nation, p_category, d_year;
CREATE TABLE st_q31t AS SELECT s_nation, p_category, d_year, sum(lo_revenue) FROM st_heap, st_supp_t, st_part_t, st_date
 WHERE lo_suppkey = s_suppkey AND lo_partkey = p_partkey AND lo_orderdate = d_datekey
   AND s_region = 'REGION2' AND p_category >= 'MFGR#3' GROUP BY s_nation, p_category, d_year;
SET pg_strom.enabled = off;
SELECT count(*) AS q31_differ FROM ((TABLE st_q31 EXCEPT ALL
  SELECT s_nation, p_category, d_year, sum(lo_revenue) FROM st_heap, st_supp, st_part, st_date
   WHERE lo_suppkey = s_suppkey AND lo_partkey = p_partkey AND lo_orderdate = d_datekey
     AND s_region = 'REGION2' AND p_category >= 'MFGR#3' GROUP BY s_nation, p_category, d_year)
  UNION ALL (SELECT s_nation, p_category, d_year, sum(lo_revenue) FROM st_heap, st_supp, st_part, st_date
   WHERE lo_suppkey = s_suppkey AND lo_partkey = p_partkey AND lo_orderdate = d_datekey
     AND s_region = 'REGION2' AND p_category >= 'MFGR#3' GROUP BY s_nation, p_category, d_year
  EXCEPT ALL TABLE st_q31)) x;
-- (bpchar's output is padded to its length, text's not)
SELECT count(*) AS q31_text_differ FROM ((SELECT s_nation::text, p_category::text, d_year, sum FROM st_q31 EXCEPT ALL TABLE st_q31t)
  UNION ALL (TABLE st_q31t EXCEPT ALL SELECT s_nation::text, p_category::text, d_year, sum FROM st_q31)) x;
SELECT count(*) AS groups FROM st_q31;
SET pg_strom.enabled = on;
RESET max_parallel_workers_per_gather;
RESET pg_strom.cpu_engine_in_service;
RESET pg_strom.gpu_context_cost;
RESET pg_strom.gpu_setup_cost;
DROP FOREIGN TABLE st_lo;
\! rm -f /tmp/pgstrom_arrow_test/w/st_lo.arrow /tmp/pgstrom_arrow_test/w/st_lo.arrow.pgstrom-undo
