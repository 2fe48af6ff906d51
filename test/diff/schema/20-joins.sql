-- test/diff/schema/20-joins.sql - inner relations for the GpuJoin tests,
-- joined with diff_types (the outer, 100,000 rows): duplicate keys, NULL
-- keys, keys of every hashable device type, an empty relation, and
-- PG-Strom's write-ups' t0 / t1 (NATURAL JOIN ... GROUP BY cat).
DROP TABLE IF EXISTS dj_a, dj_b, dj_c, dj_empty, t0, t1, diff_pk;
CREATE TABLE dj_a AS
SELECT i AS ak,
       CASE WHEN i % 37 = 0 THEN NULL ELSE (i * 7919 % 200001 - 100000) END::int4 AS a4,
       CASE WHEN i % 41 = 0 THEN NULL ELSE (i % 500) END::int8 AS a8,
       CASE WHEN i % 43 = 0 THEN NULL WHEN i % 13 = 0 THEN '' WHEN i % 17 = 0 THEN 'データベース' || i % 50
            ELSE 'item_' || (i % 500) END AS at,
       CASE WHEN i % 47 = 0 THEN NULL ELSE chr(65 + i % 26) || i % 9 END::char(6) AS abc,
       CASE WHEN i % 53 = 0 THEN NULL WHEN i % 97 = 4 THEN 'NaN' WHEN i % 83 = 4 THEN '0'
            ELSE (i % 100000) / 13.0 - 3000 END::float8 AS af,
       date '2000-01-01' + (i % 20000 - 10000) AS ad,
       'a' || i % 7 AS aname
  FROM generate_series(1, 3000) i;
-- every key twice: duplicates multiply rows
INSERT INTO dj_a SELECT * FROM dj_a WHERE ak % 5 = 0;
CREATE TABLE dj_b AS
SELECT i::int2 AS bk, 'b' || i AS bname, (i * 100 - 1000)::int4 AS lo, (i * 100 - 900)::int4 AS hi
  FROM generate_series(0, 40) i;
INSERT INTO dj_b VALUES (NULL, 'bnull', NULL, NULL);
CREATE TABLE dj_c AS
SELECT i AS ck, CASE WHEN i % 3 = 0 THEN 'even' ELSE 'odd' END AS cname FROM generate_series(0, 25) i;
CREATE TABLE dj_empty (k int4, v text);
CREATE TABLE t1 AS SELECT i AS aid, 'cat' || (i % 7) AS cat FROM generate_series(0, 999) i;
CREATE TABLE t0 AS
SELECT i AS id, CASE WHEN i % 50 = 0 THEN NULL ELSE i % 1200 END AS aid, (i % 97)::float8 AS ax
  FROM generate_series(1, 200000) i;
ANALYZE dj_a, dj_b, dj_c, dj_empty, t0, t1;
-- a primary key (GROUP BY it: its other columns are functionally dependent)
CREATE TABLE diff_pk (id int4 PRIMARY KEY, name text, val numeric(10, 2));
INSERT INTO diff_pk SELECT i, CASE WHEN i % 9 = 0 THEN NULL ELSE 'pk_' || i % 17 END, i / 7.0 FROM generate_series(0, 199) i;
ANALYZE diff_pk;
