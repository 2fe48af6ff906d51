-- Declared foreign keys of Arrow_Fdw tables (docs/arrow_fdw.md, "Foreign
-- keys"): the option foreign_keys gives the planner's join estimate what a
-- FOREIGN KEY constraint gives it for a heap table; answers never change.
-- Files go to /tmp/pgstrom_arrow_test/w (made by test/arrow/gen.py).
\! rm -f /tmp/pgstrom_arrow_test/w/fk_li.arrow /tmp/pgstrom_arrow_test/w/fk_li.arrow.pgstrom-undo
-- 200 parts with 4 suppliers each out of 100: a two-column key whose
-- columns are far from independent
CREATE TABLE fk_ps (ps_partkey int, ps_suppkey int, ps_cost int,
                    PRIMARY KEY (ps_partkey, ps_suppkey));
INSERT INTO fk_ps SELECT p, 1 + (p + k * 25) % 100, p * k
  FROM generate_series(1, 200) p, generate_series(0, 3) k;
CREATE TABLE fk_supp (s_suppkey int PRIMARY KEY, s_name text);
INSERT INTO fk_supp SELECT s, 'supplier ' || s FROM generate_series(1, 100) s;
-- each line references one row of fk_ps
CREATE FOREIGN TABLE fk_li (l_id int, l_partkey int, l_suppkey int, l_qty int)
  SERVER arrow_fdw OPTIONS (file '/tmp/pgstrom_arrow_test/w/fk_li.arrow', writable 'true');
INSERT INTO fk_li
  SELECT i, 1 + i % 200, 1 + (1 + i % 200 + ((i / 200) % 4) * 25) % 100, i % 7
    FROM generate_series(1, 20000) i;
ANALYZE fk_ps, fk_supp, fk_li;
SET max_parallel_workers_per_gather = 0;
SET pg_strom.enabled = off;
-- every line matches: 20000 rows; without a declaration the columns'
-- selectivities multiply (1/200 x 1/100): 800
SELECT count(*) FROM fk_li JOIN fk_ps ON l_partkey = ps_partkey AND l_suppkey = ps_suppkey;
SELECT plan_rows('SELECT * FROM fk_li JOIN fk_ps ON l_partkey = ps_partkey AND l_suppkey = ps_suppkey');
-- declared, by the referenced table's primary key
ALTER FOREIGN TABLE fk_li OPTIONS (ADD foreign_keys '(l_partkey, l_suppkey) REFERENCES fk_ps');
SELECT plan_rows('SELECT * FROM fk_li JOIN fk_ps ON l_partkey = ps_partkey AND l_suppkey = ps_suppkey');
-- with pg_strom on, the same estimate and the same answer
SET pg_strom.enabled = on;
SELECT plan_rows('SELECT * FROM fk_li JOIN fk_ps ON l_partkey = ps_partkey AND l_suppkey = ps_suppkey');
SELECT count(*), sum(l_qty * ps_cost) FROM fk_li JOIN fk_ps ON l_partkey = ps_partkey AND l_suppkey = ps_suppkey;
SET pg_strom.enabled = off;
SELECT count(*), sum(l_qty * ps_cost) FROM fk_li JOIN fk_ps ON l_partkey = ps_partkey AND l_suppkey = ps_suppkey;
-- only a join on the whole key uses it
SELECT plan_rows('SELECT * FROM fk_li JOIN fk_ps ON l_partkey = ps_partkey');
-- named columns, a schema, quoted names, two keys
CREATE SCHEMA fk_s;
CREATE TABLE fk_s."Supp" ("Key" int PRIMARY KEY);
INSERT INTO fk_s."Supp" SELECT generate_series(1, 100);
ANALYZE fk_s."Supp";
ALTER FOREIGN TABLE fk_li OPTIONS (SET foreign_keys
  '(L_PARTKEY, l_suppkey) references public.fk_ps (ps_partkey, ps_suppkey); (l_suppkey) REFERENCES fk_s."Supp" ("Key");');
SELECT plan_rows('SELECT * FROM fk_li JOIN fk_ps ON l_partkey = ps_partkey AND l_suppkey = ps_suppkey');
SELECT plan_rows('SELECT * FROM fk_li JOIN fk_s."Supp" ON l_suppkey = "Key" WHERE l_qty = 3');
-- the syntax is checked when the option is set
ALTER FOREIGN TABLE fk_li OPTIONS (SET foreign_keys 'l_partkey REFERENCES fk_ps');
ALTER FOREIGN TABLE fk_li OPTIONS (SET foreign_keys '(l_partkey, l_suppkey) fk_ps');
ALTER FOREIGN TABLE fk_li OPTIONS (SET foreign_keys '(l_partkey, l_suppkey) REFERENCES fk_ps (ps_partkey)');
ALTER FOREIGN TABLE fk_li OPTIONS (SET foreign_keys '(l_partkey) REFERENCES fk_ps (ps_partkey) (l_suppkey) REFERENCES fk_supp');
ALTER FOREIGN TABLE fk_li OPTIONS (SET foreign_keys '(l_partkey) REFERENCES "fk_ps');
ALTER FOREIGN TABLE fk_li OPTIONS (SET foreign_keys '(l_partkey) REFERENCES fk_ps # x');
-- what does not resolve is a warning (a restore may create the referenced
-- table later) and is left out of the estimate
ALTER FOREIGN TABLE fk_li OPTIONS (SET foreign_keys '(l_partkey, l_suppkey) REFERENCES fk_nosuch');
ALTER FOREIGN TABLE fk_li OPTIONS (SET foreign_keys '(l_partkey, l_suppkey) REFERENCES fk_ps (ps_partkey, nosuch)');
ALTER FOREIGN TABLE fk_li OPTIONS (SET foreign_keys '(l_partkey) REFERENCES fk_ps');
CREATE TABLE fk_nopk (a int, b int);
ALTER FOREIGN TABLE fk_li OPTIONS (SET foreign_keys '(l_partkey, l_suppkey) REFERENCES fk_nopk');
SELECT plan_rows('SELECT * FROM fk_li JOIN fk_ps ON l_partkey = ps_partkey AND l_suppkey = ps_suppkey');
-- a referencing column that does not exist: left out when planned
ALTER FOREIGN TABLE fk_li OPTIONS (SET foreign_keys '(l_nosuch, l_suppkey) REFERENCES fk_ps');
SELECT plan_rows('SELECT * FROM fk_li JOIN fk_ps ON l_partkey = ps_partkey AND l_suppkey = ps_suppkey');
-- a referenced table dropped after the option was set: left out
CREATE TABLE fk_ps2 (LIKE fk_ps INCLUDING INDEXES);
INSERT INTO fk_ps2 SELECT * FROM fk_ps;
ANALYZE fk_ps2;
ALTER FOREIGN TABLE fk_li OPTIONS (SET foreign_keys '(l_partkey, l_suppkey) REFERENCES fk_ps2');
SELECT plan_rows('SELECT * FROM fk_li JOIN fk_ps2 ON l_partkey = ps_partkey AND l_suppkey = ps_suppkey');
DROP TABLE fk_ps2;
SELECT plan_rows('SELECT * FROM fk_li JOIN fk_ps ON l_partkey = ps_partkey AND l_suppkey = ps_suppkey');
-- only on foreign tables of arrow_fdw
ALTER SERVER arrow_fdw OPTIONS (ADD foreign_keys '(a) REFERENCES fk_ps');
RESET pg_strom.enabled;
RESET max_parallel_workers_per_gather;
DROP FOREIGN TABLE fk_li;
DROP TABLE fk_ps, fk_supp, fk_nopk;
DROP SCHEMA fk_s CASCADE;
\! rm -f /tmp/pgstrom_arrow_test/w/fk_li.arrow
