-- PG-Strom's write-ups' Q1.2 with a range on lo_orderdate that statistics can skip by
SELECT sum(lo_extendedprice * lo_discount) AS revenue
  FROM lineorder, date1
 WHERE lo_orderdate = d_datekey
   AND d_yearmonthnum = 199401
   AND lo_discount BETWEEN 4 AND 6
   AND lo_quantity BETWEEN 26 AND 35
   AND lo_orderdate BETWEEN 19940101 AND 19940131;
