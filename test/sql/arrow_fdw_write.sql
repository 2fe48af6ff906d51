-- Writable Arrow_Fdw (docs/arrow_fdw.md): PG-Strom's write-ups' example verbatim,
-- every writable type with NULLs read back exactly, COPY FROM, a
-- transactional truncate, and the refusals.  Files go to
-- /tmp/pgstrom_arrow_test/w (made by test/arrow/gen.py, writable by all).
\! rm -f /tmp/pgstrom_arrow_test/w/ft.arrow /tmp/pgstrom_arrow_test/w/ft.arrow.pgstrom-undo /tmp/pgstrom_arrow_test/w/w_types.arrow /tmp/pgstrom_arrow_test/w/w_types.arrow.pgstrom-undo /tmp/pgstrom_arrow_test/w/w_types2.arrow /tmp/pgstrom_arrow_test/w/w_types2.arrow.pgstrom-undo
CREATE FOREIGN TABLE ft (
  id    int,
  x     real,
  y     real,
  z     real
) SERVER arrow_fdw
  OPTIONS (file '/tmp/pgstrom_arrow_test/w/ft.arrow', writable 'true');
-- the file does not exist yet: an empty table
SELECT count(*) FROM ft;
SELECT pgstrom.random_setseed(7);
INSERT INTO ft (
  SELECT x, pgstrom.random_float() * 100.0,
            pgstrom.random_float() * 100.0,
            pgstrom.random_float() * 100.0
    FROM generate_series(1,1000) x);
SELECT count(*) FROM ft;
BEGIN;
INSERT INTO ft (
  SELECT x, pgstrom.random_float() * 100.0,
            pgstrom.random_float() * 100.0,
            pgstrom.random_float() * 100.0
    FROM generate_series(1,300) x);
SELECT count(*) FROM ft;
ABORT;
SELECT count(*) FROM ft;
SELECT file, batch, rows FROM pgstrom.arrow_fdw_metadata_info('ft');
-- two statements in one transaction: two batches, both committed
BEGIN;
INSERT INTO ft VALUES (1001, 1, 2, 3);
INSERT INTO ft VALUES (1002, NULL, NULL, NULL);
COMMIT;
SELECT count(*), count(x), max(id) FROM ft;
SELECT batch, rows FROM pgstrom.arrow_fdw_metadata_info('ft');

-- every writable type, with NULLs and edge values
CREATE TABLE w_src (
  i2 int2, i4 int4, i8 int8, f4 real, f8 float8, b bool, t text, v varchar(10),
  c char(4), by bytea, d date, ts timestamp, tz timestamptz, n numeric(12,3)
);
INSERT INTO w_src VALUES
  (1, 2, 3, 1.5, 2.25, true, 'abc', 'xy', 'ab', '\x00ff', '2024-02-29', '2024-02-29 12:34:56.789012', '2024-02-29 12:34:56+09', 123456789.123),
  (-32768, -2147483648, -9223372036854775808, '-Infinity', 'NaN', false, '', '', '', '\x', '4713-01-01 BC', '1900-01-01 00:00:00', '1970-01-01 00:00:00+00', -0.001),
  (32767, 2147483647, 9223372036854775807, 'Infinity', -0.0, NULL, 'マルチバイト', 'ü', 'ñ', '\xdeadbeef', '9999-12-31', '9999-12-31 23:59:59.999999', '2000-01-01 00:00:00+00', 999999999.999),
  (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
CREATE FOREIGN TABLE w_types (
  i2 int2, i4 int4, i8 int8, f4 real, f8 float8, b bool, t text, v varchar(10),
  c char(4), by bytea, d date, ts timestamp, tz timestamptz, n numeric(12,3)
) SERVER arrow_fdw OPTIONS (file '/tmp/pgstrom_arrow_test/w/w_types.arrow', writable 'true');
INSERT INTO w_types SELECT * FROM w_src;
SELECT count(*) AS missing FROM (SELECT * FROM w_src EXCEPT ALL SELECT * FROM w_types) s;
SELECT count(*) AS extra FROM (SELECT * FROM w_types EXCEPT ALL SELECT * FROM w_src) s;
-- COPY FROM appends too
COPY w_types (i4, t, n) FROM STDIN;
7	copied	1.5
\N	\N	\N
\.
SELECT i4, t, n FROM w_types WHERE i4 = 7 OR (t IS NULL AND i2 IS NULL) ORDER BY i4 NULLS LAST;

-- time, interval, uuid, unconstrained numeric, arrays and composite types
-- (lists and structs), with NULLs inside and out
CREATE TYPE w_pair AS (k int4, label text, amount numeric(8,2));
CREATE TABLE w_src2 (id int4, tm time, iv interval, u uuid, nu numeric, ai int4[], at text[],
  ad date[], p w_pair, pa w_pair[]);
INSERT INTO w_src2 VALUES
  (1, '12:34:56.789', '1 year 2 mons 3 days 04:05:06.7', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 1.25,
   '{1,NULL,3}', '{a,"b c",NULL,ü}', '{2024-02-29,NULL}', '(7,seven,7.50)', '{"(1,one,1.00)","(2,,)",NULL}'),
  (2, '00:00:00', '-178000000 years', '00000000-0000-0000-0000-000000000000', -0.0000000001,
   '{}', '{}', '{}', '(,,)', '{}'),
  (3, '24:00:00', '-1 day +00:00:00.000001', 'ffffffff-ffff-ffff-ffff-ffffffffffff', 123456789012345678.9,
   '{-2147483648}', '{""}', '{4713-01-01 BC}', NULL, NULL),
  (4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
CREATE FOREIGN TABLE w_types2 (id int4, tm time, iv interval, u uuid, nu numeric, ai int4[], at text[],
  ad date[], p w_pair, pa w_pair[])
  SERVER arrow_fdw OPTIONS (file '/tmp/pgstrom_arrow_test/w/w_types2.arrow', writable 'true');
INSERT INTO w_types2 SELECT * FROM w_src2;
SELECT count(*) AS missing FROM (SELECT * FROM w_src2 EXCEPT ALL SELECT * FROM w_types2) s;
SELECT count(*) AS extra FROM (SELECT * FROM w_types2 EXCEPT ALL SELECT * FROM w_src2) s;
SELECT id, iv, p, pa FROM w_types2 ORDER BY id;
-- digits the file's Decimal128(38,10) cannot hold exactly, a 2-D array
INSERT INTO w_types2 (id, nu) VALUES (5, 1.00000000001);
INSERT INTO w_types2 (id, ai) VALUES (5, '{{1,2},{3,4}}');
SELECT count(*) FROM w_types2;

-- truncate is transactional; once committed the file shrinks to its
-- schema and footer
SELECT (pg_stat_file('/tmp/pgstrom_arrow_test/w/w_types.arrow')).size AS size0 \gset
BEGIN;
SELECT pgstrom.arrow_fdw_truncate('w_types');
SELECT count(*) FROM w_types;
ROLLBACK;
SELECT count(*) FROM w_types;
SELECT (pg_stat_file('/tmp/pgstrom_arrow_test/w/w_types.arrow')).size = :size0 AS same_size_after_rollback;
SELECT pgstrom.arrow_fdw_truncate('w_types');
SELECT count(*) FROM w_types;
SELECT (pg_stat_file('/tmp/pgstrom_arrow_test/w/w_types.arrow')).size AS size1 \gset
SELECT :size1 < :size0 AS shrunk, :size1 < 4096 AS schema_and_footer_only;
INSERT INTO w_types (i4) VALUES (42);
SELECT i4 FROM w_types;

-- refusals
INSERT INTO w_types (d) VALUES ('infinity');
-- PostgreSQL's last date fits Date32 and reads back
INSERT INTO w_types (d) VALUES ('5874897-12-31');
SELECT d FROM w_types WHERE d > '9999-12-31';
INSERT INTO w_types (ts) VALUES ('294276-12-31 23:59:59.999999');
INSERT INTO w_types (n) VALUES (12345678901.5);
BEGIN;
SAVEPOINT s1;
INSERT INTO ft VALUES (1, 1, 1, 1);
ROLLBACK;
BEGIN;
INSERT INTO ft VALUES (5000, 1, 1, 1);
PREPARE TRANSACTION 'arrow_write';
SELECT count(*) FROM ft WHERE id = 5000;
CREATE FOREIGN TABLE w_bad (a jsonb) SERVER arrow_fdw
  OPTIONS (file '/tmp/pgstrom_arrow_test/w/w_bad.arrow', writable 'true');
INSERT INTO w_bad VALUES ('1');
CREATE FOREIGN TABLE w_ro (id int) SERVER arrow_fdw OPTIONS (file '/tmp/pgstrom_arrow_test/w/ft.arrow');
INSERT INTO w_ro VALUES (1);
SELECT pgstrom.arrow_fdw_truncate('w_ro');
SELECT pgstrom.arrow_fdw_truncate('w_src');
UPDATE ft SET x = 0;
DELETE FROM ft;
SELECT count(*) FROM ft;
-- ANALYZE samples rows at random positions: a key sorted in the file,
-- four rows each, shows its repeats (rows at evenly spread positions, here
-- every 13th, would never hold one key twice, and PostgreSQL would take
-- it for unique: n_distinct -1)
\! rm -f /tmp/pgstrom_arrow_test/w/w_keys.arrow /tmp/pgstrom_arrow_test/w/w_keys.arrow.pgstrom-undo
CREATE FOREIGN TABLE w_keys (k int) SERVER arrow_fdw
  OPTIONS (file '/tmp/pgstrom_arrow_test/w/w_keys.arrow', writable 'true');
INSERT INTO w_keys SELECT i / 4 FROM generate_series(0, 39999) i;
ALTER FOREIGN TABLE w_keys ALTER COLUMN k SET STATISTICS 10;
ANALYZE w_keys;
SELECT reltuples, (SELECT n_distinct FROM pg_stats WHERE tablename = 'w_keys' AND attname = 'k') <> -1 AS repeats_seen
  FROM pg_class WHERE relname = 'w_keys';
DROP FOREIGN TABLE w_keys;
\! rm -f /tmp/pgstrom_arrow_test/w/w_keys.arrow /tmp/pgstrom_arrow_test/w/w_keys.arrow.pgstrom-undo
DROP FOREIGN TABLE ft, w_types, w_types2, w_bad, w_ro;
DROP TABLE w_src, w_src2;
DROP TYPE w_pair;
