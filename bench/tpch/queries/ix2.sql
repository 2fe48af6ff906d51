-- Index shape 2 (not TPC-H): the lines of one part, through the
-- (l_partkey, l_suppkey) index
select l_orderkey, l_linenumber, l_quantity, l_extendedprice
  from lineitem
 where l_partkey = 1234
 order by l_orderkey, l_linenumber;
