-- timestamptz functions in a GpuScan filter and projection, in a zone with
-- a 30-minute DST shift: local dates, hours, truncation, interval
-- arithmetic across transitions, comparisons with dates and timestamps
-- expect: GpuScan
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
-- set: TimeZone = 'Australia/Lord_Howe'
SELECT id, tz, tz::timestamp AS local, date_trunc('month', tz) AS month, tz + interval '1 day 30 min' AS later
  FROM diff_types
 WHERE extract(hour FROM tz) BETWEEN 1 AND 3
   AND (tz::date = d OR date_trunc('day', tz) < ts OR tz - interval '1 mon' > date '2004-10-01')
   AND extract(dow FROM tz) <> 0;
