-- GpuPreAgg merges a process's partial groups across its chunks where the
-- groups can be told apart and their states combined exactly: each
-- process returns one partial state per group, not one per group and
-- chunk.  Every answer equals PostgreSQL's; float sums are compared
-- rounded to 6 digits (the order of float additions differs).
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.gpu_context_cost = 0;
SET pg_strom.heap_gather_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET pg_strom.chunk_rows = 1000;
CREATE TABLE pm_fact AS
  SELECT i AS id, i % 37 AS k, (i % 5 = 0) AS flag, i % 200 AS dkey,
         CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 7919) % 1000 - 500 END AS v,
         (i % 13) * 0.25::float8 AS f,
         make_interval(days => i % 3, secs => i % 60) AS iv
  FROM generate_series(1, 30000) i;
CREATE TABLE pm_dim AS SELECT i AS dkey, 'name' || (i % 9) AS name, ('c' || (i % 4))::char(4) AS code
  FROM generate_series(0, 199) i;
ANALYZE pm_fact, pm_dim;

-- integer keys, NULL keys, counts, sums, min/max (with FILTER: chunks
-- where a group has no row passing it), interval sums
SELECT * FROM explain_masked('SELECT k, flag, count(*), count(v), sum(v), min(v), max(v) FILTER (WHERE flag),
    sum(f), min(f), max(f), sum(iv) FROM pm_fact GROUP BY k, flag',
  'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF')
  WHERE explain_masked ~ 'GpuPreAgg|Partial Groups|GPU Chunks';
CREATE TEMP TABLE pm_a AS SELECT k, flag, count(*) AS n, count(v) AS nv, sum(v) AS s, min(v) AS lo,
    max(v) FILTER (WHERE flag) AS hi, round(sum(f)::numeric, 6) AS sf, min(f) AS lf, max(f) AS hf, sum(iv) AS si
  FROM pm_fact GROUP BY k, flag;
CREATE TEMP TABLE pm_b AS SELECT k % 3 AS k3, count(*) AS n, sum(v) AS s FROM pm_fact GROUP BY k % 3;
-- text and char(n) keys of an inner relation: groups known by the inner row
SELECT * FROM explain_masked('SELECT d.name, d.code, count(*), sum(f.v) FROM pm_fact f JOIN pm_dim d ON f.dkey = d.dkey
  GROUP BY d.name, d.code', 'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF')
  WHERE explain_masked ~ 'GpuPreAgg|Partial Groups|GPU Chunks';
CREATE TEMP TABLE pm_c AS SELECT d.name, d.code, count(*) AS n, sum(f.v) AS s
  FROM pm_fact f JOIN pm_dim d ON f.dkey = d.dkey GROUP BY d.name, d.code;
-- a text key of the scanned table's rows: not merged (one state per chunk)
CREATE TABLE pm_text AS SELECT i, 'g' || (i % 7) AS g FROM generate_series(1, 20000) i;
ANALYZE pm_text;
SELECT * FROM explain_masked('SELECT g, count(*) FROM pm_text GROUP BY g',
  'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF')
  WHERE explain_masked ~ 'GpuPreAgg|Partial Groups|GPU Chunks';
CREATE TEMP TABLE pm_d AS SELECT g, count(*) AS n FROM pm_text GROUP BY g;
-- more groups than work_mem holds (here about 6,900): returned in several
-- sets; a key recurs only 40 chunks later, after its set was returned,
-- so every chunk's groups go up (the Finalize Aggregate combines them).
-- The planner knows it and keeps PostgreSQL's plan, which the disabled
-- Seq Scan turns down here.
CREATE TABLE pm_many AS SELECT i, i % 40000 AS g, i % 97 AS v FROM generate_series(1, 100000) i;
ANALYZE pm_many;
SET work_mem = '1MB';
SET enable_sort = off;
SET enable_seqscan = off;
SELECT * FROM explain_masked('SELECT g, count(*), sum(v) FROM pm_many GROUP BY g',
  'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF')
  WHERE explain_masked ~ 'GpuPreAgg|Partial Groups|GPU Chunks';
CREATE TEMP TABLE pm_e AS SELECT g, count(*) AS n, sum(v) AS s FROM pm_many GROUP BY g;
RESET enable_seqscan;
RESET enable_sort;
RESET work_mem;

SET pg_strom.enabled = off;
SELECT 'a' AS t, count(*) AS groups, (SELECT count(*) FROM (SELECT * FROM pm_a EXCEPT ALL
  SELECT k, flag, count(*), count(v), sum(v), min(v), max(v) FILTER (WHERE flag), round(sum(f)::numeric, 6), min(f), max(f), sum(iv)
  FROM pm_fact GROUP BY k, flag) x) AS differ FROM pm_a
UNION ALL
SELECT 'b', count(*), (SELECT count(*) FROM (SELECT * FROM pm_b EXCEPT ALL
  SELECT k % 3, count(*), sum(v) FROM pm_fact GROUP BY k % 3) x) FROM pm_b
UNION ALL
SELECT 'c', count(*), (SELECT count(*) FROM (SELECT * FROM pm_c EXCEPT ALL
  SELECT d.name, d.code, count(*), sum(f.v) FROM pm_fact f JOIN pm_dim d ON f.dkey = d.dkey GROUP BY d.name, d.code) x) FROM pm_c
UNION ALL
SELECT 'd', count(*), (SELECT count(*) FROM (SELECT * FROM pm_d EXCEPT ALL
  SELECT g, count(*) FROM pm_text GROUP BY g) x) FROM pm_d
UNION ALL
SELECT 'e', count(*), (SELECT count(*) FROM (SELECT * FROM pm_e EXCEPT ALL
  SELECT g, count(*), sum(v) FROM pm_many GROUP BY g) x) FROM pm_e;
RESET pg_strom.enabled;

-- numeric sums and averages: merged exactly, with PostgreSQL's display
-- scale (the largest of the values' scales, counted as numeric_avg_accum
-- counts it), NaN among the values; compared as text, so that 1.50 and
-- 1.500 differ
CREATE TABLE pm_num AS
  SELECT i, i % 37 AS k,
         CASE WHEN i % 101 = 0 THEN 'NaN' WHEN i % 13 = 0 THEN NULL
              ELSE ((i * 7919) % 100000 - 50000) / 100.0 END::numeric(15,2) AS p
  FROM generate_series(1, 30000) i;
ANALYZE pm_num;
SELECT * FROM explain_masked('SELECT k, count(p), sum(p), avg(p), sum(CASE WHEN i % 3 = 0 THEN p ELSE p * 0.5 END)
  FROM pm_num WHERE i % 101 <> 0 OR k < 5 GROUP BY k',
  'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF')
  WHERE explain_masked ~ 'GpuPreAgg|Partial Groups|GPU Chunks';
CREATE TEMP TABLE pm_f AS SELECT k, count(p) AS n, sum(p)::text AS s, avg(p)::text AS a,
    sum(CASE WHEN i % 3 = 0 THEN p ELSE p * 0.5 END)::text AS s2
  FROM pm_num WHERE i % 101 <> 0 OR k < 5 GROUP BY k;
SET pg_strom.enabled = off;
SELECT count(*) AS groups, (SELECT count(*) FROM (SELECT * FROM pm_f EXCEPT ALL
  SELECT k, count(p), sum(p)::text, avg(p)::text, sum(CASE WHEN i % 3 = 0 THEN p ELSE p * 0.5 END)::text
  FROM pm_num WHERE i % 101 <> 0 OR k < 5 GROUP BY k) x) AS differ,
  count(*) FILTER (WHERE s = 'NaN') AS nan_groups FROM pm_f;
RESET pg_strom.enabled;

-- a float sum whose chunks' partial sums are finite but overflow when
-- combined: left to the Finalize Aggregate, which raises PostgreSQL's error
CREATE TABLE pm_big AS SELECT i, CASE WHEN i IN (10, 2500) THEN 1e308::float8 ELSE 1::float8 END AS x
  FROM generate_series(1, 3000) i;
ANALYZE pm_big;
SELECT * FROM explain_masked('SELECT i % 1, sum(x) FROM pm_big GROUP BY 1') WHERE explain_masked ~ 'GpuPreAgg';
SELECT i % 1, sum(x) FROM pm_big GROUP BY 1;
SET pg_strom.enabled = off;
SELECT i % 1, sum(x) FROM pm_big GROUP BY 1;
RESET pg_strom.enabled;

-- a chunk's groups are distinct among themselves (the device merged
-- them): whether merging across chunks pays is judged at a later chunk, by
-- the share of its groups that merged.  Here every key is in chunk 1, half
-- of chunk 2's and all of chunk 3's keys were seen before (TPC-H Q13's
-- customers, spread over `orders`): 150000 partial groups, not 300000
SET pg_strom.chunk_rows = 100000;
SET work_mem = '64MB';
CREATE TABLE pm_spread AS SELECT i, (i::int8 * 7919) % 150000 AS k FROM generate_series(1, 300000) i;
ANALYZE pm_spread;
SELECT * FROM explain_masked('SELECT k, count(*), sum(i) FROM pm_spread GROUP BY k',
  'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF')
  WHERE explain_masked ~ 'GpuPreAgg|Partial Groups|GPU Chunks';
CREATE TEMP TABLE pm_s AS SELECT k, count(*) AS n, sum(i) AS s FROM pm_spread GROUP BY k;
SET pg_strom.enabled = off;
SELECT count(*) AS groups, (SELECT count(*) FROM (SELECT * FROM pm_s EXCEPT ALL
  SELECT k, count(*), sum(i) FROM pm_spread GROUP BY k) x) AS differ FROM pm_s;
RESET pg_strom.enabled;
RESET pg_strom.chunk_rows;
RESET work_mem;

DROP TABLE pm_fact, pm_dim, pm_text, pm_many, pm_big, pm_num, pm_spread;
