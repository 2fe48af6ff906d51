-- Background checkpoints of gstore_fdw tables (docs/gstore_fdw.md,
-- "Checkpoints"): a statement that leaves a table's redo log larger than
-- pg_strom.gstore_checkpoint_log_size starts a background worker, which
-- checkpoints the table once no query or writer holds it; a log left
-- alone for pg_strom.gstore_checkpoint_timeout is checkpointed by the
-- database's timer.  The rows read the same before and after.
\! rm -rf /tmp/pgstrom_gstore_ac && mkdir -p /tmp/pgstrom_gstore_ac && chmod 1777 /tmp/pgstrom_gstore_ac
CREATE FOREIGN TABLE ac (id int, v text) SERVER gstore_fdw
  OPTIONS (base_file '/tmp/pgstrom_gstore_ac/ac.base', redo_log_file '/tmp/pgstrom_gstore_ac/ac.redo');
-- wait (committing between looks, so that this session holds no lock on
-- the table) until the table's generation passes `g`, up to 60 s
CREATE PROCEDURE ac_wait(g bigint) LANGUAGE plpgsql AS $$
DECLARE now_g bigint;
BEGIN
  FOR i IN 1..600 LOOP
    SELECT generation INTO now_g FROM pgstrom.gstore_fdw_info('ac');
    COMMIT;
    EXIT WHEN now_g > g;
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SHOW pg_strom.gstore_checkpoint_log_size;
SET pg_strom.gstore_checkpoint_log_size = '64kB';
-- under the size: no checkpoint
INSERT INTO ac SELECT i, 'v' || i FROM generate_series(1, 100) i;
SELECT pg_sleep(0.5);
SELECT generation, row_versions FROM pgstrom.gstore_fdw_info('ac');
-- over it: the worker checkpoints
INSERT INTO ac SELECT i, repeat('x', 100) FROM generate_series(101, 3000) i;
CALL ac_wait(0);
SELECT generation, redo_log_bytes < 1024 AS log_emptied FROM pgstrom.gstore_fdw_info('ac');
SELECT count(*), count(DISTINCT id), sum(length(v)) FROM ac;
-- the next generation's log fills again: another checkpoint, whose base
-- file drops the versions the UPDATE replaced (no snapshot needs them)
UPDATE ac SET v = repeat('u', 100) WHERE id <= 1000;
CALL ac_wait(1);
SELECT generation, redo_log_bytes < 1024 AS log_emptied FROM pgstrom.gstore_fdw_info('ac');
SELECT count(*), sum(length(v)), count(*) FILTER (WHERE v LIKE 'u%') FROM ac;
-- 0: never
SET pg_strom.gstore_checkpoint_log_size = 0;
INSERT INTO ac SELECT i, repeat('z', 100) FROM generate_series(4001, 6000) i;
SELECT pg_sleep(0.5);
SELECT generation, redo_log_bytes > 65536 AS log_grew FROM pgstrom.gstore_fdw_info('ac');
-- only superusers may change it
CREATE ROLE ac_plain;
SET ROLE ac_plain;
SET pg_strom.gstore_checkpoint_log_size = '1MB';
RESET ROLE;
DROP ROLE ac_plain;
RESET pg_strom.gstore_checkpoint_log_size;
-- the checkpoint timer: a table whose redo log has not been written for
-- pg_strom.gstore_checkpoint_timeout (a server setting, here 1 s) is
-- checkpointed by its database's timer, a background worker that a write
-- starts when none runs
SHOW pg_strom.gstore_checkpoint_timeout;
SET pg_strom.gstore_checkpoint_timeout = 5;
ALTER SYSTEM SET pg_strom.gstore_checkpoint_timeout = '1s';
SELECT pg_reload_conf();
SELECT pg_sleep(0.5);
SHOW pg_strom.gstore_checkpoint_timeout;
SET pg_strom.gstore_checkpoint_log_size = 0;
SELECT generation AS g FROM pgstrom.gstore_fdw_info('ac') \gset
INSERT INTO ac SELECT i, 't' FROM generate_series(7001, 7010) i;
CALL ac_wait(:g);
SELECT generation = :g + 1 AS checkpointed, redo_log_bytes < 1024 AS log_emptied FROM pgstrom.gstore_fdw_info('ac');
SELECT count(*) FILTER (WHERE v = 't') AS new_rows, count(*) FROM ac;
-- a log the checkpoint emptied (its header and layout record) is not
-- checkpointed again, and the timer ends
DO $$
BEGIN
  FOR i IN 1..300 LOOP
    PERFORM pg_stat_clear_snapshot();
    EXIT WHEN NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE backend_type = 'pg_strom gstore_fdw checkpoint');
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SELECT count(*) AS timers FROM pg_stat_activity WHERE backend_type = 'pg_strom gstore_fdw checkpoint';
SELECT generation = :g + 1 AS checkpointed_once FROM pgstrom.gstore_fdw_info('ac');
-- 0: none
ALTER SYSTEM SET pg_strom.gstore_checkpoint_timeout = 0;
SELECT pg_reload_conf();
SELECT pg_sleep(0.5);
SELECT generation AS g FROM pgstrom.gstore_fdw_info('ac') \gset
INSERT INTO ac SELECT i, repeat('n', 200) FROM generate_series(8001, 8010) i;
SELECT pg_sleep(2);
SELECT generation = :g AS kept_its_log, redo_log_bytes > 1024 AS log_holds_rows FROM pgstrom.gstore_fdw_info('ac');
ALTER SYSTEM RESET pg_strom.gstore_checkpoint_timeout;
SELECT pg_reload_conf();
RESET pg_strom.gstore_checkpoint_log_size;
DROP FOREIGN TABLE ac;
DROP PROCEDURE ac_wait(bigint);
