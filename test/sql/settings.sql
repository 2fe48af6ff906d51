-- The pg_strom.* settings: names, types, defaults, contexts.
SELECT name, vartype, boot_val, context, enumvals
  FROM pg_settings WHERE name LIKE 'pg_strom.%' ORDER BY name;
SHOW pg_strom.enabled;
SHOW pg_strom.engine;
SET pg_strom.engine = 'cpu';
SHOW pg_strom.engine;
SET pg_strom.engine = 'CPU';     -- enum values are case-insensitive
SHOW pg_strom.engine;
SET pg_strom.engine = 'tpu';     -- ERROR: not a valid value
RESET pg_strom.engine;
SET pg_strom.enabled = off;
SHOW pg_strom.enabled;
RESET pg_strom.enabled;
-- The prefix is reserved: misspelt settings are errors, not silent no-ops.
SET pg_strom.enable_gpu_scan = off;
-- Only superusers may choose which libnvrtc a backend loads.
CREATE ROLE pgstrom_regress_user;
SET ROLE pgstrom_regress_user;
SET pg_strom.nvrtc_library = '/tmp/libnvrtc.so';
SET pg_strom.engine = 'cpu';
SHOW pg_strom.engine;
RESET ROLE;
DROP ROLE pgstrom_regress_user;
