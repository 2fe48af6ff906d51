-- GpuScan: WHERE clauses on the device engine for heap tables.
--
-- Every query runs twice, with pg_strom.enabled on (a GpuScan plan, checked
-- with EXPLAIN) and off (PostgreSQL's own plan); the results must be the
-- same rows: compared as the md5 of the sorted text of all rows, plus the
-- row count.  Small chunks (pg_strom.chunk_rows) make every scan cross many
-- chunk boundaries.  The engine is the active one: CPU in CI, GPU on the
-- GPU machine; the "GPU Preference" line is masked.
SET extra_float_digits = 3;
SET pg_strom.chunk_rows = 1000;
SET pg_strom.gpu_setup_cost = 0;   -- offload the small test tables too
SET pg_strom.gpu_context_cost = 0; -- the same plans on the GPU and the CPU engine
SET pg_strom.enable_gpupreagg = off; -- the aggregates over these scans stay on the CPU (see gpupreagg.sql)


-- 'GpuScan' when the plan has a GpuScan, 'Parallel GpuScan' for a parallel
-- one, else 'no GpuScan'.
CREATE FUNCTION gs_plan(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE ln text; kind text := 'no GpuScan';
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF ln ~ 'Parallel Custom Scan \(GpuScan\)' THEN kind := 'Parallel GpuScan';
    ELSIF ln ~ 'Custom Scan \(GpuScan\)' AND kind = 'no GpuScan' THEN kind := 'GpuScan';
    END IF;
  END LOOP;
  RETURN kind;
END $$;

-- \set q '...' then :check runs the differential comparison.
\set check 'SET pg_strom.enabled = off; SELECT md5(coalesce(string_agg(t::text, $$|$$ ORDER BY t::text), $$$$)) AS off_md5, count(*) AS off_n FROM (:q) t \\gset \\\\ SET pg_strom.enabled = on; SELECT gs_plan(:''q'') AS plan, count(*) AS rows, md5(coalesce(string_agg(t::text, $$|$$ ORDER BY t::text), $$$$)) = :''off_md5'' AND count(*) = :off_n AS same FROM (:q) t;'

-- A table with every device type, NULLs in every column, edge values.
SELECT pgstrom.random_setseed(4242);
CREATE TABLE gs_t AS
SELECT id,
  CASE WHEN id % 97 = 0 THEN NULL ELSE (id % 3 = 0) END AS b,
  pgstrom.random_int(0.05, -32768, 32767)::int2 AS i2,
  pgstrom.random_int(0.05, -1000000, 1000000)::int4 AS i4,
  CASE id % 500 WHEN 1 THEN 9223372036854775807 WHEN 2 THEN -9223372036854775808
       ELSE pgstrom.random_int(0.05, -100000000000, 100000000000) END AS i8,
  CASE id % 400 WHEN 1 THEN 'NaN'::float4 WHEN 2 THEN '-Infinity' WHEN 3 THEN '-0'
       ELSE pgstrom.random_float(0.05, -1000, 1000)::float4 END AS f4,
  CASE id % 300 WHEN 1 THEN 'NaN'::float8 WHEN 2 THEN 'Infinity' WHEN 3 THEN '-0'
       ELSE pgstrom.random_float(0.05, -1000, 1000) END AS f8,
  CASE id % 600 WHEN 1 THEN 'infinity'::date WHEN 2 THEN '2024-02-29'
       ELSE pgstrom.random_date(0.05, '2000-01-01', '2030-12-31') END AS d,
  pgstrom.random_time(0.05) AS tm,
  pgstrom.random_timestamp(0.05, '2015-01-01', '2025-01-01') AS ts,
  pgstrom.random_timestamptz(0.05, '2015-01-01 00:00+00', '2025-01-01 00:00+00') AS tz,
  CASE id % 250 WHEN 1 THEN '' WHEN 2 THEN 'äöü日本語' ELSE pgstrom.random_text(0.05, 'abc**') END AS tx,
  pgstrom.random_text_len(0.05, 8)::varchar(8) AS vc,
  pgstrom.random_text(0.05, 'k*')::char(4) AS bp
FROM generate_series(1, 20000) id;
ANALYZE gs_t;

-- The plan users see.
SELECT * FROM explain_masked('SELECT id, f8 FROM gs_t WHERE i4 > 0 AND f8 < 10');
SELECT * FROM explain_masked('SELECT id FROM gs_t WHERE i4 > 0 AND md5(tx) < $$8$$');
SELECT * FROM explain_masked('SELECT id FROM gs_t WHERE i2 > 100', 'COSTS OFF, VERBOSE');
SELECT * FROM explain_masked('SELECT id FROM gs_t WHERE i4 > 0 AND md5(tx) < $$8$$',
                         'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF');

-- Filters on every device type.
\set q 'SELECT * FROM gs_t WHERE b'
:check
\set q 'SELECT id, i2 FROM gs_t WHERE i2 < -100 OR i2 IS NULL'
:check
\set q 'SELECT id, i4 FROM gs_t WHERE i4 BETWEEN -5000 AND 70000'
:check
\set q 'SELECT id, i8 FROM gs_t WHERE i8 >= 50000000000 OR i8 = -9223372036854775808'
:check
\set q 'SELECT id, f4 FROM gs_t WHERE f4 > 500 OR f4 = $$NaN$$ OR f4 = 0'
:check
\set q 'SELECT id, f8 FROM gs_t WHERE f8 <= -900 OR f8 > $$Infinity$$::float8 OR f8 IS NULL'
:check
\set q 'SELECT id, d FROM gs_t WHERE d >= $$2029-01-01$$ AND d <> $$infinity$$'
:check
\set q 'SELECT id, tm FROM gs_t WHERE tm BETWEEN $$12:00$$ AND $$12:30$$'
:check
\set q 'SELECT id, ts FROM gs_t WHERE ts < $$2015-03-01$$ AND ts IS NOT NULL'
:check
\set q 'SELECT id, tz FROM gs_t WHERE tz >= $$2024-12-01 00:00+09$$'
:check
\set q 'SELECT id, tx FROM gs_t WHERE tx LIKE $$abc1%$$ OR tx = $$$$ OR tx = $$äöü日本語$$'
:check
\set q 'SELECT id, vc FROM gs_t WHERE length(vc) = 8 AND vc LIKE $$%a%$$'
:check
\set q 'SELECT id, bp FROM gs_t WHERE bp = $$k1$$ OR bp = $$kz  $$'
:check
-- expressions: arithmetic, CASE, COALESCE, IN lists, IS DISTINCT FROM
\set q 'SELECT id FROM gs_t WHERE (i4 % 7 = 3 AND f8 * 2 > 100) OR i2 IN (1, 2, 3, 4, 5, 6, 7)'
:check
\set q 'SELECT id FROM gs_t WHERE CASE WHEN b THEN i4 > 0 ELSE i4 < 0 END'
:check
\set q 'SELECT id FROM gs_t WHERE coalesce(i2, 0) + coalesce(i4, 0) > 100 AND b IS DISTINCT FROM true'
:check
-- a qual the device cannot run stays on the CPU, in the same node
\set q 'SELECT id, tx FROM gs_t WHERE i4 > 0 AND md5(tx) < $$4$$'
:check
-- localtimestamp and current_date are evaluated once and passed as parameters
-- (the arithmetic keeps the bounds fixed dates: the rows do not change by day)
\set q 'SELECT id FROM gs_t WHERE ts < localtimestamp - (localtimestamp - timestamp $$2016-01-01$$) AND d < current_date - (current_date - date $$2020-01-01$$)'
:check

-- Parallel GpuScan: blocks are shared among the workers, never twice.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 3;
SELECT * FROM explain_masked('SELECT count(*) FROM gs_t WHERE f8 > 0');
\set q 'SELECT id, f8 FROM gs_t WHERE f8 > 0 AND i4 < 500000'
:check
\set q 'SELECT id, tx FROM gs_t WHERE tx LIKE $$%b%$$'
:check
\set q 'SELECT count(*), sum(i4), min(tx) FROM gs_t WHERE i2 > 0'
:check
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- Errors the device meets take the CPU path: PostgreSQL decides.
-- (i4 % 10 - 5 is zero on some rows; the first qual removes them.)
\set q 'SELECT id FROM gs_t WHERE i4 % 10 <> 5 AND 100 / (i4 % 10 - 5) > 10'
:check
SELECT * FROM explain_masked('SELECT id FROM gs_t WHERE i4 % 10 <> 5 AND 100 / (i4 % 10 - 5) > 10',
                         'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF');
-- A NULL qual ends PostgreSQL's evaluation of a row; the device's AND goes
-- on and meets the division by zero: those chunks take the CPU path.
\set q 'SELECT id FROM gs_t WHERE nullif(i4 % 10, 5) > -10 AND 100 / (i4 % 10 - 5) > 0'
:check
SELECT * FROM explain_masked('SELECT id FROM gs_t WHERE nullif(i4 % 10, 5) > -10 AND 100 / (i4 % 10 - 5) > 0',
                         'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF');
-- the same error PostgreSQL raises, where PostgreSQL raises it
SELECT count(*) FROM gs_t WHERE 100 / (i4 % 10 - 5) > 10;
SELECT count(*) FROM gs_t WHERE i2 * 2::int2 > 0;
-- an unsupported qual before the failing one: PostgreSQL's order decides
\set q 'SELECT id FROM gs_t WHERE md5(i4::text) <> $$$$ AND i4 IS NOT NULL AND i4 % 10 <> 5 AND 100 / (i4 % 10 - 5) > 0'
:check

-- Parameters: prepared statements (custom and generic plans), initplans,
-- correlated subplans (rescans with new values).
PREPARE gs_p(int, float8) AS SELECT count(*), sum(i4) FROM gs_t WHERE i4 > $1 AND f8 < $2;
SET plan_cache_mode = force_generic_plan;
SELECT * FROM explain_masked('EXECUTE gs_p(0, 1.5)');
EXECUTE gs_p(0, 1.5);
EXECUTE gs_p(-500000, 100);
SET pg_strom.enabled = off;
EXECUTE gs_p(0, 1.5);
EXECUTE gs_p(-500000, 100);
SET pg_strom.enabled = on;
RESET plan_cache_mode;
DEALLOCATE gs_p;
-- timestamptz functions use the session time zone, also in a plan cached
-- under another one (the program's zone table is replaced at executor start)
\set q 'SELECT id, date_trunc($$day$$, tz), extract(hour FROM tz) FROM gs_t WHERE tz::date = d - 3000 OR tz::timestamp < $$2015-03-08 02:30$$ OR tz + interval $$1 mon$$ < $$2015-02-01$$::date'
:check
\set tzq 'SELECT count(*), sum(extract(hour FROM tz)), min(date_trunc($$day$$, tz)::text) FROM gs_t WHERE date_trunc($$month$$, tz) = $$2020-03-01$$::date AND extract(hour FROM tz) < 12'
PREPARE gs_tz AS :tzq;
SET plan_cache_mode = force_generic_plan;
SET TimeZone = 'UTC';
SELECT * FROM explain_masked('EXECUTE gs_tz');
EXECUTE gs_tz;
SET TimeZone = 'Asia/Tokyo';
EXECUTE gs_tz;
SET pg_strom.enabled = off;
:tzq;
SET pg_strom.enabled = on;
SET TimeZone = 'America/New_York';
EXECUTE gs_tz;
SET pg_strom.enabled = off;
:tzq;
SET pg_strom.enabled = on;
RESET TimeZone;
RESET plan_cache_mode;
DEALLOCATE gs_tz;
\set q 'SELECT id FROM gs_t WHERE i4 > (SELECT max(i4) - 10000 FROM gs_t WHERE i2 > 30000)'
:check
\set q 'SELECT x, (SELECT count(*) FROM gs_t WHERE i4 > x AND i2 < x) FROM (VALUES (100), (-100), (NULL), (999999)) v(x)'
:check
SELECT * FROM explain_masked('SELECT x, (SELECT count(*) FROM gs_t WHERE i4 > x AND i2 < x) FROM (VALUES (100), (-100)) v(x)');

-- System columns and whole-row references are read from the CPU's copy of
-- the row.
\set q 'SELECT ctid, tableoid::regclass, gs_t FROM gs_t WHERE i4 > 990000'
:check

-- Empty tables, only NULLs, dropped columns, wide (TOASTed, compressed) rows.
CREATE TABLE gs_empty (a int, b text);
\set q 'SELECT * FROM gs_empty WHERE a > 0'
:check
CREATE TABLE gs_nulls AS SELECT NULL::int AS a, NULL::text AS b FROM generate_series(1, 3000);
\set q 'SELECT * FROM gs_nulls WHERE a > 0 OR b = $$x$$ OR a IS NULL'
:check
CREATE TABLE gs_drop AS SELECT x AS a, x * 2 AS b, x * 3 AS c, repeat('x', x % 5) AS d FROM generate_series(1, 5000) x;
ALTER TABLE gs_drop DROP COLUMN b;
ALTER TABLE gs_drop ADD COLUMN e int DEFAULT 42;
\set q 'SELECT * FROM gs_drop WHERE c % 7 = 0 AND e = 42 AND d LIKE $$xx%$$'
:check
CREATE TABLE gs_wide (id int, big text, small text);
INSERT INTO gs_wide SELECT x, repeat(md5(x::text), 200 + x % 50), md5(x::text) FROM generate_series(1, 300) x;
INSERT INTO gs_wide SELECT x, string_agg(md5((x * 1000 + y)::text), '') , 'u' FROM generate_series(301, 320) x, generate_series(1, 400) y GROUP BY x;
SELECT count(*) FILTER (WHERE pg_column_compression(big) IS NOT NULL) > 0 AS has_compressed FROM gs_wide;
\set q 'SELECT id, length(big) FROM gs_wide WHERE big LIKE $$%abc%$$ AND length(big) > 7000'
:check
\set q 'SELECT id FROM gs_wide WHERE octet_length(big) > 10000 OR small = $$u$$'
:check

-- Heap pages read directly (pg_strom.heap_page_reads, the default) and
-- through the table AM: varlena values with 1- and 4-byte headers, a TOAST
-- pointer and a compressed value before the referenced columns, NULLs, an
-- added column missing from old rows, all-visible pages (VACUUM) beside
-- pages with new, updated and deleted rows, this transaction's own
-- changes, and a SERIALIZABLE transaction (the table AM's path).
CREATE TABLE gs_pages (pad1 text, i2 int2, pad2 text, i4 int4, i8 int8, f8 float8, t text, d date)
  WITH (autovacuum_enabled = off);
INSERT INTO gs_pages SELECT
    CASE x % 4 WHEN 0 THEN NULL WHEN 1 THEN 'p' WHEN 2 THEN repeat('q', 300) ELSE repeat(md5(x::text), 400) END,
    (x % 300)::int2,
    CASE WHEN x % 97 = 0 THEN (SELECT string_agg(md5((x * 100 + y)::text), '') FROM generate_series(1, 300) y) ELSE repeat('r', x % 130) END,
    CASE WHEN x % 11 = 0 THEN NULL ELSE x END,
    x * 1000000007::int8, x / 7.0, md5(x::text), DATE '2000-01-01' + x % 4000
  FROM generate_series(1, 20000) x;
VACUUM (FREEZE) gs_pages;
ALTER TABLE gs_pages ADD COLUMN late int DEFAULT 7;
INSERT INTO gs_pages SELECT 'n', 1, 'n', x, x, x, 'new' || x, DATE '2030-01-01', x FROM generate_series(1, 500) x;
UPDATE gs_pages SET i8 = -i8, late = 8 WHERE i4 % 53 = 0;
DELETE FROM gs_pages WHERE i4 % 59 = 0;
\set q 'SELECT i2, i4, i8, f8, t, d, late FROM gs_pages WHERE i4 % 3 = 0 OR i8 < 0 OR d > $$2030-01-01$$'
:check
\set q 'SELECT i4, t FROM gs_pages WHERE t LIKE $$%ab%$$ AND late = 7'
:check
\set q 'SELECT pad1, pad2, i4 FROM gs_pages WHERE i2 = 97 OR length(pad2) > 5000'
:check
SET pg_strom.heap_page_reads = off;
\set q 'SELECT i2, i4, i8, f8, t, d, late FROM gs_pages WHERE i4 % 3 = 0 OR i8 < 0 OR d > $$2030-01-01$$'
:check
RESET pg_strom.heap_page_reads;
BEGIN;
UPDATE gs_pages SET i4 = -i4 WHERE i2 = 5;
INSERT INTO gs_pages (i2, i4, t) VALUES (5, 123456789, 'mine');
\set q 'SELECT i2, i4, t FROM gs_pages WHERE i2 = 5 OR i4 < 0'
:check
ROLLBACK;
:check
BEGIN ISOLATION LEVEL SERIALIZABLE;
\set q 'SELECT i2, i4, i8, t FROM gs_pages WHERE i4 % 5 = 0'
:check
COMMIT;
-- the table's statistics count the scan and the rows read, as a SeqScan's
SELECT pg_stat_force_next_flush();
SELECT seq_scan AS s0, seq_tup_read AS t0 FROM pg_stat_user_tables WHERE relname = 'gs_pages' \gset
SELECT gs_plan('SELECT i4 FROM gs_pages WHERE i4 % 3 = 0') AS plan, count(*) FROM gs_pages WHERE i4 % 3 = 0;
SELECT pg_stat_force_next_flush();
SELECT seq_scan AS s1, seq_tup_read AS t1 FROM pg_stat_user_tables WHERE relname = 'gs_pages' \gset
SET pg_strom.enabled = off;
SELECT count(*) FROM gs_pages WHERE i4 % 3 = 0;
SELECT pg_stat_force_next_flush();
SET pg_strom.enabled = on;
SELECT seq_scan - :s1 = :s1 - :s0 AS same_scans, seq_tup_read - :t1 = :t1 - :t0 AS same_rows, :s1 - :s0 AS scans
  FROM pg_stat_user_tables WHERE relname = 'gs_pages';
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
\set q 'SELECT i2, i4, i8, f8, t, d, late FROM gs_pages WHERE i4 % 3 = 0 OR i8 < 0'
:check
-- a table larger than a quarter of shared_buffers: read through a
-- bulk-read ring, as PostgreSQL's own scans do
CREATE TABLE gs_big WITH (autovacuum_enabled = off) AS
  SELECT x AS a, x % 1000 AS b, repeat('z', 60) AS pad FROM generate_series(1, 450000) x;
SELECT pg_relation_size('gs_big') / 8192 > setting::int / 4 AS bulk_read FROM pg_settings WHERE name = 'shared_buffers';
\set q 'SELECT a, b FROM gs_big WHERE b = 7 OR a < 3'
:check
:check
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
:check

-- Partitions: a GpuScan per partition under Append.
CREATE TABLE gs_part (a int, b text) PARTITION BY RANGE (a);
CREATE TABLE gs_part1 PARTITION OF gs_part FOR VALUES FROM (0) TO (5000);
CREATE TABLE gs_part2 PARTITION OF gs_part FOR VALUES FROM (5000) TO (10000);
INSERT INTO gs_part SELECT x, md5(x::text) FROM generate_series(0, 9999) x;
ANALYZE gs_part;
SELECT * FROM explain_masked('SELECT count(*) FROM gs_part WHERE b LIKE $$%ab%$$ AND a % 3 = 0');
\set q 'SELECT * FROM gs_part WHERE b LIKE $$%ab%$$ AND a % 3 = 0'
:check

-- UPDATE and DELETE through a GpuScan, cursors.
BEGIN;
SELECT * FROM explain_masked('UPDATE gs_drop SET e = 0 WHERE c % 11 = 0');
UPDATE gs_drop SET e = 0 WHERE c % 11 = 0;
DELETE FROM gs_drop WHERE c % 13 = 0 AND e = 42;
SELECT count(*), sum(a) FROM gs_drop WHERE e = 42;
SET pg_strom.enabled = off;
SELECT count(*), sum(a) FROM gs_drop WHERE e = 42;
SET pg_strom.enabled = on;
ROLLBACK;
BEGIN;
DECLARE gs_c SCROLL CURSOR FOR SELECT a FROM gs_drop WHERE a % 1000 = 0;
FETCH 2 FROM gs_c;
FETCH BACKWARD 1 FROM gs_c;
FETCH ALL FROM gs_c;
COMMIT;

-- The planner keeps an index scan on a selective indexed predicate.
CREATE INDEX gs_t_i4 ON gs_t (i4);
RESET pg_strom.gpu_setup_cost;
SELECT * FROM explain_masked('SELECT * FROM gs_t WHERE i4 = 12345');
SELECT gs_plan('SELECT * FROM gs_t WHERE i4 > -900000 AND f8 < 0') AS big_scan;
SET pg_strom.enable_gpuscan = off;
SELECT gs_plan('SELECT * FROM gs_t WHERE f8 < 0') AS disabled;
RESET pg_strom.enable_gpuscan;
SET pg_strom.gpu_setup_cost = 0;

-- PG-Strom's write-ups' queries: a distance filter and LIKE on a generated table.
SELECT pgstrom.random_setseed(64);
CREATE TABLE t_64g AS
SELECT id, pgstrom.random_float(0, 0, 1000) AS x, pgstrom.random_float(0, 0, 1000) AS y,
       pgstrom.random_float(0, 0, 1000) AS z, pgstrom.random_text(0, 'memo_********') AS memo
  FROM generate_series(1, 50000) id;
ANALYZE t_64g;
SELECT * FROM explain_masked('SELECT * FROM t_64g WHERE sqrt((x-200)^2 + (y-300)^2 + (z-400)^2) < 10');
\set q 'SELECT * FROM t_64g WHERE sqrt((x-200)^2 + (y-300)^2 + (z-400)^2) < 100'
:check
SELECT * FROM explain_masked($$SELECT * FROM t_64g WHERE memo LIKE '%abcd%'$$);
\set q 'SELECT * FROM t_64g WHERE memo LIKE $$%ab%$$'
:check

-- GPU Projection: output expressions computed on the device (PG-Strom's write-ups'
-- distance as a column; every fixed-width type, NULLs, NaN, -0), the
-- others (text, a function the device lacks) on the CPU; only for rows the
-- device filter passes (the division by zero of removed rows is never
-- raised); an error of a passing row is PostgreSQL's; turned off by
-- pg_strom.enable_gpu_projection
SELECT * FROM explain_masked('SELECT id, sqrt((x-200)*(x-200) + (y-300)*(y-300) + (z-400)*(z-400)) AS dist, memo
  FROM t_64g WHERE x < 300 AND y < 400', 'VERBOSE, COSTS OFF');
\set q 'SELECT id, sqrt((x-200)*(x-200) + (y-300)*(y-300) + (z-400)*(z-400)) AS dist, x + y AS xy, memo FROM t_64g WHERE x < 300 AND y < 400'
:check
\set q 'SELECT id, i2 * 2 AS i2x2, i4 - 1 AS i4m, i8 / 3 AS i8d, f4 * 2 AS f4x2, f8 + i4 AS f8i4, NOT b AS nb, d - 1 AS dm, greatest(ts, $$2020-01-01$$::timestamp) AS g, coalesce(i4, i2) AS c, md5(tx) AS h, tx FROM gs_t WHERE i2 > -30000 AND d < $$2030-01-01$$'
:check
SELECT * FROM explain_masked('SELECT id, 1000 / (i2 - 7) AS q FROM gs_t WHERE i2 <> 7',
                         'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF');
\set q 'SELECT id, 1000 / (i2 - 7) AS q FROM gs_t WHERE i2 <> 7'
:check
SELECT id, i4 * 100000 AS big FROM gs_t WHERE i2 > 0;
SET pg_strom.enable_gpu_projection = off;
SELECT * FROM explain_masked('SELECT id, x + y AS xy FROM t_64g WHERE x < 300');
RESET pg_strom.enable_gpu_projection;
-- GPU Projection of the types wider than a word and of text: numeric
-- (exact, a result beyond 38 digits takes the CPU path), uuid, interval,
-- timetz, text / bpchar / bytea (a part of a column, a constant, or text
-- lower / upper / || made on the device; lower and upper of non-ASCII text
-- leave the chunk to PostgreSQL), NULLs everywhere, multibyte text
-- (every row passes most of these quals: the GpuScan and the seq scan
-- cost within add_path's fuzz, where PostgreSQL keeps the parallel-safe
-- one; a device path that is not partial is parallel-unsafe, so no
-- parallel plan here)
SET max_parallel_workers_per_gather = 0;
CREATE TABLE gs_v AS
SELECT id,
  CASE WHEN id % 89 = 0 THEN NULL WHEN id % 89 = 1 THEN 'NaN' WHEN id % 89 = 2 THEN 'Infinity'
       WHEN id % 89 = 3 THEN '-Infinity' ELSE (id * 7919 % 100003 - 50000) / 64.0 END::numeric AS n,
  (id % 1000 - 500)::numeric(10, 2) / 8 AS n2,
  CASE WHEN id % 53 = 0 THEN NULL ELSE md5(id::text)::uuid END AS u,
  CASE WHEN id % 61 = 0 THEN NULL WHEN id % 61 = 1 THEN 'infinity' WHEN id % 61 = 2 THEN '-infinity'
       ELSE make_interval(0, id % 15 - 7, 0, id % 40 - 20, id % 30, 0, (id % 1000) * 0.125) END AS iv,
  CASE WHEN id % 47 = 0 THEN NULL ELSE ('12:34:' || (id % 60) || '+0' || (id % 10))::timetz END AS tt,
  CASE id % 43 WHEN 0 THEN NULL WHEN 1 THEN '' WHEN 2 THEN 'äöü日本語' ELSE 'Ab' || (id % 977) || 'xY' END AS tx,
  CASE WHEN id % 41 = 0 THEN NULL ELSE ('c' || id % 13)::char(5) END AS bp,
  CASE WHEN id % 37 = 0 THEN NULL ELSE decode(lpad(to_hex(id), 6, '0'), 'hex') END AS by,
  CASE WHEN id = 4007 THEN repeat('L', 300) ELSE 'short' END AS lg
FROM generate_series(1, 5000) id;
ANALYZE gs_v;
SELECT * FROM explain_masked('SELECT id, n * 2 + 1 AS n, u, iv + iv AS iv, tt, upper(tx) AS up, tx || $$-$$ || bp AS cat, bp, by
  FROM gs_v WHERE id % 3 = 0', 'VERBOSE, COSTS OFF');
\set q 'SELECT id, n * 2 + 1 AS a, n / 7 AS b, n2 * n2 AS c, round(n2, 1) AS d, -n AS e, abs(n2) + 0.5 AS f FROM gs_v WHERE id % 3 <> 1'
:check
\set q 'SELECT id, coalesce(u, $$00000000-0000-0000-0000-000000000001$$) AS a, CASE WHEN id % 2 = 0 THEN u END AS b, iv + iv AS c, -iv AS d, iv - $$1 day 02:00$$::interval AS e, $$2024-02-29$$::timestamp - $$2020-01-01$$::timestamp + iv AS f, CASE WHEN id % 5 > 1 THEN tt END AS g, greatest(tt, $$12:34:30+00$$) AS h FROM gs_v WHERE id > 10'
:check
\set q 'SELECT id, substr(tx, 2, 3) AS a, btrim(tx, $$A$$) AS b, upper(bp::text) AS c, lower(tx) AS d, tx || $$/$$ || bp AS e, coalesce(tx, $$(none)$$) AS f, CASE WHEN id % 4 = 0 THEN bp END AS g, CASE WHEN id % 3 = 0 THEN by END AS h, substring(by FROM 2 FOR 2) AS i, left(tx, -1) AS j FROM gs_v WHERE id % 7 <> 0'
:check
-- casts to text (the output functions of integers and numeric, booltext)
\set q 'SELECT id, id::text || $$:$$ || n2::text AS a, n::text AS b, (id % 2 = 0)::text AS c, u::text AS d FROM gs_v WHERE id % 3 = 0 OR n::text LIKE $$%.5%$$'
:check
-- every row on the device: no CPU Path Rows (ASCII text, numerics of few digits)
SELECT * FROM explain_masked('SELECT id, n2 * 3 AS a, u, iv + iv AS b, tt, upper(bp::text) AS c, bp || $$-$$ AS d, by FROM gs_v WHERE id % 3 = 0',
                         'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF');
-- a product beyond 38 digits and upper of multibyte text: PostgreSQL
-- computes those rows (each row on its own: the other rows are the
-- device's)
SELECT * FROM explain_masked('SELECT id, n * n * n * n * n * n AS a FROM gs_v WHERE id % 89 > 3',
                         'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF');
\set q 'SELECT id, n * n * n * n * n * n AS a, upper(tx) AS b FROM gs_v WHERE id % 89 > 3'
:check
-- made text as long as a row's memory holds (512 bytes); a longer
-- result leaves its row to PostgreSQL (row 4007)
\set q 'SELECT id, tx || tx || tx || tx || tx || tx AS a, lower(tx || bp) AS b FROM gs_v WHERE id > 0'
:check
SELECT * FROM explain_masked('SELECT id, lg || lg AS a FROM gs_v WHERE id > 0',
                         'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF');
\set q 'SELECT id, lg || lg AS a, lg || $$!$$ AS b FROM gs_v WHERE id > 0'
:check
RESET max_parallel_workers_per_gather;
-- an UPDATE computes the new values on the device too (EvalPlanQual
-- re-checks project on the CPU: test/isolation/specs/gpuscan_epq.spec)
SELECT * FROM explain_masked('UPDATE t_64g SET x = x * 2 + y WHERE x < 10');
BEGIN;
WITH u AS (UPDATE t_64g SET x = x * 2 + y WHERE x < 10 RETURNING id, x)
SELECT count(*) AS updated, md5(string_agg(id || $$:$$ || x, $$,$$ ORDER BY id)) AS on_md5 FROM u \gset
ROLLBACK;
SET pg_strom.enabled = off;
BEGIN;
WITH u AS (UPDATE t_64g SET x = x * 2 + y WHERE x < 10 RETURNING id, x)
SELECT count(*) = :updated AS same_count, md5(string_agg(id || $$:$$ || x, $$,$$ ORDER BY id)) = :'on_md5' AS same_rows FROM u;
ROLLBACK;
RESET pg_strom.enabled;

DROP TABLE gs_t, gs_empty, gs_nulls, gs_drop, gs_wide, gs_pages, gs_big, gs_part, t_64g, gs_v;
DROP FUNCTION gs_plan(text);
-- the planner's diagnostics at DEBUG2: why a qual, a relation or a join
-- stays on PostgreSQL
CREATE TABLE why_t (a int, b text, n numeric);
CREATE TABLE why_u (n numeric, c int);
-- (planned once first: PostgreSQL's own DEBUG lines about growing catalog
-- caches come at the first planning only)
\o /dev/null
EXPLAIN (COSTS OFF) SELECT * FROM why_t WHERE a > 1 AND md5(b) = 'x';
EXPLAIN (COSTS OFF) SELECT * FROM why_t t JOIN why_u u ON t.n = u.n;
\o
SET client_min_messages = debug2;
SELECT * FROM explain_masked($$SELECT * FROM why_t WHERE a > 1 AND md5(b) = 'x'$$);
EXPLAIN (COSTS OFF) SELECT * FROM why_t WHERE md5(b) = 'x';
EXPLAIN (COSTS OFF) SELECT * FROM why_t t JOIN why_u u ON t.n = u.n;
RESET client_min_messages;
DROP TABLE why_t, why_u;

-- A GpuScan over a heap table gathers every row on the host, as much as
-- a sequential scan's own work: it pays only where the quals cost more,
-- priced as the executor evaluates them (AND and OR stop at their first
-- false or true argument).  TPC-H Q19's qual on `part` (an OR of three
-- ANDs, each ruled out by its first comparison for most rows) stays on
-- PostgreSQL at the default heap_gather_cost; with no gathering cost the
-- GpuScan is still planned.
CREATE TABLE sc_part (p_partkey int, p_brand char(10), p_container char(10), p_size int);
INSERT INTO sc_part SELECT i, 'Brand#' || (1 + i % 5) || (1 + i / 5 % 5), (ARRAY['SM', 'MED', 'LG', 'JUMBO', 'WRAP'])[1 + i % 5] || ' ' || (ARRAY['CASE', 'BOX', 'BAG', 'JAR', 'PKG', 'PACK', 'CAN', 'DRUM'])[1 + i / 7 % 8], 1 + i % 50
  FROM generate_series(1, 200000) i;
ANALYZE sc_part;
SET pg_strom.gpu_setup_cost = 100;
SET pg_strom.heap_gather_cost = 0.03;  -- the default (the test cluster's is 0)
SET max_parallel_workers_per_gather = 0;
SELECT * FROM explain_masked($$SELECT p_partkey FROM sc_part WHERE (p_brand = 'Brand#12' AND p_container IN ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG') AND p_size BETWEEN 1 AND 5) OR (p_brand = 'Brand#23' AND p_container IN ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK') AND p_size BETWEEN 1 AND 10) OR (p_brand = 'Brand#34' AND p_container IN ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG') AND p_size BETWEEN 1 AND 15)$$);
SET pg_strom.heap_gather_cost = 0;
SELECT * FROM explain_masked($$SELECT p_partkey FROM sc_part WHERE (p_brand = 'Brand#12' AND p_container IN ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG') AND p_size BETWEEN 1 AND 5) OR (p_brand = 'Brand#23' AND p_container IN ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK') AND p_size BETWEEN 1 AND 10) OR (p_brand = 'Brand#34' AND p_container IN ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG') AND p_size BETWEEN 1 AND 15)$$);
RESET pg_strom.heap_gather_cost;
RESET max_parallel_workers_per_gather;
SET pg_strom.gpu_setup_cost = 0;
DROP TABLE sc_part;

-- A query an index answers cheaply plans no device node, and compiles
-- nothing for one either (DEBUG2 says so; a GpuScan or GpuPreAgg path
-- built and then lost would print its cost instead): a GpuScan's cost is at
-- least its start-up, the table's pages and every row gathered and
-- passed through the device, whatever its quals; a GpuPreAgg's at least
-- the start-up and every row of a table through the device.  A range of
-- 5,000 keys (an index path costing more than pg_strom.gpu_setup_cost
-- alone) planned a GpuScan and a GpuPreAgg only to lose them, doubling
-- the planning time of such lookups.
CREATE TABLE ix_t (id int PRIMARY KEY, v int);
INSERT INTO ix_t SELECT i, i % 1000 FROM generate_series(1, 1000000) i;
ANALYZE ix_t;
SET pg_strom.gpu_setup_cost = 100;
SET pg_strom.heap_gather_cost = 0.03;  -- the default (the test cluster's is 0)
SET max_parallel_workers_per_gather = 2;
SET pg_strom.enable_gpupreagg = on;
SET client_min_messages = debug2;
EXPLAIN (COSTS OFF) SELECT * FROM ix_t WHERE id BETWEEN 1000 AND 6000;
EXPLAIN (COSTS OFF) SELECT count(*), sum(v) FROM ix_t WHERE id BETWEEN 1000 AND 6000;
RESET client_min_messages;
SELECT count(*), sum(v) FROM ix_t WHERE id BETWEEN 1000 AND 6000;
SET pg_strom.enable_gpupreagg = off;
RESET max_parallel_workers_per_gather;
RESET pg_strom.heap_gather_cost;
SET pg_strom.gpu_setup_cost = 0;
DROP TABLE ix_t;
