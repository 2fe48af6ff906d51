-- Index shape 4 (not TPC-H): an aggregate over one customer's orders,
-- through the orders (o_custkey) index
select count(*), sum(o_totalprice), min(o_orderdate), max(o_orderdate)
  from orders
 where o_custkey = 1000;
