-- The extension and what it installs.
CREATE EXTENSION IF NOT EXISTS pg_strom;
SELECT extname, extversion IS NOT NULL AS has_version FROM pg_extension WHERE extname = 'pg_strom';
SELECT nspname FROM pg_namespace WHERE nspname = 'pgstrom';
-- Functions in schema pgstrom, and the seeds' pgstrom_device_info() in public.
SELECT n.nspname, p.proname, pg_get_function_identity_arguments(p.oid) AS args,
       p.provolatile, p.proparallel
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'pgstrom' OR p.proname = 'pgstrom_device_info'
 ORDER BY 1, 2, 3;
SELECT relname, relkind FROM pg_class WHERE relnamespace = 'pgstrom'::regnamespace ORDER BY 1;
