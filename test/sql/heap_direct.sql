-- The heap direct path (docs/gpu_service.md, "Heap tables"): a GpuPreAgg
-- hands the GPU service the all-visible blocks of a heap table that shared
-- buffers hold no dirty copy of; the service reads them from the files and
-- takes the tuples apart on its engine.  Every result is compared with
-- pg_strom off; hd_how() tells which way the blocks went.  The CPU engine
-- runs in the service (on a GPU machine the GPU does).
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.gpu_context_cost = 0;
SET pg_strom.gpu_tuple_cost = 0;
SET pg_strom.heap_gather_cost = 0;
SET pg_strom.cpu_engine_in_service = on;
SET max_parallel_workers_per_gather = 0;

-- the blocks must be all-visible to go direct: quiet_wait() (setup.sql)
-- runs before every VACUUM of this file

-- NULLs in every column, extremes, a varlena and a char(n) before the
-- columns read, and a NOT NULL column (no null bitmap in most tuples)
CREATE TABLE hd_t (g int NOT NULL, s text, i2 int2, c char(5), i8 int8, f8 float8, d date, ts timestamp, b bool, f4 float4);
INSERT INTO hd_t SELECT i, CASE WHEN i % 7 = 0 THEN NULL ELSE repeat('é', i % 40) END,
    CASE WHEN i % 11 = 0 THEN NULL ELSE (i % 32767)::int2 END, 'c' || i % 9,
    CASE WHEN i % 13 = 0 THEN NULL WHEN i % 17 = 0 THEN 9223372036854775807 - i ELSE i * 1000 END,
    CASE WHEN i % 19 = 0 THEN NULL WHEN i % 23 = 0 THEN 'NaN' ELSE i / 8.0 END,
    CASE WHEN i % 29 = 0 THEN NULL ELSE date '1999-12-31' + i % 800 END,
    CASE WHEN i % 31 = 0 THEN NULL ELSE timestamp '2000-02-28 23:00' + (i % 100) * interval '1 hour' END,
    CASE WHEN i % 37 = 0 THEN NULL ELSE i % 2 = 0 END,
    CASE WHEN i % 41 = 0 THEN NULL ELSE (i % 1000) / 4.0 END
  FROM generate_series(1, 40000) i;
CALL quiet_wait();
VACUUM (FREEZE, ANALYZE) hd_t;
CHECKPOINT;

-- "direct" when the service read blocks, "buffer manager" when some went
-- through it (some because the device refused them), with the plan's node
CREATE FUNCTION hd_how(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE ln text; node text := 'no pg_strom node'; direct bigint := 0; buffered bigint := 0; refused bigint := 0; m text[];
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF ln ~ 'Custom Scan \(Gpu' THEN node := substring(ln from 'Custom Scan \((Gpu[A-Za-z]+)\)'); END IF;
    m := regexp_match(ln, 'Heap Direct Read: ([0-9]+) blocks .* ([0-9]+) through the buffer manager');
    IF m IS NOT NULL THEN direct := direct + m[1]::bigint; buffered := buffered + m[2]::bigint; END IF;
    m := regexp_match(ln, '\(([0-9]+) refused by the device');
    IF m IS NOT NULL THEN refused := refused + m[1]::bigint; END IF;
  END LOOP;
  RETURN node || ': ' || CASE WHEN direct > 0 THEN 'direct' ELSE 'not direct' END
    || CASE WHEN buffered > 0 THEN ' + buffer manager' ELSE '' END
    || CASE WHEN refused > 0 THEN ' (some refused by the device)' ELSE '' END;
END $$;
-- the rows of q with pg_strom on, less those with pg_strom off, and back
CREATE FUNCTION hd_diff(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE 'CREATE TEMP TABLE hd_on AS ' || q;
  SET LOCAL pg_strom.enabled = off;
  EXECUTE 'CREATE TEMP TABLE hd_off AS ' || q;
  SET LOCAL pg_strom.enabled = on;
  EXECUTE 'SELECT count(*) FROM ((TABLE hd_on EXCEPT ALL TABLE hd_off) UNION ALL (TABLE hd_off EXCEPT ALL TABLE hd_on)) x' INTO n;
  DROP TABLE hd_on, hd_off;
  RETURN n;
END $$;

-- every column type the path takes, NULLs and extremes
SELECT hd_how('SELECT d, count(*) AS n, count(i2) AS n2, sum(i2) AS s2, min(i8) AS lo8, max(i8) AS hi8, count(f8) AS nf, max(f8) AS hif, min(ts) AS lots, max(ts) AS hits, count(b) AS nb, count(*) FILTER (WHERE b) AS nt, sum(f4) AS sf FROM hd_t GROUP BY d');
SELECT hd_diff('SELECT d, count(*) AS n, count(i2) AS n2, sum(i2) AS s2, min(i8) AS lo8, max(i8) AS hi8, count(f8) AS nf, max(f8) AS hif, min(ts) AS lots, max(ts) AS hits, count(b) AS nb, count(*) FILTER (WHERE b) AS nt, sum(f4) AS sf FROM hd_t GROUP BY d');
-- a scan qual and grouping by a column read from the blocks
SELECT hd_how('SELECT d, count(*), sum(i8) FROM hd_t WHERE f8 > 100 AND i2 IS NOT NULL GROUP BY d');
SELECT hd_diff('SELECT d, count(*), sum(i8) FROM hd_t WHERE f8 > 100 AND i2 IS NOT NULL GROUP BY d');
-- numerics (TPC-H's decimals), decoded by the device from the blocks:
-- NULLs, NaN, infinities, 38 digits, zero with a scale, the long form (a
-- display scale past the short form's 63), negatives; a numeric of more
-- than 38 digits and a compressed one (a long value in a wide row) send
-- their blocks through the buffer manager, where the host decodes them
CREATE TABLE hd_num (g int, price numeric(15,2), disc numeric(15,2), q numeric);
INSERT INTO hd_num SELECT i, CASE WHEN i % 13 = 0 THEN NULL ELSE (i % 100000) * 1.01 END,
    (i % 11) / 100.0,
    CASE WHEN i % 1009 = 0 THEN 'NaN' WHEN i % 1013 = 0 THEN 'Infinity' WHEN i % 1019 = 0 THEN '-Infinity'
         WHEN i % 17 = 0 THEN NULL
         WHEN i % 5 = 0 THEN '99999999999999999999999999999999999999'::numeric - i
         WHEN i % 7 = 0 THEN ('1e-70'::numeric * i)
         WHEN i % 3 = 0 THEN '0.000'::numeric
         ELSE (i - 20000) / 7.0 END
  FROM generate_series(1, 40000) i;
-- (the keys' distinct values for the planner: a numeric sum's partial
-- groups cost the host, priced by their estimate)
CREATE STATISTICS hd_num_k10 ON (g % 10) FROM hd_num;
CREATE STATISTICS hd_num_k3 ON (g % 3) FROM hd_num;
CALL quiet_wait();
VACUUM (FREEZE, ANALYZE) hd_num;
CHECKPOINT;
SELECT hd_how('SELECT g % 10 AS k, count(*), sum(price) AS sp, avg(disc) AS ad FROM hd_num GROUP BY 1');
SELECT hd_diff('SELECT g % 10 AS k, count(*), sum(price) AS sp, avg(disc) AS ad FROM hd_num GROUP BY 1');
SELECT hd_how('SELECT g % 10 AS k, min(price) AS lo, max(price) AS hi FROM hd_num GROUP BY 1');
SELECT hd_diff('SELECT g % 10 AS k, min(price) AS lo, max(price) AS hi FROM hd_num GROUP BY 1');
SELECT hd_how('SELECT sum(price * disc) AS revenue FROM hd_num WHERE disc BETWEEN 0.05 AND 0.07 AND price < 50000');
SELECT hd_diff('SELECT sum(price * disc) AS revenue FROM hd_num WHERE disc BETWEEN 0.05 AND 0.07 AND price < 50000');
SELECT hd_how('SELECT g % 3 AS k, count(q) AS nq, count(*) AS n FROM hd_num WHERE q > 0 GROUP BY 1');
SELECT hd_diff('SELECT g % 3 AS k, count(q) AS nq, count(*) AS n FROM hd_num WHERE q > 0 GROUP BY 1');
SELECT hd_how('SELECT g % 3 AS k, count(q), sum(price) FROM hd_num WHERE q > 1e30 OR q < -1e-60 GROUP BY 1');
SELECT hd_diff('SELECT g % 3 AS k, count(q), sum(price) FROM hd_num WHERE q > 1e30 OR q < -1e-60 GROUP BY 1');
INSERT INTO hd_num (g, q) SELECT 40000 + i, CASE WHEN i % 2 = 0 THEN 1e40 + i ELSE repeat('1234', 1250)::numeric + i END
  FROM generate_series(1, 10) i;
SELECT pg_column_compression(q) IS NOT NULL AS some_compressed FROM hd_num WHERE g = 40001;
CALL quiet_wait();
VACUUM (FREEZE) hd_num;
CHECKPOINT;
SELECT hd_how('SELECT g % 3 AS k, count(q) AS nq, count(*) AS n FROM hd_num WHERE q > 0 GROUP BY 1');
SELECT hd_diff('SELECT g % 3 AS k, count(q) AS nq, count(*) AS n FROM hd_num WHERE q > 0 GROUP BY 1');
DROP TABLE hd_num;

-- text-like columns (text, varchar, char(n), bytea), their bytes copied by
-- the device from the blocks: scan quals (=, IN, LIKE, trailing blanks of
-- char(n)), a join key, length(); NULLs, empty strings, multibyte text,
-- values past a 1-byte header; a compressed value and an out-of-line one
-- send their blocks through the buffer manager
SELECT hd_how('SELECT g % 10 AS k, count(s) AS ns, sum(length(s)) AS ls FROM hd_t GROUP BY 1');
SELECT hd_diff('SELECT g % 10 AS k, count(s) AS ns, sum(length(s)) AS ls FROM hd_t GROUP BY 1');
SELECT hd_how($q$SELECT d, count(*), sum(i8) FROM hd_t WHERE c = 'c3' AND s LIKE '%éé%' GROUP BY d$q$);
SELECT hd_diff($q$SELECT d, count(*), sum(i8) FROM hd_t WHERE c = 'c3' AND s LIKE '%éé%' GROUP BY d$q$);
CREATE TABLE hd_txt (g int, mode char(10), instr varchar(25), note text, raw bytea, v numeric(15,2)) WITH (autovacuum_enabled = off);
INSERT INTO hd_txt SELECT i,
    CASE WHEN i % 17 = 0 THEN NULL ELSE (ARRAY['AIR', 'AIR REG', 'MAIL', 'SHIP', 'TRUCK', ''])[1 + i % 6] END,
    CASE WHEN i % 19 = 0 THEN NULL ELSE (ARRAY['DELIVER IN PERSON', 'NONE', 'TAKE BACK RETURN', 'COLLECT COD'])[1 + i % 4] END,
    CASE WHEN i % 23 = 0 THEN NULL WHEN i % 5 = 0 THEN repeat('ü', 100 + i % 50) WHEN i % 7 = 0 THEN '' ELSE 'n' || i END,
    CASE WHEN i % 29 = 0 THEN NULL ELSE decode(lpad(to_hex(i), 8, '0'), 'hex') END,
    (i % 1000) * 1.25
  FROM generate_series(1, 30000) i;
CALL quiet_wait();
VACUUM (FREEZE, ANALYZE) hd_txt;
CHECKPOINT;
SELECT hd_how($q$SELECT sum(v) AS revenue, count(*) FROM hd_txt WHERE mode IN ('AIR', 'AIR REG') AND instr = 'DELIVER IN PERSON'$q$);
SELECT hd_diff($q$SELECT sum(v) AS revenue, count(*) FROM hd_txt WHERE mode IN ('AIR', 'AIR REG') AND instr = 'DELIVER IN PERSON'$q$);
SELECT hd_diff($q$SELECT g % 7 AS k, count(mode) AS nm, count(*) FILTER (WHERE mode = 'AIR       ') AS air, count(*) FILTER (WHERE mode = '') AS blank, sum(length(note)) AS ln, sum(octet_length(note)) AS on, count(raw) AS nr, max(octet_length(raw)) AS lr FROM hd_txt GROUP BY 1$q$);
SELECT hd_diff($q$SELECT g % 3 AS k, count(*) FROM hd_txt WHERE note LIKE 'ü%' OR note = '' OR raw = '\x0000ffff'::bytea GROUP BY 1$q$);
CREATE TABLE hd_modes AS SELECT m AS mode, length(m) AS w FROM unnest(ARRAY['AIR', 'MAIL', 'SHIP', 'RAIL']) m;
ANALYZE hd_modes;
SELECT hd_how('SELECT w, count(*), sum(v) FROM hd_txt JOIN hd_modes USING (mode) GROUP BY w');
SELECT hd_diff('SELECT w, count(*), sum(v) FROM hd_txt JOIN hd_modes USING (mode) GROUP BY w');
-- grouping keys that are the table's text-like columns: their values at
-- each group's representative row come back from the service (TPC-H Q1's
-- shape: char(1) flags; a NULL key, an empty one, multibyte ones, bytea;
-- few groups and thousands)
SELECT hd_how('SELECT mode, instr, count(*), sum(v) FROM hd_txt GROUP BY mode, instr');
SELECT hd_diff('SELECT mode, instr, count(*), sum(v) AS sv, avg(v) AS av FROM hd_txt GROUP BY mode, instr');
SELECT hd_diff('SELECT note, count(*) AS n, min(g) AS lo FROM hd_txt GROUP BY note');
SELECT hd_diff('SELECT raw, mode, count(*) AS n FROM hd_txt WHERE g % 3 = 0 GROUP BY raw, mode');
SELECT hd_how('SELECT c, count(*), sum(i8) FROM hd_t GROUP BY c');
SELECT hd_diff('SELECT c, count(*), sum(i8) AS s FROM hd_t GROUP BY c');
SELECT hd_diff('SELECT s, d, count(*) AS n FROM hd_t GROUP BY s, d');
SELECT hd_how('SELECT mode, w, count(*) FROM hd_txt JOIN hd_modes USING (mode) GROUP BY mode, w');
SELECT hd_diff('SELECT mode, w, count(*) AS n FROM hd_txt JOIN hd_modes USING (mode) GROUP BY mode, w');
-- a compressed note (a long, repetitive value in a row that must shrink)
-- and an out-of-line one
INSERT INTO hd_txt (g, mode, note, v) VALUES (30001, 'AIR', repeat('abc', 3000), 1), (30002, 'AIR', (SELECT string_agg(md5(i::text), '') FROM generate_series(1, 300) i), 2);
SELECT g, pg_column_compression(note) IS NOT NULL AS compressed FROM hd_txt WHERE g > 30000 ORDER BY g;
CALL quiet_wait();
VACUUM (FREEZE) hd_txt;
CHECKPOINT;
SELECT hd_how($q$SELECT count(*), sum(length(note)) FROM hd_txt WHERE mode = 'AIR'$q$);
SELECT hd_diff($q$SELECT count(*), sum(length(note)) AS ln FROM hd_txt WHERE mode = 'AIR'$q$);
DROP TABLE hd_txt, hd_modes;

-- (the tables of this file are vacuumed by the file: an autovacuum of
-- one, holding back the removal horizon, could keep another's VACUUM
-- from marking its pages all-visible, and its blocks off the path)
-- TPC-H Q1's shape: char(1) grouping keys read from the blocks, and a
-- charge the planner bounds to 47 digits only (summed on the device; a
-- row whose value the device cannot hold is an exception): all direct;
-- after a row of 36 digits arrives, its block fails on the device and
-- goes through the buffer manager, where PostgreSQL computes that row
CREATE TABLE hd_q1 (flag char(1), status char(1), qty numeric(15,2), price numeric(38,2), disc numeric(15,2), tax numeric(15,2), ship date) WITH (autovacuum_enabled = off);
INSERT INTO hd_q1 SELECT (ARRAY['A', 'N', 'R'])[1 + i % 3], (ARRAY['F', 'O'])[1 + i % 2], 1 + i % 50, (i % 100000) * 1.5,
    (i % 11) / 100.0, (i % 9) / 100.0, date '1992-01-01' + i % 2500
  FROM generate_series(1, 30000) i;
CALL quiet_wait();
VACUUM (FREEZE, ANALYZE) hd_q1;
CHECKPOINT;
SELECT hd_how($q$SELECT flag, status, sum(qty), sum(price * (1 - disc) * (1 + tax)), count(*) FROM hd_q1 WHERE ship <= date '1998-09-02' GROUP BY flag, status$q$);
SELECT hd_diff($q$SELECT flag, status, sum(qty) AS sq, sum(price) AS sp, sum(price * (1 - disc)) AS dp, sum(price * (1 - disc) * (1 + tax)) AS charge, avg(qty) AS aq, avg(price) AS ap, avg(disc) AS ad, count(*) AS n FROM hd_q1 WHERE ship <= date '1998-09-02' GROUP BY flag, status$q$);
INSERT INTO hd_q1 VALUES ('A', 'F', 1, 999999999999999999999999999999999999.99, 0.01, 0.02, date '1995-01-01');
CALL quiet_wait();
VACUUM (FREEZE) hd_q1;
CHECKPOINT;
SELECT hd_how($q$SELECT flag, status, sum(qty), sum(price * (1 - disc) * (1 + tax)), count(*) FROM hd_q1 WHERE ship <= date '1998-09-02' GROUP BY flag, status$q$);
SELECT hd_diff($q$SELECT flag, status, sum(qty) AS sq, sum(price) AS sp, sum(price * (1 - disc) * (1 + tax)) AS charge, avg(price * (1 - disc) * (1 + tax)) AS ac, count(*) AS n FROM hd_q1 WHERE ship <= date '1998-09-02' GROUP BY flag, status$q$);
DROP TABLE hd_q1;

-- overflow raised as PostgreSQL raises it (the blocks go through the
-- buffer manager, where the CPU path finds the row)
SELECT sum(i8 * 2) FROM hd_t WHERE i8 > 9000000000000000000;

-- rows changed after the load: their blocks are no longer all-visible
-- and are read through the buffer manager, the new row versions included
UPDATE hd_t SET i8 = -i8 WHERE g BETWEEN 1000 AND 1400;
DELETE FROM hd_t WHERE g BETWEEN 20000 AND 20100;
INSERT INTO hd_t (g, i8) SELECT i, i FROM generate_series(50001, 50100) i;
CHECKPOINT;
SELECT hd_how('SELECT g % 10 AS k, count(*) AS n, sum(i8) AS s, min(i8) AS lo FROM hd_t GROUP BY 1');
SELECT hd_diff('SELECT g % 10 AS k, count(*) AS n, sum(i8) AS s, min(i8) AS lo FROM hd_t GROUP BY 1');
-- dirty in shared buffers (no checkpoint since): through the buffer manager
CALL quiet_wait();
VACUUM hd_t;
SELECT hd_how('SELECT g % 10 AS k, count(*) AS n, sum(i8) AS s, min(i8) AS lo FROM hd_t GROUP BY 1');
SELECT hd_diff('SELECT g % 10 AS k, count(*) AS n, sum(i8) AS s, min(i8) AS lo FROM hd_t GROUP BY 1');
CHECKPOINT;

-- tuples older than an added column hold fewer attributes: the device
-- refuses their blocks, PostgreSQL fills in the column's default
ALTER TABLE hd_t ADD COLUMN n int DEFAULT 42;
INSERT INTO hd_t (g, n) SELECT i, i % 3 FROM generate_series(60001, 62000) i;
CALL quiet_wait();
VACUUM (FREEZE) hd_t;
CHECKPOINT;
SELECT hd_how('SELECT n, count(*), sum(g) FROM hd_t GROUP BY n');
SELECT hd_diff('SELECT n, count(*), sum(g) FROM hd_t GROUP BY n');

-- a join below the aggregation (the SSB shape); a parallel plan
CREATE TABLE hd_dim AS SELECT i AS k, 'name' || (i % 5) AS name FROM generate_series(0, 99) i;
ANALYZE hd_dim;
SELECT hd_how('SELECT name, count(*), sum(f8) FROM hd_t JOIN hd_dim ON g % 100 = k GROUP BY name');
SELECT hd_diff('SELECT name, count(*), sum(f8) FROM hd_t JOIN hd_dim ON g % 100 = k GROUP BY name');
-- a GpuJoin that returns its rows: the service joins the blocks' tuples
-- and sends the combinations back with the tuples they read, found in
-- the pages it read (pages with line pointers the updates and deletes
-- above left unused among them), from which the backend
-- forms the rows (text, char(n), the row's ctid and the whole row
-- included); the blocks changed since (updated, not all-visible) or
-- refused (tuples older than ADD COLUMN) through the buffer manager
SELECT hd_how('SELECT g, s, c, i8, name FROM hd_t JOIN hd_dim ON g % 100 = k WHERE f8 > 10');
SELECT hd_diff('SELECT g, s, c, i8, f8, d, ts, b, f4, n, name FROM hd_t JOIN hd_dim ON g % 100 = k WHERE f8 > 10');
SELECT hd_diff('SELECT hd_t.ctid::text AS tid, hd_t::text AS rw, name FROM hd_t JOIN hd_dim ON g % 100 = k AND k < 3');
-- a GpuScan: the service filters the blocks' tuples and sends back those
-- that passed; the backend returns them, a
-- qual the device cannot run (a regular expression) and the projection
-- (here partly by GPU Projection, for the blocks the buffer manager
-- reads) evaluated on the copies
SELECT hd_how('SELECT g, s, c, i8 FROM hd_t WHERE f8 > 10 AND i2 < 1000');
-- the tuples the service sent back (EXPLAIN ANALYZE's Heap Direct Read):
-- some, and no more than the rows the node returned (those of the blocks
-- the device refused came through the buffer manager)
CREATE FUNCTION hd_tuples(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE ln text; tuples bigint := 0; returned bigint := -1; m text[];
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    m := regexp_match(ln, '; ([0-9]+) tuples \([^)]*\) sent back for the rows returned');
    IF m IS NOT NULL THEN tuples := tuples + m[1]::bigint; END IF;
    m := regexp_match(ln, 'Custom Scan \(Gpu[A-Za-z]+\).*rows=([0-9.]+) loops=1\)');
    IF m IS NOT NULL AND returned < 0 THEN returned := m[1]::numeric; END IF;
  END LOOP;
  RETURN CASE WHEN tuples > 0 AND tuples <= returned THEN 'some tuples sent back, at most the rows returned'
              ELSE format('%s tuples sent back for %s rows', tuples, returned) END;
END $$;
SELECT hd_tuples('SELECT g, s, c, i8 FROM hd_t WHERE f8 > 10 AND i2 < 1000');
SELECT hd_tuples('SELECT g, s, c, i8, name FROM hd_t JOIN hd_dim ON g % 100 = k WHERE f8 > 10');
SELECT hd_diff('SELECT g, s, i2, c, i8, f8, d, ts, b, f4, n FROM hd_t WHERE f8 > 10 AND i2 < 1000');
SELECT hd_diff('SELECT ctid::text AS tid, hd_t::text AS rw, i8 / 2 + g AS x, f8 / 3 AS y, length(s) AS l FROM hd_t WHERE g % 13 = 1');
SELECT hd_diff('SELECT g, s FROM hd_t WHERE f8 > 10 AND s ~ ''^é{3,5}$''');
SELECT hd_diff('SELECT g, c FROM hd_t WHERE c = ''c3'' AND d > date ''2001-01-01''');
-- UPDATE, DELETE and SELECT ... FOR UPDATE through a GpuScan on the path:
-- the copies carry their TIDs (the blocks were filtered and copied before
-- the statement changed any; a block it changed loses its all-visible
-- bit, so a later request would read it through the buffer manager, where
-- the statement's own new row versions are not seen).  hd_u2 gets the
-- same statements with pg_strom off
CREATE TABLE hd_u (g int, v int8, s text) WITH (autovacuum_enabled = off);
INSERT INTO hd_u SELECT i, i, 'u' || i FROM generate_series(1, 30000) i;
CREATE TABLE hd_u2 (LIKE hd_u) WITH (autovacuum_enabled = off);
INSERT INTO hd_u2 TABLE hd_u;
CALL quiet_wait();
VACUUM (FREEZE, ANALYZE) hd_u, hd_u2;
CHECKPOINT;
SELECT hd_how('UPDATE hd_u SET v = v + 1, s = s || ''+'' WHERE g % 7 = 2');
SET pg_strom.enabled = off;
UPDATE hd_u2 SET v = v + 1, s = s || '+' WHERE g % 7 = 2;
RESET pg_strom.enabled;
SELECT (SELECT count(*) FROM (TABLE hd_u EXCEPT ALL TABLE hd_u2) a) AS only_on, (SELECT count(*) FROM (TABLE hd_u2 EXCEPT ALL TABLE hd_u) b) AS only_off;
CALL quiet_wait();
VACUUM (FREEZE) hd_u, hd_u2;
CHECKPOINT;
SELECT hd_how('DELETE FROM hd_u WHERE g % 11 = 5');
SET pg_strom.enabled = off;
DELETE FROM hd_u2 WHERE g % 11 = 5;
RESET pg_strom.enabled;
SELECT (SELECT count(*) FROM (TABLE hd_u EXCEPT ALL TABLE hd_u2) a) AS only_on, (SELECT count(*) FROM (TABLE hd_u2 EXCEPT ALL TABLE hd_u) b) AS only_off;
CALL quiet_wait();
VACUUM (FREEZE) hd_u;
CHECKPOINT;
BEGIN;
SELECT hd_how('SELECT g, s FROM hd_u WHERE g % 13 = 1 FOR UPDATE');
SELECT count(*), sum(g) FROM (SELECT g, s FROM hd_u WHERE g % 13 = 1 FOR UPDATE) x;
COMMIT;
DROP TABLE hd_u, hd_u2;
-- LEFT (the scanned table's rows kept), semi and anti joins
CREATE TABLE hd_dim_half AS SELECT k, name FROM hd_dim WHERE k % 2 = 0;
ANALYZE hd_dim_half;
SELECT hd_how('SELECT g, s, name FROM hd_t LEFT JOIN hd_dim_half ON g % 100 = k');
SELECT hd_diff('SELECT g, s, i8, name FROM hd_t LEFT JOIN hd_dim_half ON g % 100 = k');
SELECT hd_diff('SELECT g, c FROM hd_t WHERE EXISTS (SELECT 1 FROM hd_dim_half WHERE k = g % 100) AND f8 > 100');
SELECT hd_diff('SELECT g, c, i2 FROM hd_t WHERE NOT EXISTS (SELECT 1 FROM hd_dim_half WHERE k = g % 100)');
-- outer joins that keep the inner rows (RIGHT, FULL) read the blocks
-- directly too, their unmatched inner rows added at the end (a dropped
-- answer's matches are undone); TPC-H Q13's shape: a count per dimension
-- row, the rows of hd_t matching none among them
CREATE TABLE hd_dim2 AS SELECT i AS k, 'name' || (i % 7) AS name FROM generate_series(0, 199) i;
ANALYZE hd_dim2;
SELECT hd_how('SELECT k, count(g) FROM hd_dim2 LEFT JOIN hd_t ON g % 100 = k AND f8 > 1000 GROUP BY k');
SELECT hd_diff('SELECT k, count(g) FROM hd_dim2 LEFT JOIN hd_t ON g % 100 = k AND f8 > 1000 GROUP BY k');
SELECT hd_diff('SELECT c, count(*) FROM (SELECT k, count(g) AS c FROM hd_dim2 LEFT JOIN hd_t ON g % 150 = k AND f8 > 1000 GROUP BY k) x GROUP BY c');
SELECT hd_how('SELECT name, count(g) AS ng, count(k) AS nk, count(*) AS n, sum(f8) AS s FROM hd_t FULL JOIN hd_dim2 ON g % 300 = k GROUP BY name');
SELECT hd_diff('SELECT name, count(g) AS ng, count(k) AS nk, count(*) AS n, sum(f8) AS s FROM hd_t FULL JOIN hd_dim2 ON g % 300 = k GROUP BY name');
-- and as a GpuJoin returning rows: the unmatched inner rows come last
SELECT hd_how('SELECT k, g, s FROM hd_t RIGHT JOIN hd_dim2 ON g % 300 = k AND f8 > 1000');
SELECT hd_diff('SELECT k, g, s, name FROM hd_t RIGHT JOIN hd_dim2 ON g % 300 = k AND f8 > 1000');
SELECT hd_diff('SELECT k, g, s, name FROM hd_t FULL JOIN hd_dim2 ON g % 300 = k AND f8 < 1000');
DROP TABLE hd_dim_half;
-- a dropped answer (a block changed while it was read: here every second
-- answer, by a test setting): its groups and the inner rows its rows
-- marked matched are forgotten, and its blocks are read through the buffer
-- manager.  hd_big takes two requests; only the first one's rows match
-- hd_dim2, so undoing the second must keep the first one's marks
CREATE TABLE hd_big AS SELECT i AS id, CASE WHEN i <= 1000000 THEN i % 200 ELSE 500 + i % 50 END AS g
  FROM generate_series(1, 2500000) i;
CALL quiet_wait();
VACUUM (FREEZE, ANALYZE) hd_big;
CHECKPOINT;
SET pg_strom.debug_drop_heap_direct_answers = 2;
SELECT hd_how('SELECT g, count(*), sum(id) FROM hd_big GROUP BY g');
SELECT hd_diff('SELECT g, count(*), sum(id) FROM hd_big GROUP BY g');
SELECT hd_how('SELECT k, count(g) FROM hd_dim2 LEFT JOIN hd_big ON g = k GROUP BY k');
SELECT hd_diff('SELECT k, count(*) AS n, count(g) AS ng, sum(id) AS s FROM hd_dim2 LEFT JOIN hd_big ON g = k GROUP BY k');
SELECT hd_diff('SELECT g % 7 AS g7, count(k) AS nk, count(*) AS n FROM hd_big FULL JOIN hd_dim2 ON g = k GROUP BY 1');
-- a GpuJoin returning rows: a dropped answer's combinations and tuple
-- copies are forgotten too
SELECT hd_how('SELECT id, g, name FROM hd_big JOIN hd_dim2 ON g = k WHERE id % 1000 < 3');
SELECT hd_diff('SELECT id, g, name FROM hd_big JOIN hd_dim2 ON g = k WHERE id % 1000 < 3');
SELECT hd_diff('SELECT k, id FROM hd_big RIGHT JOIN hd_dim2 ON g = k AND id % 1000 = 7');
-- and a GpuScan's
SELECT hd_how('SELECT id, g FROM hd_big WHERE id % 1000 < 3');
SELECT hd_diff('SELECT id, g FROM hd_big WHERE id % 1000 < 3');
RESET pg_strom.debug_drop_heap_direct_answers;
DROP TABLE hd_big, hd_dim2;
-- where the time went (EXPLAIN ANALYZE with TIMING): the engine's own time
-- by phase, no phase longer than the whole, and the host's block checks
CREATE FUNCTION hd_times(q text) RETURNS TABLE (engine_phases text, phases_within_total bool, host_checks bool)
LANGUAGE plpgsql AS $$
DECLARE ln text; m text[]; total float8; part text; ok bool := true; names text[] := '{}';
BEGIN
  host_checks := false;
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, SUMMARY OFF) ' || q LOOP
    m := regexp_match(ln, 'Engine Time: ([0-9.]+) ms \((.*)\)$');
    IF m IS NOT NULL THEN
      total := m[1]::float8;
      FOREACH part IN ARRAY string_to_array(m[2], ', ') LOOP
        names := names || regexp_replace(part, ' [0-9.]+$', '');
        ok := ok AND substring(part from '([0-9.]+)$')::float8 <= total;
      END LOOP;
    END IF;
    m := regexp_match(ln, 'Host Time: block checks ([0-9.]+) ms, chunk reads [0-9.]+ ms, group merging [0-9.]+ ms');
    IF m IS NOT NULL THEN host_checks := m[1]::float8 > 0; END IF;
  END LOOP;
  engine_phases := array_to_string(ARRAY(SELECT unnest(names) INTERSECT SELECT unnest('{storage reads,heap tuples,join probes,aggregation,other}'::text[]) ORDER BY 1), ', ');
  phases_within_total := ok AND total > 0;
  RETURN NEXT;
END $$;
SELECT * FROM hd_times('SELECT name, count(*), sum(f8) FROM hd_t JOIN hd_dim ON g % 100 = k GROUP BY name');
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT hd_how('SELECT g % 7 AS k, count(*) AS n, sum(i2) AS s, max(ts) AS hi FROM hd_t GROUP BY 1');
SELECT hd_diff('SELECT g % 7 AS k, count(*) AS n, sum(i2) AS s, max(ts) AS hi FROM hd_t GROUP BY 1');
-- a parallel GpuScan: the processes share the blocks
SELECT hd_how('SELECT g, s, ts FROM hd_t WHERE f8 > 10 AND i2 < 1000');
SELECT hd_diff('SELECT g, s, ts, ctid::text AS tid FROM hd_t WHERE f8 > 10 AND i2 < 1000');
RESET max_parallel_workers_per_gather;
SET max_parallel_workers_per_gather = 0;

-- the path does not apply: a text-like grouping key that is an
-- expression (PostgreSQL evaluates it at a member of the group), the
-- setting off, a temporary table
SELECT hd_how('SELECT substr(s, 1, 2), count(*) FROM hd_t GROUP BY 1');
SET pg_strom.heap_direct = off;
SELECT hd_how('SELECT g % 10, count(*) FROM hd_t GROUP BY 1');
RESET pg_strom.heap_direct;
CREATE TEMP TABLE hd_tmp AS SELECT * FROM hd_t;
ANALYZE hd_tmp;
SELECT hd_how('SELECT g % 10, count(*) FROM hd_tmp GROUP BY 1');

-- an empty table; a rescan under a nested loop
CREATE TABLE hd_empty (a int, b int8);
CALL quiet_wait();
VACUUM hd_empty;
SELECT hd_diff('SELECT a, count(*), sum(b) FROM hd_empty GROUP BY a');
SELECT hd_how('SELECT k, (SELECT sum(i8) FROM hd_t WHERE g % 100 = k) FROM hd_dim WHERE k < 3');
SELECT hd_diff('SELECT k, (SELECT sum(i8) FROM hd_t WHERE g % 100 = k) AS s FROM hd_dim WHERE k < 3');
-- a GpuJoin returning rows, rescanned for each outer row of a sub-plan
SELECT hd_how('SELECT k, (SELECT count(*) FROM (SELECT t.g, t.s FROM hd_t t JOIN hd_dim x ON t.g % 100 = x.k OFFSET 0) j WHERE j.g % 7 = k) FROM hd_dim WHERE k < 3');
SELECT hd_diff('SELECT k, (SELECT count(*) FROM (SELECT t.g, t.s FROM hd_t t JOIN hd_dim x ON t.g % 100 = x.k OFFSET 0) j WHERE j.g % 7 = k) AS n, (SELECT max(j.s) FROM (SELECT t.g, t.s FROM hd_t t JOIN hd_dim x ON t.g % 100 = x.k OFFSET 0) j WHERE j.g % 7 = k) AS m FROM hd_dim WHERE k < 3');
-- a GpuScan whose filter reads the sub-plan's parameter, rescanned with
-- each value
SELECT hd_how('SELECT k, (SELECT max(s) FROM (SELECT g, s FROM hd_t WHERE g % 100 = k AND f8 > 0 OFFSET 0) j) FROM hd_dim WHERE k < 3');
SELECT hd_diff('SELECT k, (SELECT max(s) FROM (SELECT g, s FROM hd_t WHERE g % 100 = k AND f8 > 0 OFFSET 0) j) AS m, (SELECT count(*) FROM (SELECT g FROM hd_t WHERE g % 100 = k AND f8 > 0 OFFSET 0) j) AS n FROM hd_dim WHERE k < 3');

-- blocks left to the buffer manager in more than one batch (8192 blocks):
-- the first batch's 1100 (wide rows, few per block) are read before the
-- second batch's, and a chunk that emptied the queue must not end the
-- scan for those queued after it (it once spun, or dropped them)
SET statement_timeout = '60s';
CREATE TABLE hd_wide (g int, k int, v int8, pad text) WITH (autovacuum_enabled = off);
ALTER TABLE hd_wide ALTER COLUMN pad SET STORAGE plain;
INSERT INTO hd_wide SELECT i, i % 5, i, repeat('x', 1000) FROM generate_series(1, 70000) i;
CALL quiet_wait();
VACUUM (FREEZE, ANALYZE) hd_wide;
UPDATE hd_wide SET v = -v WHERE g <= 7700 OR g BETWEEN 60000 AND 60100;
SELECT count(*) FROM hd_wide;
CHECKPOINT;
SELECT hd_how('SELECT k, count(*), sum(v) FROM hd_wide GROUP BY k');
SELECT hd_diff('SELECT k, count(*), sum(v) FROM hd_wide GROUP BY k');
DROP TABLE hd_wide;
RESET statement_timeout;

-- blocks marked all-visible again by a VACUUM after an UPDATE, still dirty
-- in shared buffers (their files hold the rows before the UPDATE): found
-- by one pass over the buffer descriptors when the table has more blocks
-- than a 64th of shared buffers (alone, and in a parallel plan with a join,
-- where the processes share the pass), and read through the buffer
-- manager; a stale file read would change the sums
CREATE TABLE hd_dirty (g int, k int, v int8, pad text) WITH (autovacuum_enabled = off);
ALTER TABLE hd_dirty ALTER COLUMN pad SET STORAGE plain;
INSERT INTO hd_dirty SELECT i, i % 100, i, repeat('y', 150)
  FROM generate_series(1, (pg_size_bytes(current_setting('shared_buffers')) / 8192 / 16 * 40)::int) i;
CALL quiet_wait();
VACUUM (FREEZE, ANALYZE) hd_dirty;
CHECKPOINT;
SELECT pg_relation_size('hd_dirty') / 8192 > pg_size_bytes(current_setting('shared_buffers')) / 8192 / 64 AS past_a_64th;
UPDATE hd_dirty SET v = -v WHERE g % 97 = 0;
CALL quiet_wait();
VACUUM hd_dirty;
SELECT hd_how('SELECT k % 10 AS k, count(*), sum(v) FROM hd_dirty GROUP BY 1');
SELECT hd_diff('SELECT k % 10 AS k, count(*), sum(v) FROM hd_dirty GROUP BY 1');
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT hd_how('SELECT name, count(*), sum(v) FROM hd_dirty d JOIN hd_dim ON d.k = hd_dim.k GROUP BY name');
SELECT hd_diff('SELECT name, count(*), sum(v) FROM hd_dirty d JOIN hd_dim ON d.k = hd_dim.k GROUP BY name');
UPDATE hd_dirty SET v = v + 1 WHERE g % 89 = 0;
CALL quiet_wait();
VACUUM hd_dirty;
SELECT hd_diff('SELECT name, count(*), sum(v) FROM hd_dirty d JOIN hd_dim ON d.k = hd_dim.k GROUP BY name');
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;
DROP TABLE hd_dirty;

-- the GPU's column cache keeps the segment file in extents once it was
-- left alone for 2 s; a changed file is another file to it, so the next
-- query reads the new contents (a stale extent would change the sums).
-- hd_cache() says where a GPU took the blocks from ("cpu engine" on the
-- CPU engine, which keeps nothing)
CREATE FUNCTION hd_cache(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE ln text; m text[];
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    m := regexp_match(ln, 'GPU column cache: ([0-9.]+)');
    IF m IS NOT NULL THEN
      RETURN CASE WHEN m[1]::numeric > 0 THEN 'gpu cache' ELSE 'gpu file' END;
    END IF;
  END LOOP;
  RETURN 'cpu engine';
END $$;
CREATE TABLE hd_c WITH (autovacuum_enabled = off) AS SELECT i AS g, i::int8 * 3 AS v FROM generate_series(1, 50000) i;
CALL quiet_wait();
VACUUM (FREEZE, ANALYZE) hd_c;
CHECKPOINT;
SELECT pg_sleep(2.5);
SELECT hd_how('SELECT g % 7 AS k, count(*), sum(v) FROM hd_c GROUP BY 1');
SELECT hd_cache('SELECT g % 7 AS k, count(*), sum(v) FROM hd_c GROUP BY 1') IN ('gpu cache', 'cpu engine') AS cached;
SELECT hd_diff('SELECT g % 7 AS k, count(*), sum(v) FROM hd_c GROUP BY 1');
UPDATE hd_c SET v = -v WHERE g % 100 = 0;
CALL quiet_wait();
VACUUM (FREEZE) hd_c;
CHECKPOINT;
SELECT hd_cache('SELECT g % 7 AS k, count(*), sum(v) FROM hd_c GROUP BY 1') <> 'gpu cache' AS not_cached;
SELECT hd_diff('SELECT g % 7 AS k, count(*), sum(v) FROM hd_c GROUP BY 1');
SELECT pg_sleep(2.5);
SELECT hd_diff('SELECT g % 7 AS k, count(*), sum(v) FROM hd_c GROUP BY 1');
SELECT hd_cache('SELECT g % 7 AS k, count(*), sum(v) FROM hd_c GROUP BY 1') IN ('gpu cache', 'cpu engine') AS cached;
SELECT hd_diff('SELECT g % 7 AS k, count(*), sum(v) FROM hd_c GROUP BY 1');
DROP TABLE hd_c;
DROP FUNCTION hd_cache(text);

-- the planner credits the heap direct path (no gathering for all-visible
-- pages) only to a node the GPU service runs: the CPU engine in the
-- backend (a machine without a GPU) gathers every row, and a GpuPreAgg
-- priced as if it did not lost to PostgreSQL's plan there
CREATE TABLE hd_plan AS SELECT i AS g, i * 3 AS v FROM generate_series(1, 200000) i;
CALL quiet_wait();
VACUUM (FREEZE, ANALYZE) hd_plan;
SET pg_strom.engine = 'cpu';
SET pg_strom.heap_gather_cost = 0.05;
SELECT * FROM explain_masked('SELECT g % 7 AS k, count(*), sum(v) FROM hd_plan GROUP BY 1');
SET pg_strom.cpu_engine_in_service = off;
SELECT * FROM explain_masked('SELECT g % 7 AS k, count(*), sum(v) FROM hd_plan GROUP BY 1');
RESET pg_strom.engine;
SET pg_strom.heap_gather_cost = 0;
SET pg_strom.cpu_engine_in_service = on;
DROP TABLE hd_plan;

DROP TABLE hd_t, hd_dim, hd_empty, hd_tmp;
DROP FUNCTION hd_how(text), hd_diff(text);
