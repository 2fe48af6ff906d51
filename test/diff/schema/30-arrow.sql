-- Arrow_Fdw tables over the files of test/arrow/gen.py (every mapped type,
-- NULLs, 3 record batches of 9 rows; 10 sorted batches with statistics)
DROP FOREIGN TABLE IF EXISTS arrow_types, arrow_types_zstd, arrow_sorted;
IMPORT FOREIGN SCHEMA arrow_types FROM SERVER arrow_fdw INTO public
  OPTIONS (file '/tmp/pgstrom_arrow_test/types.arrow');
IMPORT FOREIGN SCHEMA arrow_types_zstd FROM SERVER arrow_fdw INTO public
  OPTIONS (file '/tmp/pgstrom_arrow_test/types_zstd.arrow');
CREATE FOREIGN TABLE arrow_sorted (ymd int, val int8) SERVER arrow_fdw
  OPTIONS (file '/tmp/pgstrom_arrow_test/sorted.arrow');
-- a heap dimension joined to the Arrow tables
DROP TABLE IF EXISTS arrow_dim;
CREATE TABLE arrow_dim AS
  SELECT k, 'name' || (k % 13) AS name, (k % 3 = 0) AS flag FROM generate_series(0, 99) k;
ANALYZE arrow_dim;
-- a heap dimension of 1994's days (yyyymmdd keys, as arrow_sorted.ymd),
-- for join-key hints
DROP TABLE IF EXISTS arrow_days;
CREATE TABLE arrow_days AS
  SELECT (19940000 + m * 100 + d)::int AS ymd, 'Q' || ((m - 1) / 3 + 1) AS quarter
    FROM generate_series(1, 12) m, generate_series(1, 28) d;
ANALYZE arrow_days;
