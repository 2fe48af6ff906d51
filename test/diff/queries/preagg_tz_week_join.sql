-- local weeks of a timestamptz as the grouping key over a join, in a zone
-- with a 45-minute offset and DST (Pacific/Chatham), a join filter on the
-- local date, and aggregates over the local date, interval arithmetic and
-- the local hour
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: TimeZone = 'Pacific/Chatham'
SELECT date_trunc('week', t.tz)::timestamp AS kweek, count(*), sum(b.lo),
       min(t.tz::date), max(t.tz - interval '1 mon'), max(date_part('hour', t.tz))
  FROM diff_types t JOIN dj_b b ON b.bk = t.a2 % 41
 WHERE t.tz::date > date '2001-06-30'
 GROUP BY 1;
