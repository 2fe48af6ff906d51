-- bench/ssb/gen_lineorder.sql - one slice of lineorder: row ids [:lo, :hi]
-- (0-based; row i is line i % 4 + 1 of order i / 4 + 1).  ssb.py gen runs
-- one slice per core at once; every value is a function of the row id and
-- the seed only, so the table's contents do not depend on the slicing.
-- Order-level values (customer, date, priority, total) hash the order key.
-- Prices follow dbgen: retail price (cents) = 90000 + (partkey / 10) %
-- 20001 + 100 * (partkey % 1000); extended price = quantity x retail
-- price; revenue = extended price x (100 - discount) / 100; supply cost =
-- 6 x retail price / 10.  lo_ordertotalprice is a value in the same range
-- as dbgen's, not the sum over the order's lines (no query reads it).
\set ON_ERROR_STOP 1
SET synchronous_commit = off;
INSERT INTO lineorder
SELECT o + 1, line, custkey, partkey, suppkey, ssb_gen.yyyymmdd(od), prio, '0', q,
       q * rp, otp, disc, q * rp * (100 - disc) / 100, 6 * rp / 10, tax,
       to_char(od + ssb_gen.r(i, s + 10, 30, 90)::int, 'YYYYMMDD'), shipmode
  FROM (SELECT i, o, line, custkey, partkey, suppkey, od, prio, q, otp, disc, tax, shipmode, s,
               90000 + (partkey / 10) % 20001 + 100 * (partkey % 1000) AS rp
          FROM (SELECT i, i / 4 AS o, (i % 4)::int + 1 AS line, s,
                       ssb_gen.r(i / 4, s + 1, 1, p.ncust)::int AS custkey,
                       ssb_gen.r(i, s + 2, 1, p.npart)::int AS partkey,
                       ssb_gen.r(i, s + 3, 1, p.nsupp)::int AS suppkey,
                       date '1992-01-01' + ssb_gen.r(i / 4, s + 4, 0, 2405)::int AS od,
                       ssb_gen.pick(i / 4, s + 5, '{1-URGENT,2-HIGH,3-MEDIUM,4-NOT SPECIFIED,5-LOW}') AS prio,
                       ssb_gen.r(i, s + 6, 1, 50)::int AS q,
                       ssb_gen.r(i / 4, s + 7, 100000, 50000000) AS otp,
                       ssb_gen.r(i, s + 8, 0, 10)::int AS disc,
                       ssb_gen.r(i, s + 9, 0, 8)::int AS tax,
                       ssb_gen.pick(i, s + 11, '{REG AIR,AIR,RAIL,SHIP,TRUCK,MAIL,FOB}') AS shipmode
                  FROM ssb_gen.params p, LATERAL (SELECT p.seed * 100 + 50 AS s) ss,
                       generate_series(:lo::bigint, :hi::bigint) i) a) b;
