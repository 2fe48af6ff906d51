-- test/diff/schema/40-warehouse.sql - tables shaped as users make them,
-- for the sqlsmith soak (scripts/soak.py) above all: primary keys and the
-- indexes a DBA would add, char(n), varchar and decimal columns, dates,
-- multibyte text, NULLs, an inheritance parent with a child of its own
-- columns, and a range-partitioned table with a default partition.
DROP TABLE IF EXISTS wh_customer, wh_orders, wh_event, wh_event_old, wh_measure CASCADE;

CREATE TABLE wh_customer (
  c_id      int PRIMARY KEY,
  c_name    varchar(25) NOT NULL,
  c_nation  char(15),
  c_segment char(10),
  c_balance numeric(12,2),
  c_since   date
);
INSERT INTO wh_customer
SELECT i,
       CASE WHEN i % 11 = 0 THEN '顧客#' || i ELSE 'Customer#' || lpad(i::text, 9, '0') END,
       CASE WHEN i % 29 = 0 THEN NULL ELSE (ARRAY['FRANCE', 'GERMANY', 'JAPAN', 'BRAZIL', 'CHINA'])[1 + i % 5] END,
       (ARRAY['BUILDING', 'MACHINERY', 'AUTOMOBILE', ''])[1 + i % 4],
       CASE WHEN i % 31 = 0 THEN NULL ELSE ((i * 7919) % 2000000 - 100000) / 100.0 END,
       date '1992-01-01' + (i * 37) % 2500
  FROM generate_series(1, 3000) i;
CREATE INDEX wh_customer_nation ON wh_customer (c_nation);

CREATE TABLE wh_orders (
  o_id       bigint PRIMARY KEY,
  o_cust     int NOT NULL REFERENCES wh_customer,
  o_status   char(1),
  o_priority varchar(15),
  o_total    numeric(15,2),
  o_disc     numeric(4,2),
  o_date     date,
  o_comment  text
);
INSERT INTO wh_orders
SELECT i,
       1 + (i::bigint * 104729) % 3000,
       CASE WHEN i % 23 = 0 THEN NULL ELSE substr('FOP', 1 + i % 3, 1) END,
       (ARRAY['1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW'])[1 + i % 5],
       CASE WHEN i % 37 = 0 THEN NULL ELSE ((i::bigint * 15485863) % 50000000) / 100.0 END,
       (i % 11) / 100.0,
       date '1992-01-01' + (i * 13) % 2400,
       CASE WHEN i % 19 = 0 THEN NULL WHEN i % 7 = 0 THEN 'ünïcödé ' || i ELSE 'regular deposits ' || i % 101 END
  FROM generate_series(1, 30000) i;
CREATE INDEX wh_orders_date ON wh_orders (o_date);
CREATE INDEX wh_orders_cust ON wh_orders (o_cust);

-- inheritance: the parent's own rows and its child's
CREATE TABLE wh_event (ev_id int, ev_kind varchar(10), ev_val numeric(10,3), ev_at timestamp);
CREATE TABLE wh_event_old (ev_note text) INHERITS (wh_event);
INSERT INTO wh_event
SELECT i, (ARRAY['click', 'view', 'buy', NULL])[1 + i % 4], (i % 1000) / 7.0,
       timestamp '2024-01-01' + i * interval '7 minutes'
  FROM generate_series(1, 8000) i;
INSERT INTO wh_event_old
SELECT i, (ARRAY['click', 'view', 'buy'])[1 + i % 3], CASE WHEN i % 9 = 0 THEN NULL ELSE (i % 500) / 3.0 END,
       timestamp '2020-01-01' + i * interval '1 hour', 'archived ' || i % 13
  FROM generate_series(1, 6000) i;
CREATE INDEX wh_event_id ON wh_event (ev_id);

-- range partitions by day, with a default partition
CREATE TABLE wh_measure (m_day date NOT NULL, m_dev int, m_val float8, m_tag char(4))
  PARTITION BY RANGE (m_day);
CREATE TABLE wh_measure_2024 PARTITION OF wh_measure FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
CREATE TABLE wh_measure_2025 PARTITION OF wh_measure FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
CREATE TABLE wh_measure_rest PARTITION OF wh_measure DEFAULT;
INSERT INTO wh_measure
SELECT date '2023-07-01' + i % 1000, i % 97,
       CASE WHEN i % 41 = 0 THEN NULL ELSE (i % 1009) * 0.25 END,
       CASE WHEN i % 3 = 0 THEN 'hot' ELSE 'cold' END
  FROM generate_series(1, 20000) i;
CREATE INDEX wh_measure_dev ON wh_measure (m_dev);

ANALYZE wh_customer, wh_orders, wh_event, wh_event_old, wh_measure;
