-- The extension and what it installs.
CREATE EXTENSION IF NOT EXISTS pg_strom;
SELECT extname, extversion IS NOT NULL AS has_version FROM pg_extension WHERE extname = 'pg_strom';
SELECT nspname FROM pg_namespace WHERE nspname = 'pgstrom';
-- Functions in schema pgstrom, and PG-Strom's write-ups' pgstrom_device_info() in public.
SELECT n.nspname, p.proname, pg_get_function_identity_arguments(p.oid) AS args,
       p.provolatile, p.proparallel
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'pgstrom' OR p.proname = 'pgstrom_device_info'
 ORDER BY 1, 2, 3;
SELECT relname, relkind FROM pg_class WHERE relnamespace = 'pgstrom'::regnamespace ORDER BY 1;
-- explain_masked(q, opts, keep): EXPLAIN (opts) q, a row per line, with
-- what differs between machines and runs masked; the tests' plans go
-- through it (it lives in the test database: later tests of the schedule
-- use it).  Masked:
--   GPU Preference: xxx           the GPU's name, or none (CPU engine)
--   engine memory: xxx, GPU Time: xxx, Memory Usage: NkB
--   (read: X, size: Y)            Arrow files' sizes depend on the pyarrow
--                                 version that wrote them
--   GPU Store: (copy in xxx, N bytes, ...)  which engine holds a
--                                 gstore_fdw table's copy, and its size
--   Storage Read: lines dropped   a GPU's storage paths
--                                 (test/service/gpudirect.sh checks them)
--   Engine Time:, Host Time: lines dropped (timings; heap_direct.sql
--                                 checks them)
--   Inner Cache: line dropped     what the cache did depends on the tests
--                                 before (inner_cache.sql checks it); keep
--                                 'inner-cache' shows it
--   Nrows (in/out: N%             planned ratios come from ANALYZE's sample
--   ", N chunks read ahead" dropped: only the GPU service reads ahead
--   Inner Build: built by N processes (how many took part varies), and
--                in N ms, rows ready after N ms with TIMING; loaded
--                into the engine ... (whether the processes share one
--                load depends on the engine), sessions open after N ms
-- keep 'engine-load' shows how the processes loaded the engine: by each
--   process, or once (N times masked), attached by N processes
-- keep names masks not applied: 'nrows' and 'read-ahead' where the values
-- are the same everywhere; 'gpu-number' shows GPU Preference as
-- GPU0 (...), the GPU's number kept and its name masked (test/schedule-gpu).
CREATE FUNCTION explain_masked(q text, opts text DEFAULT 'COSTS OFF', keep text[] DEFAULT '{}')
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE ln text;
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (' || opts || ') ' || q LOOP
    CONTINUE WHEN ln ~ '^\s*Storage Read: ';
    CONTINUE WHEN ln ~ '^\s*(Engine|Host) Time: ';
    CONTINUE WHEN ln ~ '^\s*Inner Cache: ' AND NOT 'inner-cache' = ANY (keep);
    IF 'gpu-number' = ANY (keep) THEN
      ln := regexp_replace(ln, 'GPU Preference: (GPU[0-9]+) \(.*\)$', 'GPU Preference: \1 (...)');
    ELSE
      ln := regexp_replace(ln, 'GPU Preference: .*', 'GPU Preference: xxx');
    END IF;
    ln := regexp_replace(ln, 'engine memory: [0-9.]+[KMG]B', 'engine memory: xxx');
    ln := regexp_replace(ln, '\(copy in .*, [0-9]+ bytes, ', '(copy in xxx, N bytes, ');
    ln := regexp_replace(ln, 'GPU Time: .*', 'GPU Time: xxx');
    ln := regexp_replace(ln, 'Memory Usage: [0-9]+kB', 'Memory Usage: NkB');
    ln := regexp_replace(ln, 'built by [0-9]+ process(es)?', 'built by N processes');
    ln := regexp_replace(ln, 'built by N processes in [0-9.]+ ms', 'built by N processes in N ms');
    ln := regexp_replace(ln, 'rows ready after [0-9.]+ ms', 'rows ready after N ms');
    IF 'engine-load' = ANY (keep) THEN
      ln := regexp_replace(ln, 'loaded into the engine [0-9]+ times', 'loaded into the engine N times');
      ln := regexp_replace(ln, 'attached by [0-9]+ process(es)?', 'attached by N processes');
    ELSE
      ln := regexp_replace(ln, 'loaded into the engine [^;]*?(, sessions open after|$)', 'loaded into the engine ...\1');
    END IF;
    ln := regexp_replace(ln, 'sessions open after [0-9.]+ ms', 'sessions open after N ms');
    ln := regexp_replace(ln, '\(read: [0-9.]+(GB|MB|KB| bytes), size: [0-9.]+(GB|MB|KB| bytes)\)', '(read: X, size: Y)');
    IF NOT 'nrows' = ANY (keep) THEN
      ln := regexp_replace(ln, 'Nrows \(in/out: [0-9.]+%', 'Nrows (in/out: N%');
    END IF;
    IF NOT 'read-ahead' = ANY (keep) THEN
      ln := regexp_replace(ln, ', [0-9]+ chunks read ahead', '');
    END IF;
    RETURN NEXT ln;
  END LOOP;
END $$;
-- plan_needs(setting, q): whether q's plan (EXPLAIN VERBOSE) changes when
-- the boolean setting is turned off (a query rewrite's setting: was the
-- query rewritten?)
CREATE FUNCTION plan_needs(setting text, q text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE a text := ''; b text := ''; ln text; was text := current_setting(setting);
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || q LOOP a := a || ln || E'\n'; END LOOP;
  PERFORM set_config(setting, 'off', true);
  FOR ln IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || q LOOP b := b || ln || E'\n'; END LOOP;
  PERFORM set_config(setting, was, true);
  RETURN a <> b;
END $$;
-- plan_cost(q): the total cost of q's plan as EXPLAIN gives it
CREATE FUNCTION plan_cost(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO j;
  RETURN (j -> 0 -> 'Plan' ->> 'Total Cost')::float8;
END $$;
-- plan_rows(q): the row estimate of q's plan (its top node) as EXPLAIN
-- gives it
CREATE FUNCTION plan_rows(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO j;
  RETURN (j -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
END $$;
-- same_as_off(q): the rows of q with pg_strom on and with it off, as
-- multisets: how many (off), and how many only one of the two has
CREATE FUNCTION same_as_off(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE n bigint; on_only bigint; off_only bigint;
BEGIN
  EXECUTE 'CREATE TEMP TABLE same_on AS ' || q;
  SET LOCAL pg_strom.enabled = off;
  EXECUTE 'CREATE TEMP TABLE same_off AS ' || q;
  SET LOCAL pg_strom.enabled = on;
  SELECT count(*) INTO n FROM same_off;
  SELECT count(*) INTO on_only FROM (TABLE same_on EXCEPT ALL TABLE same_off) d;
  SELECT count(*) INTO off_only FROM (TABLE same_off EXCEPT ALL TABLE same_on) d;
  DROP TABLE same_on, same_off;
  RETURN format('rows %s, only with pg_strom: %s, only without: %s', n, on_only, off_only);
END $$;
-- quiet_wait(): a VACUUM marks pages all-visible only when no other
-- transaction could still see their old rows, and an autovacuum or
-- autoanalyze of another test's table running meanwhile would keep them
-- from it; the tests that need all-visible pages (heap_direct.sql,
-- inner_cache.sql) call this before such a VACUUM: it waits (up to a
-- minute) until no other process holds a snapshot or a transaction id
CREATE PROCEDURE quiet_wait() LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..600 LOOP
    PERFORM pg_stat_clear_snapshot();
    EXIT WHEN NOT EXISTS (SELECT 1 FROM pg_stat_activity
                           WHERE pid <> pg_backend_pid() AND (backend_xmin IS NOT NULL OR backend_xid IS NOT NULL));
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
