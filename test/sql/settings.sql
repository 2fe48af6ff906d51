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
GRANT USAGE ON SCHEMA pgstrom TO pgstrom_regress_user;
SET ROLE pgstrom_regress_user;
SET pg_strom.nvrtc_library = '/tmp/libnvrtc.so';
SET pg_strom.manual_optimal_gpus = 'nvme0=gpu0';   -- superusers only too
SET pg_strom.engine = 'cpu';
SHOW pg_strom.engine;
SELECT count(*) FROM pgstrom.gpu_storage_distance('/tmp');   -- ERROR: looks at files
RESET ROLE;
REVOKE USAGE ON SCHEMA pgstrom FROM pgstrom_regress_user;
DROP ROLE pgstrom_regress_user;
-- Which GPUs scans of a directory, tablespace or block device run on:
-- malformed entries are refused with the reason.
SET pg_strom.manual_optimal_gpus = ' nvme0=gpu1 , /data/arrow/=gpu0:GPU2, pg_default=gpu3';
SHOW pg_strom.manual_optimal_gpus;
SET pg_strom.manual_optimal_gpus = 'nvme0';
SET pg_strom.manual_optimal_gpus = 'nvme0=gpu16';
SET pg_strom.manual_optimal_gpus = 'nvme0=gpu0:cpu1';
SET pg_strom.manual_optimal_gpus = 'data/arrow=gpu0';
SET pg_strom.manual_optimal_gpus = '=gpu0';
SHOW pg_strom.manual_optimal_gpus;
RESET pg_strom.manual_optimal_gpus;
-- Each GPU's PCIe distance to a path's storage: a row per GPU found (none
-- here without one), each preferred when it is the only one.
SELECT count(*) = (SELECT count(DISTINCT id) FROM pgstrom.gpu_device_info) AS a_row_per_gpu,
       coalesce(bool_and(preferred), true) AS preferred
  FROM pgstrom.gpu_storage_distance('/tmp');
SELECT * FROM pgstrom.gpu_storage_distance('tmp');
SELECT * FROM pgstrom.gpu_storage_distance('/no/such/path');
