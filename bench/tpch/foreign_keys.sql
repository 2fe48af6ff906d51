-- bench/tpch/foreign_keys.sql - after the primary keys (indexes.sql): the
-- relationships the TPC-H specification defines, declared as a DBA
-- declares them.  Besides integrity, PostgreSQL's planner estimates a join
-- along a declared foreign key by it: lineitem joined with partsupp on
-- (l_partkey, l_suppkey), two columns that are not independent, is
-- estimated at 6 rows instead of 3.3 million at SF 10 without it (Q9).
ALTER TABLE nation   ADD CONSTRAINT nation_region_fk FOREIGN KEY (n_regionkey) REFERENCES region;
ALTER TABLE supplier ADD CONSTRAINT supplier_nation_fk FOREIGN KEY (s_nationkey) REFERENCES nation;
ALTER TABLE customer ADD CONSTRAINT customer_nation_fk FOREIGN KEY (c_nationkey) REFERENCES nation;
ALTER TABLE partsupp ADD CONSTRAINT partsupp_part_fk FOREIGN KEY (ps_partkey) REFERENCES part;
ALTER TABLE partsupp ADD CONSTRAINT partsupp_supplier_fk FOREIGN KEY (ps_suppkey) REFERENCES supplier;
ALTER TABLE orders   ADD CONSTRAINT orders_customer_fk FOREIGN KEY (o_custkey) REFERENCES customer;
ALTER TABLE lineitem ADD CONSTRAINT lineitem_orders_fk FOREIGN KEY (l_orderkey) REFERENCES orders;
ALTER TABLE lineitem ADD CONSTRAINT lineitem_partsupp_fk FOREIGN KEY (l_partkey, l_suppkey) REFERENCES partsupp;
