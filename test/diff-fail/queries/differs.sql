-- must FAIL: the result depends on pg_strom.enabled
-- expect: none
SELECT current_setting('pg_strom.enabled') AS v;
