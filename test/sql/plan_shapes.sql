-- Plan shapes PostgreSQL's own regression SQL reaches and the other tests
-- did not: inheritance parents, two outer joins that keep inner rows,
-- the genetic join optimizer, a set-returning GROUP BY key and a
-- correlated sub-query over a GpuPreAgg with several inner relations, and
-- a whole device node kept out of a parallel plan.
-- Each result is compared with pg_strom.enabled = off; the EXPLAIN shows
-- which node ran it.
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.gpu_context_cost = 0;
SET max_parallel_workers_per_gather = 0;

CREATE FUNCTION ps_explain(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE ln text;
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF ln ~ 'GPU Preference|referenced|Nrows' THEN CONTINUE; END IF;
    RETURN NEXT ln;
  END LOOP;
END $$;

-- 1. inheritance parents: each member relation is scanned by its own
-- node, below PostgreSQL's Append; writes reach the children's rows
CREATE TABLE ps_dp (f1 int, f3 int);
CREATE TABLE ps_dpchild (fc int) INHERITS (ps_dp);
INSERT INTO ps_dp VALUES (2, 42);
INSERT INTO ps_dpchild VALUES (123, 999, -123);
SET pg_strom.heap_gather_cost = 0;
SELECT * FROM ps_explain('SELECT * FROM ps_dp WHERE f1 > 100');
SELECT * FROM ps_dp WHERE f1 > 100;
SELECT tableoid::regclass, * FROM ps_dp WHERE f1 > 1 ORDER BY f1;
UPDATE ps_dp SET f3 = f3 + 1 WHERE f1 > 1 RETURNING old.*, new.*;
UPDATE ps_dp SET f3 = f3 + 1 WHERE f1 > 1;
SELECT * FROM ps_explain('DELETE FROM ps_dp WHERE f1 > 100');
DELETE FROM ps_dp WHERE f1 > 100;
SELECT tableoid::regclass, * FROM ps_dp ORDER BY f1;
SELECT * FROM ONLY ps_dp WHERE f1 > 0;
-- a parent and a child of 30,000 rows each: a parallel plan at nearly
-- default costs, GpuPreAgg over the members
CREATE TABLE ps_bigp (a int, b text);
CREATE TABLE ps_bigc () INHERITS (ps_bigp);
INSERT INTO ps_bigp SELECT i, 'p' || i FROM generate_series(1, 30000) i;
INSERT INTO ps_bigc SELECT i, 'c' || i FROM generate_series(1, 30000) i;
ANALYZE ps_bigp, ps_bigc;
SET pg_strom.heap_gather_cost = 0.01;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SELECT count(*) FROM ps_bigp WHERE a % 7 = 3;
SELECT same_as_off('SELECT a % 5 AS k, count(*), sum(a) FROM ps_bigp WHERE a % 7 = 3 GROUP BY 1');
SELECT same_as_off('SELECT p.a, p.b, d.f3 FROM ps_bigp p JOIN ps_dp d ON p.a = d.f1');
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
SET max_parallel_workers_per_gather = 0;
SET pg_strom.heap_gather_cost = 0;

-- 2. two FULL joins: the second is left to PostgreSQL (or another
-- GpuJoin above), an inner row is never emitted both matched and not
CREATE TABLE ps_t1 (name text, n int);
CREATE TABLE ps_t2 (name text, n int);
CREATE TABLE ps_t3 (name text, n int);
INSERT INTO ps_t1 VALUES ('bb', 11);
INSERT INTO ps_t2 VALUES ('bb', 12), ('cc', 22), ('ee', 42);
INSERT INTO ps_t3 VALUES ('bb', 13), ('cc', 23), ('dd', 33);
SELECT * FROM ps_t1 FULL JOIN ps_t2 USING (name) FULL JOIN ps_t3 USING (name) ORDER BY name;
SELECT * FROM ps_t1 RIGHT JOIN ps_t2 USING (name) RIGHT JOIN ps_t3 USING (name) ORDER BY name;
SELECT * FROM ps_t1 FULL JOIN ps_t2 USING (name) JOIN ps_t3 USING (name) ORDER BY name;
SELECT * FROM ps_t1 JOIN ps_t2 USING (name) FULL JOIN ps_t3 USING (name) ORDER BY name;
CREATE TABLE ps_f1 AS SELECT i AS k, i AS v FROM generate_series(1, 20000) i;
CREATE TABLE ps_f2 AS SELECT i + 5000 AS k, i AS v FROM generate_series(1, 20000) i;
CREATE TABLE ps_f3 AS SELECT i + 10000 AS k, i AS v FROM generate_series(1, 20000) i;
ANALYZE ps_f1, ps_f2, ps_f3;
SELECT count(*) FROM ps_f1 FULL JOIN ps_f2 USING (k) FULL JOIN ps_f3 USING (k);
SELECT same_as_off('SELECT a.k, a.v, b.k AS bk, b.v AS bv, c.k AS ck, c.v AS cv FROM ps_f1 a FULL JOIN ps_f2 b ON a.k = b.k FULL JOIN ps_f3 c ON b.k = c.k');
SELECT same_as_off('SELECT a.k, a.v, b.k AS bk, b.v AS bv, c.k AS ck, c.v AS cv FROM ps_f1 a FULL JOIN ps_f2 b ON a.k = b.k LEFT JOIN ps_f3 c ON a.k = c.k');
SELECT same_as_off('SELECT a.k, a.v, b.k AS bk, b.v AS bv, c.k AS ck, c.v AS cv FROM ps_f1 a RIGHT JOIN ps_f2 b ON a.k = b.k JOIN ps_f3 c ON b.k = c.k');

-- 3. the genetic optimizer plans joins in memory it frees after each
-- candidate order; GpuJoin paths of freed orders are forgotten
CREATE TABLE ps_g AS SELECT i AS k, i % 10 AS m FROM generate_series(1, 200) i;
ANALYZE ps_g;
SET geqo_threshold = 2;
SELECT same_as_off('SELECT a.k, b.m, c.k AS ck FROM ps_g a, ps_g b, ps_g c WHERE a.k = b.k AND b.k = c.m');
SELECT same_as_off('SELECT a.m, count(*) FROM ps_g a, ps_g b, ps_g c, ps_g d WHERE a.k = b.k AND b.k = c.k AND c.m = d.k GROUP BY a.m');
RESET geqo_threshold;
-- twelve relations reach geqo_threshold at its default
SELECT same_as_off('SELECT count(*) FROM ps_g t1 JOIN ps_g t2 ON t1.k = t2.k JOIN ps_g t3 ON t2.k = t3.k
  JOIN ps_g t4 ON t3.k = t4.k JOIN ps_g t5 ON t4.k = t5.k JOIN ps_g t6 ON t5.k = t6.k
  JOIN ps_g t7 ON t6.k = t7.k JOIN ps_g t8 ON t7.k = t8.k JOIN ps_g t9 ON t8.k = t9.k
  JOIN ps_g t10 ON t9.k = t10.k JOIN ps_g t11 ON t10.k = t11.k JOIN ps_g t12 ON t11.k = t12.m');

-- 4. a set-returning function as a GROUP BY key: the ProjectSet below
-- the aggregation stays
CREATE TABLE ps_few (id int);
INSERT INTO ps_few VALUES (1), (2), (3);
SELECT * FROM ps_explain('SELECT generate_series(1, 2) AS g, count(*) FROM ps_few GROUP BY 1');
SELECT generate_series(1, 2) AS g, count(*) FROM ps_few GROUP BY 1 ORDER BY 1;
SELECT id % 2 AS k, generate_series(1, 2) AS g, count(*) FROM ps_few GROUP BY 1, 2 ORDER BY 1, 2;
SELECT id % 2 AS k, count(*), generate_series(1, 2) AS g FROM ps_few GROUP BY 1 ORDER BY 1, 3;

-- 5. a correlated sub-query through a GpuPreAgg with two inner
-- relations, one of them with the outer row's parameter: every execution
-- reads both again
CREATE TABLE ps_r (rk int, name text);
CREATE TABLE ps_n (nk int, rk int);
CREATE TABLE ps_s (sk int, nk int);
CREATE TABLE ps_ps (pk int, sk int, cost numeric(15,2));
CREATE TABLE ps_p (pk int);
INSERT INTO ps_r VALUES (1, 'EUROPE'), (2, 'ASIA');
INSERT INTO ps_n SELECT i, 1 + i % 2 FROM generate_series(1, 10) i;
INSERT INTO ps_s SELECT i, 1 + i % 10 FROM generate_series(1, 20) i;
INSERT INTO ps_p SELECT generate_series(1, 10);
INSERT INTO ps_ps SELECT p, 1 + (p * 7 + k) % 20, p * 6 + k * 3 + 0.5
  FROM generate_series(1, 10) p, generate_series(1, 4) k;
ANALYZE ps_r, ps_n, ps_s, ps_ps, ps_p;
SELECT * FROM ps_explain('SELECT pk, (SELECT min(cost) FROM ps_ps, ps_s, ps_n, ps_r
  WHERE ps_ps.pk = ps_p.pk AND ps_s.sk = ps_ps.sk AND ps_s.nk = ps_n.nk AND ps_n.rk = ps_r.rk
    AND ps_r.name = ''EUROPE'') FROM ps_p WHERE pk <= 6');
SELECT pk, (SELECT min(cost) FROM ps_ps, ps_s, ps_n, ps_r
  WHERE ps_ps.pk = ps_p.pk AND ps_s.sk = ps_ps.sk AND ps_s.nk = ps_n.nk AND ps_n.rk = ps_r.rk
    AND ps_r.name = 'EUROPE') FROM ps_p WHERE pk <= 6 ORDER BY pk;
SELECT same_as_off('SELECT pk, (SELECT min(cost) FROM ps_ps, ps_s, ps_n, ps_r
  WHERE ps_ps.pk = ps_p.pk AND ps_s.sk = ps_ps.sk AND ps_s.nk = ps_n.nk AND ps_n.rk = ps_r.rk
    AND ps_r.name = ''EUROPE'') AS c FROM ps_p');
-- the parameter in the second inner relation instead
SELECT same_as_off('SELECT pk, (SELECT count(*) FROM ps_ps, ps_s, ps_n
  WHERE ps_s.sk = ps_ps.sk AND ps_s.nk = ps_n.nk AND ps_n.nk <= ps_p.pk) AS c FROM ps_p');

-- 6. a device node that is not partial never runs below a Gather unless
-- it reads at most a million rows: there every process of the parallel
-- plan would run it in full, all on one device (TPC-H Q18's shape: an
-- aggregated IN sub-query on the inner side of a parallel join; here over
-- 1.2 million rows).  ps_under_gather(q): the device nodes of q's plan
-- that are not partial yet sit below a Gather, and the device nodes in all
CREATE FUNCTION ps_under_gather(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE ln text; gather_at int := -1; at int; bad int := 0; nodes int := 0;
BEGIN
  FOR ln IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    at := length(ln) - length(ltrim(ln, ' ->'));
    IF gather_at >= 0 AND at <= gather_at THEN gather_at := -1; END IF;
    IF ln ~ 'Gather' AND gather_at < 0 THEN gather_at := at; END IF;
    IF ln ~ 'Custom Scan \(Gpu' THEN
      nodes := nodes + 1;
      IF gather_at >= 0 AND ln !~ 'Parallel Custom Scan' THEN bad := bad + 1; END IF;
    END IF;
  END LOOP;
  RETURN format('device nodes %s, whole ones below a Gather %s', nodes, bad);
END $$;
-- (GpuJoin off: PostgreSQL's own join above, as in Q18's plan; a parallel
-- setup for free, the rows through a Gather at their default cost, which
-- puts the join below the Gather)
CREATE TABLE ps_lines AS SELECT i / 12 AS ok, (i % 7)::numeric(15,2) AS q FROM generate_series(1, 1200000) i;
CREATE TABLE ps_orders AS SELECT i AS ok, i % 100 AS cust FROM generate_series(0, 99999) i;
ANALYZE ps_lines, ps_orders;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET min_parallel_table_scan_size = 0;
SET pg_strom.heap_gather_cost = 0;
SET pg_strom.enable_gpujoin = off;
SELECT ps_under_gather('SELECT o.cust, count(*) FROM ps_orders o
  WHERE o.ok IN (SELECT ok FROM ps_lines GROUP BY ok HAVING sum(q) > 15) GROUP BY o.cust');
SELECT same_as_off('SELECT o.cust, count(*) AS n FROM ps_orders o
  WHERE o.ok IN (SELECT ok FROM ps_lines GROUP BY ok HAVING sum(q) > 15) GROUP BY o.cust');
-- a whole device node over a small table may: the hashed sub-plan of NOT
-- IN (a GpuScan of ps_orders) in a parallel scan's qual (TPC-H Q16's
-- shape) runs in every process, and the scan stays parallel
SET pg_strom.gpu_setup_cost = 0;
SET pg_strom.gpu_tuple_cost = 0;
SELECT ps_under_gather('SELECT count(*), sum(q) FROM ps_lines WHERE ok NOT IN (SELECT ok FROM ps_orders WHERE cust = 7)');
SELECT same_as_off('SELECT count(*) AS n, sum(q) AS s FROM ps_lines WHERE ok NOT IN (SELECT ok FROM ps_orders WHERE cust = 7)');
RESET pg_strom.gpu_setup_cost;
RESET pg_strom.gpu_tuple_cost;
RESET pg_strom.enable_gpujoin;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET min_parallel_table_scan_size;
