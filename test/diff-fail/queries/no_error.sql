-- must FAIL: expects an error that does not happen
-- expect: none
-- error: division by zero
SELECT 1 / 1;
