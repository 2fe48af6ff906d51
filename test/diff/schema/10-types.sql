-- test/diff/schema/10-types.sql - a table of every GpuScan device type with
-- NULLs (about 1 in 11 per column), extreme values, NaN / infinities, -0,
-- multibyte and empty text, and dates/timestamps at the edges.
DROP TABLE IF EXISTS diff_types;
CREATE TABLE diff_types AS
SELECT i AS id,
       CASE WHEN i % 11 = 1 THEN NULL WHEN i % 97 = 0 THEN 32767 WHEN i % 89 = 0 THEN -32768
            ELSE (i * 37 % 2001 - 1000) END::int2 AS a2,
       CASE WHEN i % 11 = 2 THEN NULL WHEN i % 97 = 1 THEN 2147483647 WHEN i % 89 = 1 THEN -2147483648
            ELSE (i * 7919 % 200001 - 100000) END::int4 AS a4,
       CASE WHEN i % 11 = 3 THEN NULL WHEN i % 97 = 2 THEN 9223372036854775807 WHEN i % 89 = 2 THEN -9223372036854775808
            ELSE (i::int8 * 104729 % 20000001 - 10000000) END::int8 AS a8,
       CASE WHEN i % 11 = 4 THEN NULL WHEN i % 97 = 3 THEN 'NaN' WHEN i % 89 = 3 THEN '-Infinity'
            WHEN i % 83 = 3 THEN '-0' ELSE (i % 1000) / 7.0 END::float4 AS f4,
       CASE WHEN i % 11 = 5 THEN NULL WHEN i % 97 = 4 THEN 'NaN' WHEN i % 89 = 4 THEN 'Infinity'
            WHEN i % 83 = 4 THEN '-0' ELSE (i % 100000) / 13.0 - 3000 END::float8 AS f8,
       CASE WHEN i % 11 = 6 THEN NULL ELSE i % 3 = 0 END AS b,
       CASE WHEN i % 11 = 7 THEN NULL WHEN i % 13 = 0 THEN '' WHEN i % 17 = 0 THEN 'データベース' || i % 50
            WHEN i % 19 = 0 THEN 'Ünïcødé ' || i % 40 ELSE 'item_' || (i % 500) END AS t,
       CASE WHEN i % 11 = 8 THEN NULL ELSE 'v' || i % 77 END::varchar(10) AS vc,
       CASE WHEN i % 11 = 9 THEN NULL ELSE chr(65 + i % 26) || i % 9 END::char(4) AS bc,
       CASE WHEN i % 11 = 10 THEN NULL WHEN i % 97 = 5 THEN date '4713-01-01 BC' WHEN i % 89 = 5 THEN date '5874897-12-31'
            ELSE date '2000-01-01' + (i % 20000 - 10000) END AS d,
       CASE WHEN i % 11 = 0 THEN NULL ELSE time '00:00' + (i % 86400) * interval '1 second' END AS tm,
       CASE WHEN i % 10 = 1 THEN NULL ELSE timestamp '2000-01-01' + (i % 100000) * interval '1 hour' END AS ts,
       CASE WHEN i % 10 = 2 THEN NULL ELSE timestamptz '2000-01-01 00:00+00' + (i % 100000) * interval '37 minutes' END AS tz
  FROM generate_series(1, 100000) i;
ANALYZE diff_types;
