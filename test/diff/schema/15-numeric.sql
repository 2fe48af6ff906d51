-- test/diff/schema/15-numeric.sql - numeric columns for GpuScan: prices
-- (with NULLs and NaN) and discounts of fixed scale, and an unconstrained column mixing scales,
-- NULLs, NaN, infinities, zeros and values beyond the device's 38 digits
-- (rows the device leaves to PostgreSQL).
DROP TABLE IF EXISTS diff_numeric;
CREATE TABLE diff_numeric AS
SELECT i AS id, i % 10 AS g,
       CASE WHEN i % 13 = 1 THEN NULL WHEN i % 50021 = 9 THEN 'NaN' ELSE (i * 7919 % 100000) / 100.0 END::numeric(12,2) AS price,
       CASE WHEN i % 17 = 2 THEN NULL ELSE (i % 11) / 100.0 END::numeric(5,4) AS disc,
       CASE WHEN i % 19 = 3 THEN NULL
            WHEN i % 1009 = 4 THEN 'NaN'::numeric
            WHEN i % 1013 = 5 THEN 'Infinity'::numeric
            WHEN i % 1019 = 6 THEN '-Infinity'::numeric
            WHEN i % 23 = 7 THEN 0::numeric
            WHEN i % 4099 = 8 THEN ('1' || repeat('0', 40) || '.5')::numeric
            WHEN i % 3 = 0 THEN (i::int8 * 104729 % 2000001 - 1000000) / 7.0
            WHEN i % 3 = 1 THEN (i - 50000)::numeric * 1000003
            ELSE (i % 977 - 488)::numeric / 1000 END AS q
  FROM generate_series(1, 100000) i;
ANALYZE diff_numeric;
