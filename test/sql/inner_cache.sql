-- The cross-query cache of inner builds (pg_strom.inner_cache): the GPU
-- service (a GPU, or its CPU engine without one) keeps a GpuJoin's hashed inner relations,
-- and their rows, for later queries while no row of them changes.
-- EXPLAIN ANALYZE's Inner Cache line says what happened; every answer
-- equals PostgreSQL's.  (Concurrent writers: the isolation test
-- inner_cache_mvcc.)
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.gpu_context_cost = 0;
SET pg_strom.gpu_tuple_cost = 0;
SET pg_strom.heap_gather_cost = 0;
SET pg_strom.cpu_engine_in_service = on;
SET max_parallel_workers_per_gather = 0;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
-- (quiet_wait(), setup.sql, before each VACUUM that must mark pages
-- all-visible)
CREATE TABLE icx_fact (k int, x int) WITH (autovacuum_enabled = off);
INSERT INTO icx_fact SELECT i % 5003, i FROM generate_series(1, 100000) i;
-- char(n) and text columns, a dropped column between them
CREATE TABLE icx_dim (k int PRIMARY KEY, junk text, c char(7), t text) WITH (autovacuum_enabled = off);
INSERT INTO icx_dim SELECT i, repeat('j', i % 9), 'c' || i % 13, 'τ' || i % 17 FROM generate_series(0, 4999) i;
ALTER TABLE icx_dim DROP COLUMN junk;
ALTER TABLE icx_fact SET (parallel_workers = 2);
CALL quiet_wait();
VACUUM (FREEZE, ANALYZE) icx_dim;
ANALYZE icx_fact;

-- q's rows as one sorted array (icx_diff compares them; icx_how runs the
-- same query, so that the two use the same builds)
CREATE FUNCTION icx_rows(q text) RETURNS text LANGUAGE sql
  RETURN 'SELECT array_agg(r::text ORDER BY r::text) FROM (' || q || ') r';
-- the Inner Cache lines of the plan of icx_rows(q), and the node that had
-- them; for a shared build, how its processes got it
CREATE FUNCTION icx_how(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE ln text; node text; m text[];
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || icx_rows(q) LOOP
    m := regexp_match(ln, 'Custom Scan \((Gpu[A-Za-z]+)\)');
    IF m IS NOT NULL THEN node := m[1]; END IF;
    m := regexp_match(ln, 'Inner Cache: (.*)$');
    IF m IS NOT NULL THEN RETURN NEXT node || ': ' || m[1]; END IF;
    -- a shared build says whether its processes built it or took it
    m := regexp_match(ln, 'Inner Build: shared, (built by|taken from the inner cache by) ');
    IF m IS NOT NULL THEN RETURN NEXT node || ' build: ' || m[1]; END IF;
  END LOOP;
END $$;
-- rows of q with pg_strom on that PostgreSQL does not return, and back
CREATE FUNCTION icx_diff(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE a text[]; b text[];
BEGIN
  EXECUTE icx_rows(q) INTO a;
  PERFORM set_config('pg_strom.enabled', 'off', true);
  EXECUTE icx_rows(q) INTO b;
  PERFORM set_config('pg_strom.enabled', 'on', true);
  RETURN CASE WHEN a IS NOT DISTINCT FROM b THEN 'equal, ' || coalesce(cardinality(a), 0) || ' rows'
              ELSE 'DIFFERENT' END;
END $$;

-- a GpuJoin: kept, then found (its rows and its build)
SELECT * FROM icx_how('SELECT f.x, d.c, d.t FROM icx_fact f JOIN icx_dim d ON f.k = d.k WHERE d.k % 50 = 1');
SELECT * FROM icx_how('SELECT f.x, d.c, d.t FROM icx_fact f JOIN icx_dim d ON f.k = d.k WHERE d.k % 50 = 1');
SELECT icx_diff('SELECT f.x, d.c, d.t FROM icx_fact f JOIN icx_dim d ON f.k = d.k WHERE d.k % 50 = 1');
-- the same inner plan in another query (the qual's place in the text
-- differs): the same build; the inner columns in another order: another
SELECT * FROM icx_how('SELECT f.x * 2, d.c, d.t FROM icx_fact f, icx_dim d WHERE f.k = d.k AND d.k % 50 = 1');
SELECT * FROM icx_how('SELECT d.t, f.x, d.c FROM icx_fact f, icx_dim d WHERE d.k % 50 = 1 AND d.k = f.k');
-- GpuPreAgg with the combined join, grouped by the char(n) column of the
-- kept rows; another inner qual is another build
SELECT * FROM icx_how('SELECT d.c, count(*), sum(f.x) FROM icx_fact f JOIN icx_dim d ON f.k = d.k WHERE d.t <> ''τ3'' GROUP BY d.c');
SELECT * FROM icx_how('SELECT d.c, count(*), sum(f.x) FROM icx_fact f JOIN icx_dim d ON f.k = d.k WHERE d.t <> ''τ3'' GROUP BY d.c');
SELECT icx_diff('SELECT d.c, count(*), sum(f.x) FROM icx_fact f JOIN icx_dim d ON f.k = d.k WHERE d.t <> ''τ3'' GROUP BY d.c');

-- a parallel plan: one process looks into the cache for all
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT * FROM icx_how('SELECT d.t, count(*), sum(f.x) FROM icx_fact f JOIN icx_dim d ON f.k = d.k GROUP BY d.t');
SELECT * FROM icx_how('SELECT d.t, count(*), sum(f.x) FROM icx_fact f JOIN icx_dim d ON f.k = d.k GROUP BY d.t');
SELECT icx_diff('SELECT d.t, count(*), sum(f.x) FROM icx_fact f JOIN icx_dim d ON f.k = d.k GROUP BY d.t');
-- grouped by the scanned table's values alone: a hit leaves the kept rows
-- in the service (only their counts are sent)
SELECT * FROM icx_how('SELECT f.k % 7, count(*), sum(f.x + length(d.t)) FROM icx_fact f JOIN icx_dim d ON f.k = d.k GROUP BY 1');
SELECT * FROM icx_how('SELECT f.k % 7, count(*), sum(f.x + length(d.t)) FROM icx_fact f JOIN icx_dim d ON f.k = d.k GROUP BY 1');
SELECT icx_diff('SELECT f.k % 7, count(*), sum(f.x + length(d.t)) FROM icx_fact f JOIN icx_dim d ON f.k = d.k GROUP BY 1');
-- ... and taken from the service where rows are computed on the host:
-- sums whose values the device cannot hold (35 digits), of an inner
-- column, come back as exceptions PostgreSQL computes (CPU Path Rows)
CREATE TABLE icx_num (k int PRIMARY KEY, price numeric(38,2)) WITH (autovacuum_enabled = off);
INSERT INTO icx_num SELECT i, CASE WHEN i % 97 = 0 THEN 999999999999999999999999999999999999.99 - i ELSE i * 1.5 END
  FROM generate_series(0, 4999) i;
CREATE TABLE icx_f2 (k int, g int, disc numeric(15,2)) WITH (autovacuum_enabled = off);
INSERT INTO icx_f2 SELECT i % 5003, i % 3, (i % 11) / 100.0 FROM generate_series(1, 100000) i;
ALTER TABLE icx_f2 SET (parallel_workers = 2);
CALL quiet_wait();
VACUUM (FREEZE, ANALYZE) icx_num;
ANALYZE icx_f2;
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
CREATE FUNCTION icx_cpu_rows(q text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE ln text; m text[];
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    m := regexp_match(ln, 'CPU Path Rows: ([0-9]+)');
    IF m IS NOT NULL THEN RETURN m[1]::int > 0; END IF;
  END LOOP;
  RETURN false;
END $$;
SELECT * FROM icx_how('SELECT f.g, count(*), sum(n.price * (1 - f.disc)) FROM icx_f2 f JOIN icx_num n ON f.k = n.k GROUP BY f.g');
SELECT * FROM icx_how('SELECT f.g, count(*), sum(n.price * (1 - f.disc)) FROM icx_f2 f JOIN icx_num n ON f.k = n.k GROUP BY f.g');
SELECT icx_cpu_rows('SELECT f.g, count(*), sum(n.price * (1 - f.disc)) FROM icx_f2 f JOIN icx_num n ON f.k = n.k GROUP BY f.g');
SELECT icx_diff('SELECT f.g, count(*), sum(n.price * (1 - f.disc)) FROM icx_f2 f JOIN icx_num n ON f.k = n.k GROUP BY f.g');
RESET enable_indexscan;
RESET enable_indexonlyscan;
RESET enable_bitmapscan;
-- a dimension of more than 32 MB (the rows not compressed): the processes
-- publish its rows in several parts (each process its share, in parts of
-- 32 MB at most); the kept build numbers them in that order, and a hit
-- gives them back in the same order
CREATE TABLE icx_wide (k int PRIMARY KEY, g int, w text) WITH (autovacuum_enabled = off);
INSERT INTO icx_wide SELECT i, i % 7, (SELECT string_agg(md5(i || '.' || j), '') FROM generate_series(1, 40) j)
  FROM generate_series(0, 29999) i;
ALTER TABLE icx_wide SET (parallel_workers = 2);
CALL quiet_wait();
VACUUM (FREEZE, ANALYZE) icx_wide;
SET enable_nestloop = off;
-- (the heap direct path would rather scan the all-visible icx_wide on the
-- device and hash icx_fact: off, so that icx_wide stays the inner side)
SET pg_strom.heap_direct = off;
SELECT * FROM icx_how('SELECT f.x, w.g, substr(w.w, 1 + f.x % 1000, 8) FROM icx_fact f JOIN icx_wide w ON f.k = w.k');
SELECT * FROM icx_how('SELECT f.x, w.g, substr(w.w, 1 + f.x % 1000, 8) FROM icx_fact f JOIN icx_wide w ON f.k = w.k');
SELECT icx_diff('SELECT f.x, w.g, substr(w.w, 1 + f.x % 1000, 8) FROM icx_fact f JOIN icx_wide w ON f.k = w.k');
RESET pg_strom.heap_direct;
RESET enable_nestloop;
RESET max_parallel_workers_per_gather;
SET max_parallel_workers_per_gather = 0;

-- a change: not all-visible until a VACUUM, which makes a new build
UPDATE icx_dim SET t = 'changed' WHERE k % 100 = 7;
SELECT * FROM icx_how('SELECT f.x, d.c, d.t FROM icx_fact f JOIN icx_dim d ON f.k = d.k WHERE d.k % 50 = 1');
SELECT icx_diff('SELECT f.x, d.c, d.t FROM icx_fact f JOIN icx_dim d ON f.k = d.k WHERE d.k % 50 = 1');
CALL quiet_wait();
VACUUM icx_dim;
SELECT * FROM icx_how('SELECT f.x, d.c, d.t FROM icx_fact f JOIN icx_dim d ON f.k = d.k WHERE d.k % 50 = 1');
SELECT * FROM icx_how('SELECT f.x, d.c, d.t FROM icx_fact f JOIN icx_dim d ON f.k = d.k WHERE d.k % 50 = 1');
SELECT icx_diff('SELECT f.x, d.c, d.t FROM icx_fact f JOIN icx_dim d ON f.k = d.k WHERE d.k % 50 = 1');

-- an Arrow_Fdw table as the inner relation: kept while its file is the
-- same (path, inode, size, times), never while a transaction writes it
-- (its undo file: the writer and the others read different rows) nor
-- within 2 seconds of a change
\! rm -f /tmp/pgstrom_arrow_test/w/icx_adim.arrow /tmp/pgstrom_arrow_test/w/icx_adim.arrow.pgstrom-undo
CREATE FOREIGN TABLE icx_adim (k int, c text) SERVER arrow_fdw
  OPTIONS (file '/tmp/pgstrom_arrow_test/w/icx_adim.arrow', writable 'true');
INSERT INTO icx_adim SELECT i, 'a' || i % 7 FROM generate_series(0, 4999, 3) i;
ANALYZE icx_adim;
SELECT * FROM icx_how('SELECT f.x, d.c FROM icx_fact f JOIN icx_adim d ON f.k = d.k WHERE d.c <> ''a3''');
SELECT pg_sleep(2.2);
SELECT * FROM icx_how('SELECT f.x, d.c FROM icx_fact f JOIN icx_adim d ON f.k = d.k WHERE d.c <> ''a3''');
SELECT * FROM icx_how('SELECT f.x, d.c FROM icx_fact f JOIN icx_adim d ON f.k = d.k WHERE d.c <> ''a3''');
SELECT icx_diff('SELECT f.x, d.c FROM icx_fact f JOIN icx_adim d ON f.k = d.k WHERE d.c <> ''a3''');
-- a transaction that writes it reads its own rows, not the kept ones
BEGIN;
INSERT INTO icx_adim VALUES (1, 'new');
SELECT * FROM icx_how('SELECT f.x, d.c FROM icx_fact f JOIN icx_adim d ON f.k = d.k WHERE d.c <> ''a3''');
SELECT icx_diff('SELECT f.x, d.c FROM icx_fact f JOIN icx_adim d ON f.k = d.k WHERE d.c <> ''a3''');
ROLLBACK;
-- committed rows: another key (the file grew), a new build with them
INSERT INTO icx_adim VALUES (1, 'new'), (2, 'new');
SELECT pg_sleep(2.2);
SELECT * FROM icx_how('SELECT f.x, d.c FROM icx_fact f JOIN icx_adim d ON f.k = d.k WHERE d.c <> ''a3''');
SELECT * FROM icx_how('SELECT f.x, d.c FROM icx_fact f JOIN icx_adim d ON f.k = d.k WHERE d.c <> ''a3''');
SELECT icx_diff('SELECT f.x, d.c FROM icx_fact f JOIN icx_adim d ON f.k = d.k WHERE d.c <> ''a3''');
SELECT count(*) FROM icx_fact f JOIN icx_adim d ON f.k = d.k WHERE d.c = 'new';
DROP FOREIGN TABLE icx_adim;

-- when the cache is not used
SET pg_strom.inner_cache = off;
SELECT * FROM icx_how('SELECT f.x, d.c FROM icx_fact f JOIN icx_dim d ON f.k = d.k WHERE d.k % 50 = 1');
RESET pg_strom.inner_cache;
SET pg_strom.engine = cpu;
SET pg_strom.cpu_engine_in_service = off;
SELECT * FROM icx_how('SELECT f.x, d.c FROM icx_fact f JOIN icx_dim d ON f.k = d.k WHERE d.k % 50 = 1');
RESET pg_strom.engine;
SET pg_strom.cpu_engine_in_service = on;
CREATE FUNCTION icx_odd(int) RETURNS bool IMMUTABLE LANGUAGE plpgsql AS $$ BEGIN RETURN $1 % 2 = 1; END $$;
SELECT * FROM icx_how('SELECT f.x, d.c FROM icx_fact f JOIN icx_dim d ON f.k = d.k WHERE d.k % 50 = 1 AND icx_odd(d.k)');
SELECT * FROM icx_how('SELECT f.x, d.c FROM icx_fact f JOIN icx_dim d ON f.k = d.k WHERE d.k % 50 = 1 AND d.t < now()::text');
SELECT * FROM icx_how('SELECT f.x, d.m FROM icx_fact f JOIN (SELECT k, max(t) AS m FROM icx_dim WHERE k % 50 = 1 GROUP BY k) d ON f.k = d.k');
CREATE TEMP TABLE icx_temp AS SELECT * FROM icx_dim;
VACUUM icx_temp;
SELECT * FROM icx_how('SELECT f.x, d.c FROM icx_fact f JOIN icx_temp d ON f.k = d.k WHERE d.k % 50 = 1');
CREATE UNLOGGED TABLE icx_unlogged AS SELECT * FROM icx_dim;
VACUUM icx_unlogged;
SELECT * FROM icx_how('SELECT f.x, d.c FROM icx_fact f JOIN icx_unlogged d ON f.k = d.k WHERE d.k % 50 = 1');
BEGIN;
CREATE TABLE icx_new AS SELECT * FROM icx_dim;
SELECT * FROM icx_how('SELECT f.x, d.c FROM icx_fact f JOIN icx_new d ON f.k = d.k WHERE d.k % 50 = 1');
ROLLBACK;

DROP TABLE icx_fact, icx_dim, icx_wide, icx_temp, icx_unlogged;
DROP FUNCTION icx_how(text), icx_diff(text), icx_rows(text), icx_odd(int);
