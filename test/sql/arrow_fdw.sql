-- Arrow_Fdw: files written by pyarrow (test/arrow/gen.py, run by
-- scripts/test-sql.sh into /tmp/pgstrom_arrow_test) read back exactly;
-- IMPORT FOREIGN SCHEMA as PG-Strom's write-ups write it; referenced columns,
-- statistics hints and files in EXPLAIN; parallel scans; options,
-- permissions and damaged files.
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
SET IntervalStyle = 'postgres';
-- the FDW's own scan first (GpuScan over Arrow tables comes below)
SET pg_strom.enabled = off;
-- a query's ERROR with numbers masked (offsets depend on the pyarrow
-- version that wrote the damaged file)
CREATE FUNCTION af_error(q text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || regexp_replace(SQLERRM, '[0-9]+', 'N', 'g');
END $$;
-- bytes read / file size, from EXPLAIN's filesN line
CREATE FUNCTION af_read_ratio(q text) RETURNS numeric
LANGUAGE plpgsql AS $$
DECLARE ln text; m text[];
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    m := regexp_match(ln, 'read: ([0-9.]+)KB, size: ([0-9.]+)KB');
    IF m IS NOT NULL THEN RETURN round(m[1]::numeric / m[2]::numeric, 1); END IF;
  END LOOP;
  RETURN NULL;
END $$;

-- PG-Strom's write-ups' IMPORT FOREIGN SCHEMA: a table named after the remote schema
IMPORT FOREIGN SCHEMA arrow_types FROM SERVER arrow_fdw INTO public
  OPTIONS (file '/tmp/pgstrom_arrow_test/types.arrow');
\d arrow_types
SELECT count(*) FROM arrow_types;
SELECT id, i8, u64, f16, f32, s, bp, dec, d32, t64ns, ts_ns, tstz, iv, dict, lst, llst
  FROM arrow_types WHERE id IN (1, 4, 20) ORDER BY id;

-- every value equals pyarrow's (expected.sql: the same rows as literals)
\set QUIET on
\i /tmp/pgstrom_arrow_test/expected.sql
\set QUIET off
SELECT count(*) AS missing FROM (SELECT * FROM arrow_expected EXCEPT ALL SELECT * FROM arrow_types) x;
SELECT count(*) AS extra FROM (SELECT * FROM arrow_types EXCEPT ALL SELECT * FROM arrow_expected) x;
-- LZ4_FRAME and ZSTD bodies
IMPORT FOREIGN SCHEMA types_lz4 FROM SERVER arrow_fdw INTO public
  OPTIONS (file '/tmp/pgstrom_arrow_test/types_lz4.arrow');
IMPORT FOREIGN SCHEMA types_zstd FROM SERVER arrow_fdw INTO public
  OPTIONS (file '/tmp/pgstrom_arrow_test/types_zstd.arrow');
SELECT count(*) AS lz4_diff FROM ((SELECT * FROM types_lz4 EXCEPT ALL SELECT * FROM arrow_expected)
  UNION ALL (SELECT * FROM arrow_expected EXCEPT ALL SELECT * FROM types_lz4)) x;
SELECT count(*) AS zstd_diff FROM ((SELECT * FROM types_zstd EXCEPT ALL SELECT * FROM arrow_expected)
  UNION ALL (SELECT * FROM arrow_expected EXCEPT ALL SELECT * FROM types_zstd)) x;
-- several files of one schema (dir with a pattern)
CREATE FOREIGN TABLE types_dir (LIKE arrow_expected) SERVER arrow_fdw
  OPTIONS (dir '/tmp/pgstrom_arrow_test', pattern 'types_*.arrow');
SELECT count(*), count(DISTINCT id) FROM types_dir;
SELECT * FROM explain_masked('SELECT s FROM types_dir WHERE id < 3');
-- a Struct column as a composite type
CREATE TYPE af_pair AS (a int, b text);
CREATE FOREIGN TABLE af_struct (id int, st af_pair) SERVER arrow_fdw
  OPTIONS (file '/tmp/pgstrom_arrow_test/struct.arrow');
SELECT * FROM af_struct ORDER BY id;
SELECT (st).b FROM af_struct WHERE (st).a = 4;

-- only referenced columns are read; statistics hints skip record batches
IMPORT FOREIGN SCHEMA sorted FROM SERVER arrow_fdw INTO public
  OPTIONS (file '/tmp/pgstrom_arrow_test/sorted.arrow');
SELECT * FROM explain_masked('SELECT count(*) FROM sorted WHERE ymd BETWEEN 19940301 AND 19940430');
SELECT * FROM explain_masked('SELECT count(*) FROM sorted WHERE ymd BETWEEN 19940301 AND 19940430',
                         'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF');
SELECT count(*), sum(val) FROM sorted WHERE ymd BETWEEN 19940301 AND 19940430;
SELECT af_read_ratio('SELECT ymd FROM sorted') AS one_of_two_columns,
       af_read_ratio('SELECT ymd, val FROM sorted') AS both_columns;
-- = and a reversed comparison; the value side may be a parameter
SELECT * FROM explain_masked('SELECT count(*) FROM sorted WHERE ymd = 19940715',
                         'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF');
SELECT * FROM explain_masked('SELECT count(*) FROM sorted WHERE 19940901 < ymd',
                         'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF');
PREPARE af_p(int) AS SELECT count(*), sum(val) FROM sorted WHERE ymd >= $1;
SET plan_cache_mode = force_generic_plan;
EXECUTE af_p(19941001);
EXECUTE af_p(0);
EXECUTE af_p(NULL);
RESET plan_cache_mode;
-- PG-Strom's write-ups' switch
SET arrow_fdw.stats_hint_enabled = off;
SELECT * FROM explain_masked('SELECT count(*) FROM sorted WHERE ymd BETWEEN 19940301 AND 19940430');
SELECT count(*), sum(val) FROM sorted WHERE ymd BETWEEN 19940301 AND 19940430;
RESET arrow_fdw.stats_hint_enabled;
SELECT file, batch, rows, stats FROM pgstrom.arrow_fdw_metadata_info('sorted') ORDER BY batch LIMIT 3;
-- rescans: the scan is the inner side of a nested loop
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT g, (SELECT count(*) FROM sorted WHERE val = g AND ymd < 19940301) FROM generate_series(1, 3) g;
-- a correlated sub-query whose hint's value is the outer row's (a Param):
-- evaluated again at each rescan (once it kept the first row's value, and
-- the later rows found no batch)
SELECT m, (SELECT count(*) FROM sorted WHERE ymd >= m AND ymd < m + 100)
  FROM (VALUES (19940101), (19940501), (19940901)) v(m);
-- a hint whose value is made of an initplan's result: evaluated at the
-- first batch (at executor start the initplan's Param holds nothing yet,
-- and the cast read it as a NULL pointer: a crash)
SELECT count(*), sum(val) FROM sorted WHERE ymd >= (SELECT '19940501'::text)::int;
-- (pg_strom is off here: the FDW's own scan; again as a GpuScan below)
RESET enable_hashjoin;
RESET enable_mergejoin;

-- parallel: workers take record batches from a shared counter
ALTER FOREIGN TABLE sorted OPTIONS (ADD parallel_workers '2');
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET max_parallel_workers_per_gather = 2;
SELECT * FROM explain_masked('SELECT count(*), sum(val) FROM sorted WHERE ymd >= 19940501');
SELECT count(*), sum(val) FROM sorted WHERE ymd >= 19940501;
SELECT count(*), sum(val) FROM sorted;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET max_parallel_workers_per_gather;

-- GpuScan reads Arrow tables: referenced columns in the device layout,
-- batches skipped by the hints, record batches cut into chunks (the
-- differential tests of every type are test/diff/queries/arrow_*.sql)
SET pg_strom.enabled = on;
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.gpu_context_cost = 0;
SET pg_strom.chunk_rows = 300;
SET pg_strom.enable_gpupreagg = off;  -- GpuScan's own fields (GpuPreAgg below)
SELECT * FROM explain_masked('SELECT count(*), sum(val) FROM sorted WHERE ymd BETWEEN 19940301 AND 19940430 AND val % 7 = 3',
                         'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF');
SELECT count(*), sum(val) FROM sorted WHERE ymd BETWEEN 19940301 AND 19940430 AND val % 7 = 3;
SET pg_strom.enabled = off;
SELECT count(*), sum(val) FROM sorted WHERE ymd BETWEEN 19940301 AND 19940430 AND val % 7 = 3;
SET pg_strom.enabled = on;
SELECT count(*), sum(val) FROM sorted WHERE ymd >= (SELECT '19940501'::text)::int;
-- the correlated sub-query above as a GpuScan: its hint's Param is
-- evaluated again at each rescan too
SELECT m, (SELECT count(*) FROM sorted WHERE ymd >= m AND ymd < m + 100)
  FROM (VALUES (19940101), (19940501), (19940901)) v(m);
-- (one batch read per rescan; the chunk counts differ by engine)
SELECT * FROM explain_masked('SELECT m, (SELECT count(*) FROM sorted WHERE ymd >= m AND ymd < m + 100) FROM (VALUES (19940101), (19940501), (19940901)) v(m)',
                         'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF') e(line)
  WHERE line ~ 'Stats-Hint';
RESET pg_strom.enable_gpupreagg;
-- GpuPreAgg over a GpuJoin with the Arrow table as its outer side: one
-- node reads the batches the hints keep, joins and reduces them; the GPU
-- service reads the columns from the file itself, a record batch per chunk
-- (the CPU engine run there too, so this output is every engine's)
SET pg_strom.cpu_engine_in_service = on;
CREATE TABLE af_dim AS SELECT k, 'name' || (k % 13) AS name FROM generate_series(0, 99) k;
ANALYZE af_dim;
SELECT * FROM explain_masked('SELECT d.name, count(*), sum(s.val) FROM sorted s JOIN af_dim d ON s.val = d.k
                           WHERE s.ymd > 19940815 GROUP BY d.name',
                         'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF', '{nrows}');
SELECT d.name, count(*), sum(s.val) FROM sorted s JOIN af_dim d ON s.val = d.k
 WHERE s.ymd > 19940815 GROUP BY d.name ORDER BY 1;
SET pg_strom.enabled = off;
SELECT d.name, count(*), sum(s.val) FROM sorted s JOIN af_dim d ON s.val = d.k
 WHERE s.ymd > 19940815 GROUP BY d.name ORDER BY 1;
SET pg_strom.enabled = on;
-- join-key hints: the range of the inner relation's keys skips the record
-- batches whose statistics put the outer key outside it, as a qual would;
-- an inner relation without rows skips every batch (the same answers)
CREATE TABLE af_days AS SELECT (19940000 + m * 100 + d)::int AS ymd, 'Q' || ((m - 1) / 3 + 1) AS quarter
  FROM generate_series(1, 12) m, generate_series(1, 28) d;
ANALYZE af_days;
SELECT * FROM explain_masked($$SELECT count(*), sum(s.val) FROM sorted s JOIN af_days d ON s.ymd = d.ymd
                           WHERE d.quarter = 'Q2'$$, 'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF',
                         '{nrows,read-ahead}');
SELECT count(*), sum(s.val) FROM sorted s JOIN af_days d ON s.ymd = d.ymd WHERE d.quarter = 'Q2';
SELECT count(*), sum(s.val) FROM sorted s JOIN af_days d ON s.ymd = d.ymd WHERE d.quarter = 'Q9';
SELECT count(*), count(d.ymd) FROM sorted s LEFT JOIN af_days d ON s.ymd = d.ymd AND d.quarter = 'Q2';
SET pg_strom.enabled = off;
SELECT count(*), sum(s.val) FROM sorted s JOIN af_days d ON s.ymd = d.ymd WHERE d.quarter = 'Q2';
SELECT count(*), sum(s.val) FROM sorted s JOIN af_days d ON s.ymd = d.ymd WHERE d.quarter = 'Q9';
SELECT count(*), count(d.ymd) FROM sorted s LEFT JOIN af_days d ON s.ymd = d.ymd AND d.quarter = 'Q2';
SET pg_strom.enabled = on;
-- a build kept in the cross-query cache keeps its key ranges with its
-- rows: after a hit the same batches are skipped, without the columns made
-- to find them again (one process, then a parallel plan, where one process
-- looks into the cache and another loads)
VACUUM af_days;
CREATE FUNCTION af_hint(q text) RETURNS SETOF text LANGUAGE sql AS $f$
  -- (how the workers shared the inner scan's rows varies: not shown)
  SELECT regexp_replace(trim(e), ' \(actual .*\)$', '')
    FROM explain_masked(q, 'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF', '{nrows,inner-cache}') e
   WHERE e ~ 'Custom Scan|Inner Cache|Join-Key Hint|Workers Launched'
$f$;
SELECT af_hint($$SELECT count(*), sum(s.val) FROM sorted s JOIN af_days d ON s.ymd = d.ymd WHERE d.quarter = 'Q3'$$);
SELECT af_hint($$SELECT count(*), sum(s.val) FROM sorted s JOIN af_days d ON s.ymd = d.ymd WHERE d.quarter = 'Q3'$$);
-- (over the columns the GPU service reads itself, workers save no device
-- work: they pay where they share an inner scan, made costly here)
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET max_parallel_workers_per_gather = 2;
SET min_parallel_table_scan_size = 0;
SET cpu_tuple_cost = 1;
SELECT af_hint($$SELECT count(*), sum(s.val) FROM sorted s JOIN af_days d ON s.ymd = d.ymd WHERE d.quarter = 'Q4'$$);
SELECT af_hint($$SELECT count(*), sum(s.val) FROM sorted s JOIN af_days d ON s.ymd = d.ymd WHERE d.quarter = 'Q4'$$);
SELECT count(*), sum(s.val) FROM sorted s JOIN af_days d ON s.ymd = d.ymd WHERE d.quarter = 'Q4';
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET cpu_tuple_cost;
SELECT count(*), sum(s.val) FROM sorted s JOIN af_days d ON s.ymd = d.ymd WHERE d.quarter = 'Q3';
SET pg_strom.enabled = off;
SELECT count(*), sum(s.val) FROM sorted s JOIN af_days d ON s.ymd = d.ymd WHERE d.quarter = 'Q3';
SELECT count(*), sum(s.val) FROM sorted s JOIN af_days d ON s.ymd = d.ymd WHERE d.quarter = 'Q4';
SET pg_strom.enabled = on;
 stays on the CPU above the GPU filter
SELECT * FROM explain_masked($$SELECT id, s FROM arrow_types WHERE i32 > 0 AND md5(s) < '5'$$);
-- dictionaries whose values hold NULLs: a row pointing at a NULL value
-- is NULL on the device paths too (the FDW's own scan's answers)
CREATE FOREIGN TABLE af_dictnull (id int, k int8, s text) SERVER arrow_fdw
  OPTIONS (file '/tmp/pgstrom_arrow_test/dictnull.arrow');
SET pg_strom.enable_gpupreagg = off;
SELECT * FROM explain_masked('SELECT id, k, s FROM af_dictnull WHERE k IS NULL OR k = 0 OR s = ''''');
SELECT id, k, s FROM af_dictnull WHERE k IS NULL OR k = 0 OR s = '' ORDER BY id;
SELECT id FROM af_dictnull WHERE k = 0 OR s = '';
SELECT id, k, s FROM af_dictnull WHERE k + 1 > 0 AND s IS NOT NULL ORDER BY id;
RESET pg_strom.enable_gpupreagg;
SELECT * FROM explain_masked('SELECT count(k), count(s), sum(k), count(*) FROM af_dictnull WHERE id > 0');
SELECT count(k), count(s), sum(k), count(*) FROM af_dictnull WHERE id > 0;
SELECT k, s, count(*) FROM af_dictnull WHERE id > 0 GROUP BY k, s ORDER BY k, s;
SET pg_strom.enabled = off;
SELECT id, k, s FROM af_dictnull WHERE k IS NULL OR k = 0 OR s = '' ORDER BY id;
SELECT id, k, s FROM af_dictnull WHERE k + 1 > 0 AND s IS NOT NULL ORDER BY id;
SELECT count(k), count(s), sum(k), count(*) FROM af_dictnull WHERE id > 0;
SELECT k, s, count(*) FROM af_dictnull WHERE id > 0 GROUP BY k, s ORDER BY k, s;
SET pg_strom.enabled = on;
SET pg_strom.enabled = off;
RESET pg_strom.chunk_rows;
RESET pg_strom.cpu_engine_in_service;
RESET pg_strom.gpu_setup_cost;
RESET pg_strom.gpu_context_cost;

-- options
CREATE FOREIGN TABLE af_bad (x int) SERVER arrow_fdw OPTIONS (filename '/tmp/x.arrow');
CREATE FOREIGN TABLE af_bad (x int) SERVER arrow_fdw OPTIONS (file 'x.arrow');
CREATE FOREIGN TABLE af_bad (x int) SERVER arrow_fdw;
CREATE FOREIGN TABLE af_bad (x int) SERVER arrow_fdw OPTIONS (file '/tmp/x.arrow', parallel_workers 'many');
CREATE FOREIGN TABLE af_bad (x int) SERVER arrow_fdw OPTIONS (files '/tmp/a.arrow,/tmp/b.arrow', writable 'true');
CREATE FOREIGN TABLE af_bad (x int) SERVER arrow_fdw OPTIONS (file '/tmp/a.arrow', suffix '.arrow');
CREATE SERVER af_server2 FOREIGN DATA WRAPPER arrow_fdw OPTIONS (file '/tmp/a.arrow');
-- a column list that does not match the file
CREATE FOREIGN TABLE af_mismatch (id int, s int) SERVER arrow_fdw
  OPTIONS (file '/tmp/pgstrom_arrow_test/badutf8.arrow');
SELECT * FROM af_mismatch;
CREATE FOREIGN TABLE af_fewer (id int) SERVER arrow_fdw
  OPTIONS (file '/tmp/pgstrom_arrow_test/badutf8.arrow');
SELECT * FROM af_fewer;
-- several files must share one schema
IMPORT FOREIGN SCHEMA af_mixed FROM SERVER arrow_fdw INTO public
  OPTIONS (files '/tmp/pgstrom_arrow_test/sorted.arrow,/tmp/pgstrom_arrow_test/struct.arrow');
-- unsupported types: an ERROR naming the column
IMPORT FOREIGN SCHEMA af_map FROM SERVER arrow_fdw INTO public
  OPTIONS (file '/tmp/pgstrom_arrow_test/map.arrow');
IMPORT FOREIGN SCHEMA af_union FROM SERVER arrow_fdw INTO public
  OPTIONS (file '/tmp/pgstrom_arrow_test/union.arrow');
IMPORT FOREIGN SCHEMA af_struct2 FROM SERVER arrow_fdw INTO public
  OPTIONS (file '/tmp/pgstrom_arrow_test/struct.arrow');
CREATE FOREIGN TABLE af_map (id int, m text) SERVER arrow_fdw OPTIONS (file '/tmp/pgstrom_arrow_test/map.arrow');
SELECT id FROM af_map;

-- permissions, as file_fdw: naming files needs pg_read_server_files,
-- reading a table needs SELECT on it
CREATE ROLE af_user;
GRANT USAGE ON FOREIGN SERVER arrow_fdw TO af_user;
GRANT CREATE ON SCHEMA public TO af_user;
GRANT USAGE ON SCHEMA pgstrom TO af_user;
SET ROLE af_user;
CREATE FOREIGN TABLE af_mine (ymd int, val int8) SERVER arrow_fdw
  OPTIONS (file '/tmp/pgstrom_arrow_test/sorted.arrow');
SELECT count(*) FROM sorted;
-- the files' paths and statistics are the table's too; building device
-- code runs the compiler and writes into the data directory
SELECT count(*) FROM pgstrom.arrow_fdw_metadata_info('sorted');
SELECT * FROM pgstrom.device_code_build('sm_90');
RESET ROLE;
GRANT SELECT ON sorted TO af_user;
SET ROLE af_user;
SELECT count(*) FROM sorted;
SELECT count(*) FROM pgstrom.arrow_fdw_metadata_info('sorted');
RESET ROLE;
GRANT pg_read_server_files TO af_user;
SET ROLE af_user;
CREATE FOREIGN TABLE af_mine (ymd int, val int8) SERVER arrow_fdw
  OPTIONS (file '/tmp/pgstrom_arrow_test/sorted.arrow');
SELECT count(*) FROM af_mine;
CREATE FOREIGN TABLE af_mine_w (ymd int, val int8) SERVER arrow_fdw
  OPTIONS (file '/tmp/pgstrom_arrow_test/sorted.arrow', writable 'true');
DROP FOREIGN TABLE af_mine;
RESET ROLE;
REVOKE ALL ON sorted FROM af_user;
REVOKE USAGE ON FOREIGN SERVER arrow_fdw FROM af_user;
REVOKE CREATE ON SCHEMA public FROM af_user;
REVOKE USAGE ON SCHEMA pgstrom FROM af_user;
DROP ROLE af_user;

-- damaged files: an ERROR naming the file (and batch, column, row)
CREATE FOREIGN TABLE af_short (x int8) SERVER arrow_fdw OPTIONS (file '/tmp/pgstrom_arrow_test/short.arrow');
SELECT * FROM af_short;
CREATE FOREIGN TABLE af_magic (x int8) SERVER arrow_fdw OPTIONS (file '/tmp/pgstrom_arrow_test/badmagic.arrow');
SELECT * FROM af_magic;
CREATE FOREIGN TABLE af_trunc (x int8) SERVER arrow_fdw OPTIONS (file '/tmp/pgstrom_arrow_test/truncated.arrow');
SELECT af_error('SELECT * FROM af_trunc');
CREATE FOREIGN TABLE af_footer (x int8) SERVER arrow_fdw OPTIONS (file '/tmp/pgstrom_arrow_test/badfooter.arrow');
SELECT af_error('SELECT count(*) FROM af_footer');
CREATE FOREIGN TABLE af_buffer (x int8) SERVER arrow_fdw OPTIONS (file '/tmp/pgstrom_arrow_test/badbuffer.arrow');
SELECT af_error('SELECT * FROM af_buffer');
-- a record batch's Block moved off the 8-byte boundary
CREATE FOREIGN TABLE af_unaligned (x int8) SERVER arrow_fdw OPTIONS (file '/tmp/pgstrom_arrow_test/unaligned.arrow');
SELECT af_error('SELECT * FROM af_unaligned');
CREATE FOREIGN TABLE af_utf8 (id int, s text) SERVER arrow_fdw OPTIONS (file '/tmp/pgstrom_arrow_test/badutf8.arrow');
SELECT id FROM af_utf8;
SELECT * FROM af_utf8;
CREATE FOREIGN TABLE af_missing (x int8) SERVER arrow_fdw OPTIONS (file '/tmp/pgstrom_arrow_test/missing.arrow');
SELECT * FROM af_missing;
-- a directory given as a file: the hint names the dir option
CREATE FOREIGN TABLE af_isdir (x int8) SERVER arrow_fdw OPTIONS (file '/tmp/pgstrom_arrow_test');
SELECT * FROM af_isdir;
DROP FOREIGN TABLE af_isdir;

-- ANALYZE samples rows from the batches: column statistics and estimates
ANALYZE sorted, arrow_types;
SELECT reltuples FROM pg_class WHERE relname = 'sorted';
SELECT attname, null_frac, n_distinct FROM pg_stats WHERE tablename = 'sorted' ORDER BY 1;
SELECT attname, null_frac FROM pg_stats
 WHERE tablename = 'arrow_types' AND attname IN ('id', 's', 'dict', 'lst', 'tstz') ORDER BY 1;
SELECT * FROM explain_masked('SELECT * FROM sorted WHERE ymd BETWEEN 19940301 AND 19940430', 'COSTS ON')
 WHERE explain_masked LIKE '%Foreign Scan%';

-- statistics added to a file another tool wrote: only the footer changes
SET pg_strom.enabled = off;
IMPORT FOREIGN SCHEMA nostats FROM SERVER arrow_fdw INTO public
  OPTIONS (file '/tmp/pgstrom_arrow_test/nostats.arrow');
SELECT batch, stats FROM pgstrom.arrow_fdw_metadata_info('nostats') ORDER BY batch;
SET DateStyle = 'SQL, DMY';  -- the statistics are written in ISO form anyway
SET client_min_messages = warning;  -- the NOTICE gives the file's old size
SELECT pgstrom.arrow_fdw_write_stats('/tmp/pgstrom_arrow_test/nostats.arrow', ARRAY['id', 'd32', 'ts_ns', 'dec', 'f64']);
RESET client_min_messages;
SET DateStyle = 'ISO, YMD';
SELECT batch, stats FROM pgstrom.arrow_fdw_metadata_info('nostats') ORDER BY batch;
SELECT * FROM explain_masked('SELECT id FROM nostats WHERE id BETWEEN 10 AND 12',
                         'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF');
SELECT count(*) AS diff FROM ((SELECT * FROM nostats EXCEPT ALL SELECT * FROM arrow_types)
  UNION ALL (SELECT * FROM arrow_types EXCEPT ALL SELECT * FROM nostats)) x;
SELECT pgstrom.arrow_fdw_write_stats('/tmp/pgstrom_arrow_test/nostats.arrow', ARRAY['s']);
SELECT pgstrom.arrow_fdw_write_stats('/tmp/pgstrom_arrow_test/nostats.arrow', ARRAY['nope']);
SELECT pgstrom.arrow_fdw_write_stats('nostats.arrow', ARRAY['id']);
CREATE ROLE af_user2;
GRANT USAGE ON SCHEMA pgstrom TO af_user2;
SET ROLE af_user2;
SELECT pgstrom.arrow_fdw_write_stats('/tmp/pgstrom_arrow_test/nostats.arrow', ARRAY['id']);
RESET ROLE;
REVOKE USAGE ON SCHEMA pgstrom FROM af_user2;
DROP ROLE af_user2;
