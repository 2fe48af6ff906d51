-- test/diff/schema/16-wide.sql - uuid, interval, timetz and bytea columns
-- for GpuScan and GpuJoin: NULLs, infinite intervals, intervals equal by
-- span but not by fields ('1 mon' = '30 days'), month ends, zones either
-- side of UTC, empty and binary byte strings.
DROP TABLE IF EXISTS diff_wide;
CREATE TABLE diff_wide AS
SELECT i AS id, i % 10 AS g,
       CASE WHEN i % 31 = 1 THEN NULL ELSE md5((i % 5000)::text)::uuid END AS u,
       CASE WHEN i % 29 = 2 THEN NULL
            -- infinite intervals exist from PostgreSQL 17 (NULL before)
            WHEN i % 1009 = 3 THEN (CASE WHEN current_setting('server_version_num')::int >= 170000 THEN 'infinity' END)::interval
            WHEN i % 1013 = 4 THEN (CASE WHEN current_setting('server_version_num')::int >= 170000 THEN '-infinity' END)::interval
            WHEN i % 7 = 0 THEN (i % 12) * interval '1 mon'
            WHEN i % 7 = 1 THEN (i % 12) * interval '30 days'
            ELSE (i % 500 - 250) * interval '1 hour 1 minute' + (i % 3) * interval '1 day' END AS iv,
       '2024-01-31 12:00'::timestamp + (i % 1000) * interval '1 day 7 hours' AS ts,
       '2023-12-31'::date + i % 800 AS d,
       CASE WHEN i % 37 = 5 THEN NULL
            ELSE (('00:00'::time + (i * 7919 % 86400) * interval '1 second')::text ||
                  (ARRAY['+00', '-05', '+05:30', '-01', '+09'])[1 + i % 5])::timetz END AS tt,
       CASE WHEN i % 41 = 6 THEN NULL
            ELSE substring(decode(md5((i % 3000)::text), 'hex') FROM 1 FOR i % 6) END AS b,
       (ARRAY['12:00+00', '11:00-01', '12:00+01', '00:00+14', '23:59:59.999999-12', NULL]::timetz[])[1 + i % 6] AS tk
  FROM generate_series(1, 100000) i;
ANALYZE diff_wide;
DROP TABLE IF EXISTS diff_wide_dim;
CREATE TABLE diff_wide_dim AS
SELECT md5(k::text)::uuid AS u, k % 8 AS grp,
       CASE WHEN k = 0 THEN '\x'::bytea ELSE substring(decode(md5(k::text), 'hex') FROM 1 FOR 1 + k % 5) END AS b,
       (k % 12) * interval '1 mon' AS iv
  FROM generate_series(0, 4999, 3) k;
ANALYZE diff_wide_dim;
