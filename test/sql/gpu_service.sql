-- The GPU service (docs/gpu_service.md): it runs and serves, the CPU
-- engine run there gives the backend's answers, join sessions close with
-- their query, and errors raised in the service read as PostgreSQL's.
SELECT pid > 0 AS running, started <= now() AS started, join_sessions = 0 AS no_sessions
  FROM pgstrom.gpu_service_info();
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.heap_gather_cost = 0;
SET pg_strom.engine = cpu;
CREATE TABLE svc AS
  SELECT i AS id, (i % 100)::int4 AS a, (i * 3 % 17)::float8 AS x, ('k' || (i % 7))::text AS k
    FROM generate_series(1, 100000) i;
CREATE TABLE svc_dim AS SELECT i AS a, 'g' || (i % 4) AS g FROM generate_series(0, 49) i;
ANALYZE svc, svc_dim;
SET pg_strom.cpu_engine_in_service = on;
EXPLAIN (COSTS OFF) SELECT k, count(*), sum(x) FROM svc WHERE a < 30 GROUP BY k ORDER BY k;
SELECT k, count(*), sum(x) FROM svc WHERE a < 30 GROUP BY k ORDER BY k;
EXPLAIN (COSTS OFF) SELECT g, count(*), min(id) FROM svc JOIN svc_dim USING (a) GROUP BY g ORDER BY g;
SELECT g, count(*), min(id) FROM svc JOIN svc_dim USING (a) GROUP BY g ORDER BY g;
SELECT requests > 0 AS served, join_sessions FROM pgstrom.gpu_service_info();
-- the same on the backend's CPU engine and on PostgreSQL
SET pg_strom.cpu_engine_in_service = off;
SELECT g, count(*), min(id) FROM svc JOIN svc_dim USING (a) GROUP BY g ORDER BY g;
SET pg_strom.enabled = off;
SELECT g, count(*), min(id) FROM svc JOIN svc_dim USING (a) GROUP BY g ORDER BY g;
RESET pg_strom.enabled;
-- an overflow in the service: PostgreSQL's own error
SET pg_strom.cpu_engine_in_service = on;
SELECT count(*) FROM svc WHERE a * 30000000 > 5;
SELECT errors > 0 AS error_counted, in_flight, bytes_in > 0 AS bytes_counted FROM pgstrom.gpu_service_status;
-- per engine: the CPU engine's row counts its own requests, chunks and errors
SELECT engine, device, memory_used IS NULL AS no_memory, requests > 0 AS served, chunks > 0 AS chunked,
       in_flight, bytes_in > 0 AS bytes_counted, errors > 0 AS error_counted, arrow_cache_bytes IS NULL AS no_cache,
       join_sessions, scans_placed, busy_ms > 0 AS busy_counted
  FROM pgstrom.gpu_service_engines WHERE engine = 'CPU';
-- its busy time (wall time with a request being served on it) grows
-- with a query it runs
CREATE TEMP TABLE svc_busy AS SELECT busy_ms FROM pgstrom.gpu_service_engines WHERE engine = 'CPU';
SELECT count(*) FROM svc JOIN svc_dim USING (a);
SELECT e.busy_ms > b.busy_ms AS busy_grew FROM pgstrom.gpu_service_engines e, svc_busy b WHERE e.engine = 'CPU';
SELECT pgstrom.active_engine();
-- reading ahead: while the service works on a chunk, the backend reads
-- the next one into its spare buffers (serial, 15 chunks of 7000 rows:
-- 14 read ahead); every result as PostgreSQL's, also on the CPU path
-- (a GpuPreAgg reads those rows again by TID) and with read-ahead off
SET pg_strom.chunk_rows = 7000;
SET max_parallel_workers_per_gather = 0;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
  SELECT count(*), sum(id), sum(x) FROM (SELECT id, x FROM svc WHERE a < 50 OFFSET 0) s;
SELECT count(*), sum(id), sum(x) FROM (SELECT id, x FROM svc WHERE a < 50 OFFSET 0) s;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
  SELECT count(*), sum(id), min(g) FROM (SELECT svc.id, g FROM svc JOIN svc_dim USING (a) WHERE x > 3 OFFSET 0) s;
SELECT count(*), sum(id), min(g) FROM (SELECT svc.id, g FROM svc JOIN svc_dim USING (a) WHERE x > 3 OFFSET 0) s;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
  SELECT k, count(*), sum(id), min(x) FROM svc
   WHERE nullif(a % 10, 5) > -10 AND 100 / (a % 10 - 5) > 0 GROUP BY k ORDER BY k;
SELECT k, count(*), sum(id), min(x) FROM svc
 WHERE nullif(a % 10, 5) > -10 AND 100 / (a % 10 - 5) > 0 GROUP BY k ORDER BY k;
-- few rows returned: later chunks keep TIDs and read the returned rows
-- again (here the first 9 chunks return 5% of their rows, the last ones
-- every row: TIDs in between, pages copied again at the end); rows, ctids
-- and values as PostgreSQL's, also through a GpuJoin
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
  SELECT count(*), sum(id), string_agg(k, '' ORDER BY id), max(ctid) FROM
    (SELECT id, k, ctid FROM svc WHERE a < 5 OR id > 60000 OFFSET 0) s;
SELECT count(*), sum(id), md5(string_agg(k || ctid::text, '' ORDER BY id)), max(ctid) FROM
  (SELECT id, k, ctid FROM svc WHERE a < 5 OR id > 60000 OFFSET 0) s;
SELECT count(*), sum(svc.id), md5(string_agg(g || svc.ctid::text, '' ORDER BY svc.id)) FROM
  (SELECT svc.id, svc.ctid, g FROM svc JOIN svc_dim USING (a) WHERE x < 1 OFFSET 0) svc;
SET pg_strom.enabled = off;
SELECT count(*), sum(id), md5(string_agg(k || ctid::text, '' ORDER BY id)), max(ctid) FROM
  (SELECT id, k, ctid FROM svc WHERE a < 5 OR id > 60000 OFFSET 0) s;
SELECT count(*), sum(svc.id), md5(string_agg(g || svc.ctid::text, '' ORDER BY svc.id)) FROM
  (SELECT svc.id, svc.ctid, g FROM svc JOIN svc_dim USING (a) WHERE x < 1 OFFSET 0) svc;
RESET pg_strom.enabled;
SET pg_strom.chunk_read_ahead = off;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
  SELECT count(*), sum(id), sum(x) FROM (SELECT id, x FROM svc WHERE a < 50 OFFSET 0) s;
SELECT count(*), sum(id), min(g) FROM (SELECT svc.id, g FROM svc JOIN svc_dim USING (a) WHERE x > 3 OFFSET 0) s;
RESET pg_strom.chunk_read_ahead;
SET pg_strom.enabled = off;
SELECT count(*), sum(id), sum(x) FROM (SELECT id, x FROM svc WHERE a < 50 OFFSET 0) s;
SELECT count(*), sum(id), min(g) FROM (SELECT svc.id, g FROM svc JOIN svc_dim USING (a) WHERE x > 3 OFFSET 0) s;
SELECT k, count(*), sum(id), min(x) FROM svc
 WHERE nullif(a % 10, 5) > -10 AND 100 / (a % 10 - 5) > 0 GROUP BY k ORDER BY k;
RESET pg_strom.enabled;
RESET pg_strom.chunk_rows;
RESET max_parallel_workers_per_gather;
DROP TABLE svc, svc_dim;
-- Arrow_Fdw columns the service reads from the file itself (a GPU keeps
-- them in device memory for later queries): PostgreSQL's answers, and
-- EXPLAIN ANALYZE counts them (chunks are whole record batches then);
-- compressed batches and other types go in memory as before
\! rm -f /tmp/pgstrom_arrow_test/w/svc_files.arrow /tmp/pgstrom_arrow_test/w/svc_files.arrow.pgstrom-undo
CREATE FOREIGN TABLE svc_arrow (id int8, a int4, x float8, s int2, k text) SERVER arrow_fdw
  OPTIONS (file '/tmp/pgstrom_arrow_test/w/svc_files.arrow', writable 'true');
INSERT INTO svc_arrow
  SELECT i, CASE WHEN i % 11 = 0 THEN NULL ELSE i % 50 END, (i % 13)::float8 / 4, (i % 300)::int2, 'k' || (i % 5)
    FROM generate_series(1, 200000) i;
INSERT INTO svc_arrow SELECT i, i % 50, NULL, NULL, NULL FROM generate_series(200001, 230000) i;
CREATE TABLE svc_arrow_dim AS SELECT i AS a, 'g' || (i % 4) AS g FROM generate_series(0, 49) i;
ANALYZE svc_arrow_dim;
SET pg_strom.gpu_context_cost = 0;
CREATE FUNCTION svc_explain(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) ' || q LOOP
    IF l ~ '(GpuPreAgg|Columns From Files|GPU Input Rows)' THEN RETURN NEXT trim(l); END IF;
  END LOOP;
END $$;
SET pg_strom.cpu_engine_in_service = on;
SELECT svc_explain('SELECT g, count(*), sum(id), sum(x), min(s), max(s) FROM svc_arrow JOIN svc_arrow_dim USING (a) GROUP BY g');
SELECT g, count(*), sum(id), sum(x), min(s), max(s) FROM svc_arrow JOIN svc_arrow_dim USING (a) GROUP BY g ORDER BY g;
SET pg_strom.chunk_rows = 1000;
SELECT g, count(*), sum(id), sum(x), min(s), max(s) FROM svc_arrow JOIN svc_arrow_dim USING (a) GROUP BY g ORDER BY g;
RESET pg_strom.chunk_rows;
SET pg_strom.enabled = off;
SELECT g, count(*), sum(id), sum(x), min(s), max(s) FROM svc_arrow JOIN svc_arrow_dim USING (a) GROUP BY g ORDER BY g;
RESET pg_strom.enabled;
-- the backend's own CPU engine reads no file
SET pg_strom.cpu_engine_in_service = off;
SELECT svc_explain('SELECT g, count(*), sum(id) FROM svc_arrow JOIN svc_arrow_dim USING (a) GROUP BY g');
DROP FUNCTION svc_explain(text);
DROP FOREIGN TABLE svc_arrow;
DROP TABLE svc_arrow_dim;
RESET pg_strom.gpu_context_cost;
-- statement_timeout (and a cancel) stop a backend waiting for the service:
-- one 3M-row chunk of 20 square roots a row takes the service's CPU
-- engine seconds
CREATE TABLE svc_big AS SELECT i AS id, (i % 1000)::float8 AS x FROM generate_series(1, 3000000) i;
ANALYZE svc_big;
SET max_parallel_workers_per_gather = 0;
SET pg_strom.chunk_rows = 3000000;
SET statement_timeout = '700ms';
SELECT count(*) FROM (SELECT id FROM svc_big
  WHERE sqrt(sqrt(x + 1) + sqrt(x + 2) + sqrt(x + 3) + sqrt(x + 4) + sqrt(x + 5) + sqrt(x + 6) + sqrt(x + 7) +
             sqrt(x + 8) + sqrt(x + 9) + sqrt(x + 10) + sqrt(x + 11) + sqrt(x + 12) + sqrt(x + 13) + sqrt(x + 14) +
             sqrt(x + 15) + sqrt(x + 16) + sqrt(x + 17) + sqrt(x + 18) + sqrt(x + 19) + sqrt(x + 20)) > 3 OFFSET 0) s;
RESET statement_timeout;
-- the next request connects again
SELECT count(*) FROM (SELECT id FROM svc_big WHERE x > 990 OFFSET 0) s;
DROP TABLE svc_big;
