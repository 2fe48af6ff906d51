-- must FAIL: a float column that differs by more than the tolerance
-- expect: none
SELECT CASE current_setting('pg_strom.enabled') WHEN 'on' THEN 1.0000001::float8 ELSE 1.0::float8 END AS v;
