-- timestamptz grouping keys in the session time zone (a DST zone): local
-- days across spring-forward and fall-back days, with a FILTER comparing
-- with a date and a timestamp (more aggregates: preagg_tz_week_join)
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: TimeZone = 'America/New_York'
SELECT date_trunc('day', tz) AS kday, count(*),
       count(*) FILTER (WHERE tz >= date '2001-03-01' AND tz < timestamp '2001-11-04 01:30')
  FROM diff_types
 GROUP BY 1;
