#!/usr/bin/env bash
# scripts/device-functions-doc.sh - print the table rows of
# docs/device-functions.md from the running cluster's
# pgstrom.device_functions (the catalog compiled into the extension).
# `make test` compares the doc with this output; to refresh the doc:
#   . .run/env && scripts/device-functions-doc.sh --write
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
query=$(cat <<'SQL'
SELECT format('| %s | %s | %s | %s | %s |', func_id, name, pg_function, result_type, label)
  FROM pgstrom.device_functions ORDER BY func_id
SQL
)
rows=$(psql -XAtq -c "$query")
if [ "${1:-}" = --write ]; then
  doc=$PGSTROM_ROOT/docs/device-functions.md
  { sed '/^| [0-9]/,$d' "$doc"; echo "$rows"; } > "$doc.new" && mv "$doc.new" "$doc"
else
  echo "$rows"
fi
