-- bench/ssb/gen_dims.sql - the parameters and the four dimension tables.
-- psql variables: sf (scale factor, > 0), seed (integer).  Sizes follow the
-- SSB specification: customer 30,000 x SF, supplier 2,000 x SF, part
-- 200,000 x floor(1 + log2 SF) (200,000 x SF below SF 1), date1 the 2,557
-- days of 1992-1998, lineorder 6,000,000 x SF (gen_lineorder.sql).
\set ON_ERROR_STOP 1
CREATE TABLE ssb_gen.params AS
  SELECT :sf::float8 AS sf, :seed::bigint AS seed,
         greatest(round(30000 * :sf::float8), 1)::bigint AS ncust,
         greatest(round(2000 * :sf::float8), 1)::bigint AS nsupp,
         CASE WHEN :sf::float8 >= 1 THEN (200000 * floor(1 + log(2, :sf::numeric)))::bigint
              ELSE greatest(round(200000 * :sf::float8), 1)::bigint END AS npart,
         greatest(round(6000000 * :sf::float8), 1)::bigint AS nlines;

INSERT INTO date1
SELECT ssb_gen.yyyymmdd(d),
       to_char(d, 'FMMonth FMDD, YYYY'),
       to_char(d, 'FMDay'),
       to_char(d, 'FMMonth'),
       extract(year FROM d)::int,
       (extract(year FROM d) * 100 + extract(month FROM d))::int,
       to_char(d, 'MonYYYY'),
       extract(dow FROM d)::int + 1,
       extract(day FROM d)::int,
       extract(doy FROM d)::int,
       extract(month FROM d)::int,
       (extract(doy FROM d)::int - 1) / 7 + 1,
       CASE WHEN extract(month FROM d) = 12 THEN 'Christmas'
            WHEN extract(month FROM d) IN (1, 2) THEN 'Winter'
            WHEN extract(month FROM d) IN (3, 4, 5) THEN 'Spring'
            WHEN extract(month FROM d) IN (6, 7, 8) THEN 'Summer'
            ELSE 'Fall' END,
       CASE WHEN extract(dow FROM d) = 6 THEN '1' ELSE '0' END,
       CASE WHEN extract(month FROM d + 1) <> extract(month FROM d) THEN '1' ELSE '0' END,
       CASE WHEN to_char(d, 'MMDD') IN ('0101', '0704', '1225') THEN '1' ELSE '0' END,
       CASE WHEN extract(dow FROM d) BETWEEN 1 AND 5 THEN '1' ELSE '0' END
  FROM generate_series(date '1992-01-01', date '1998-12-31', interval '1 day') g(ts),
       LATERAL (SELECT ts::date AS d) x;

INSERT INTO customer
SELECT k, 'Customer#' || lpad(k::text, 9, '0'),
       substr(md5(k::text || ':c:' || p.seed), 1, ssb_gen.r(k, p.seed * 100 + 1, 10, 25)::int),
       rpad(substr(n.n_name, 1, 9), 9) || ssb_gen.r(k, p.seed * 100 + 2, 0, 9),
       n.n_name, n.n_region,
       (n.n_nationkey + 10) || '-' || ssb_gen.r(k, p.seed * 100 + 3, 100, 999) || '-'
         || ssb_gen.r(k, p.seed * 100 + 4, 100, 999) || '-' || ssb_gen.r(k, p.seed * 100 + 5, 1000, 9999),
       ssb_gen.pick(k, p.seed * 100 + 6, '{AUTOMOBILE,BUILDING,FURNITURE,MACHINERY,HOUSEHOLD}')
  FROM ssb_gen.params p, generate_series(1, p.ncust) k, ssb_gen.nation n
 WHERE n.n_nationkey = ssb_gen.r(k, p.seed * 100 + 7, 0, 24);

INSERT INTO supplier
SELECT k, 'Supplier#' || lpad(k::text, 9, '0'),
       substr(md5(k::text || ':s:' || p.seed), 1, ssb_gen.r(k, p.seed * 100 + 11, 10, 25)::int),
       rpad(substr(n.n_name, 1, 9), 9) || ssb_gen.r(k, p.seed * 100 + 12, 0, 9),
       n.n_name, n.n_region,
       (n.n_nationkey + 10) || '-' || ssb_gen.r(k, p.seed * 100 + 13, 100, 999) || '-'
         || ssb_gen.r(k, p.seed * 100 + 14, 100, 999) || '-' || ssb_gen.r(k, p.seed * 100 + 15, 1000, 9999)
  FROM ssb_gen.params p, generate_series(1, p.nsupp) k, ssb_gen.nation n
 WHERE n.n_nationkey = ssb_gen.r(k, p.seed * 100 + 17, 0, 24);

INSERT INTO part
SELECT k,
       ssb_gen.pick(k, p.seed * 100 + 21, c.colors) || ' ' || ssb_gen.pick(k, p.seed * 100 + 22, c.colors),
       'MFGR#' || m, 'MFGR#' || m || cat, 'MFGR#' || m || cat || brand,
       ssb_gen.pick(k, p.seed * 100 + 23, c.colors),
       ssb_gen.pick(k, p.seed * 100 + 24, '{STANDARD,SMALL,MEDIUM,LARGE,ECONOMY,PROMO}') || ' '
         || ssb_gen.pick(k, p.seed * 100 + 25, '{ANODIZED,BURNISHED,PLATED,POLISHED,BRUSHED}') || ' '
         || ssb_gen.pick(k, p.seed * 100 + 26, '{TIN,NICKEL,BRASS,STEEL,COPPER}'),
       ssb_gen.r(k, p.seed * 100 + 27, 1, 50),
       ssb_gen.pick(k, p.seed * 100 + 28, '{SM,LG,MED,JUMBO,WRAP}') || ' '
         || ssb_gen.pick(k, p.seed * 100 + 29, '{CASE,BOX,BAG,JAR,PKG,PACK,CAN,DRUM}')
  FROM ssb_gen.params p, generate_series(1, p.npart) k,
       LATERAL (SELECT ssb_gen.r(k, p.seed * 100 + 30, 1, 5) AS m,
                       ssb_gen.r(k, p.seed * 100 + 31, 1, 5) AS cat,
                       ssb_gen.r(k, p.seed * 100 + 32, 1, 40) AS brand) b,
       (SELECT '{almond,antique,aquamarine,azure,beige,bisque,black,blanched,blue,blush,brown,burlywood,'
               'chartreuse,chiffon,chocolate,coral,cornflower,cream,cyan,dark,deep,dim,dodger,drab,'
               'firebrick,floral,forest,frosted,gainsboro,ghost,goldenrod,green,grey,honeydew,hot,'
               'indian,ivory,khaki,lace,lavender,lawn,lemon,light,lime,linen,magenta,maroon,medium,'
               'metallic,midnight,mint,misty,moccasin,navajo,navy,olive,orange,orchid,pale,papaya,'
               'peach,peru,pink,plum,powder,puff,purple,red,rose,rosy,royal,saddle,salmon,sandy,'
               'seashell,sienna,sky,slate,smoke,snow,spring,steel,tan,thistle,tomato,turquoise,'
               'violet,wheat,white,yellow}'::text[] AS colors) c;
