-- Device programs against PostgreSQL itself: every function of the device
-- catalog, and expressions built from operators, AND/OR/NOT, IS [NOT]
-- NULL, IS [NOT] TRUE/FALSE/UNKNOWN and casts, are evaluated both by
-- PostgreSQL and by pgstrom.device_eval() on the active engine (CPU in CI,
-- GPU on the GPU machine).  Values are compared exactly as text, row by
-- row; errors must be the same SQLSTATE and message.
SET extra_float_digits = 3;
-- Edge values (extremes, NULLs, NaN, infinities, -0, denormals, leap days,
-- infinite dates and timestamps, numerics of 38 digits and beyond),
-- combined row by row.
CREATE TABLE dv_edge AS
SELECT k,
  (ARRAY[0,1,-1,2,-2,32767,-32768,181,-182,7,NULL]::int2[])[1 + k % 11] AS i2a,
  (ARRAY[0,1,-1,2,-2,32767,-32768,181,-182,7,NULL]::int2[])[1 + (k * 7 + 3) % 11] AS i2b,
  (ARRAY[0,1,-1,2,-2,2147483647,-2147483648,46341,-46341,65536,1000,NULL]::int4[])[1 + k % 12] AS i4a,
  (ARRAY[0,1,-1,2,-2,2147483647,-2147483648,46341,-46341,65536,1000,NULL]::int4[])[1 + (k * 5 + 1) % 12] AS i4b,
  (ARRAY[0,1,-1,2,-2,9223372036854775807,-9223372036854775808,3037000500,-3037000500,4294967296,NULL]::int8[])[1 + k % 11] AS i8a,
  (ARRAY[0,1,-1,2,-2,9223372036854775807,-9223372036854775808,3037000500,-3037000500,4294967296,NULL]::int8[])[1 + (k * 3 + 2) % 11] AS i8b,
  (ARRAY['0','-0','1','-1','0.5','NaN','Infinity','-Infinity','3.4e38','-3.4e38','1e-45','1.17549435e-38','16777217','2.5',NULL]::float4[])[1 + k % 15] AS f4a,
  (ARRAY['0','-0','1','-1','0.5','NaN','Infinity','-Infinity','3.4e38','-3.4e38','1e-45','1.17549435e-38','16777217','2.5',NULL]::float4[])[1 + (k * 4 + 1) % 15] AS f4b,
  (ARRAY['0','-0','1','-1','0.1','NaN','Infinity','-Infinity','1.7976931348623157e308','-1e308','5e-324','2.2250738585072014e-308','9007199254740993','2.5','-2.5','3e9',NULL]::float8[])[1 + k % 17] AS f8a,
  (ARRAY['0','-0','1','-1','0.1','NaN','Infinity','-Infinity','1.7976931348623157e308','-1e308','5e-324','2.2250738585072014e-308','9007199254740993','2.5','-2.5','3e9',NULL]::float8[])[1 + (k * 6 + 5) % 17] AS f8b,
  (ARRAY[true,false,NULL]::bool[])[1 + k % 3] AS ba,
  (ARRAY[true,false,NULL]::bool[])[1 + (k / 3) % 3] AS bb,
  (ARRAY['2000-01-01','1999-12-31','2024-02-29','2023-03-01','infinity','-infinity','4713-01-01 BC','5874897-12-31',NULL]::date[])[1 + k % 9] AS da,
  (ARRAY['2000-01-01','1999-12-31','2024-02-29','2023-03-01','infinity','-infinity','4713-01-01 BC','5874897-12-31',NULL]::date[])[1 + (k * 2 + 1) % 9] AS db,
  (ARRAY['00:00','23:59:59.999999','12:00','24:00:00','00:00:00.000001',NULL]::time[])[1 + k % 6] AS ta,
  (ARRAY['00:00','23:59:59.999999','12:00','24:00:00','00:00:00.000001',NULL]::time[])[1 + (k * 5 + 2) % 6] AS tb,
  (ARRAY['2000-01-01','2024-02-29 23:59:59.999999','infinity','-infinity','1970-01-01','294276-12-31 23:59:59','4713-01-01 BC',NULL]::timestamp[])[1 + k % 8] AS tsa,
  (ARRAY['2000-01-01','2024-02-29 23:59:59.999999','infinity','-infinity','1970-01-01','294276-12-31 23:59:59','4713-01-01 BC',NULL]::timestamp[])[1 + (k * 3 + 1) % 8] AS tsb,
  (ARRAY['2000-01-01 00:00+00','2024-03-10 02:30:00-05','2024-03-10 03:30:00-04','infinity','-infinity','2024-10-27 01:30:00+01',NULL]::timestamptz[])[1 + k % 7] AS tza,
  (ARRAY['2000-01-01 00:00+00','2024-03-10 02:30:00-05','2024-03-10 03:30:00-04','infinity','-infinity','2024-10-27 01:30:00+01',NULL]::timestamptz[])[1 + (k * 4 + 3) % 7] AS tzb,
  (ARRAY['','a','abc','ABC','abc ','abd','ü','日本語','日本','a%b',' ',NULL]::text[])[1 + k % 12] AS txa,
  (ARRAY['','a','abc','ABC','abc ','abd','ü','日本語','日本','a%b',' ',NULL]::text[])[1 + (k * 7 + 2) % 12] AS txb,
  (ARRAY['','a','abc','ABC','abc ','abd','ü','日本語','日本','a%b',' ',NULL]::bpchar(5)[])[1 + k % 12] AS bca,
  (ARRAY['','a','abc','ABC','abc ','abd','ü','日本語','日本','a%b',' ',NULL]::bpchar(5)[])[1 + (k * 5 + 1) % 12] AS bcb,
  (ARRAY['0','1','-1','0.5','-0.5','1.5','-2.5','0.000','123.456','-0.00000000000000000001',
         '99999999999999999999999999999999999999','-99999999999999999999999999999999999999',
         '0.99999999999999999999999999999999999999','1e40','123456789012345678901234567890.12345678901',
         'NaN','Infinity','-Infinity','32767.5','2147483647.5','-9223372036854775808.5',
         '9223372036854775807.49','7.0000',NULL]::numeric[])[1 + k % 24] AS na,
  (ARRAY['0','1','-1','0.5','-0.5','1.5','-2.5','0.000','123.456','-0.00000000000000000001',
         '99999999999999999999999999999999999999','-99999999999999999999999999999999999999',
         '0.99999999999999999999999999999999999999','1e40','123456789012345678901234567890.12345678901',
         'NaN','Infinity','-Infinity','32767.5','2147483647.5','-9223372036854775808.5',
         '9223372036854775807.49','7.0000',NULL]::numeric[])[1 + (k * 5 + 3) % 24] AS nb,
  (ARRAY['00000000-0000-0000-0000-000000000000','ffffffff-ffff-ffff-ffff-ffffffffffff',
         'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11','a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12',
         '80000000-0000-0000-0000-000000000000','7fffffff-ffff-ffff-ffff-ffffffffffff',
         '00000000-0000-0000-0000-000000000001','01000000-0000-0000-0000-000000000000',NULL]::uuid[])[1 + k % 9] AS uua,
  (ARRAY['00000000-0000-0000-0000-000000000000','ffffffff-ffff-ffff-ffff-ffffffffffff',
         'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11','a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12',
         '80000000-0000-0000-0000-000000000000','7fffffff-ffff-ffff-ffff-ffffffffffff',
         '00000000-0000-0000-0000-000000000001','01000000-0000-0000-0000-000000000000',NULL]::uuid[])[1 + (k * 4 + 1) % 9] AS uub,
  (ARRAY['0','1 mon','30 days','720:00:00','-1 mon 1 day','1 day -24:00','1 year 2 mons 3 days 04:05:06.789',
         '2147483647 mons','-2147483647 mons','2147483647 days','2562047788:00:54.775807',
         '-2562047788:00:54.775807','infinity','-infinity','-178956970 years -2147483647 days',NULL]::interval[])[1 + k % 16] AS iva,
  (ARRAY['0','1 mon','30 days','720:00:00','-1 mon 1 day','1 day -24:00','1 year 2 mons 3 days 04:05:06.789',
         '2147483647 mons','-2147483647 mons','2147483647 days','2562047788:00:54.775807',
         '-2562047788:00:54.775807','infinity','-infinity','-178956970 years -2147483647 days',NULL]::interval[])[1 + (k * 7 + 5) % 16] AS ivb,
  (ARRAY['00:00+00','00:00-01','01:00+00','23:59:59.999999-15:59','00:00+15:59','12:00:00+05:30','24:00:00+00',
         '11:00-01','12:00+00',NULL]::timetz[])[1 + k % 10] AS tta,
  (ARRAY['00:00+00','00:00-01','01:00+00','23:59:59.999999-15:59','00:00+15:59','12:00:00+05:30','24:00:00+00',
         '11:00-01','12:00+00',NULL]::timetz[])[1 + (k * 3 + 2) % 10] AS ttb,
  (ARRAY['\x','\x00','\x0001','\xff','\x00ff','\x61','\x6162','\x616263','\x6125','\x5f','\xc3bc','\x5c',
         NULL]::bytea[])[1 + k % 13] AS bya,
  (ARRAY['\x','\x00','\x0001','\xff','\x00ff','\x61','\x6162','\x616263','\x6125','\x5f','\xc3bc','\x5c',
         NULL]::bytea[])[1 + (k * 5 + 4) % 13] AS byb,
  (ARRAY['0','-0','1','-1','0.5','NaN','Infinity','-Infinity','65504','-65504','6e-08','6.1e-05','2049','0.1',NULL]::float2[])[1 + k % 15] AS f2a,
  (ARRAY['0','-0','1','-1','0.5','NaN','Infinity','-Infinity','65504','-65504','6e-08','6.1e-05','2049','0.1',NULL]::float2[])[1 + (k * 4 + 3) % 15] AS f2b
FROM generate_series(0, 599) k;
-- Moderate values: no overflow, no zero divisor, so every value is compared.
CREATE TABLE dv_safe AS
SELECT k,
  (k % 200 - 100)::int2 AS i2a, (k % 13 + 1)::int2 * (CASE WHEN k % 2 = 0 THEN 1 ELSE -1 END)::int2 AS i2b,
  (k * 7919 % 100000 - 50000) AS i4a, (k % 97 + 1) * (CASE WHEN k % 3 = 0 THEN -1 ELSE 1 END) AS i4b,
  (k::int8 * 1000003 - 250000000) AS i8a, (k % 89 + 1)::int8 * (CASE WHEN k % 5 = 0 THEN -1 ELSE 1 END) AS i8b,
  CASE WHEN k % 17 = 0 THEN NULL WHEN k % 23 = 0 THEN 'NaN'::float4 WHEN k % 29 = 0 THEN 'Infinity'::float4
       ELSE ((k % 1000) - 500) / 7.0 END::float4 AS f4a,
  ((k % 50) + 0.25)::float4 AS f4b,
  CASE WHEN k % 19 = 0 THEN NULL WHEN k % 31 = 0 THEN 'NaN'::float8 WHEN k % 37 = 0 THEN '-Infinity'::float8
       ELSE ((k * 7919 % 100000) - 50000) / 3.0 END::float8 AS f8a,
  ((k % 71) - 35.5)::float8 AS f8b,
  CASE WHEN k % 11 = 0 THEN NULL ELSE k % 2 = 0 END AS ba,
  CASE WHEN k % 7 = 0 THEN NULL ELSE k % 3 = 0 END AS bb,
  ('2020-01-01'::date + (k * 37 % 1500)) AS da, ('2020-01-01'::date + (k * 11 % 1500)) AS db,
  ('00:00'::time + (k * 997) * interval '1 second') AS ta, ('00:00'::time + (k * 401) * interval '1 second') AS tb,
  ('2020-01-01'::timestamp + (k * 86413) * interval '1 second') AS tsa,
  ('2020-01-01'::timestamp + (k * 86111) * interval '1 second') AS tsb,
  ('2024-03-09 12:00+00'::timestamptz + (k * 3607) * interval '1 second') AS tza,
  ('2024-03-09 12:00+00'::timestamptz + (k * 3593) * interval '1 second') AS tzb,
  CASE WHEN k % 13 = 0 THEN NULL ELSE repeat(chr(97 + k % 26), k % 5) || (k % 7)::text END AS txa,
  CASE WHEN k % 11 = 0 THEN NULL ELSE repeat(chr(97 + k % 3), k % 4) || (k % 3)::text END AS txb,
  (chr(65 + k % 5) || repeat('é', k % 3))::bpchar(4) AS bca,
  (chr(65 + k % 4) || repeat('é', k % 2))::bpchar(4) AS bcb,
  CASE WHEN k % 23 = 0 THEN NULL WHEN k % 41 = 0 THEN 'NaN'::numeric
       WHEN k % 3 = 0 THEN ((k * 7919 % 100000) - 50000) / 100.0
       WHEN k % 3 = 1 THEN ((k * 104729 % 1000000) - 500000)::numeric(14,4) / 1000
       ELSE (k - 250) / 7.0 END AS na,
  ((k % 97 + 1) * 0.25 * (CASE WHEN k % 3 = 0 THEN -1 ELSE 1 END))::numeric(8,3) AS nb,
  CASE WHEN k % 19 = 0 THEN NULL ELSE md5(k::text)::uuid END AS uua,
  md5((k % 37)::text)::uuid AS uub,
  CASE WHEN k % 17 = 0 THEN NULL
       ELSE (k % 50 - 25) * interval '1 day 3 hours' + (k % 13) * interval '1 mon' - (k % 7) * interval '1 year' END AS iva,
  (k % 7) * interval '1 mon' - (k % 11) * interval '17 hours 13 min' + (k % 3) * interval '30 days' AS ivb,
  CASE WHEN k % 23 = 0 THEN NULL
       ELSE (('00:00'::time + (k * 997) * interval '1 second')::text ||
             (ARRAY['+00', '-05', '+05:30', '-01', '+14'])[1 + k % 5])::timetz END AS tta,
  (('00:00'::time + (k * 401) * interval '1 second')::text || (ARRAY['+00', '-01', '+01'])[1 + k % 3])::timetz AS ttb,
  CASE WHEN k % 29 = 0 THEN NULL ELSE substring(decode(md5(k::text), 'hex') FROM 1 FOR k % 5) END AS bya,
  substring(decode(md5((k % 41)::text), 'hex') FROM 1 FOR k % 3) AS byb,
  CASE WHEN k % 13 = 0 THEN NULL ELSE ((k % 400) - 200) / 8.0 END::float2 AS f2a,
  ((k % 31) / 4.0)::float2 AS f2b
FROM generate_series(0, 499) k;

-- PostgreSQL's result against the device's, for one expression over a table.
CREATE FUNCTION pg_vs_device(rel regclass, expr text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  pg_err text;
  dev_err text;
  differing bigint;
BEGIN
  BEGIN
    -- the type's output function, as device_eval uses (bool::text differs)
    EXECUTE format('CREATE TEMP TABLE pg_res AS
                    SELECT rowid, CASE WHEN v IS NULL THEN NULL ELSE format(''%%s'', v) END AS value
                      FROM (SELECT ctid::text AS rowid, (%s) AS v FROM ONLY %s OFFSET 0) s', expr, rel);
  EXCEPTION WHEN OTHERS THEN
    pg_err := SQLSTATE || ': ' || SQLERRM;
  END;
  BEGIN
    CREATE TEMP TABLE dev_res AS SELECT d.ctid AS rowid, d.value FROM pgstrom.device_eval(rel, expr) d;
  EXCEPTION WHEN OTHERS THEN
    dev_err := SQLSTATE || ': ' || SQLERRM;
  END;
  IF pg_err IS NOT NULL OR dev_err IS NOT NULL THEN
    SET LOCAL client_min_messages = warning;
    DROP TABLE IF EXISTS pg_res;
    DROP TABLE IF EXISTS dev_res;
    IF pg_err IS NOT DISTINCT FROM dev_err THEN
      RETURN 'same error ' || pg_err;
    END IF;
    IF dev_err LIKE '0A000: expression cannot run on the device%' THEN
      RETURN 'not offloaded';
    END IF;
    RETURN format('MISMATCH: postgres %s, device %s', coalesce(pg_err, 'ok'), coalesce(dev_err, 'ok'));
  END IF;
  SELECT count(*) INTO differing
    FROM pg_res p FULL JOIN dev_res d USING (rowid)
   WHERE p.value IS DISTINCT FROM d.value OR p.rowid IS NULL OR d.rowid IS NULL;
  DROP TABLE pg_res;
  DROP TABLE dev_res;
  RETURN CASE WHEN differing = 0 THEN 'same' ELSE format('MISMATCH: %s rows differ', differing) END;
END $$;

-- Every catalog function, called by name on columns of its argument types.
CREATE FUNCTION arg_column(t oid, side text) RETURNS text LANGUAGE sql AS $$
  SELECT CASE t WHEN 'int2'::regtype THEN 'i2' WHEN 'int4'::regtype THEN 'i4' WHEN 'int8'::regtype THEN 'i8'
                WHEN 'float4'::regtype THEN 'f4' WHEN 'float8'::regtype THEN 'f8' WHEN 'bool'::regtype THEN 'b'
                WHEN 'date'::regtype THEN 'd' WHEN 'time'::regtype THEN 't' WHEN 'timestamp'::regtype THEN 'ts'
                WHEN 'timestamptz'::regtype THEN 'tz' WHEN 'text'::regtype THEN 'tx'
                WHEN 'bpchar'::regtype THEN 'bc' WHEN 'numeric'::regtype THEN 'n' WHEN 'uuid'::regtype THEN 'uu'
                WHEN 'interval'::regtype THEN 'iv' WHEN 'timetz'::regtype THEN 'tt'
                WHEN 'bytea'::regtype THEN 'by' WHEN 'float2'::regtype THEN 'f2' END || side $$;
CREATE TEMP TABLE catalog_calls AS
SELECT f.func_id, f.name,
       -- (an output function as a cast to text calls it)
       CASE WHEN p.prorettype = 'cstring'::regtype THEN format('(%s)::text', arg_column(p.proargtypes[0], 'a')) ELSE
       format('%s(%s)', p.oid::regproc,
              CASE WHEN p.pronargs = 1 THEN arg_column(p.proargtypes[0], 'a')
                   WHEN p.pronargs = 2 THEN arg_column(p.proargtypes[0], 'a') || ', ' || arg_column(p.proargtypes[1], 'b')
                   ELSE arg_column(p.proargtypes[0], 'a') || ', ' || arg_column(p.proargtypes[1], 'b') || ', '
                        || arg_column(p.proargtypes[2], 'b') END) END AS expr
  FROM pgstrom.device_functions f JOIN pg_proc p ON p.oid = f.pg_function;
SELECT count(*) AS functions, count(*) FILTER (WHERE expr IS NOT NULL) AS callable FROM catalog_calls;
CREATE TEMP TABLE catalog_results AS
SELECT func_id, name, expr, pg_vs_device('dv_safe', expr) AS on_safe, pg_vs_device('dv_edge', expr) AS on_edge
  FROM catalog_calls;
-- Values: every function agrees on every moderate row.
SELECT on_safe, count(*) FROM catalog_results GROUP BY 1 ORDER BY 1;
-- Edges: the same values, or the same error as PostgreSQL.
SELECT on_edge, count(*) FROM catalog_results GROUP BY 1 ORDER BY 1;
SELECT name, expr, on_safe, on_edge FROM catalog_results
 WHERE on_safe LIKE 'MISMATCH%' OR on_edge LIKE 'MISMATCH%' ORDER BY func_id;

-- Expressions as users write them: operators, casts, logic, tests.
SELECT e, pg_vs_device('dv_edge', e) AS on_edge, pg_vs_device('dv_safe', e) AS on_safe FROM (VALUES
  ('i4a + i4b * 2 - i2a'),
  ('f8a ^ 2'), ('abs(f8a) ^ 0.5'), ('f8a ^ 3 + power(f8b, 2)'), ('pow(f8a, f8b)'),
  ('(i2a + i4a)::int8 * i8b'),
  ('i4b <> 0 AND i4a / i4b > 1'),
  ('i4b = 0 OR i4a % i4b = 1'),
  ('f8b <> 0 AND f8a / f8b < 0.5'),
  ('NOT (ba AND bb)'),
  ('ba OR bb OR i4a > 0'),
  ('ba AND bb AND i2a IS NULL'),
  ('i4a IS NULL OR i8a IS NOT NULL'),
  ('ba IS TRUE'), ('ba IS NOT TRUE'), ('ba IS FALSE'), ('ba IS NOT FALSE'),
  ('ba IS UNKNOWN'), ('ba IS NOT UNKNOWN'),
  ('(f4a > 0) IS DISTINCT FROM NULL::bool'),
  ('i4a IS DISTINCT FROM i8b'), ('f8a IS NOT DISTINCT FROM f4b'), ('da IS DISTINCT FROM db'),
  ('abs(i2a) + abs(i4a)'), ('abs(f4a)'),
  ('i4a::text = ''1'''),
  ('f4a::float8 + f8a'),
  ('-f8a'), ('abs(i8a)'), ('-i2a'), ('@ f4a'),
  ('f8a::int4'), ('f4a::int2'), ('f8a::float4'), ('i8a::float4'), ('i8a::int2'),
  ('da < db AND tsa >= tsb'),
  ('tza = tzb OR ta > tb'),
  ('(i4a < 100) = (i8a > 0)'),
  ('NULL::int4 + i4a'),
  ('2147483647 + i4a'),
  ('i4a / 0'),
  ('f8a * 1e308'),
  ('f8a / 1e308 / 1e308'),
  ('CASE WHEN i4a > 0 THEN i4a WHEN i4a < 0 THEN -i4a END'),
  ('CASE i2a WHEN 1 THEN 10 WHEN 2 THEN 20 ELSE i4a END'),
  ('CASE WHEN i4b = 0 THEN NULL ELSE i4a / i4b END'),
  ('CASE WHEN ba THEN f8a ELSE f8b END'),
  ('CASE WHEN ba THEN i4a + 2147483647 ELSE 0 END'),
  ('CASE da WHEN db THEN 1 ELSE CASE WHEN ba THEN 2 END END'),
  ('COALESCE(i4a, i4b, 0)'), ('COALESCE(f8a, f4a::float8)'), ('COALESCE(ba, bb)'), ('COALESCE(NULL::int8, i8a)'),
  ('NULLIF(i4a, i4b)'), ('NULLIF(i2a, 0)'), ('NULLIF(f8a, ''NaN'')'), ('NULLIF(i4a, 1) + 1'),
  ('GREATEST(i4a, i4b, 7)'), ('LEAST(f8a, f8b)'), ('GREATEST(f4a, f4b)'), ('LEAST(da, db)'), ('GREATEST(tza, tzb)'),
  ('GREATEST(NULL::int4, i4a)'), ('LEAST(f8a, ''-0'', 0)'),
  ('i4a IN (1, 2, 46341, NULL)'), ('i4a NOT IN (0, 1)'), ('i8a = ANY (ARRAY[1, -1, 9223372036854775807])'),
  ('f8a <> ALL (ARRAY[0.1, 2.5])'), ('f8a = ANY (ARRAY[''NaN'', ''-Infinity'']::float8[])'),
  ('i4a IN (i4b, i2a, 1)'), ('i4a = ANY (''{}''::int4[])'), ('i4a = ANY (NULL::int4[])'),
  ('i4a IN (i4b / 0, 1)'), ('i4a IN (1, i4b + 2147483647)'),
  ('tza < now()'), ('da <= current_date'), ('tza > now() - interval ''1 day'''), ('tsa < localtimestamp'),
  ('i8a > extract(year FROM now())::int8'), ('CASE i4a WHEN extract(day FROM now())::int4 THEN 1 END'),
  ('txa = txb'), ('txa <> ''abc'''), ('txa < txb COLLATE "C"'), ('txa >= ''日'' COLLATE "POSIX"'),
  ('txa < txb'), ('length(txa) + octet_length(txb)'), ('char_length(txa) = 3'),
  ('bca = bcb'), ('bca = ''abc'''), ('length(bca) * 10 + octet_length(bca)'),
  ('txa IN (''a'', ''abc'', NULL)'), ('txa::varchar = ''ü''::varchar'), ('COALESCE(txa, ''a'') = txb'),
  ('NULLIF(txa, '''') IS NULL'), ('txa IS DISTINCT FROM txb'), ('CASE WHEN txa = ''a'' THEN 1 WHEN txa = '''' THEN 2 END'),
  ('txa = ANY (ARRAY[txb, ''abd''])'), ('txa'), ('upper(txa) = ''ABC'''),
  ('sqrt(abs(f8a)) + |/ (f8b * f8b)'), ('round(f8a * 10) / 10 + trunc(f8b)'), ('floor(f8a) - ceil(f8b)'),
  ('da + i4a'), ('da - i2a'), ('da - db'), ('da + 1 > db - 1'), ('(da - db) / 7'),
  ('sqrt(f8a - 1)'),
  ('ln(abs(f8a) + 1) + log(abs(f8b) + 1)'), ('exp(f8a / 1000)'), ('exp(f8a)'), ('ln(f8a)'), ('log10(f8a - 1)'),
  ('sin(f8a) * cos(f8b) + tan(f8a / 3)'), ('cot(f8b)'), ('atan2(f8a, f8b) + atan(f8b)'), ('asin(f8a / 20000) + acos(f8b / 40)'),
  ('sinh(f8a / 100) - cosh(f8b / 10) + tanh(f8a)'), ('asinh(f8a) + acosh(abs(f8b) + 1) + atanh(f8b / 40)'),
  ('degrees(radians(f8a))'), ('radians(f8a) > 1'), ('cbrt(f8a) ^ 3'), ('||/ f8b'), ('ln(abs(f8a) + 1) > 5'),
  -- guarded so that values, not only the first error, are compared
  ('CASE WHEN f8a > -1e300 AND f8a < 1e300 THEN sin(f8a) + cos(f8a) + tan(f8a) END'),
  ('CASE WHEN f8a > -1e300 AND f8a < 1e300 THEN cot(f8a) END'),
  ('CASE WHEN abs(f8a) <= 1 THEN asin(f8a) + acos(f8a) END'), ('CASE WHEN abs(f8a) <= 1 THEN atanh(f8a) END'),
  ('CASE WHEN abs(f8a / 20000) <= 1 THEN asin(f8a / 20000) + acos(f8a / 20000) + atanh(f8a / 20000) END'),
  ('exp(f8a / 100)'), ('CASE WHEN f8a > -700 AND f8a < 700 THEN exp(f8a) END'),
  ('CASE WHEN f8a > 0 THEN ln(f8a) END'), ('CASE WHEN f8a > 0 THEN log10(f8a) + log(f8a) END'),
  ('CASE WHEN abs(f8a) < 700 THEN sinh(f8a) + cosh(f8a) END'), ('CASE WHEN f8a >= 1 THEN acosh(f8a) END'),
  ('CASE WHEN f8a > -1e300 AND f8a < 1e300 AND abs(f8a) > 1e-300 THEN degrees(f8a) + radians(f8a) END'),
  ('txa LIKE ''a%'''), ('txa LIKE ''%b%'''), ('txa LIKE ''_'''), ('txa LIKE ''日_%'''), ('txa NOT LIKE ''%c'''),
  ('txa LIKE txb'), ('txa NOT LIKE txb'), ('txa LIKE ''a\%b'''), ('txa LIKE ''%\'''), ('txa LIKE ''abc\'''),
  ('bca LIKE ''abc%'''), ('bca LIKE ''a'''), ('txa LIKE ''%%_%%'''), ('txa LIKE '''''), ('txa LIKE ''%a%b%c%'''),
  ('strpos(txa, ''b'') + position(''本'' IN txa)'), ('strpos(txa, txb)'), ('starts_with(txa, txb)'),
  ('starts_with(txa, ''日'') OR strpos(txa, '''') = 1'),
  ('da < tsa'), ('tsb >= db'), ('da = tsb OR tsa <> db'), ('GREATEST(da, db) > tsa'),
  ('na + nb * 2'), ('na / nb > 1.5'), ('(na - nb) / 3'), ('i4a::numeric / 3'), ('i8a * 1.5 > na'),
  ('na::int4 + i4b'), ('na::int8'), ('na::int2'), ('round(na, 2) = na'), ('round(na) + trunc(nb)'),
  ('round(na, -2)'), ('trunc(na, 3)'), ('ceil(na) - floor(nb)'), ('sign(na) * abs(nb)'), ('-na'),
  ('na % nb'), ('mod(na, 7)'), ('mod(i4a, i4b)'), ('mod(i8a, 3)'),
  ('na IN (1, 2.50, NULL)'), ('na = ANY (ARRAY[0.5, -1, ''NaN''])'), ('GREATEST(na, nb, 0)'), ('LEAST(na, nb)'),
  ('COALESCE(na, nb, 0)'), ('NULLIF(na, 0)'), ('na IS DISTINCT FROM nb'),
  ('na::float8 < f8a'), ('na::float4'), ('na::float8 * 2'),
  ('CASE WHEN nb = 0 THEN NULL ELSE na / nb END'), ('na * na * na'), ('na / 0'), ('na % 0'),
  ('na > 12345678901234567890123456789012345678901234567890'),
  ('uua = uub'), ('uua < uub OR uua IS NULL'), ('uua IN (''a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'', md5(''1'')::uuid)'),
  ('GREATEST(uua, uub)'), ('NULLIF(uua, uub)'), ('uua IS DISTINCT FROM ''00000000-0000-0000-0000-000000000000'''),
  ('iva = ivb'), ('iva < ivb'), ('iva IN (''1 mon'', ''720:00:00'', NULL)'), ('GREATEST(iva, ivb, ''0'')'),
  ('iva + ivb'), ('iva - ivb'), ('-iva'), ('iva + ivb > ''1 year'''), ('COALESCE(iva, ivb)'),
  ('tsa + iva'), ('tsa - ivb'), ('tsa + interval ''1 mon'''), ('tsa - interval ''1 year 1 day 00:00:01'''),
  ('da + iva'), ('da - ivb'), ('da + interval ''1 day'' > tsb'), ('tsa - tsb'), ('tsa - tsb > iva'),
  ('ta - tb'), ('ta + iva'), ('ta - ivb'), ('ta + interval ''25 hours'''), ('ta - tb < ivb'),
  ('tsa + interval ''1 mon'' - interval ''1 mon'' = tsa'),
  ('tta = ttb'), ('tta < ttb'), ('LEAST(tta, ttb)'), ('tta IN (''12:00+00'', ''11:00-01'')'),
  ('bya = byb'), ('bya < byb'), ('length(bya) + octet_length(byb)'), ('bya LIKE byb'), ('bya NOT LIKE ''a%'''),
  ('bya LIKE ''_'''), ('bya LIKE ''%\\%'''), ('bya LIKE ''\x6125''::bytea'), ('bya IN (''\x00'', ''\xff'')'),
  ('GREATEST(bya, byb) = byb'), ('bya IS DISTINCT FROM byb'),
  ('substring(txa FROM 2 FOR 2)'), ('substr(txa, -1, 3)'), ('substr(txa, 2)'), ('substr(txa, i2a, i2b)'),
  ('substring(txa, 0, 2147483647)'), ('substring(txa FROM i4a)'), ('left(txa, 2)'), ('left(txa, -1)'),
  ('left(txa, i4a)'), ('right(txa, 2)'), ('right(txa, -1)'), ('right(txa, i4a)'), ('btrim(txa)'),
  ('btrim(txa, ''a日'')'), ('ltrim(txa, txb)'), ('rtrim(txa, '' c'')'), ('rtrim(bca::text)'), ('ltrim(txa, '' a'')'),
  ('split_part(txa, ''b'', 1)'), ('split_part(txa, ''b'', -1)'), ('split_part(txa, '''', -1)'),
  ('split_part(txa, txb, i2a)'), ('split_part(txa, ''b'', i2b)'), ('split_part(txa, ''本'', 2)'),
  ('substring(bya FROM 2 FOR 2)'), ('substr(bya, i2a)'), ('substr(bya, i2a, i2b)'),
  ('substr(txa, 1, 2) = ''ab'' AND length(btrim(txa)) > 1'),
  ('make_date(i4a, i2a, i2b)'), ('make_date(2000 + i2a % 100, 1 + abs(i2b % 12), 1 + abs(i2a % 28))'),
  ('make_date(-44, 3, 15) < da'), ('make_date(i2a, 2, 29)'),
  ('lower(txa) = lower(txb)'), ('upper(txa) IN (''ABC'', ''A'', ''ABD'', '''', ''ABC '')'), ('upper(txb) = ''ABC'''),
  ('octet_length(txa || txb) + length(txa || ''-'' || txb)'), ('strpos(txa || txb, ''ca'')'),
  ('starts_with(upper(txa), ''A'')'), ('txa || txb = ''abcabc'' OR txa || ''-'' || txb = ''a-a'''),
  ('lower(txa)'), ('upper(txb)'), ('txa || txb'), ('txa || ''-'' || bca::text'), ('lower(bca::text) || upper(txb)'),
  ('CASE WHEN ba THEN upper(txa) ELSE txb END'), ('COALESCE(lower(txa), txb || ''日本'')'),
  ('da + ta'), ('ta + da < tsa'), ('tsa::time'), ('tsa::time > ta'), ('ta::interval + iva'), ('tta::time'),
  ('i4a::bool OR ba'), ('ba::int4 + i4b'),
  ('i4a::text'), ('i8a::text LIKE ''%12%'''), ('na::text'), ('ba::text'), ('i2a::varchar || txa'), ('nb::text = ''0.5'''),
  ('lower(txa) || upper(txb) = ''abcABC'''), ('txa ILIKE ''A%'''), ('txa NOT ILIKE ''%B%'''), ('txa ILIKE txb'),
  ('bca ILIKE ''abc%'''), ('bca NOT ILIKE ''_ %'''), ('bca::text'), ('lower(bca::text)'), ('txa ILIKE ''%\'''),
  ('f2a > 0.5'), ('f2a = f2b'), ('f2a < f2b OR f2a IS NULL'), ('f2a::float4 + f4a'), ('f2a * 2'), ('f2a::float8 / 3'),
  ('f2a IN (''0.5'', ''NaN'', ''-0'')'), ('GREATEST(f2a, f2b) = f2b'), ('f2a'), ('NULLIF(f2a, ''0'')'), ('f2a = 0.1'),
  ('f2a::int4'), ('GREATEST(f2a, f2b)'), ('CASE WHEN f2a > 0 THEN f2a ELSE f2b END')
) v(e);
-- float4 / float8 to numeric: numeric.c prints the value with %.6g /
-- %.15g and reads it back (exact digits, ties to even: 1000000000000005
-- gives 1000000000000000, 1000000000000015 gives 1000000000000020);
-- values too small or too large for the device's digits go to PostgreSQL
CREATE TEMP TABLE dv_fnum AS
SELECT k,
  CASE k % 4
    WHEN 0 THEN (hashint4(k)::float8 / 2147483648.0) * 10 ^ (k % 70 - 30)
    WHEN 1 THEN (hashint4(k) % 1000000)::float8 / 64
    WHEN 2 THEN (ARRAY[1000000000000005, 1000000000000015, 999999999999999.5, 0.5, 1e15, 9.9999999999999995,
                       123456789012345.67, 1e-8, 1.5e-10, 1e37, 1e38, 1.7e308, 5e-324, 2.2250738585072014e-308,
                       'NaN', 'Infinity', '-Infinity', '-0', 0, 0.1, 0.0001, 0.00001, 100, 99999999999999.99,
                       -2.5, 4503599627370497])[1 + k / 4 % 26]
    ELSE hashint8(k)::float8 * 2 ^ (k % 100 - 50) END AS f8a,
  (CASE k % 3
    WHEN 0 THEN (hashint4(k)::float8 / 2147483648.0) * 10 ^ (k % 50 - 12)
    WHEN 1 THEN (ARRAY[1234565, 1234575, 0.5, 16777215, 1e-8, 3.4e38, 1.17549435e-38, 'NaN', '-0', 0.1,
                       8388609.5, 999999.5, '-Infinity'])[1 + k / 3 % 13]
    ELSE (hashint4(k) % 1000000)::float8 / 8 END)::float4 AS f4a
FROM generate_series(1, 20000) k;
SELECT pg_vs_device('dv_fnum', 'f8a::numeric') AS f8_numeric, pg_vs_device('dv_fnum', 'f4a::numeric') AS f4_numeric,
       pg_vs_device('dv_fnum', 'round(f8a::numeric, 2) + f4a::numeric') AS mixed;

-- text made on the device beyond its 512 bytes of row memory: those rows
-- are evaluated by PostgreSQL
SELECT k, pg_vs_device('dv_edge', e) AS on_edge, pg_vs_device('dv_safe', e) AS on_safe FROM (VALUES
  ('60 x txa', (SELECT 'octet_length(' || string_agg('txa', ' || ') || ')' FROM generate_series(1, 60))),
  ('upper(60 x txb)', (SELECT 'upper(' || string_agg('txb', ' || ') || ') = ''X''' FROM generate_series(1, 60))),
  ('60 x txa, returned', (SELECT string_agg('txa', ' || ') FROM generate_series(1, 60))),
  ('lower(60 x txb), returned', (SELECT 'lower(' || string_agg('txb', ' || ') || ')' FROM generate_series(1, 60)))
) v(k, e);

-- extract / date_part / date_trunc: every unit over dates, times and
-- timestamps (BC years, leap days, 24:00, infinities); units spelled
-- otherwise (plurals, upper case) and julian go to PostgreSQL.
CREATE TEMP TABLE datetime_calls AS
SELECT format(f, u) AS e
  FROM unnest(ARRAY['extract(%s FROM tsa)', 'date_part(''%s'', tsa)', 'extract(%s FROM da)', 'date_part(''%s'', da)',
                    'date_trunc(''%s'', tsa)', 'extract(%s FROM ta)', 'date_part(''%s'', ta)']) f,
       unnest(ARRAY['microseconds', 'milliseconds', 'second', 'minute', 'hour', 'day', 'week', 'month',
                    'quarter', 'year', 'decade', 'century', 'millennium', 'isoyear', 'dow', 'isodow', 'doy',
                    'epoch', 'julian', 'Years', 'timezone']) u;
CREATE TEMP TABLE datetime_results AS
SELECT e, pg_vs_device('dv_edge', e) AS on_edge, pg_vs_device('dv_safe', e) AS on_safe FROM datetime_calls;
SELECT count(*) AS calls,
       count(*) FILTER (WHERE on_edge = 'same' AND on_safe = 'same') AS same_values,
       count(*) FILTER (WHERE on_edge LIKE 'same error%' OR on_safe LIKE 'same error%') AS same_errors,
       count(*) FILTER (WHERE on_edge LIKE 'MISMATCH%' OR on_safe LIKE 'MISMATCH%') AS mismatches
  FROM datetime_results;
SELECT * FROM datetime_results WHERE on_edge LIKE 'MISMATCH%' OR on_safe LIKE 'MISMATCH%' OR on_edge = 'not offloaded';
SELECT DISTINCT on_edge, on_safe FROM datetime_results WHERE on_edge LIKE 'same error%' OR on_safe LIKE 'same error%' ORDER BY 1, 2;
SELECT pgstrom.device_program('dv_safe', 'extract(year FROM da) = 2021 AND date_trunc(''month'', tsa) < tsb');

-- Interval arithmetic where PostgreSQL raises no error: ends of months,
-- leap days, BC dates, infinities on either side, negative parts.
CREATE TABLE dv_interval AS
SELECT row_number() OVER () AS k, ts AS tsa, ts2 AS tsb, ts::date AS da,
       CASE WHEN isfinite(ts) THEN ts::time END AS ta, CASE WHEN isfinite(ts2) THEN ts2::time END AS tb,
       iv AS iva, CASE WHEN isfinite(iv) THEN iv END AS ivb
  FROM unnest(ARRAY['2024-01-31 12:00','2023-01-31','2024-02-29','2000-03-31 23:59:59.999999','1900-12-31',
                    '0044-03-15 BC','infinity','-infinity']::timestamp[]) ts,
       unnest(ARRAY['2024-03-01','1999-12-31 23:59:59','0001-01-01 BC']::timestamp[]) ts2,
       unnest(ARRAY['1 mon','-1 mon','1 year','-13 mons 5 days','1 day -00:00:00.000001','infinity','-infinity','0',
                    '12 mons -30 days 24:00','-1 day 00:00:00.000001','25:00','-49:30']::interval[]) iv
 WHERE isfinite(ts) OR isfinite(iv);
SELECT e, pg_vs_device('dv_interval', e) AS result FROM (VALUES
  ('tsa + iva'), ('iva + tsa'), ('tsa - iva'), ('da + iva'), ('iva + da'), ('da - iva'),
  ('tsa - tsb'), ('tsb - tsa'), ('ta - tb'), ('ta + ivb'), ('ivb + ta'), ('ta - ivb'),
  ('iva + ivb'), ('iva - ivb'), ('-iva'), ('iva < ivb'), ('GREATEST(iva, tsa - tsb)'),
  ('tsa + iva - iva = tsa'), ('(tsa - tsb) + ivb')
) v(e);

-- Row by row, errors included: PostgreSQL evaluates each row alone; the
-- device evaluates the rows PostgreSQL computes in one run (the failing
-- ones masked by a CASE), then each failing row alone, which must fail
-- with PostgreSQL's SQLSTATE and message.  The failing rows' errors are
-- kept in row_errors.
CREATE TEMP TABLE row_errors (expr text, k int, err text);
CREATE FUNCTION pg_vs_device_rows(rel regclass, expr text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  k int;
  v text;
  failing int[] := '{}';
  errs text[] := '{}';
  dev text;
  values_result text;
  differing int := 0;
  enabled text := current_setting('pg_strom.enabled');
BEGIN
  PERFORM set_config('pg_strom.enabled', 'off', true);
  FOR k IN EXECUTE format('SELECT k FROM ONLY %s ORDER BY k', rel) LOOP
    BEGIN
      EXECUTE format('SELECT (%s)::text FROM ONLY %s WHERE k = $1', expr, rel) INTO v USING k;
    EXCEPTION WHEN OTHERS THEN
      failing := failing || k;
      errs := errs || (SQLSTATE || ': ' || SQLERRM);
    END;
  END LOOP;
  PERFORM set_config('pg_strom.enabled', enabled, true);
  INSERT INTO row_errors SELECT expr, f.k, f.err FROM unnest(failing, errs) f(k, err);
  values_result := pg_vs_device(rel, format('CASE WHEN k = ANY (%L::int[]) THEN NULL ELSE (%s) END', failing, expr));
  FOR i IN 1 .. coalesce(array_length(failing, 1), 0) LOOP
    BEGIN
      PERFORM count(*) FROM pgstrom.device_eval(rel, format('CASE WHEN k = %s THEN (%s) END', failing[i], expr));
      dev := 'no error';
    EXCEPTION WHEN OTHERS THEN
      dev := SQLSTATE || ': ' || SQLERRM;
    END;
    IF dev IS DISTINCT FROM errs[i] THEN
      differing := differing + 1;
      RAISE WARNING '% at k = %: postgres %, device %', expr, failing[i], errs[i], dev;
    END IF;
  END LOOP;
  RETURN format('%s; %s failing rows%s', values_result, coalesce(array_length(failing, 1), 0),
                CASE WHEN differing = 0 THEN ', same errors' ELSE format(', MISMATCH: %s errors differ', differing) END);
END $$;

-- interval * float8, float8 * interval, interval / float8: months, days
-- and times of both signs, fractions that cascade (thirds, tenths, 1e-9),
-- extremes of each field, infinite intervals, and factors 0, -0, NaN,
-- +-Infinity, the smallest subnormal and the largest double.
CREATE TABLE dv_ivmul AS
SELECT (row_number() OVER ())::int AS k, iv AS iva, f AS f8a
  FROM unnest(ARRAY['0', '1 mon', '-1 mon', '1 day', '-1 day', '00:00:00.000001', '-00:00:00.000001',
                    '1 year 2 mons 3 days 04:05:06.789', '-1 year -2 mons -3 days -04:05:06.789', '1 mon -1 day',
                    '-1 mon 1 day 00:00:01', '5 days 23:59:59.999999', '7 mons 15 days 12:00',
                    '29 days 23:59:59.999999', '1 day -00:00:00.000001', '3 mons 10 days 01:00', '100 years',
                    '2147483647 mons', '-178956970 years -8 mons', '2147483647 days', '-2147483648 days',
                    '2562047788:00:54.775807', '-2562047788:00:54.775807',
                    '178956970 years 7 mons 2147483647 days 2562047788:00:54.775806', 'infinity', '-infinity'
                   ]::interval[]) iv,
       unnest(ARRAY['0', '-0', '1', '-1', '0.5', '-0.5', '0.3333333333333333', '0.6666666666666666', '0.1', '1.5',
                    '-2.5', '7', '30', '1e-6', '1e-9', '5e-324', '-1e-300', '1e9', '1e300', '1.7976931348623157e308',
                    'NaN', 'Infinity', '-Infinity', '29.999999', '0.999999999', '1.1574074074074073e-05', '12.5',
                    '3.14159265358979']::float8[]) f;
SELECT e, pg_vs_device_rows('dv_ivmul', e) AS result FROM (VALUES
  ('iva * f8a'), ('f8a * iva'), ('iva / f8a'), ('iva * f8a / f8a'), ('(iva / 3) * f8a + iva'),
  ('iva * f8a < iva / f8a'), ('justify_interval(iva * f8a)'), ('extract(epoch FROM iva / f8a)')
) v(e);

-- justify_hours / justify_days / justify_interval and every unit of
-- extract / date_part over intervals: each field's sign and extremes,
-- fields that justify into overflow, and the infinities.
CREATE TABLE dv_ivpart AS
SELECT (row_number() OVER ())::int AS k, iv AS iva
  FROM unnest(ARRAY['0', '1 mon', '-1 mon', '11 mons', '-11 mons', '3 mons', '-3 mons', '14 mons', '-14 mons',
                    '1 year 2 mons 3 days 04:05:06.789', '-1 year -2 mons -3 days -04:05:06.789',
                    '1 mon -1 day', '-1 mon 1 day 00:00:01', '1 mon -35 days 25:00', '-1 mon 35 days -25:00',
                    '29 days 23:59:59.999999', '30 days', '-30 days', '59 days -00:00:00.000001', '1 day -00:00:01',
                    '-1 day 00:00:01', '24:00:00', '-24:00:00', '25:59:59.5', '-25:59:59.5', '00:00:59.999999',
                    '-00:00:00.000001', '17 days', '-17 days', '1234 years 5 mons', '-1234 years -5 mons',
                    '1 year 2 mons 29 days 04:05:06.789', '1 year 2 mons 12345 days 00:00:00.300001',
                    '10288065 years 9 mons 2147483647 days 04:05:06.789', '-10288065 years -9 mons 12345 days',
                    '2147483647 mons', '2147483647 mons -1 day', '2147483647 mons 29 days 24:00:00',
                    '2147483647 mons 30 days', '-178956970 years -8 mons', '-178956970 years -8 mons -30 days',
                    '-178956970 years -7 mons -29 days -24:00:00', '2147483647 days', '2147483647 days 24:00:00',
                    '-2147483648 days', '-2147483648 days -24:00:00', '2147483647 days -24:00:00',
                    '2562047788:00:54.775807', '-2562047788:00:54.775807', '1 day 2562047764:00:00',
                    '178956970 years 7 mons 2147483647 days 2562047788:00:54.775806',
                    '-178956970 years -8 mons -2147483648 days -2562047788:00:54.775807', 'infinity', '-infinity'
                   ]::interval[]) iv;
SELECT e, pg_vs_device_rows('dv_ivpart', e) AS result FROM (VALUES
  ('justify_hours(iva)'), ('justify_days(iva)'), ('justify_interval(iva)'),
  ('justify_days(justify_hours(iva)) = justify_interval(iva)'), ('justify_interval(-iva)')
) v(e);
CREATE TEMP TABLE interval_part_results AS
SELECT format(f, u) AS e, pg_vs_device('dv_ivpart', format(f, u)) AS result
  FROM unnest(ARRAY['extract(%s FROM iva)', 'date_part(''%s'', iva)']) f,
       unnest(ARRAY['microseconds', 'milliseconds', 'second', 'minute', 'hour', 'day', 'week', 'month',
                    'quarter', 'year', 'decade', 'century', 'millennium', 'epoch',
                    'isoyear', 'dow', 'isodow', 'doy', 'julian', 'timezone', 'Hours', 'mins', 'fortnight']) u;
SELECT * FROM interval_part_results;
-- the units the device knows are computed there, the others by PostgreSQL
-- (the rows go to the CPU path)
CREATE FUNCTION cpu_path(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE ln text; r text := '';
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) ' || q LOOP
    IF ln ~ '(Custom Scan \(|GPU Input Rows|CPU Path Rows)' THEN
      r := r || CASE WHEN r = '' THEN '' ELSE ', ' END
             || regexp_replace(ln, '^ *(-> +)?(Custom Scan \((\w+)\).*|(.*))$', '\3\4');
    END IF;
  END LOOP;
  RETURN r;
END $$;
SET pg_strom.gpu_setup_cost = 0;
SELECT q, cpu_path(q) FROM (VALUES
  ('SELECT k FROM dv_ivpart WHERE extract(hour FROM iva) > 2 OR date_part(''epoch'', iva) < 0'),
  ('SELECT k FROM dv_ivpart WHERE extract(hours FROM iva) > 2'),
  ('SELECT k FROM dv_ivpart WHERE CASE WHEN iva BETWEEN ''-100 years'' AND ''100 years'' THEN justify_interval(iva * 0.7) END > ''1 day''')
) v(q);
RESET pg_strom.gpu_setup_cost;

-- sind / cosd / tand / cotd / atand / atan2d over angles (multiples of
-- 15 degrees, one unit in the last place beside 30, 45, 60 and 90, huge
-- and tiny values, NaN, infinities), asind / acosd over [-1, 1] and just
-- beyond.
CREATE TABLE dv_deg AS
SELECT (row_number() OVER ())::int AS k, a AS f8a,
       (ARRAY['1', '-1', '0', '-0', '0.5', 'Infinity', '-Infinity', 'NaN', '2', '-3', '1e-300', '1e300']::float8[])
         [1 + (row_number() OVER ())::int % 12] AS f8b
  FROM (SELECT unnest(ARRAY['0', '-0', 'NaN', 'Infinity', '-Infinity', '30.000000000000004', '29.999999999999996',
                            '45.00000000000001', '44.99999999999999', '60.00000000000001', '59.99999999999999',
                            '89.99999999999999', '90.00000000000001', '180.00000000000003', '359.99999999999994',
                            '1e-300', '5e-324', '-5e-324', '1e300', '-1e300', '1.7976931348623157e308', '3600000000.5',
                            '1e16', '-123456789.125', '0.1', '1', '-1', '15.5', '-44.9']::float8[]) AS a
        UNION ALL SELECT g * 15 FROM generate_series(-48, 48) g
        UNION ALL SELECT (g * 37.37) - 1800 FROM generate_series(0, 100) g) s;
CREATE TABLE dv_unit AS
SELECT (row_number() OVER ())::int AS k, a AS f8a
  FROM (SELECT unnest(ARRAY['0', '-0', 'NaN', '0.5', '-0.5', '1', '-1', '0.49999999999999994', '0.5000000000000001',
                            '-0.49999999999999994', '-0.5000000000000001', '0.9999999999999999', '-0.9999999999999999',
                            '1.0000000000000002', '-1.0000000000000002', '5e-324', '-5e-324', '1e-300', '2', '-2',
                            'Infinity', '-Infinity', '0.8660254037844386', '0.7071067811865476']::float8[]) AS a
        UNION ALL SELECT g / 64.0 FROM generate_series(-64, 64) g
        UNION ALL SELECT g / 997.0 FROM generate_series(-997, 997, 13) g) s;
SELECT e, pg_vs_device_rows(r, e) AS result FROM (VALUES
  ('dv_deg', 'sind(f8a)'), ('dv_deg', 'cosd(f8a)'), ('dv_deg', 'tand(f8a)'), ('dv_deg', 'cotd(f8a)'),
  ('dv_deg', 'atand(f8a)'), ('dv_deg', 'atand(f8b)'), ('dv_deg', 'atan2d(f8a, f8b)'), ('dv_deg', 'atan2d(f8b, f8a)'),
  ('dv_deg', 'sind(f8a) ^ 2 + cosd(f8a) ^ 2'), ('dv_deg', 'tand(f8a) * cotd(f8a)'),
  ('dv_unit', 'asind(f8a)'), ('dv_unit', 'acosd(f8a)'), ('dv_unit', 'asind(f8a) + acosd(f8a)'),
  ('dv_unit', 'sind(asind(f8a))'), ('dv_unit', 'atand(f8a)')
) v(r, e);
-- values PostgreSQL's construction makes exact, which the GPU computes
-- itself (the others it leaves to PostgreSQL): every row of each of
-- these is one of them
CREATE TABLE dv_deg_exact AS
SELECT (row_number() OVER ())::int AS k, j, j * 15.0::float8 AS f8a,
       (ARRAY['1', '0', '-0', '0.5', '-0.5', '-1', '1e300', 'Infinity']::float8[])[1 + (j + 48) % 8] AS f8b
  FROM generate_series(-48, 48) j;
SELECT e, pg_vs_device('dv_deg_exact', e) AS result FROM (VALUES
  ('CASE WHEN (j % 24 + 24) % 24 IN (0, 2, 6, 10, 12, 14, 18, 22) THEN sind(f8a) END'),
  ('CASE WHEN (j % 24 + 24) % 24 IN (0, 4, 6, 8, 12, 16, 18, 20) THEN cosd(f8a) END'),
  ('CASE WHEN j % 3 = 0 THEN tand(f8a) END'), ('CASE WHEN j % 3 = 0 THEN cotd(f8a) END'),
  ('CASE WHEN abs(f8b) <= 1 THEN asind(f8b) END'), ('CASE WHEN abs(f8b) <= 1 THEN acosd(f8b) END'),
  ('CASE WHEN f8b IN (0, 1) THEN atand(f8b) END'), ('CASE WHEN f8b = 0 AND f8a > 0 THEN atan2d(f8b, f8a) END')
) v(e);
-- the errors the row by row comparisons met
SELECT expr, err, count(*) FROM row_errors GROUP BY 1, 2 ORDER BY 1, 2;

-- Longer = ANY / <> ALL lists: one binary search of the sorted constants
-- (NULL elements, NaN and -0, cross-type integers, trailing blanks).
SELECT k, left(e, 24) AS starts, pg_vs_device('dv_edge', e) AS on_edge, pg_vs_device('dv_safe', e) AS on_safe FROM (VALUES
  (1, 'i4a IN (' || (SELECT string_agg((g * 7 - 150)::text, ',') FROM generate_series(1, 40) g) || ', 46341, 2147483647, -2147483648)'),
  (2, 'i4a IN (' || (SELECT string_agg((g * 7 - 150)::text, ',') FROM generate_series(1, 40) g) || ', NULL)'),
  (3, 'i4a NOT IN (' || (SELECT string_agg((g * 3)::text, ',') FROM generate_series(-20, 20) g) || ')'),
  (4, 'i8a <> ALL (''{' || (SELECT string_agg((g * 1000003 - 250000000)::text, ',') FROM generate_series(0, 99) g) || ',NULL}''::int8[])'),
  (5, 'i2a = ANY (''{' || (SELECT string_agg((g * 5)::text, ',') FROM generate_series(-30, 30) g) || ',32767,-32768}''::int8[])'),
  (6, 'f8a IN (' || (SELECT string_agg((g / 3.0)::float8::text, ',') FROM generate_series(-30, 30) g) || ', ''NaN'', ''-0'', ''-Infinity'')'),
  (7, 'f4a = ANY (''{' || (SELECT string_agg((g / 7.0)::float4::text, ',') FROM generate_series(-30, 30) g) || ',NaN,-0,Infinity,16777217}''::float4[])'),
  (8, 'da IN (' || (SELECT string_agg(quote_literal('2020-01-01'::date + g * 37), ',') FROM generate_series(0, 40) g) || ', ''infinity'', ''2024-02-29'')'),
  (9, 'tsa <> ALL (''{' || (SELECT string_agg('"' || ('2020-01-01'::timestamp + g * interval '86413 seconds')::text || '"', ',') FROM generate_series(0, 30) g) || ',infinity,-infinity}''::timestamp[])'),
  (10, 'ta IN (' || (SELECT string_agg(quote_literal('00:00'::time + g * interval '997 seconds'), ',') FROM generate_series(0, 30) g) || ', ''24:00'')'),
  (11, 'tza IN (' || (SELECT string_agg(quote_literal('2024-03-09 12:00+00'::timestamptz + g * interval '3607 seconds'), ',') FROM generate_series(0, 30) g) || ')'),
  (12, 'txa IN (' || (SELECT string_agg(quote_literal(repeat(chr(97 + g % 26), g % 5) || (g % 7)::text), ',') FROM generate_series(0, 40) g) || ', '''', ''日本'', ''abc '')'),
  (13, 'txa NOT IN (' || (SELECT string_agg(quote_literal(repeat(chr(97 + g % 3), g % 4) || (g % 3)::text), ',') FROM generate_series(0, 30) g) || ', NULL)'),
  (14, 'bca IN (' || (SELECT string_agg(quote_literal(chr(65 + g % 5) || repeat('é', g % 3) || repeat(' ', g % 2)), ',') FROM generate_series(0, 30) g) || ', ''abc  '', '' '')'),
  (15, 'i4a IN (' || (SELECT string_agg((g * 7 - 150)::text, ',') FROM generate_series(1, 40) g) || ') OR i4b / i2b > 1000'),
  (16, 'NULLIF(i4a, 0) IN (' || (SELECT string_agg(g::text, ',') FROM generate_series(-20, 20) g) || ') IS NULL')
) v(k, e);
SELECT pgstrom.device_program('dv_safe', 'i4a IN (' || (SELECT string_agg(g::text, ',') FROM generate_series(1, 20) g) || ')');

-- timestamptz in the session time zone: values around transitions (gaps
-- and repeated hours, 30-minute DST, zones that changed their rules, far
-- past and future, fractional seconds), under zones of every kind.
CREATE TABLE dv_tz AS
SELECT k,
  CASE WHEN k % 37 = 0 THEN NULL
       WHEN k % 9 = 8 THEN (ARRAY['1800-01-01 00:00+00','1883-11-18 17:00:00.5+00','1000-06-01 12:00+00',
            '4000-11-25 12:00+00 BC','2037-11-01 06:30+00','2100-03-14 07:00+00','2399-10-30 05:59:59.75+00',
            '2600-03-12 10:00+00','100000-07-01 00:00+00','infinity','-infinity','1947-04-15 00:00+00'
            ]::timestamptz[])[1 + (k / 9) % 12]
       ELSE (ARRAY['2024-03-10 07:00+00','2024-11-03 06:00+00','2024-03-31 01:00+00','2024-10-27 01:00+00',
                   '2024-04-06 15:00+00','2024-10-05 15:30+00','2018-11-04 03:00+00','2014-10-25 22:00+00',
                   '2024-09-28 14:00+00','2024-04-14 02:00+00','2024-09-08 04:00+00']::timestamptz[])[1 + k % 11]
            + ((k / 11) % 41 - 20) * interval '5 min 7.25 s' END AS tza,
  CASE WHEN k % 43 = 0 THEN NULL
       ELSE (ARRAY['2024-03-10 02:00','2024-11-03 01:00','2024-03-31 01:00','2024-10-27 01:00','2024-10-06 02:00',
                   '2024-04-07 01:30','2018-11-04 00:00','2024-09-08 00:00','1800-01-01 00:00','2500-03-14 02:30',
                   '0044-03-15 00:00 BC','100000-12-31 23:00']::timestamp[])[1 + k % 12]
            + ((k / 12) % 21 - 10) * interval '6 min 1.5 s' END AS tsa,
  CASE WHEN k % 47 = 0 THEN NULL
       ELSE (ARRAY['2018-11-04','2024-09-08','2024-03-10','2024-10-27','1800-01-01','2500-03-14','1000-01-01',
                   '0044-03-15 BC','100000-12-30','infinity','-infinity']::date[])[1 + k % 11]
            + (k / 11) % 3 - 1 END AS da,
  (ARRAY['1 mon','1 day','-1 mon -1 day','1 year 02:00','-06:00','1 mon -1 day 23:59:59.999','0','30 days',
         '-1 year -1 mon 00:00:00.5']::interval[])[1 + k % 9] AS iva
FROM generate_series(0, 899) k;
CREATE TEMP TABLE tz_calls AS
SELECT z, e FROM unnest(ARRAY['UTC', 'America/New_York', 'Europe/London', 'Australia/Lord_Howe', 'Pacific/Chatham',
                              'America/Sao_Paulo', 'Africa/Casablanca', 'America/Santiago', 'EST5EDT',
                              'XXX-05:45']) z,
     unnest(ARRAY['tza::timestamp', 'tza::date', 'tsa::timestamptz', 'da::timestamptz',
                  'extract(hour FROM tza)', 'extract(second FROM tza)', 'extract(epoch FROM tza)',
                  'extract(dow FROM tza)', 'extract(week FROM tza)', 'extract(isoyear FROM tza)',
                  'date_part(''day'', tza)', 'date_part(''timezone'', tza)',
                  'date_trunc(''day'', tza)', 'date_trunc(''hour'', tza)', 'date_trunc(''week'', tza)',
                  'date_trunc(''month'', tza)', 'date_trunc(''year'', tza)', 'date_trunc(''minute'', tza)',
                  'date_trunc(''decade'', tza)', 'tza + iva', 'tza - iva', 'tza - tsa::timestamptz',
                  'da < tza', 'tza >= da', 'tsa = tza', 'tsa <= tza', 'da <= tza AND tza < da + 1',
                  'tsa::date', 'tza AT TIME ZONE ''Asia/Tokyo''', 'tza AT TIME ZONE ''america/new_york''',
                  'tsa AT TIME ZONE ''Europe/Dublin''', 'tza AT LOCAL', 'tsa AT LOCAL',
                  'tza AT TIME ZONE ''EST''', 'tsa AT TIME ZONE ''UTC''', 'tza AT TIME ZONE ''MSK''']) e;
CREATE FUNCTION pg_vs_device_in(zone text, rel regclass, expr text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('TimeZone', zone, true);
  RETURN pg_vs_device(rel, expr);
END $$;
CREATE TEMP TABLE tz_results AS SELECT z, e, pg_vs_device_in(z, 'dv_tz', e) AS r FROM tz_calls;
SELECT count(*) AS calls, count(*) FILTER (WHERE r = 'same') AS same_values,
       count(*) FILTER (WHERE r LIKE 'same error%') AS same_errors,
       count(*) FILTER (WHERE r = 'not offloaded') AS not_offloaded,
       count(*) FILTER (WHERE r LIKE 'MISMATCH%') AS mismatches
  FROM tz_results;
SELECT e, r, string_agg(z, ', ') AS zones FROM tz_results WHERE r <> 'same' GROUP BY e, r ORDER BY e, r;
-- A program takes the time zone of the session that runs it; a zone
-- named in AT TIME ZONE is its own table.
SET TimeZone = 'Asia/Kolkata';
SELECT pgstrom.device_program('dv_tz', 'date_trunc(''day'', tza) > tsa AND tza AT TIME ZONE ''Europe/Dublin'' < tsa');
-- an abbreviation whose offset depends on the date, and a POSIX offset
-- PostgreSQL reads as a zone, are left to PostgreSQL or tabulated
SELECT * FROM pgstrom.device_eval('dv_tz', 'tza AT TIME ZONE ''MSK''') LIMIT 1;
SELECT substring(pgstrom.device_program('dv_tz', 'tza AT TIME ZONE ''+05''') FROM 'zone.*\)');
RESET TimeZone;

-- Not everything runs on the device: it says why.
SELECT * FROM pgstrom.device_eval('dv_safe', 'f8a::text');
SELECT * FROM pgstrom.device_eval('dv_safe', 'ta::text');
SELECT * FROM pgstrom.device_eval('dv_safe', 'i4a IN (SELECT 1)');
SELECT * FROM pgstrom.device_eval('dv_safe',
  'na = ANY (''{' || (SELECT string_agg(g::text, ',') FROM generate_series(1, 300) g) || '}''::numeric[])');
SELECT * FROM pgstrom.device_eval('dv_safe', 'ctid = ''(0,1)''');
-- Bad input to the entry points.
SELECT * FROM pgstrom.device_eval('dv_safe', 'i4a; DROP TABLE dv_safe');
SELECT * FROM pgstrom.device_eval('dv_safe', 'count(*)');
SELECT * FROM pgstrom.device_eval('dv_safe', 'i4a', 'tpu');
SELECT * FROM pgstrom.device_eval('no_such_table', 'a');
-- The program listing (what EXPLAIN VERBOSE will show).
SELECT pgstrom.device_program('dv_safe', 'i4b <> 0 AND i4a / i4b > 1 OR ba IS NULL');
SELECT pgstrom.device_program('dv_safe', 'f8a * 2.5 < 1e10');
SELECT pgstrom.device_program('dv_safe', 'CASE i2a WHEN 1 THEN COALESCE(i4a, 0) ELSE GREATEST(i4a, i4b) END');
SELECT pgstrom.device_program('dv_safe', 'i4a IN (1, 2, NULL) AND NULLIF(i4b, 0) IS NOT NULL');
-- Stable sub-expressions are evaluated once on the CPU and passed in.
SELECT pgstrom.device_program('dv_safe', 'tza > now() - interval ''1 day'' AND da <= current_date');
-- numeric constants are exact (38 digits); a longer one keeps the
-- expression on the CPU
SELECT pgstrom.device_program('dv_safe', 'na * 1.0500 > -0.00000000000000000001');
SELECT pgstrom.device_program('dv_safe', 'na > 1234567890123456789012345678901234567890');
