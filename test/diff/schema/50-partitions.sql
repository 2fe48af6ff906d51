-- Partitioned tables of every kind PostgreSQL has (range, list, hash,
-- sub-partitions, default and empty partitions), with heap, Arrow_Fdw and
-- gstore_fdw leaves, and dimensions to join them with.  Files go to
-- /tmp/pgstrom_part_test (made here, writable by the server).
\! rm -rf /tmp/pgstrom_part_test && mkdir -p /tmp/pgstrom_part_test && chmod 1777 /tmp/pgstrom_part_test
DROP TABLE IF EXISTS pt_sales, pt_list, pt_hash, pt_mixed, pt_a, pt_b, pt_dim, pt_days, pt_drop CASCADE;

-- range by year: a sub-partitioned year (by list, with a default), a year
-- hash-partitioned by store, a year with no row, and a default partition
CREATE TABLE pt_sales (s_day date NOT NULL, s_store int, s_region text, s_qty int,
                       s_amount numeric(12,2), s_price float8, s_tag char(4))
  PARTITION BY RANGE (s_day);
CREATE TABLE pt_sales_2023 PARTITION OF pt_sales FOR VALUES FROM ('2023-01-01') TO ('2024-01-01');
CREATE TABLE pt_sales_2024 PARTITION OF pt_sales FOR VALUES FROM ('2024-01-01') TO ('2025-01-01')
  PARTITION BY LIST (s_region);
CREATE TABLE pt_sales_2024_east PARTITION OF pt_sales_2024 FOR VALUES IN ('east', 'north');
CREATE TABLE pt_sales_2024_west PARTITION OF pt_sales_2024 FOR VALUES IN ('west');
CREATE TABLE pt_sales_2024_rest PARTITION OF pt_sales_2024 DEFAULT;
CREATE TABLE pt_sales_2025 PARTITION OF pt_sales FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')
  PARTITION BY HASH (s_store);
CREATE TABLE pt_sales_2025_h0 PARTITION OF pt_sales_2025 FOR VALUES WITH (MODULUS 3, REMAINDER 0);
CREATE TABLE pt_sales_2025_h1 PARTITION OF pt_sales_2025 FOR VALUES WITH (MODULUS 3, REMAINDER 1);
CREATE TABLE pt_sales_2025_h2 PARTITION OF pt_sales_2025 FOR VALUES WITH (MODULUS 3, REMAINDER 2);
CREATE TABLE pt_sales_2026 PARTITION OF pt_sales FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
CREATE TABLE pt_sales_rest PARTITION OF pt_sales DEFAULT;
INSERT INTO pt_sales
SELECT date '2022-10-01' + i % 1000, i % 50,
       (ARRAY['east', 'west', 'north', 'south', NULL])[1 + i % 5],
       CASE WHEN i % 37 = 0 THEN NULL ELSE i % 20 END,
       CASE WHEN i % 53 = 0 THEN NULL ELSE (i % 1000) * 0.37 END,
       (i % 613) * 0.5,
       CASE WHEN i % 3 = 0 THEN 'hot' ELSE 'cold' END
  FROM generate_series(1, 30000) i;

-- list with a NULL partition and a default one
CREATE TABLE pt_list (l_code text, l_k int, l_v int8) PARTITION BY LIST (l_code);
CREATE TABLE pt_list_ab PARTITION OF pt_list FOR VALUES IN ('a', 'b');
CREATE TABLE pt_list_c PARTITION OF pt_list FOR VALUES IN ('c');
CREATE TABLE pt_list_null PARTITION OF pt_list FOR VALUES IN (NULL);
CREATE TABLE pt_list_rest PARTITION OF pt_list DEFAULT;
INSERT INTO pt_list
SELECT (ARRAY['a', 'b', 'c', NULL, 'd', 'é'])[1 + i % 6], i % 50, i * 7 - 3000
  FROM generate_series(1, 6000) i;

-- hash, four partitions
CREATE TABLE pt_hash (h_k int, h_v int, h_t varchar(12)) PARTITION BY HASH (h_k);
CREATE TABLE pt_hash_0 PARTITION OF pt_hash FOR VALUES WITH (MODULUS 4, REMAINDER 0);
CREATE TABLE pt_hash_1 PARTITION OF pt_hash FOR VALUES WITH (MODULUS 4, REMAINDER 1);
CREATE TABLE pt_hash_2 PARTITION OF pt_hash FOR VALUES WITH (MODULUS 4, REMAINDER 2);
CREATE TABLE pt_hash_3 PARTITION OF pt_hash FOR VALUES WITH (MODULUS 4, REMAINDER 3);
INSERT INTO pt_hash
SELECT i % 300, CASE WHEN i % 11 = 0 THEN NULL ELSE i % 97 END, 't' || (i % 13)
  FROM generate_series(1, 8000) i;

-- mixed leaves: a heap table, an Arrow file, a GPU store table, and an
-- Arrow table whose file holds no row yet
CREATE TABLE pt_mixed (m_k int NOT NULL, m_day date, m_v int8, m_f float8) PARTITION BY RANGE (m_k);
CREATE TABLE pt_mixed_heap PARTITION OF pt_mixed FOR VALUES FROM (0) TO (10000);
CREATE FOREIGN TABLE pt_mixed_arrow PARTITION OF pt_mixed FOR VALUES FROM (10000) TO (20000)
  SERVER arrow_fdw OPTIONS (file '/tmp/pgstrom_part_test/mixed.arrow', writable 'true');
CREATE FOREIGN TABLE pt_mixed_gs PARTITION OF pt_mixed FOR VALUES FROM (20000) TO (30000)
  SERVER gstore_fdw
  OPTIONS (base_file '/tmp/pgstrom_part_test/mixed_gs.base',
           redo_log_file '/tmp/pgstrom_part_test/mixed_gs.redo', max_num_rows '20000');
CREATE FOREIGN TABLE pt_mixed_none PARTITION OF pt_mixed FOR VALUES FROM (30000) TO (40000)
  SERVER arrow_fdw OPTIONS (file '/tmp/pgstrom_part_test/none.arrow', writable 'true');
INSERT INTO pt_mixed_heap
SELECT i, date '2024-01-01' + i % 400, CASE WHEN i % 17 = 0 THEN NULL ELSE i * 3 END, (i % 89) * 0.125
  FROM generate_series(0, 9999) i;
INSERT INTO pt_mixed_arrow
SELECT i, date '2024-01-01' + i % 400, CASE WHEN i % 17 = 0 THEN NULL ELSE i * 3 END, (i % 89) * 0.125
  FROM generate_series(10000, 19999) i;
INSERT INTO pt_mixed_gs
SELECT i, date '2024-01-01' + i % 400, CASE WHEN i % 17 = 0 THEN NULL ELSE i * 3 END, (i % 89) * 0.125
  FROM generate_series(20000, 29999) i;

-- two tables partitioned alike (PostgreSQL's own partition-wise join),
-- their NULL keys in the default partitions
CREATE TABLE pt_a (k int, a_v int, a_t text) PARTITION BY RANGE (k);
CREATE TABLE pt_a_0 PARTITION OF pt_a FOR VALUES FROM (MINVALUE) TO (1000);
CREATE TABLE pt_a_1 PARTITION OF pt_a FOR VALUES FROM (1000) TO (2000);
CREATE TABLE pt_a_2 PARTITION OF pt_a FOR VALUES FROM (2000) TO (MAXVALUE);
CREATE TABLE pt_a_d PARTITION OF pt_a DEFAULT;
CREATE TABLE pt_b (k int, b_w int8) PARTITION BY RANGE (k);
CREATE TABLE pt_b_0 PARTITION OF pt_b FOR VALUES FROM (MINVALUE) TO (1000);
CREATE TABLE pt_b_1 PARTITION OF pt_b FOR VALUES FROM (1000) TO (2000);
CREATE TABLE pt_b_2 PARTITION OF pt_b FOR VALUES FROM (2000) TO (MAXVALUE);
CREATE TABLE pt_b_d PARTITION OF pt_b DEFAULT;
INSERT INTO pt_a SELECT i % 2600, i % 31, 'a' || (i % 7) FROM generate_series(1, 9000) i;
INSERT INTO pt_b SELECT i * 3 % 2900, CASE WHEN i % 9 = 0 THEN NULL ELSE i END FROM generate_series(1, 4000) i;
INSERT INTO pt_a VALUES (NULL, 1, 'null key');
INSERT INTO pt_b VALUES (NULL, 1);

-- partitions whose columns lie at other positions: one made apart with a
-- column dropped before it was attached, one with its columns in another
-- order
CREATE TABLE pt_drop (k int, v int, t text) PARTITION BY RANGE (k);
CREATE TABLE pt_drop_0 PARTITION OF pt_drop FOR VALUES FROM (0) TO (100);
CREATE TABLE pt_drop_1 (junk int8, k int, v int, t text);
ALTER TABLE pt_drop_1 DROP COLUMN junk;
ALTER TABLE pt_drop ATTACH PARTITION pt_drop_1 FOR VALUES FROM (100) TO (200);
CREATE TABLE pt_drop_2 (t text, v int, k int);
ALTER TABLE pt_drop ATTACH PARTITION pt_drop_2 FOR VALUES FROM (200) TO (300);
INSERT INTO pt_drop SELECT i % 300, CASE WHEN i % 13 = 0 THEN NULL ELSE i END, 'r' || (i % 9)
  FROM generate_series(1, 6000) i;

-- dimensions: stores 0..39 of the 50 (10 sales stores match none) and
-- 100..104 (no sale matches them); days with a flag
CREATE TABLE pt_dim (d_store int PRIMARY KEY, d_name text, d_region text);
INSERT INTO pt_dim SELECT s, 'store ' || s, (ARRAY['east', 'west', 'north'])[1 + s % 3]
  FROM generate_series(0, 39) s UNION ALL SELECT s, 'far ' || s, 'far' FROM generate_series(100, 104) s;
CREATE TABLE pt_days (day date PRIMARY KEY, holiday bool);
INSERT INTO pt_days SELECT d::date, extract(dow FROM d) IN (0, 6)
  FROM generate_series(date '2023-06-01', date '2025-06-30', interval '1 day') d;

ANALYZE pt_sales, pt_list, pt_hash, pt_mixed, pt_mixed_heap, pt_mixed_arrow, pt_mixed_gs, pt_a, pt_b,
        pt_dim, pt_days, pt_drop;
