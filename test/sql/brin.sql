-- BRIN indexes: GpuScan, GpuJoin and GpuPreAgg over a heap table skip
-- the block ranges a BRIN index rules out for the scan's quals.  EXPLAIN
-- shows `BRIN cond` and `BRIN index`, ANALYZE `BRIN ranges`; every answer
-- equals PostgreSQL's (pg_strom off).  (A concurrent writer and
-- brin_summarize_new_values: the isolation test brin_mvcc.)
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.gpu_context_cost = 0;
SET pg_strom.gpu_tuple_cost = 0;
SET pg_strom.heap_gather_cost = 0;
SET pg_strom.cpu_engine_in_service = on;
SET max_parallel_workers_per_gather = 0;
SET enable_bitmapscan = off;
-- rows in time order (a log): each range of 8 blocks holds a narrow span
-- of every column; NULLs in each column now and then
CREATE TABLE bl (id int, d date, ts timestamp, tz timestamptz, n numeric(12,2), k int, v int, pad text)
  WITH (autovacuum_enabled = off);
INSERT INTO bl SELECT i,
  CASE WHEN i % 997 = 0 THEN NULL ELSE date '2015-01-01' + i / 100 END,
  CASE WHEN i % 991 = 0 THEN NULL ELSE timestamp '2015-01-01' + i * interval '15 minutes' END,
  CASE WHEN i % 983 = 0 THEN NULL ELSE timestamptz '2015-01-01 00:00+00' + i * interval '15 minutes' END,
  CASE WHEN i % 977 = 0 THEN NULL ELSE i / 4.0 END,
  i / 1000, i % 97, repeat('p', 60)
FROM generate_series(1, 200000) i;
CREATE INDEX bl_brin ON bl USING brin (id, d, ts, tz, n) WITH (pages_per_range = 8);
CALL quiet_wait();
VACUUM (FREEZE, ANALYZE) bl;

-- the BRIN lines of q's EXPLAIN ANALYZE (the node's name first)
CREATE FUNCTION bl_how(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE ln text; node text; m text[];
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    m := regexp_match(ln, 'Custom Scan \((Gpu[A-Za-z]+)\)');
    IF m IS NOT NULL THEN node := m[1]; END IF;
    m := regexp_match(ln, '(BRIN [a-z]+: .*)$');
    IF m IS NOT NULL THEN RETURN NEXT node || ': ' || m[1]; END IF;
  END LOOP;
END $$;
-- q's rows with pg_strom on and off, compared
CREATE FUNCTION bl_diff(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE a text; b text;
BEGIN
  EXECUTE 'SELECT array_agg(r::text ORDER BY r::text) FROM (' || q || ') r' INTO a;
  PERFORM set_config('pg_strom.enabled', 'off', true);
  EXECUTE 'SELECT array_agg(r::text ORDER BY r::text) FROM (' || q || ') r' INTO b;
  PERFORM set_config('pg_strom.enabled', 'on', true);
  RETURN CASE WHEN a IS NOT DISTINCT FROM b THEN 'equal' ELSE 'DIFFERENT: ' || coalesce(a, 'NULL') || ' / ' || coalesce(b, 'NULL') END;
END $$;

-- each column type of the index; a range that lies in one month
SELECT * FROM bl_how('SELECT count(*), sum(v) FROM bl WHERE d BETWEEN ''2016-03-01'' AND ''2016-03-31''');
SELECT bl_diff('SELECT count(*), sum(v) FROM bl WHERE d BETWEEN ''2016-03-01'' AND ''2016-03-31''');
SELECT * FROM bl_how('SELECT count(*), sum(v) FROM bl WHERE ts >= ''2016-01-01'' AND ts < ''2016-01-15''');
SELECT bl_diff('SELECT count(*), sum(v) FROM bl WHERE ts >= ''2016-01-01'' AND ts < ''2016-01-15''');
SELECT * FROM bl_how('SELECT count(*), sum(v) FROM bl WHERE tz > ''2015-06-01 00:00+09'' AND tz <= ''2015-06-03 00:00+09''');
SELECT bl_diff('SELECT count(*), sum(v) FROM bl WHERE tz > ''2015-06-01 00:00+09'' AND tz <= ''2015-06-03 00:00+09''');
SELECT * FROM bl_how('SELECT count(*), sum(v) FROM bl WHERE n BETWEEN 20000.5 AND 20100');
SELECT bl_diff('SELECT count(*), sum(v) FROM bl WHERE n BETWEEN 20000.5 AND 20100');
-- equality, a reversed comparison, a cross-type one (int8 against int4)
SELECT * FROM bl_how('SELECT id, v FROM bl WHERE id = 123456');
SELECT bl_diff('SELECT id, v FROM bl WHERE id = 123456');
SELECT * FROM bl_how('SELECT count(*) FROM bl WHERE 199000::int8 < id');
SELECT bl_diff('SELECT count(*) FROM bl WHERE 199000::int8 < id');
-- several index columns at once; a qual the index cannot use stays a filter
SELECT * FROM bl_how('SELECT count(*), sum(v) FROM bl WHERE id > 50000 AND d < ''2016-06-01'' AND v % 7 = 1');
SELECT bl_diff('SELECT count(*), sum(v) FROM bl WHERE id > 50000 AND d < ''2016-06-01'' AND v % 7 = 1');
-- no range matches; every range matches
SELECT * FROM bl_how('SELECT count(*) FROM bl WHERE d > ''2030-01-01''');
SELECT * FROM bl_how('SELECT count(*) FROM bl WHERE id > 0');
SELECT bl_diff('SELECT count(*) FROM bl WHERE id > 0');
-- a NULL value matches no row
SELECT * FROM bl_how('SELECT count(*) FROM bl WHERE id = NULL::int');
-- GpuScan (GpuPreAgg off) and GpuJoin over the table
SET pg_strom.enable_gpupreagg = off;
SELECT * FROM bl_how('SELECT id, v FROM bl WHERE ts BETWEEN ''2015-03-01'' AND ''2015-03-02'' AND v < 10');
SELECT bl_diff('SELECT id, v FROM bl WHERE ts BETWEEN ''2015-03-01'' AND ''2015-03-02'' AND v < 10');
RESET pg_strom.enable_gpupreagg;
CREATE TABLE bl_dim (v int PRIMARY KEY, name text);
INSERT INTO bl_dim SELECT i, 'v' || i FROM generate_series(0, 96) i;
ANALYZE bl_dim;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_nestloop = off;
SELECT * FROM bl_how('SELECT b.name, count(*) FROM bl JOIN bl_dim b ON bl.v = b.v WHERE bl.d BETWEEN ''2017-01-01'' AND ''2017-01-31'' GROUP BY b.name');
SELECT bl_diff('SELECT b.name, count(*) FROM bl JOIN bl_dim b ON bl.v = b.v WHERE bl.d BETWEEN ''2017-01-01'' AND ''2017-01-31'' GROUP BY b.name');
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_nestloop;
-- a parameter (a generic plan), and a correlated sub-query whose value
-- changes at each rescan
PREPARE bl_p(date) AS SELECT count(*), sum(v) FROM bl WHERE d >= $1 AND d < $1 + 10;
SET plan_cache_mode = force_generic_plan;
EXECUTE bl_p('2016-05-01');
EXECUTE bl_p('2019-01-01');
SELECT * FROM bl_how('EXECUTE bl_p(''2016-05-01'')');
SET pg_strom.enabled = off;
EXECUTE bl_p('2016-05-01');
SET pg_strom.enabled = on;
RESET plan_cache_mode;
SELECT bl_diff('SELECT m, (SELECT count(*) FROM bl WHERE id >= m AND id < m + 500) FROM (VALUES (1000), (90000), (150000)) t(m)');
-- parallel: each process takes its share of the blocks that remain
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
ALTER TABLE bl SET (parallel_workers = 2);
SELECT * FROM bl_how('SELECT k, count(*), sum(v) FROM bl WHERE d BETWEEN ''2017-02-01'' AND ''2017-04-30'' GROUP BY k');
SELECT bl_diff('SELECT k, count(*), sum(v) FROM bl WHERE d BETWEEN ''2017-02-01'' AND ''2017-04-30'' GROUP BY k');
SET max_parallel_workers_per_gather = 0;
-- rows added after the index was made are in unsummarized ranges, read
-- always; rows moved by UPDATE widen their range's summary (where the new
-- versions go differs by PostgreSQL version: the count of ranges read is
-- shown as a bound)
INSERT INTO bl SELECT i, date '2015-01-01' + i / 100, NULL, NULL, i / 4.0, i / 1000, i % 97, 'new'
  FROM generate_series(200001, 210000) i;
UPDATE bl SET d = '2030-06-01', v = v + 1000 WHERE id IN (5000, 5001);
SELECT regexp_replace(h, '[0-9]+ read, [0-9]+ skipped', CASE WHEN (regexp_match(h, '([0-9]+) read'))[1]::int <= 12 THEN 'at most 12 read' ELSE 'more read' END) FROM bl_how('SELECT count(*), sum(v) FROM bl WHERE d >= ''2030-01-01''') h;
SELECT bl_diff('SELECT count(*), sum(v) FROM bl WHERE d >= ''2030-01-01''');
SELECT count(*), sum(v) FROM bl WHERE d >= '2030-01-01';
SELECT brin_summarize_new_values('bl_brin') > 0 AS summarized;
SELECT regexp_replace(h, '[0-9]+ read, [0-9]+ skipped', CASE WHEN (regexp_match(h, '([0-9]+) read'))[1]::int <= 12 THEN 'at most 12 read' ELSE 'more read' END) FROM bl_how('SELECT count(*), sum(v) FROM bl WHERE d >= ''2030-01-01''') h;
SELECT bl_diff('SELECT count(*), sum(v) FROM bl WHERE d >= ''2030-01-01''');
-- a partial BRIN index summarizes only the rows its predicate holds: not
-- used (here the other rows lie far beyond its summaries)
CREATE TABLE bp (id int, d date, t text) WITH (autovacuum_enabled = off);
INSERT INTO bp SELECT i, CASE WHEN i % 2 = 0 THEN date '2015-01-01' + i / 100 ELSE date '2099-01-01' END,
  chr(97 + i / 2000) || i FROM generate_series(1, 50000) i;
CREATE INDEX bp_even ON bp USING brin (d) WITH (pages_per_range = 4) WHERE id % 2 = 0;
ANALYZE bp;
SELECT * FROM bl_how('SELECT count(*) FROM bp WHERE d > ''2090-01-01''');
SELECT bl_diff('SELECT count(*) FROM bp WHERE d > ''2090-01-01''');
DROP TABLE bp;
-- off: every block is read
SET pg_strom.enable_brin = off;
SELECT * FROM bl_how('SELECT count(*) FROM bl WHERE d BETWEEN ''2016-03-01'' AND ''2016-03-31''');
RESET pg_strom.enable_brin;

-- the planner: a BRIN-filtered device scan is costed by the ranges the
-- index keeps (at a GPU machine's device costs, and chunks small enough
-- that the kept ranges hold several: with fewer rows, or priced as the
-- CPU engine, it is costed as a full scan; the start-up costs left out:
-- they are the same with and without)
SET pg_strom.chunk_rows = 500;
RESET pg_strom.gpu_tuple_cost;
RESET pg_strom.heap_gather_cost;
RESET enable_bitmapscan;
SET pg_strom.gpu_operator_cost = 0.00015625;
SET pg_strom.gpu_tuple_cost = 0.002;
SELECT * FROM explain_masked($$SELECT k, count(*) FROM bl WHERE d BETWEEN '2016-03-01' AND '2016-03-31' GROUP BY k$$);
SELECT plan_cost('SELECT k, count(*) FROM bl WHERE d BETWEEN ''2016-03-01'' AND ''2016-03-31'' GROUP BY k') AS cost_with_brin \gset
SET pg_strom.enable_brin = off;
SELECT plan_cost('SELECT k, count(*) FROM bl WHERE d BETWEEN ''2016-03-01'' AND ''2016-03-31'' GROUP BY k') AS cost_without \gset
RESET pg_strom.enable_brin;
-- (7 of 430 ranges kept: the scan's cost falls accordingly)
-- (the grouping and the final aggregation cost the same either way)
SELECT :cost_with_brin < :cost_without / 4 AS cheaper_by_the_ranges_skipped;
RESET pg_strom.chunk_rows;
-- (the chunks' partial groups merged on the host are priced by the
-- chunks: both costs with the same chunk size)
SET pg_strom.enable_brin = off;
SELECT plan_cost('SELECT k, count(*) FROM bl WHERE d BETWEEN ''2016-03-01'' AND ''2016-03-31'' GROUP BY k') AS cost_without \gset
RESET pg_strom.enable_brin;
SELECT plan_cost('SELECT k, count(*) FROM bl WHERE d BETWEEN ''2016-03-01'' AND ''2016-03-31'' GROUP BY k') = :cost_without
  AS few_rows_kept_costed_as_a_full_scan;
-- (PostgreSQL's own operator and row costs, as the CPU engine is priced)
SET pg_strom.gpu_operator_cost = 0.0025;
SET pg_strom.gpu_tuple_cost = 0.01;
SET pg_strom.chunk_rows = 500;
SELECT plan_cost('SELECT k, count(*) FROM bl WHERE d BETWEEN ''2016-03-01'' AND ''2016-03-31'' GROUP BY k') AS cost_cpu_priced \gset
SET pg_strom.enable_brin = off;
SELECT plan_cost('SELECT k, count(*) FROM bl WHERE d BETWEEN ''2016-03-01'' AND ''2016-03-31'' GROUP BY k') = :cost_cpu_priced
  AS cpu_priced_costed_as_a_full_scan;
RESET pg_strom.enable_brin;
RESET pg_strom.chunk_rows;
RESET pg_strom.gpu_setup_cost;
RESET pg_strom.gpu_context_cost;
RESET pg_strom.gpu_operator_cost;
RESET pg_strom.gpu_tuple_cost;

DROP TABLE bl, bl_dim;
DROP FUNCTION bl_how(text), bl_diff(text);
