#!/usr/bin/env bash
# scripts/mariadb.sh - a private MariaDB server for mysql2arrow's test
# (Debian's mariadb-server package, installed by scripts/setup.sh).
#
#   scripts/mariadb.sh start DIR PORT   init DIR/data if needed, start the
#                                       server on DIR/sock and 127.0.0.1:PORT
#   scripts/mariadb.sh stop DIR
#
# No option file is read (--no-defaults): the machine's own MariaDB, if it
# runs, is not touched.  The server logs to DIR/server.log; root logs in
# by the socket without a password.
set -euo pipefail
cmd=${1:?usage: scripts/mariadb.sh start DIR PORT | stop DIR}
dir=${2:?usage: scripts/mariadb.sh start DIR PORT | stop DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
sock=$dir/sock
mysqld=$(command -v mariadbd || echo /usr/sbin/mariadbd)
[ -x "$mysqld" ] || { echo "mariadb: no mariadbd (scripts/setup.sh installs mariadb-server)" >&2; exit 1; }
as_root=()
[ "$(id -u)" = 0 ] && as_root=(--user=root)

alive() { mariadb-admin --no-defaults -S "$sock" -u root ping >/dev/null 2>&1; }

case "$cmd" in
  start)
    port=${3:?usage: scripts/mariadb.sh start DIR PORT}
    if alive; then echo "mariadb: running on $sock"; exit 0; fi
    if [ ! -d "$dir/data/mysql" ]; then
      rm -rf "$dir/data"
      mariadb-install-db --no-defaults --datadir="$dir/data" "${as_root[@]}" \
        --auth-root-authentication-method=socket --skip-test-db >"$dir/install.log" 2>&1 \
        || { cat "$dir/install.log"; exit 1; }
    fi
    nohup "$mysqld" --no-defaults --datadir="$dir/data" "${as_root[@]}" --socket="$sock" --port="$port" \
      --bind-address=127.0.0.1 --pid-file="$dir/pid" --log-error="$dir/server.log" --skip-log-bin \
      --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci \
      --innodb-buffer-pool-size=128M --secure-file-priv="$dir" >/dev/null 2>&1 &
    for _ in $(seq 1 120); do
      alive && { echo "mariadb: started on $sock, port $port"; exit 0; }
      sleep 0.5
    done
    echo "mariadb: did not start; tail of $dir/server.log:" >&2
    tail -n 20 "$dir/server.log" >&2
    exit 1
    ;;
  stop)
    if alive; then
      mariadb-admin --no-defaults -S "$sock" -u root shutdown
    fi
    ;;
  *) echo "usage: scripts/mariadb.sh start DIR PORT | stop DIR" >&2; exit 2 ;;
esac
