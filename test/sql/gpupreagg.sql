-- GpuPreAgg: plans and EXPLAIN fields, partial states that need care, and
-- bad input (the differential tests of every aggregate and key type are
-- in test/diff/queries/preagg_*.sql).
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.gpu_context_cost = 0;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE pa_t0 AS SELECT i AS id, i % 1200 AS aid, (i % 97)::float8 AS ax
  FROM generate_series(1, 50000) i;
CREATE TABLE pa_t1 AS SELECT i AS aid, 'cat' || (i % 7) AS cat FROM generate_series(0, 999) i;
-- a small star: fact and three dimensions, the SSB Q2 shape
CREATE TABLE pa_fact AS SELECT i % 2557 AS f_date, i % 500 AS f_part, i % 40 AS f_supp, (i * 7 % 1000)::int8 AS f_rev
  FROM generate_series(1, 60000) i;
CREATE TABLE pa_date AS SELECT i AS d_key, 1992 + i / 366 AS d_year FROM generate_series(0, 2556) i;
CREATE TABLE pa_part AS SELECT i AS p_key, ('MFGR#' || i % 5)::char(7) AS p_category, 'brand' || i % 40 AS p_brand
  FROM generate_series(0, 499) i;
CREATE TABLE pa_supp AS SELECT i AS s_key, CASE WHEN i % 4 = 0 THEN 'AMERICA' ELSE 'ASIA' END::char(12) AS s_region
  FROM generate_series(0, 39) i;
ANALYZE pa_t0, pa_t1, pa_fact, pa_date, pa_part, pa_supp;


-- PG-Strom's write-ups' query: GROUP BY cat over the join, in one node
SELECT * FROM explain_masked('SELECT cat, count(*), avg(ax) FROM pa_t0 NATURAL JOIN pa_t1 GROUP BY cat');
SELECT cat, count(*), round(avg(ax)::numeric, 9) FROM pa_t0 NATURAL JOIN pa_t1 GROUP BY cat ORDER BY cat;

-- the SSB Q2 shape: three dimensions joined, GROUP BY year and brand
SELECT * FROM explain_masked($$
  SELECT sum(f_rev), d_year, p_brand FROM pa_fact, pa_date, pa_part, pa_supp
   WHERE f_date = d_key AND f_part = p_key AND f_supp = s_key
     AND p_category = 'MFGR#1' AND s_region = 'AMERICA'
   GROUP BY d_year, p_brand$$);
CREATE TEMP TABLE pa_q2 AS
  SELECT sum(f_rev) AS rev, d_year, p_brand FROM pa_fact, pa_date, pa_part, pa_supp
   WHERE f_date = d_key AND f_part = p_key AND f_supp = s_key
     AND p_category = 'MFGR#1' AND s_region = 'AMERICA'
   GROUP BY d_year, p_brand;
SET pg_strom.enabled = off;
SELECT count(*) AS groups, sum(rev) AS total,
       count(*) = (SELECT count(*) FROM (SELECT sum(f_rev) AS rev, d_year, p_brand FROM pa_fact, pa_date, pa_part, pa_supp
                    WHERE f_date = d_key AND f_part = p_key AND f_supp = s_key
                      AND p_category = 'MFGR#1' AND s_region = 'AMERICA'
                    GROUP BY d_year, p_brand
                   EXCEPT SELECT * FROM pa_q2) x) + count(*) AS same
  FROM pa_q2;
RESET pg_strom.enabled;

-- EXPLAIN ANALYZE: rows consumed and partial groups
SELECT * FROM explain_masked('SELECT cat, count(*) FROM pa_t0 NATURAL JOIN pa_t1 WHERE ax > 10 GROUP BY cat',
                         'COSTS OFF, ANALYZE, TIMING OFF, SUMMARY OFF, BUFFERS OFF');
-- no GROUP BY: Reduction NoGroup; an empty input still makes one row
SELECT * FROM explain_masked('SELECT count(*), sum(id) FROM pa_t0 WHERE ax < 50');
SELECT count(*), sum(id), avg(ax), min(aid) FROM pa_t0 WHERE ax < 0;

-- partial states: sum(int8) past 2^63 is numeric, exact; sum(int4) is bigint
CREATE TABLE pa_big AS SELECT i % 3 AS g, 9223372036854775807 - i AS b, 2147483647 - i AS n
  FROM generate_series(1, 10) i;
ANALYZE pa_big;
SELECT g, sum(b), avg(b), sum(n), avg(n) FROM pa_big GROUP BY g ORDER BY g;
SELECT * FROM explain_masked('SELECT g, sum(b), avg(b), sum(n), avg(n) FROM pa_big GROUP BY g');
-- sum(float4) is accumulated in double on the device: equal to the
-- rounded PostgreSQL result
SELECT g, round(sum(n::float4)::numeric, -3) FROM pa_big GROUP BY g ORDER BY g;

-- bpchar keys ignore trailing blanks; NULL keys make one group
CREATE TABLE pa_keys (c char(6), t text, v int);
INSERT INTO pa_keys VALUES ('ab', 'x', 1), ('ab  ', 'x', 2), (NULL, NULL, 3), (NULL, NULL, 4), ('ab', 'y', 5);
ANALYZE pa_keys;
SELECT c, t, count(*), sum(v) FROM pa_keys GROUP BY c, t ORDER BY 1, 2;

-- errors the arguments raise are PostgreSQL's
SELECT sum(n * 1000) FROM pa_big GROUP BY g;
-- an aggregate the device does not reduce keeps the aggregation on the CPU
SELECT * FROM explain_masked('SELECT aid % 3, string_agg(cat, '','') FROM pa_t0 NATURAL JOIN pa_t1 GROUP BY aid % 3');
-- and so does pg_strom.enable_gpupreagg = off
SET pg_strom.enable_gpupreagg = off;
SELECT * FROM explain_masked('SELECT cat, count(*) FROM pa_t0 NATURAL JOIN pa_t1 GROUP BY cat');
RESET pg_strom.enable_gpupreagg;

-- inside a subplan run once per outer row (rescan)
SELECT v, (SELECT count(*) FROM pa_t0 WHERE aid = v) FROM (VALUES (1), (5), (1300)) x(v) ORDER BY v;

-- a grouping key of a unit the device computes (date_part over an
-- interval) is reduced on the device; one it leaves to PostgreSQL
-- ('days', a spelling PostgreSQL also accepts) keeps the aggregation on
-- the CPU, as in a join qual
CREATE TABLE pa_iv AS SELECT i, i * interval '5 hours 7.5 seconds' - (i % 7) * interval '1 mon' AS iv
  FROM generate_series(1, 2000) i;
ANALYZE pa_iv;
SELECT * FROM explain_masked('SELECT date_part(''day'', justify_hours(iv * 0.5)) AS d, count(*) FROM pa_iv GROUP BY 1');
SELECT * FROM explain_masked('SELECT date_part(''days'', iv) AS d, count(*) FROM pa_iv GROUP BY 1');
SELECT * FROM explain_masked('SELECT count(*) FROM pa_iv a JOIN pa_t1 b ON date_part(''hour'', a.iv) = b.aid');
SELECT * FROM explain_masked('SELECT count(*) FROM pa_iv a JOIN pa_t1 b ON date_part(''hours'', a.iv) = b.aid');
CREATE TEMP TABLE pa_ivd AS
  SELECT date_part('day', justify_hours(iv * 0.5)) AS d, count(*) AS n, min(i) AS i FROM pa_iv GROUP BY 1;
SET pg_strom.enabled = off;
SELECT count(*) AS groups, sum(n) AS rows, count(*) = (SELECT count(*) FROM (
         SELECT date_part('day', justify_hours(iv * 0.5)), count(*), min(i) FROM pa_iv GROUP BY 1
         EXCEPT SELECT * FROM pa_ivd) x) + count(*) AS same
  FROM pa_ivd;
RESET pg_strom.enabled;

-- numeric bounds the planner derives (TPC-H's shapes): CASE and COALESCE
-- over numeric(p,s) values and constants as sums, extract(year from date)
-- as a grouping key; NaN, NULLs and infinite dates among the values
CREATE TABLE pa_dec AS
  SELECT i,
         CASE WHEN i % 97 = 0 THEN NULL WHEN i % 89 = 0 THEN 'NaN' ELSE (i * 7919 % 1000000) / 100.0 END::numeric(15,2) AS p,
         ((i % 11) / 100.0)::numeric(15,2) AS q,
         CASE WHEN i % 101 = 0 THEN NULL WHEN i % 103 = 0 THEN 'infinity' WHEN i % 107 = 0 THEN '-infinity'
              ELSE date '1992-01-01' + (i * 37 % 2557) END AS d,
         i % 3 = 0 AS f
    FROM generate_series(1, 20000) i;
-- (the year's distinct values, as a DBA would give the planner them: a
-- numeric sum's partial groups cost the host, priced by their estimate)
CREATE STATISTICS pa_dec_year ON (extract(year FROM d)) FROM pa_dec;
ANALYZE pa_dec;
SELECT * FROM explain_masked($$SELECT extract(year FROM d) AS y, sum(CASE WHEN f THEN p * (1 - q) ELSE 0 END),
  sum(coalesce(p, 0)), count(*) FROM pa_dec GROUP BY 1$$);
CREATE TEMP TABLE pa_decd AS SELECT extract(year FROM d) AS y, sum(CASE WHEN f THEN p * (1 - q) ELSE 0 END) AS s1,
  sum(coalesce(p, 0)) AS s2, count(*) AS n FROM pa_dec GROUP BY 1;
-- a join qual comparing numeric(p,s) columns with constants runs on the
-- device (an OR across both sides, as TPC-H's Q19 has)
SELECT * FROM explain_masked($$SELECT count(*), sum(a.q) FROM pa_dec a JOIN pa_t1 b ON a.i = b.aid
  AND (a.p < 5000.50 OR b.aid > 900)$$);
CREATE TEMP TABLE pa_decj AS SELECT count(*) AS n, sum(a.q) AS s FROM pa_dec a JOIN pa_t1 b ON a.i = b.aid
  AND (a.p < 5000.50 OR b.aid > 900);
SET pg_strom.enabled = off;
-- (compared as text: display scales too)
SELECT count(*) AS groups, count(*) = (SELECT count(*) FROM (
         SELECT x::text FROM (SELECT extract(year FROM d), sum(CASE WHEN f THEN p * (1 - q) ELSE 0 END),
                                     sum(coalesce(p, 0)), count(*) FROM pa_dec GROUP BY 1) x
         EXCEPT SELECT pa_decd::text FROM pa_decd) x) + count(*) AS same,
       count(*) FILTER (WHERE y = 'infinity' OR y = '-infinity') AS infinite_years,
       count(*) FILTER (WHERE s1 = 'NaN') AS nan_sums
  FROM pa_decd;
SELECT n, s, (n, s::text) = (SELECT count(*), sum(a.q)::text FROM pa_dec a JOIN pa_t1 b ON a.i = b.aid
  AND (a.p < 5000.50 OR b.aid > 900)) AS same FROM pa_decj;
RESET pg_strom.enabled;
-- numeric(p,s) hash keys of different scales (1.5 = 1.50), NaN (equal to
-- NaN), NULL (no match)
CREATE TABLE pa_deck AS
  SELECT CASE WHEN i % 50 = 0 THEN NULL WHEN i % 45 = 0 THEN 'NaN' ELSE (i % 400) / 10.0 END::numeric(10,1) AS k,
         i AS v
    FROM generate_series(1, 3000) i;
CREATE TABLE pa_deck2 AS
  SELECT CASE WHEN j % 60 = 0 THEN NULL WHEN j % 55 = 0 THEN 'NaN' ELSE (j % 300) / 10.0 END::numeric(12,2) AS k2,
         j AS w
    FROM generate_series(1, 600) j;
ANALYZE pa_deck, pa_deck2;
SELECT * FROM explain_masked($$SELECT a.k, count(*), sum(b.w) FROM pa_deck a JOIN pa_deck2 b ON a.k = b.k2 GROUP BY a.k$$);
CREATE TEMP TABLE pa_deckd AS SELECT a.k, count(*) AS n, sum(b.w) AS s FROM pa_deck a JOIN pa_deck2 b ON a.k = b.k2 GROUP BY a.k;
SET pg_strom.enabled = off;
SELECT count(*) AS groups, sum(n) AS rows, count(*) FILTER (WHERE k = 'NaN') AS nan_groups, count(*) = (SELECT count(*) FROM (
         SELECT x::text FROM (SELECT a.k, count(*), sum(b.w) FROM pa_deck a JOIN pa_deck2 b ON a.k = b.k2 GROUP BY a.k) x
         EXCEPT SELECT pa_deckd::text FROM pa_deckd) x) + count(*) AS same
  FROM pa_deckd;
RESET pg_strom.enabled;
-- a bounded result over a wider argument: round(x, 0) has at most 31
-- digits, but x (numeric(40,10)) holds a value of 40, which the device
-- cannot compute with; every numeric node must be bounded, not only the
-- sum's argument (this query ended with an ERROR PostgreSQL never raises)
CREATE TABLE pa_wide AS SELECT i, (CASE WHEN i = 5 THEN '123456789012345678901234567890.1234567891'
    ELSE i::text END)::numeric(40,10) AS x FROM generate_series(1, 1000) i;
CREATE STATISTICS pa_wide_k ON (i % 3) FROM pa_wide;
ANALYZE pa_wide;
CREATE TEMP TABLE pa_wided AS SELECT i % 3 AS k, sum(round(x, 0)) AS s FROM pa_wide GROUP BY 1;
SET pg_strom.enabled = off;
SELECT k, s, s = (SELECT sum(round(x, 0)) FROM pa_wide WHERE i % 3 = k) AS same FROM pa_wided ORDER BY k;
RESET pg_strom.enabled;
-- count() of that column only tests it for NULL: still on the device
SELECT * FROM explain_masked('SELECT i % 3, count(x) FROM pa_wide GROUP BY 1');
-- that sum on the device, the row of 40 digits an exception (below)
SELECT * FROM explain_masked('SELECT i % 3 AS k, sum(round(x, 0)) AS s FROM pa_wide GROUP BY 1');

-- Sums whose digits the planner cannot bound to 38 (TPC-H Q1's charge,
-- sum(price * (1 - disc) * (1 + tax)): 47 digits by the bound, a dozen in
-- fact) run on the device; a row whose value it cannot hold (more digits,
-- a larger scale, an overflow computing it) is an exception: it adds to
-- no such sum on the device and comes back on its own, its value computed
-- by PostgreSQL.  Values of 35 digits make some; NULLs, NaN, a FILTER,
-- avg, a join below.
CREATE TABLE pa_q1 (flag char(1), status char(1), qty numeric(15,2), price numeric(38,2), disc numeric(15,2), tax numeric(15,2), nk int);
INSERT INTO pa_q1 SELECT (ARRAY['A', 'N', 'R'])[1 + i % 3], (ARRAY['F', 'O'])[1 + i % 2], 1 + i % 50,
    CASE WHEN i % 997 = 0 THEN 999999999999999999999999999999999999.99 - i WHEN i % 101 = 0 THEN NULL
         WHEN i % 1009 = 0 THEN 'NaN' ELSE (i % 100000) * 1.5 END,
    (i % 11) / 100.0, (i % 9) / 100.0, i % 25
  FROM generate_series(1, 20000) i;
CREATE TABLE pa_nation AS SELECT i AS nk, 'nation ' || i AS name FROM generate_series(0, 24) i;
ANALYZE pa_q1, pa_nation;
SELECT * FROM explain_masked('SELECT flag, status, sum(price * (1 - disc) * (1 + tax)) FROM pa_q1 GROUP BY flag, status');
-- EXPLAIN ANALYZE counts the exceptions as CPU Path Rows (20 rows of 35
-- digits: 20000 / 997)
CREATE FUNCTION pa_cpu_rows(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE ln text; n bigint := 0; m text[];
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    m := regexp_match(ln, 'CPU Path Rows: ([0-9]+)');
    IF m IS NOT NULL THEN n := n + m[1]::bigint; END IF;
  END LOOP;
  RETURN n;
END $$;
SELECT pa_cpu_rows('SELECT flag, status, sum(price * (1 - disc) * (1 + tax)) FROM pa_q1 GROUP BY flag, status');
SELECT same_as_off('SELECT flag, status, sum(qty) AS sq, sum(price) AS sp, sum(price * (1 - disc)) AS disc_price,
    sum(price * (1 - disc) * (1 + tax)) AS charge, avg(qty) AS aq, avg(price * (1 - disc) * (1 + tax)) AS ac,
    sum(price * (1 - disc) * (1 + tax)) FILTER (WHERE tax > 0.04) AS fc, count(*) AS n
  FROM pa_q1 GROUP BY flag, status');
-- more sums of 47-digit bounds than the rows step keeps the values of (the
-- first two): every one exact, with FILTERs, exceptions and NULLs
SELECT pa_cpu_rows('SELECT flag, sum(price * (1 - disc) * (1 + tax)) AS a, sum(price * (1 + tax) * (1 + tax)) FILTER (WHERE disc < 0.05) AS b,
    avg(price * (1 - disc) * (1 - tax)) FILTER (WHERE qty > 10) AS c, sum(price * (1 + disc) * (1 + disc)) AS d,
    avg(price * (1 - disc) * (1 + tax)) AS e, count(price) AS f
  FROM pa_q1 GROUP BY flag');
SELECT same_as_off('SELECT flag, sum(price * (1 - disc) * (1 + tax)) AS a, sum(price * (1 + tax) * (1 + tax)) FILTER (WHERE disc < 0.05) AS b,
    avg(price * (1 - disc) * (1 - tax)) FILTER (WHERE qty > 10) AS c, sum(price * (1 + disc) * (1 + disc)) AS d,
    avg(price * (1 - disc) * (1 + tax)) AS e, count(price) AS f
  FROM pa_q1 GROUP BY flag');
SELECT same_as_off('SELECT n.name, sum(price * (1 + tax) * (1 + tax)) AS s, count(*) AS c FROM pa_q1 q JOIN pa_nation n USING (nk) WHERE disc < 0.08 GROUP BY n.name');
SELECT same_as_off('SELECT sum(price * price) AS sq FROM pa_q1');
SELECT same_as_off('SELECT i % 3 AS k, sum(round(x, 0)) AS s, avg(x * 2) AS a FROM pa_wide GROUP BY 1');

-- Columns of an inner relation outside the GROUP BY (PostgreSQL drops
-- those functionally dependent on a primary key from it, TPC-H Q10's
-- customer columns): no grouping key on the device, read from the
-- group's representative inner row; with a LEFT join's NULL-extended
-- rows (fact key 22 has no dimension row), and in parallel with the
-- groups exchanged between the processes
CREATE TABLE pa_pkdim (k int PRIMARY KEY, name text, note varchar(40), bal numeric(12,2));
INSERT INTO pa_pkdim SELECT i, 'name ' || i, repeat('ν', i % 5) || i, CASE WHEN i % 6 = 0 THEN NULL ELSE i * 1.25 END
  FROM generate_series(0, 21) i;
CREATE TABLE pa_pkfact AS SELECT i % 23 AS k, i AS x, (i % 7)::numeric(10,2) AS p FROM generate_series(1, 400000) i;
ANALYZE pa_pkdim, pa_pkfact;
SET pg_strom.cpu_engine_in_service = on;
SET pg_strom.gpu_operator_cost = 0.00015625;
SET pg_strom.gpu_tuple_cost = 0.002;
-- (a GpuPreAgg, and PostgreSQL's GROUP BY holds the key alone)
CREATE FUNCTION pa_dep_plan(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE ln text; node bool := false; grp text := '';
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    node := node OR ln ~ 'Custom Scan \(GpuPreAgg\)';
    IF ln ~ '^ *Group Key: ' THEN grp := trim(ln); END IF;
  END LOOP;
  RETURN CASE WHEN node THEN 'GpuPreAgg, ' ELSE 'no GpuPreAgg, ' END || grp;
END $$;
SELECT pa_dep_plan('SELECT d.k, d.name, d.note, d.bal, count(*), sum(f.x), sum(f.p)
  FROM pa_pkfact f JOIN pa_pkdim d ON f.k = d.k GROUP BY d.k, d.name, d.note, d.bal');
SELECT same_as_off('SELECT d.k, d.name, d.note, d.bal, count(*) AS n, sum(f.x) AS sx, sum(f.p) AS sp
  FROM pa_pkfact f JOIN pa_pkdim d ON f.k = d.k GROUP BY d.k, d.name, d.note, d.bal');
SELECT same_as_off('SELECT d.k, d.name, d.bal, count(*), sum(f.x)
  FROM pa_pkfact f LEFT JOIN pa_pkdim d ON f.k = d.k GROUP BY d.k, d.name, d.bal');
SELECT same_as_off('SELECT d.name, d.k, f.k % 2 AS odd, count(*), sum(f.p)
  FROM pa_pkfact f JOIN pa_pkdim d ON f.k = d.k GROUP BY d.k, f.k % 2, d.name HAVING count(*) > 8000');
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT pa_dep_plan('SELECT d.k, d.name, d.note, d.bal, count(*), sum(f.x), sum(f.p)
  FROM pa_pkfact f JOIN pa_pkdim d ON f.k = d.k GROUP BY d.k, d.name, d.note, d.bal');
SELECT same_as_off('SELECT d.k, d.name, d.note, d.bal, count(*) AS n, sum(f.x) AS sx, sum(f.p) AS sp
  FROM pa_pkfact f JOIN pa_pkdim d ON f.k = d.k GROUP BY d.k, d.name, d.note, d.bal');
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET pg_strom.cpu_engine_in_service;
RESET pg_strom.gpu_operator_cost;
RESET pg_strom.gpu_tuple_cost;

DROP TABLE pa_t0, pa_t1, pa_fact, pa_date, pa_part, pa_supp, pa_big, pa_keys, pa_iv, pa_dec, pa_deck, pa_deck2, pa_wide, pa_q1, pa_nation,
  pa_pkdim, pa_pkfact;
