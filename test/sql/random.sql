-- pgstrom.random_*: bounds, NULL ratios, determinism under a seed.
SELECT pgstrom.random_setseed(42);
SELECT pgstrom.random_int(0, 1, 100) AS a, pgstrom.random_int(0, 1, 100) AS b,
       pgstrom.random_text(0, 'id_****') AS t, pgstrom.random_float(0, 0, 10) AS f;
-- The same seed gives the same sequence.
SELECT pgstrom.random_setseed(7);
CREATE TEMP TABLE r1 AS SELECT x, pgstrom.random_int(0.1, -1000, 1000) AS v FROM generate_series(1, 2000) x;
SELECT pgstrom.random_setseed(7);
CREATE TEMP TABLE r2 AS SELECT x, pgstrom.random_int(0.1, -1000, 1000) AS v FROM generate_series(1, 2000) x;
SELECT count(*) AS differing FROM r1 JOIN r2 USING (x) WHERE r1.v IS DISTINCT FROM r2.v;
SELECT min(v) >= -1000 AS lo_ok, max(v) <= 1000 AS hi_ok,
       count(*) FILTER (WHERE v IS NULL) BETWEEN 120 AND 280 AS null_ratio_ok,
       count(DISTINCT v) > 1000 AS spread_ok
  FROM r1;
-- A different seed, a different sequence.
SELECT pgstrom.random_setseed(8);
SELECT count(*) > 1500 AS mostly_different
  FROM r1 JOIN (SELECT x, pgstrom.random_int(0.1, -1000, 1000) AS v FROM generate_series(1, 2000) x) r3 USING (x)
 WHERE r1.v IS DISTINCT FROM r3.v;
-- Extremes of the bigint range, and a single-value range.
SELECT pgstrom.random_setseed(1);
SELECT count(*) FILTER (WHERE v < 0) > 0 AS neg, count(*) FILTER (WHERE v > 0) > 0 AS pos
  FROM (SELECT pgstrom.random_int(0, -9223372036854775808, 9223372036854775807) v FROM generate_series(1, 100)) s;
SELECT DISTINCT pgstrom.random_int(0, 5, 5) FROM generate_series(1, 10);
-- Ratio 1.0 gives only NULLs; PG-Strom's write-ups' calls with defaults.
SELECT count(*) FILTER (WHERE pgstrom.random_int(1.0) IS NULL) AS all_null FROM generate_series(1, 50);
SELECT bool_and(v >= 123.0 AND v < 154.2) AS seed_float_ok
  FROM (SELECT pgstrom.random_float(0, 123.0, 154.2) v FROM generate_series(1, 1000)) s;
SELECT bool_and(v >= 0 AND v < 100.0) AS seed_float_default_ok
  FROM (SELECT pgstrom.random_float() * 100.0 v FROM generate_series(1, 1000)) s;
SELECT bool_and(v BETWEEN 0.01 AND 100.0) AS seed_int_ok
  FROM (SELECT pgstrom.random_int(0,1,10000)::float/100.0 v FROM generate_series(1, 1000)) s;
-- Dates, times, timestamps and ranges stay within their bounds.
SELECT bool_and(d BETWEEN '2020-01-01' AND '2020-12-31') AS date_ok,
       bool_and(t BETWEEN '08:00' AND '17:00') AS time_ok,
       bool_and(ts BETWEEN '2021-01-01' AND '2021-01-02') AS ts_ok,
       bool_and(tz BETWEEN '2021-01-01 00:00+00' AND '2021-01-02 00:00+00') AS tstz_ok,
       bool_and(r <@ int4range(10, 20, '[]')) AS range_ok,
       bool_and(dr <@ daterange('2020-01-01', '2020-01-31', '[]')) AS daterange_ok,
       count(DISTINCT d) > 100 AS dates_vary
  FROM (SELECT pgstrom.random_date(0, '2020-01-01', '2020-12-31') d,
               pgstrom.random_time(0, '08:00', '17:00') t,
               pgstrom.random_timestamp(0, '2021-01-01', '2021-01-02') ts,
               pgstrom.random_timestamptz(0, '2021-01-01 00:00+00', '2021-01-02 00:00+00') tz,
               pgstrom.random_int4range(0, 10, 20) r,
               pgstrom.random_daterange(0, '2020-01-01', '2020-01-31') dr
          FROM generate_series(1, 1000)) s;
SELECT count(*) FILTER (WHERE d IS NULL) BETWEEN 350 AND 650 AS date_nulls_ok
  FROM (SELECT pgstrom.random_date(0.5) d FROM generate_series(1, 1000)) s;
-- Text: templates keep their other characters; multibyte text survives.
SELECT bool_and(t ~ '^ab_[0-9A-Za-z]{3}_ü$') AS template_ok
  FROM (SELECT pgstrom.random_text(0, 'ab_***_ü') t FROM generate_series(1, 100)) s;
SELECT min(length(t)) >= 1 AS minlen_ok, max(length(t)) <= 5 AS maxlen_ok
  FROM (SELECT pgstrom.random_text_len(0, 5) t FROM generate_series(1, 500)) s;
-- Bad arguments.
SELECT pgstrom.random_int(1.5);
SELECT pgstrom.random_int(-0.1);
SELECT pgstrom.random_int('NaN');
SELECT pgstrom.random_int(0, 10, 1);
SELECT pgstrom.random_float(0, 0, 'Infinity');
SELECT pgstrom.random_text_len(0, 0);
SELECT pgstrom.random_date(0, '2020-12-31', '2020-01-01');
-- NULL arguments give NULL (strict functions).
SELECT pgstrom.random_int(NULL) IS NULL AS strict_ok;
