-- bench/ssb/schema.sql - the Star Schema Benchmark tables and the value
-- helpers of the generator (schema ssb_gen).  Column names and types follow
-- PG-Strom's write-ups' lineorder (lo_ordertotalprice, lo_commit_date char(8)), except
-- that the keys are integers (PG-Strom's write-ups' numeric keys do not change what a
-- query reads, and DuckDB gets the same types).
-- psql variables: none.  Idempotent: drops and re-creates the tables.
DROP TABLE IF EXISTS lineorder, lineorder_sort, date1, customer, supplier, part;
DROP SCHEMA IF EXISTS ssb_gen CASCADE;
CREATE SCHEMA ssb_gen;

-- r(i, salt, lo, hi): a deterministic pseudo-random integer in [lo, hi] for
-- row i; salt = seed * 100 + column number.  Immutable and parallel safe,
-- and inlined by the planner (a single SELECT of built-in functions).
CREATE FUNCTION ssb_gen.r(i bigint, salt bigint, lo bigint, hi bigint) RETURNS bigint
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT $3 + ((hashint8extended($1, $2) & 9223372036854775807) % ($4 - $3 + 1)) $$;

-- pick(i, salt, words): one element of a text array.
CREATE FUNCTION ssb_gen.pick(i bigint, salt bigint, words text[]) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT $3[ssb_gen.r($1, $2, 1, cardinality($3))] $$;

-- yyyymmdd(d): the SSB date key of a date.
CREATE FUNCTION ssb_gen.yyyymmdd(d date) RETURNS int
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT (extract(year FROM $1) * 10000 + extract(month FROM $1) * 100 + extract(day FROM $1))::int $$;

-- The 25 nations and 5 regions of TPC-H / SSB (nation key = position - 1).
CREATE TABLE ssb_gen.nation (n_nationkey int PRIMARY KEY, n_name text, n_region text);
INSERT INTO ssb_gen.nation VALUES
  (0,'ALGERIA','AFRICA'), (1,'ARGENTINA','AMERICA'), (2,'BRAZIL','AMERICA'),
  (3,'CANADA','AMERICA'), (4,'EGYPT','MIDDLE EAST'), (5,'ETHIOPIA','AFRICA'),
  (6,'FRANCE','EUROPE'), (7,'GERMANY','EUROPE'), (8,'INDIA','ASIA'),
  (9,'INDONESIA','ASIA'), (10,'IRAN','MIDDLE EAST'), (11,'IRAQ','MIDDLE EAST'),
  (12,'JAPAN','ASIA'), (13,'JORDAN','MIDDLE EAST'), (14,'KENYA','AFRICA'),
  (15,'MOROCCO','AFRICA'), (16,'MOZAMBIQUE','AFRICA'), (17,'PERU','AMERICA'),
  (18,'CHINA','ASIA'), (19,'ROMANIA','EUROPE'), (20,'SAUDI ARABIA','MIDDLE EAST'),
  (21,'VIETNAM','ASIA'), (22,'RUSSIA','EUROPE'), (23,'UNITED KINGDOM','EUROPE'),
  (24,'UNITED STATES','AMERICA');

CREATE TABLE date1 (
  d_datekey          integer,
  d_date             char(18),
  d_dayofweek        char(9),
  d_month            char(9),
  d_year             integer,
  d_yearmonthnum     integer,
  d_yearmonth        char(7),
  d_daynuminweek     integer,
  d_daynuminmonth    integer,
  d_daynuminyear     integer,
  d_monthnuminyear   integer,
  d_weeknuminyear    integer,
  d_sellingseason    char(12),
  d_lastdayinweekfl  char(1),
  d_lastdayinmonthfl char(1),
  d_holidayfl        char(1),
  d_weekdayfl        char(1)
);
CREATE TABLE customer (
  c_custkey    integer,
  c_name       varchar(25),
  c_address    varchar(25),
  c_city       char(10),
  c_nation     char(15),
  c_region     char(12),
  c_phone      char(15),
  c_mktsegment char(10)
);
CREATE TABLE supplier (
  s_suppkey  integer,
  s_name     char(25),
  s_address  varchar(25),
  s_city     char(10),
  s_nation   char(15),
  s_region   char(12),
  s_phone    char(15)
);
CREATE TABLE part (
  p_partkey   integer,
  p_name      varchar(22),
  p_mfgr      char(6),
  p_category  char(7),
  p_brand1    char(9),
  p_color     varchar(11),
  p_type      varchar(25),
  p_size      integer,
  p_container char(10)
);
CREATE TABLE lineorder (
  lo_orderkey        bigint,
  lo_linenumber      integer,
  lo_custkey         integer,
  lo_partkey         integer,
  lo_suppkey         integer,
  lo_orderdate       integer,
  lo_orderpriority   char(15),
  lo_shippriority    char(1),
  lo_quantity        integer,
  lo_extendedprice   bigint,
  lo_ordertotalprice bigint,
  lo_discount        integer,
  lo_revenue         bigint,
  lo_supplycost      bigint,
  lo_tax             integer,
  lo_commit_date     char(8),
  lo_shipmode        char(10)
);
