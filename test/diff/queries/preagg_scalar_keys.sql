-- fixed-width grouping keys of the scalar families, as expressions of few
-- values: float4 and float8 (NaN one group, infinities; f8 = -0 and 0 left
-- out, since PostgreSQL shows whichever it met first), date, time,
-- timestamp, timestamptz, with NULL groups
-- expect: GpuPreAgg
-- set: pg_strom.gpu_setup_cost = 0
-- set: pg_strom.gpu_context_cost = 0
SELECT (a2 % 7)::float4 / 2 AS k4, floor(f8 / 1000) AS k8, date '2000-01-01' + a2 % 5 AS kd,
       CASE WHEN a4 % 4 = 0 THEN time '01:00' WHEN a4 % 4 = 1 THEN time '23:59:59.999999' WHEN a4 % 4 = 2 THEN time '00:00' END AS kt,
       date_trunc('year', ts) AS kts, LEAST(tz, timestamptz '2000-01-02 00:00+00') AS kz,
       count(*), sum(a2)
  FROM diff_types
 WHERE f8 <> 0 OR f8 IS NULL
 GROUP BY 1, 2, 3, 4, 5, 6;
