-- bench/tpch/indexes.sql - after the load: the primary keys, and the
-- indexes a DBA adds for the foreign keys the queries join and look up by
-- (lineitem by part for Q17's and Q20's correlated sub-queries, orders by
-- customer, partsupp by supplier, the dimensions by nation and region).
ALTER TABLE region   ADD PRIMARY KEY (r_regionkey);
ALTER TABLE nation   ADD PRIMARY KEY (n_nationkey);
ALTER TABLE part     ADD PRIMARY KEY (p_partkey);
ALTER TABLE supplier ADD PRIMARY KEY (s_suppkey);
ALTER TABLE partsupp ADD PRIMARY KEY (ps_partkey, ps_suppkey);
ALTER TABLE customer ADD PRIMARY KEY (c_custkey);
ALTER TABLE orders   ADD PRIMARY KEY (o_orderkey);
ALTER TABLE lineitem ADD PRIMARY KEY (l_orderkey, l_linenumber);
CREATE INDEX lineitem_part_supp ON lineitem (l_partkey, l_suppkey);
CREATE INDEX orders_cust ON orders (o_custkey);
CREATE INDEX partsupp_supp ON partsupp (ps_suppkey);
CREATE INDEX customer_nation ON customer (c_nationkey);
CREATE INDEX supplier_nation ON supplier (s_nationkey);
CREATE INDEX nation_region ON nation (n_regionkey);
