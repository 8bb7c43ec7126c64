#!/usr/bin/env bash
# A throwaway PostgreSQL 15 topology on loopback, in directories under DIR, for the
# topology tests and the replica benchmark:
#   - a primary (PostGIS available, wal_level=replica, a physical replication slot),
#   - a streaming replica made with `pg_basebackup -R` from that slot (hot standby),
#   - PgBouncer in transaction pooling mode in front of the primary (every database).
# Trust authentication, loopback only; everything it starts is stopped by `stop`.
#   scripts/pg-topology.sh start DIR            -> prints PRIMARY_URL=…, REPLICA_URL=…, POOLER_URL=…
#   scripts/pg-topology.sh stop DIR
#   scripts/pg-topology.sh restart-primary DIR  (pg_ctl restart -m fast)
#   scripts/pg-topology.sh stop-replica DIR | start-replica DIR
#   scripts/pg-topology.sh promote DIR          (waits for the replica to catch up, stops the
#                                                old primary, promotes the replica)
# As root, the servers run as the `postgres` system user (initdb and PgBouncer refuse root).
# Exits 3 with a reason on stderr when PostgreSQL, PostGIS or PgBouncer is not installed.
set -euo pipefail

cmd=${1:?start|stop|restart-primary|stop-replica|start-replica|promote}
dir=${2:?directory}
bin=""
for candidate in "${PG_BIN:-}" /usr/lib/postgresql/15/bin "$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/x)")"; do
  if [ -n "$candidate" ] && [ -x "$candidate/initdb" ] && [ -x "$candidate/pg_ctl" ]; then bin=$candidate; break; fi
done
[ -n "$bin" ] || { echo "no PostgreSQL server binaries (initdb, pg_ctl) found" >&2; exit 3; }
sharedir=$("$bin/pg_config" --sharedir 2>/dev/null || echo /usr/share/postgresql/15)
[ -f "$sharedir/extension/postgis.control" ] || { echo "PostGIS is not installed (no $sharedir/extension/postgis.control)" >&2; exit 3; }
pgbouncer=$(command -v pgbouncer || { [ -x /usr/sbin/pgbouncer ] && echo /usr/sbin/pgbouncer; } || true)
[ -n "$pgbouncer" ] || { echo "PgBouncer is not installed (Debian package pgbouncer)" >&2; exit 3; }

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
sql() { # PORT SQL -> the single value
  as_owner "$bin/psql" -h 127.0.0.1 -p "$1" -U postgres -d postgres -XAtq -c "$2"
}
port_of() { cat "$dir/$1.port"; }

# Durable enough for the failover test (a fast shutdown writes all WAL), quick enough for
# tests: no fsync. Loopback only.
server_options() {
  echo "-c listen_addresses=127.0.0.1 -p $1 -k $dir -c fsync=off -c full_page_writes=off -c max_connections=300 -c shared_buffers=128MB -c wal_level=replica -c max_wal_senders=5 -c max_replication_slots=5 -c hot_standby=on -c hot_standby_feedback=on -c wal_keep_size=256MB"
}

start_server() { # NAME PORT
  as_owner "$bin/pg_ctl" -D "$dir/$1" -l "$dir/$1.log" -w -t 60 -o "$(server_options "$2")" start >/dev/null \
    || { cat "$dir/$1.log" >&2; exit 1; }
}

case "$cmd" in
  start)
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    primary_port=$(free_port); replica_port=$(free_port); pooler_port=$(free_port)
    echo "$primary_port" >"$dir/primary.port"; echo "$replica_port" >"$dir/replica.port"; echo "$pooler_port" >"$dir/pooler.port"
    as_owner "$bin/initdb" -D "$dir/primary" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
    start_server primary "$primary_port"
    sql "$primary_port" "SELECT pg_create_physical_replication_slot('hub_replica')" >/dev/null
    as_owner "$bin/pg_basebackup" -h 127.0.0.1 -p "$primary_port" -U postgres -D "$dir/replica" -R -X stream -S hub_replica >"$dir/basebackup.log" 2>&1 \
      || { cat "$dir/basebackup.log" >&2; exit 1; }
    start_server replica "$replica_port"
    # Every database of the primary, pooled per transaction (the mode operators run).
    cat >"$dir/pgbouncer.ini" <<EOF
[databases]
* = host=127.0.0.1 port=$primary_port
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $pooler_port
unix_socket_dir =
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 20
server_login_retry = 1
pidfile = $dir/pgbouncer.pid
logfile = $dir/pgbouncer.log
admin_users = postgres
EOF
    echo '"postgres" ""' >"$dir/userlist.txt"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir/pgbouncer.ini" "$dir/userlist.txt"
    as_owner "$pgbouncer" -d "$dir/pgbouncer.ini" >"$dir/pgbouncer.start.log" 2>&1 \
      || { cat "$dir/pgbouncer.start.log" "$dir/pgbouncer.log" >&2 2>/dev/null; exit 1; }
    for _ in $(seq 50); do
      python3 -c "import socket; socket.create_connection(('127.0.0.1', $pooler_port), 0.2)" 2>/dev/null && break
      sleep 0.1
    done
    echo "PRIMARY_URL=postgres://postgres@127.0.0.1:$primary_port/postgres"
    echo "REPLICA_URL=postgres://postgres@127.0.0.1:$replica_port/postgres"
    echo "POOLER_URL=postgres://postgres@127.0.0.1:$pooler_port/postgres"
    ;;
  stop)
    if [ -f "$dir/pgbouncer.pid" ]; then kill "$(cat "$dir/pgbouncer.pid")" 2>/dev/null || true; fi
    for name in replica primary; do
      [ -f "$dir/$name/postmaster.pid" ] && as_owner "$bin/pg_ctl" -D "$dir/$name" -m immediate -w stop >/dev/null 2>&1 || true
    done
    ;;
  restart-primary)
    as_owner "$bin/pg_ctl" -D "$dir/primary" -l "$dir/primary.log" -m fast -w -t 60 restart >/dev/null \
      || { tail -n 20 "$dir/primary.log" >&2; exit 1; }
    ;;
  stop-replica)
    as_owner "$bin/pg_ctl" -D "$dir/replica" -m fast -w stop >/dev/null
    ;;
  start-replica)
    start_server replica "$(port_of replica)"
    ;;
  promote)
    # Let the replica replay everything the primary has acknowledged, so no committed
    # write is left behind; then the old primary goes away before the replica takes over.
    target=$(sql "$(port_of primary)" "SELECT pg_current_wal_lsn()")
    for _ in $(seq 100); do
      caught_up=$(sql "$(port_of replica)" "SELECT pg_last_wal_replay_lsn() >= '$target'::pg_lsn")
      [ "$caught_up" = t ] && break
      sleep 0.1
    done
    as_owner "$bin/pg_ctl" -D "$dir/primary" -m fast -w stop >/dev/null
    as_owner "$bin/pg_ctl" -D "$dir/replica" -w -t 60 promote >/dev/null
    ;;
  *) echo "usage: $0 start|stop|restart-primary|stop-replica|start-replica|promote DIR" >&2; exit 2 ;;
esac
