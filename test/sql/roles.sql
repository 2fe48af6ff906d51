-- A role that is neither superuser nor granted anything: what is safe for
-- everyone works out of the box; what reads server files, writes into the
-- data directory or changes the service's state says which privilege it
-- needs.
CREATE ROLE pgstrom_plain_role;
SET ROLE pgstrom_plain_role;
SELECT pgstrom.active_engine() IN ('gpu', 'cpu') AS engine_known;
SELECT pgstrom.random_setseed(7);
SELECT pgstrom.random_int(0.0, 1, 10) BETWEEN 1 AND 10 AS random_int,
       pgstrom.random_text(0.0, 'ab**') LIKE 'ab__' AS random_text,
       pgstrom.random_date(0.0) IS NOT NULL AS random_date;
SELECT '1.5'::float2 + '2.25'::float2 AS float2_sum;
SELECT state IN ('found', 'none', 'pending') AS discovery_known FROM pgstrom.device_discovery();
SELECT count(*) >= 0 AS device_info FROM pgstrom.gpu_device_info;
SELECT count(*) > 100 AS device_functions FROM pgstrom.device_functions;
SELECT count(*) >= 0 AS engines FROM pgstrom.gpu_service_engines;
SELECT count(*) >= 0 AS service FROM pgstrom.gpu_service_status;
SELECT count(*) >= 0 AS pgstrom_device_info FROM pgstrom_device_info();
SELECT count(*) >= 0 AS gpu_cache_info FROM pgstrom.gpu_cache_info;
-- the device program of an expression over a table the role owns
CREATE TEMP TABLE roles_t (a int);
SELECT pgstrom.device_program('roles_t', 'a + 1') IS NOT NULL AS program;
SELECT value FROM pgstrom.device_eval('roles_t', 'a + 1');
-- privileged: each says what it needs (SQLSTATE 42501)
SELECT pgstrom.device_code_build('sm_90');
SELECT * FROM pgstrom.gpu_storage_distance('/');
SELECT pgstrom.inject_device_fault(0, 0);
SELECT pgstrom.arrow_fdw_write_stats('/tmp/x.arrow', ARRAY['a']);
SELECT pgstrom.gpu_cache_enable('pg_class');
SELECT pgstrom.gpu_cache_disable('pg_class');
DROP TABLE roles_t;
RESET ROLE;
DROP ROLE pgstrom_plain_role;
