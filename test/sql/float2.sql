-- float2: IEEE half precision (pg_strom's type for Arrow's Float16).
-- Input and output: the shortest text that reads back the same value.
SELECT '1.5'::float2, '0.1'::float2, '-0'::float2, ' 6e-8 '::float2, '65504'::float2, '1e4'::float2;
SELECT 'NaN'::float2, 'infinity'::float2, '-Infinity'::float2, '-inf'::float2;
SELECT '70000'::float2;       -- ERROR: out of range (22003)
SELECT '1e-9'::float2;        -- ERROR: underflows to zero
SELECT 'abc'::float2;         -- ERROR: invalid input syntax (22P02)
SELECT ''::float2;
SELECT '1 2'::float2;
-- every value of a fine grid reads back from its text, and float2 keeps
-- float8's order on it
SELECT count(*) AS values,
       count(*) FILTER (WHERE v::text::float2 <> v) AS bad_round_trip,
       count(*) FILTER (WHERE v::float8 <> (i / 64.0)::float8::float2::float8) AS bad_cast
  FROM (SELECT i, (i / 64.0)::float2 AS v FROM generate_series(-4000000, 4000000, 37) i) s;
SELECT count(*) AS pairs,
       count(*) FILTER (WHERE (a < b) <> (a::float8 < b::float8) OR (a = b) <> (a::float8 = b::float8)) AS bad_order
  FROM (SELECT (i * 0.37)::float2 AS a, (j * 0.41)::float2 AS b
          FROM generate_series(-300, 300, 7) i, generate_series(-300, 300, 11) j) s;
-- casts: widening is exact and implicit; narrowing rounds to nearest even
SELECT 0.1::float2::real AS r, 0.1::float2::float8 AS d, 2049::float2 AS even_down, 2051::float2 AS even_up;
SELECT 1.5::real::float2, 1e-7::float8::float2, 300::int2::float2, 65504::int4::float2, (-2048)::int8::float2,
       12.375::numeric::float2;
SELECT 70000::float2;         -- ERROR: overflow
SELECT 1e-10::float8::float2; -- ERROR: underflow
SELECT 1e30::real::float2;
SELECT 2.5::float2::int2, 3.5::float2::int4, (-4.5)::float2::int8, 0.625::float2::numeric;
SELECT 'NaN'::float2::int4;   -- ERROR
SELECT 'Infinity'::float2::int8;
-- arithmetic goes through double precision
SELECT 1.5::float2 + 2.25::float2 AS s, pg_typeof(1.5::float2 + 2.25::float2), 3::float2 * 2, -(1.5::float2);
-- PostgreSQL's float semantics: NaN equals NaN and sorts last, -0 = 0
CREATE TABLE f2t (id int, x float2);
INSERT INTO f2t VALUES (1, 1), (2, NULL), (3, 'NaN'), (4, '-0'), (5, 0), (6, 0.5), (7, 65504), (8, -65504),
  (9, 'Infinity'), (10, '-Infinity'), (11, 'NaN'), (12, 6e-8);
SELECT x FROM f2t ORDER BY x, id;
SELECT x, count(*) FROM f2t GROUP BY x ORDER BY x;
SET enable_hashagg = off;
SELECT x, count(*) FROM f2t GROUP BY x ORDER BY x;
RESET enable_hashagg;
SELECT count(DISTINCT x), min(x), max(x), sum(x) FILTER (WHERE x BETWEEN -1 AND 1), avg(x) FILTER (WHERE x >= 0 AND x < 100)
  FROM f2t;
SELECT a.id, b.id FROM f2t a JOIN f2t b ON a.x = b.x WHERE a.id < b.id ORDER BY 1, 2;
CREATE INDEX f2t_x ON f2t (x);
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM f2t WHERE x = 0.5::float2;
SELECT id FROM f2t WHERE x = 0.5::float2;
SELECT id FROM f2t WHERE x > 1::float2 ORDER BY x;
RESET enable_seqscan;
-- binary send / receive
SELECT pgstrom.float2send('1.5'), pgstrom.float2send('-0'), pgstrom.float2send('NaN');
COPY (SELECT x FROM f2t WHERE id IN (1, 4, 12) ORDER BY id) TO '/tmp/pgstrom_float2.bin' WITH (FORMAT binary);
CREATE TABLE f2copy (x float2);
COPY f2copy FROM '/tmp/pgstrom_float2.bin' WITH (FORMAT binary);
SELECT x FROM f2copy;
SELECT ARRAY[1.5, NULL, 'NaN']::float2[];
-- float2 on the device: a qual over it (through its cast to double
-- precision) runs in the GPU Filter, with the same rows as PostgreSQL
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.gpu_context_cost = 0;
SELECT * FROM explain_masked('SELECT id FROM f2t WHERE x > 0.25 AND id > 3');
SELECT id FROM f2t WHERE x > 0.25 AND id > 3 ORDER BY id;
RESET pg_strom.gpu_setup_cost;
RESET pg_strom.gpu_context_cost;
DROP TABLE f2t, f2copy;
