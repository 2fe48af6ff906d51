-- Index shape 3 (not TPC-H): an indexed self-join of a few rows (the other
-- lines of the orders that hold one part), the shape of the GPU plans
-- PG-Strom's users found 13-23x slower than PostgreSQL's index plan
select l1.l_orderkey, l1.l_linenumber, l2.l_linenumber as other_line, l2.l_partkey
  from lineitem l1
  join lineitem l2 on l2.l_orderkey = l1.l_orderkey and l2.l_linenumber <> l1.l_linenumber
 where l1.l_partkey = 1234
 order by 1, 2, 3;
