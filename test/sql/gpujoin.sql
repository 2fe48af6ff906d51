-- GpuJoin: plans and EXPLAIN fields (the differential tests of every join
-- type are in test/diff/queries/gpujoin_*.sql).
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.gpu_context_cost = 0;
SET max_parallel_workers_per_gather = 0;
-- (GpuPreAgg, which would take the aggregates over these joins, has its
-- own test: gpupreagg.sql)
SET pg_strom.enable_gpupreagg = off;
CREATE TABLE gj_t0 AS SELECT i AS id, i % 1200 AS aid, (i % 97)::float8 AS ax
  FROM generate_series(1, 50000) i;
CREATE TABLE gj_t1 AS SELECT i AS aid, 'cat' || (i % 7) AS cat FROM generate_series(0, 999) i;
CREATE TABLE gj_t2 AS SELECT i AS bid, 'b' || i AS bname FROM generate_series(0, 9) i;
ANALYZE gj_t0, gj_t1, gj_t2;


-- PG-Strom's write-ups' query
SELECT * FROM explain_masked('SELECT cat, count(*), avg(ax) FROM gj_t0 NATURAL JOIN gj_t1 GROUP BY cat');
-- (avg rounded: the join returns rows in any order, float sums vary in the last bits)
SELECT cat, count(*), round(avg(ax)::numeric, 9) FROM gj_t0 NATURAL JOIN gj_t1 GROUP BY cat ORDER BY cat;

-- two dimensions in one node, a scan qual, a nested-loop depth
SELECT * FROM explain_masked('SELECT t0.id, t1.cat, t2.bname FROM gj_t0 t0
  JOIN gj_t1 t1 ON t0.aid = t1.aid JOIN gj_t2 t2 ON t0.id % 10 < t2.bid WHERE t0.ax > 90');

-- actual rows per depth, LEFT join keeping the unmatched outer rows
SELECT * FROM explain_masked('SELECT t0.id, t1.cat FROM gj_t0 t0 LEFT JOIN gj_t1 t1 ON t0.aid = t1.aid',
                         'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF');

-- RIGHT join: unmatched inner rows are counted
SELECT * FROM explain_masked('SELECT t0.id, t1.cat FROM gj_t0 t0 RIGHT JOIN gj_t1 t1 ON t0.aid = t1.aid + 2000',
                         'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF');

-- a join qual without a device function keeps the join on the CPU
SELECT * FROM explain_masked('SELECT t0.id FROM gj_t0 t0 JOIN gj_t1 t1 ON md5(t0.aid::text) = md5(t1.aid::text)');

-- join quals (of an inner join) and scan quals without a device function
-- stay on the host (Filter), evaluated on the rows the device joins; the
-- same rows as PostgreSQL's
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_nestloop = off;
CREATE TEMP VIEW gj_host AS
  SELECT t0.id, t1.cat FROM gj_t0 t0 JOIN gj_t1 t1 ON t0.aid = t1.aid AND md5(t0.id::text) > md5(t1.cat)
   WHERE md5(t0.ax::text) < '8' AND md5(t1.cat) < 'c' AND t0.id % 3 = 0;
SELECT * FROM explain_masked('SELECT * FROM gj_host');
CREATE TEMP TABLE gj_host_strom AS SELECT * FROM gj_host;
-- a correlated sub-query in the join quals (TPC-H Q17's shape)
CREATE TEMP VIEW gj_host_sub AS
  SELECT t0.id, t1.aid FROM gj_t0 t0 JOIN gj_t1 t1 ON t0.aid = t1.aid
   WHERE t1.cat = 'cat3' AND t0.id % 7 < (SELECT count(*) FROM gj_t2 WHERE gj_t2.bid < t1.aid % 10);
SELECT * FROM explain_masked('SELECT * FROM gj_host_sub');
CREATE TEMP TABLE gj_host_sub_strom AS SELECT * FROM gj_host_sub;
-- an outer join's quals and a RIGHT join's scanned side keep theirs on the
-- device or the join on the CPU
CREATE TEMP VIEW gj_host_left AS
  SELECT t0.id, t1.cat FROM gj_t0 t0 LEFT JOIN gj_t1 t1 ON t0.aid = t1.aid AND md5(t0.id::text) > md5(t1.cat);
SELECT count(*) FILTER (WHERE ln ~ 'GpuJoin') AS gpujoin_nodes FROM explain_masked('SELECT * FROM gj_host_left') ln;
CREATE TEMP TABLE gj_host_left_strom AS SELECT * FROM gj_host_left;
CREATE TEMP VIEW gj_host_right AS
  SELECT t0.id, t1.cat FROM (SELECT * FROM gj_t0 WHERE md5(ax::text) < '8') t0 RIGHT JOIN gj_t1 t1 ON t0.aid = t1.aid;
SELECT * FROM explain_masked('SELECT * FROM gj_host_right');
CREATE TEMP TABLE gj_host_right_strom AS SELECT * FROM gj_host_right;
SET pg_strom.enabled = off;
SELECT (SELECT count(*) FROM gj_host_strom) AS rows,
       (SELECT count(*) FROM (SELECT * FROM gj_host_strom EXCEPT ALL SELECT * FROM gj_host) d) AS only_strom,
       (SELECT count(*) FROM (SELECT * FROM gj_host EXCEPT ALL SELECT * FROM gj_host_strom) d) AS only_pg;
SELECT (SELECT count(*) FROM gj_host_sub_strom) AS rows,
       (SELECT count(*) FROM (SELECT * FROM gj_host_sub_strom EXCEPT ALL SELECT * FROM gj_host_sub) d) AS only_strom,
       (SELECT count(*) FROM (SELECT * FROM gj_host_sub EXCEPT ALL SELECT * FROM gj_host_sub_strom) d) AS only_pg;
SELECT (SELECT count(*) FROM gj_host_left_strom) AS rows,
       (SELECT count(*) FROM (SELECT * FROM gj_host_left_strom EXCEPT ALL SELECT * FROM gj_host_left) d) AS only_strom,
       (SELECT count(*) FROM (SELECT * FROM gj_host_left EXCEPT ALL SELECT * FROM gj_host_left_strom) d) AS only_pg;
SELECT (SELECT count(*) FROM gj_host_right_strom) AS rows,
       (SELECT count(*) FROM (SELECT * FROM gj_host_right_strom EXCEPT ALL SELECT * FROM gj_host_right) d) AS only_strom,
       (SELECT count(*) FROM (SELECT * FROM gj_host_right EXCEPT ALL SELECT * FROM gj_host_right_strom) d) AS only_pg;
RESET pg_strom.enabled;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_nestloop;
DROP VIEW gj_host, gj_host_sub, gj_host_left, gj_host_right;
DROP TABLE gj_host_strom, gj_host_sub_strom, gj_host_left_strom, gj_host_right_strom;

-- system columns and the whole row of the scanned relation (they used to
-- crash the backend), with rows kept as TIDs (few returned per chunk) and
-- with pages copied: the same rows as PostgreSQL's
SET pg_strom.chunk_rows = 5000;
SELECT * FROM explain_masked('SELECT t0.ctid, t0.tableoid::regclass, t0, t1.cat FROM gj_t0 t0 JOIN gj_t1 t1 ON t0.aid = t1.aid WHERE t0.ax < 2');
CREATE TEMP TABLE gj_sys AS
  SELECT t0.ctid AS tid, t0.tableoid::regclass AS rel, t0 AS r, t1.cat FROM gj_t0 t0 JOIN gj_t1 t1 ON t0.aid = t1.aid WHERE t0.ax < 2
  UNION ALL
  SELECT t0.ctid, t0.tableoid::regclass, t0, t1.cat FROM gj_t0 t0 JOIN gj_t1 t1 ON t0.aid = t1.aid WHERE t0.ax > 2;
SET pg_strom.enabled = off;
SELECT count(*) AS rows, (SELECT count(*) FROM (SELECT * FROM gj_sys EXCEPT ALL
  SELECT t0.ctid, t0.tableoid::regclass, t0, t1.cat FROM gj_t0 t0 JOIN gj_t1 t1 ON t0.aid = t1.aid WHERE t0.ax <> 2) d) AS missing_in_pg,
  (SELECT count(*) FROM (SELECT t0.ctid, t0.tableoid::regclass, t0, t1.cat FROM gj_t0 t0 JOIN gj_t1 t1 ON t0.aid = t1.aid WHERE t0.ax <> 2
   EXCEPT ALL SELECT * FROM gj_sys) d) AS missing_in_strom
  FROM gj_sys;
RESET pg_strom.enabled;
RESET pg_strom.chunk_rows;
DROP TABLE gj_sys;

-- enable_gpujoin = off
-- A parameter expression that raises an error is evaluated once on the
-- CPU; PostgreSQL never reaches it when an OR is decided first, so neither
-- do the device programs: no error.  Where a row needs it, the error is
-- PostgreSQL's.
-- (the scan's GpuScan forced: PostgreSQL's seq scan, whose OR stops at
-- `id > 0`, is cheaper)
SET plan_cache_mode = force_generic_plan;
SET enable_seqscan = off;
PREPARE hoist_scan(int) AS SELECT count(*) FROM gj_t0 WHERE id > 0 OR ax > 100 / $1;
SELECT * FROM explain_masked('EXECUTE hoist_scan(0)');
EXECUTE hoist_scan(0);
RESET enable_seqscan;
PREPARE hoist_join(int) AS
  SELECT count(*) FROM gj_t0 t0 JOIN gj_t1 t1 ON t0.aid = t1.aid WHERE t0.id > 0 OR t1.aid > 100 / $1;
SELECT * FROM explain_masked('EXECUTE hoist_join(0)');
EXECUTE hoist_join(0);
PREPARE hoist_join_err(int) AS
  SELECT count(*) FROM gj_t0 t0 JOIN gj_t1 t1 ON t0.aid = t1.aid WHERE t0.id > 10 OR t1.aid > 100 / $1;
EXECUTE hoist_join_err(0);
EXECUTE hoist_join_err(5);
SET pg_strom.enabled = off;
EXECUTE hoist_join_err(5);
RESET pg_strom.enabled;
DEALLOCATE ALL;
RESET plan_cache_mode;

SET pg_strom.enable_gpujoin = off;
SELECT * FROM explain_masked('SELECT t0.id FROM gj_t0 t0 JOIN gj_t1 t1 ON t0.aid = t1.aid');
RESET pg_strom.enable_gpujoin;

-- a partitioned table joined with a plain one: a GpuJoin per partition
-- under PostgreSQL's Append; the partitions after the first take its
-- inner rows (their Seq Scans never run) and attach to its build
CREATE TABLE gj_part (k int, v int) PARTITION BY RANGE (k);
CREATE TABLE gj_part_0 PARTITION OF gj_part FOR VALUES FROM (0) TO (400);
CREATE TABLE gj_part_1 PARTITION OF gj_part FOR VALUES FROM (400) TO (800);
CREATE TABLE gj_part_d PARTITION OF gj_part DEFAULT;
INSERT INTO gj_part SELECT i % 1300, i FROM generate_series(1, 30000) i;
ANALYZE gj_part;
SELECT * FROM explain_masked('SELECT t2.bname, p.v FROM gj_part p JOIN gj_t2 t2 ON p.k % 10 = t2.bid');
SELECT * FROM explain_masked('SELECT count(*), sum(p.v), max(t2.bname) FROM gj_part p JOIN gj_t2 t2 ON p.k % 10 = t2.bid',
                             'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF');
SELECT t2.bname, count(*), sum(p.v) FROM gj_part p JOIN gj_t2 t2 ON p.k % 10 = t2.bid GROUP BY 1 ORDER BY 1;
SET pg_strom.enabled = off;
SELECT t2.bname, count(*), sum(p.v) FROM gj_part p JOIN gj_t2 t2 ON p.k % 10 = t2.bid GROUP BY 1 ORDER BY 1;
RESET pg_strom.enabled;
-- each partition reads its own with shared_inner_tables off
SET pg_strom.shared_inner_tables = off;
SELECT * FROM explain_masked('SELECT count(*), sum(p.v), max(t2.bname) FROM gj_part p JOIN gj_t2 t2 ON p.k % 10 = t2.bid',
                             'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF');
RESET pg_strom.shared_inner_tables;
-- several partitions at once: a Parallel Append of the partitions' nodes,
-- each run whole by one process (the plans with the costs of parallel
-- query set to nothing; which process runs which partition varies, so
-- only the plan and the answers are shown)
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.gpu_context_cost = 0;
SET pg_strom.heap_gather_cost = 0;
SET max_parallel_workers_per_gather = 2;
SELECT * FROM explain_masked('SELECT count(*), sum(p.v), max(t2.bname) FROM gj_part p JOIN gj_t2 t2 ON p.k % 10 = t2.bid');
SELECT * FROM explain_masked('SELECT t2.bname, p.v FROM gj_part p JOIN gj_t2 t2 ON p.k % 10 = t2.bid WHERE p.v % 997 = 1');
-- (bigger partitions; a GpuPreAgg per partition where the costs choose
-- it: the answers)
CREATE TABLE gj_ppart (k int, v int, d int) PARTITION BY RANGE (k);
CREATE TABLE gj_ppart_0 PARTITION OF gj_ppart FOR VALUES FROM (0) TO (1000);
CREATE TABLE gj_ppart_1 PARTITION OF gj_ppart FOR VALUES FROM (1000) TO (2000);
CREATE TABLE gj_ppart_2 PARTITION OF gj_ppart FOR VALUES FROM (2000) TO (3000);
CREATE TABLE gj_ppart_d PARTITION OF gj_ppart DEFAULT;
INSERT INTO gj_ppart SELECT i % 4000, i, i % 100 FROM generate_series(1, 400000) i;
VACUUM ANALYZE gj_ppart;
SET pg_strom.gpu_operator_cost = 0.00015625;
SET pg_strom.gpu_tuple_cost = 0.002;
SELECT same_as_off(q) FROM (VALUES
  ('SELECT t2.bname, count(*), sum(p.v) FROM gj_ppart p JOIN gj_t2 t2 ON p.d % 10 = t2.bid GROUP BY 1'),
  ('SELECT p.k % 10, count(*), sum(p.v) FROM gj_ppart p WHERE p.v > 10 GROUP BY 1'),
  ('SELECT p.k % 10, count(*), sum(p.v) FROM gj_ppart p WHERE p.v > 10 AND p.k >= 1000 GROUP BY 1')
) AS v(q);
RESET pg_strom.gpu_operator_cost;
RESET pg_strom.gpu_tuple_cost;
DROP TABLE gj_ppart;
SELECT same_as_off(q) FROM (VALUES
  ('SELECT count(*), sum(p.v), max(t2.bname) FROM gj_part p JOIN gj_t2 t2 ON p.k % 10 = t2.bid'),
  ('SELECT t2.bname, count(*), sum(p.v) FROM gj_part p JOIN gj_t2 t2 ON p.k % 10 = t2.bid GROUP BY 1'),
  ('SELECT t2.bname, p.v FROM gj_part p JOIN gj_t2 t2 ON p.k % 10 = t2.bid WHERE p.v % 997 = 1'),
  ('SELECT p.k % 7, count(*), sum(p.v) FROM gj_part p WHERE p.v > 100 GROUP BY 1'),
  -- partitions pruned, one left: no Parallel Append
  ('SELECT count(*), sum(p.v) FROM gj_part p JOIN gj_t2 t2 ON p.k % 10 = t2.bid WHERE p.k < 300')
) AS v(q);
-- EXPLAIN ANALYZE: a partition's node run by a worker says so (the
-- leader takes none here)
SET parallel_leader_participation = off;
CREATE FUNCTION gj_run_by() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) SELECT count(*), sum(p.v) FROM gj_part p JOIN gj_t2 t2 ON p.k % 10 = t2.bid' LOOP
    IF line ~ 'Run By|Parallel Append' THEN RETURN NEXT regexp_replace(line, '\(actual.*', ''); END IF;
  END LOOP;
END $$;
SELECT DISTINCT trim(g) FROM gj_run_by() g;
DROP FUNCTION gj_run_by();
RESET parallel_leader_participation;
-- PostgreSQL's enable_parallel_append: the serial Append
SET enable_parallel_append = off;
SELECT * FROM explain_masked('SELECT t2.bname, count(*), sum(p.v) FROM gj_part p JOIN gj_t2 t2 ON p.k % 10 = t2.bid GROUP BY 1');
RESET enable_parallel_append;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET pg_strom.gpu_setup_cost;
RESET pg_strom.gpu_context_cost;
RESET pg_strom.heap_gather_cost;
RESET max_parallel_workers_per_gather;
-- a RIGHT join's unmatched inner rows would come once per partition: no
-- GpuJoin per partition
SELECT * FROM explain_masked('SELECT t2.bname, p.v FROM gj_part p RIGHT JOIN gj_t2 t2 ON p.k % 10 = t2.bid');
DROP TABLE gj_part;
DROP TABLE gj_t0, gj_t1, gj_t2;
