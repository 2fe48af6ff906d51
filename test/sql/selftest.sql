-- The filter kernels on the CPU engine, checked row by row against the
-- reference semantics (NULLs, NaN, infinities, integer extremes).
SELECT engine, count(*) AS cases, bool_and(matches_reference) AS all_match,
       sum(nmatched) > 0 AS some_matched
  FROM pgstrom.engine_selftest(100000, 'cpu') GROUP BY engine;
SELECT data_type, constant, op, with_nulls, nmatched
  FROM pgstrom.engine_selftest(1000, 'cpu')
 WHERE data_type = 'float8' AND constant = 'NaN' ORDER BY with_nulls, op;
-- Empty and tiny chunks.
SELECT count(*), bool_and(matches_reference), sum(nmatched) FROM pgstrom.engine_selftest(0, 'cpu');
SELECT count(*), bool_and(matches_reference) FROM pgstrom.engine_selftest(1, 'cpu');
-- Bad arguments.
SELECT * FROM pgstrom.engine_selftest(-1, 'cpu');
SELECT * FROM pgstrom.engine_selftest(10, 'tpu');
-- pg_strom.engine = cpu forces the CPU engine everywhere.
SET pg_strom.engine = 'cpu';
SELECT pgstrom.active_engine();
SELECT DISTINCT engine FROM pgstrom.engine_selftest(10);
RESET pg_strom.engine;
