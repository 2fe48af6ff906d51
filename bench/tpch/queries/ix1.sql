-- Index shape 1 (not TPC-H): a range of a few orders by primary key, the
-- lookup an index answers in microseconds; pg_strom must leave it to
-- PostgreSQL's index scan
select o_orderkey, o_custkey, o_totalprice, o_orderdate
  from orders
 where o_orderkey between 1000 and 1100
 order by o_orderkey;
