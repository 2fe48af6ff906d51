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
SELECT pgstrom.active_engine();
DROP TABLE svc, svc_dim;
