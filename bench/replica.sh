#!/usr/bin/env bash
# Read throughput on PostgreSQL topologies, side by side in one run (loopback only):
#   primary only | primary + streaming replica (--database-replica) |
#   through PgBouncer in transaction mode (--database-pooler transaction) + replica |
#   one and three `hub serve` processes on the primary behind the same nginx round-robin.
# Starts scripts/pg-topology.sh, loads the demo (scale N) into the primary, lets the
# replica catch up, then drives a release `hub serve` per topology with wrk
# (concurrency 8) and prints requests/s per workload and the ratio to primary only.
# On a 2-core machine the primary, the replica, PgBouncer, Hub and wrk share the same
# two cores, so a replica or more processes cannot add capacity here: the figures show
# what routing, the pooler and the proxy cost, not what another machine would add.
# Every server runs with its response cache off (--response-cache-bytes 0): repeated
# requests would otherwise be answered from memory and never reach the database.
# Usage: bench/replica.sh [--scale N] [--duration SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."

scale=1
duration=10
while [ $# -gt 0 ]; do
  case "$1" in
    --scale) scale=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }
command -v nginx >/dev/null || { echo "nginx is missing: apt-get install -y nginx" >&2; exit 1; }

cargo build --release -q -p hub
hub=./target/release/hub
root=$(mktemp -d)
chmod 755 "$root"
stop_server() {
  if [ "${nginx_up:-0}" = 1 ]; then nginx -p "$root/nginx" -c "$root/nginx/nginx.conf" -s stop 2>/dev/null || true; nginx_up=0; sleep 0.3; fi
  for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  servers=()
}
trap 'stop_server; scripts/pg-topology.sh stop "$root/t"; rm -rf "$root"' EXIT
urls=$(scripts/pg-topology.sh start "$root/t")
url_of() { echo "$urls" | sed -n "s/^$1=//p" | sed 's#/postgres$#/hub_bench#'; }
primary=$(url_of PRIMARY_URL); replica=$(url_of REPLICA_URL); pooler=$(url_of POOLER_URL)
admin=$(echo "$urls" | sed -n 's/^PRIMARY_URL=//p')
psql "$admin" -XAtqc "CREATE DATABASE hub_bench"
HUB_LOG=warn "$hub" demo --database "$primary" --scale "$scale" >/dev/null
# Let the replica replay the load before measuring.
target=$(psql "$admin" -XAtqc "SELECT pg_current_wal_insert_lsn()")
until [ "$(psql "$(echo "$urls" | sed -n 's/^REPLICA_URL=//p')" -XAtqc "SELECT pg_last_wal_replay_lsn() >= '$target'")" = t ]; do sleep 0.2; done

port=18090
base="http://127.0.0.1:$port"
servers=()
start_one() { # PORT ARGS...
  local p=$1; shift
  HUB_LOG=error "$hub" serve --no-demo --response-cache-bytes 0 --listen "127.0.0.1:$p" "$@" &
  servers+=($!)
  for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$p/health" >/dev/null && return; sleep 0.1; done
  echo "hub serve did not start" >&2; exit 1
}
start_server() { start_one "$port" "$@"; }
# N processes on ports port+1… behind nginx listening on $port (round-robin, keep-alive).
start_behind_nginx() { # N ARGS...
  local n=$1; shift
  local upstream=""
  for k in $(seq 1 "$n"); do
    start_one $((port + k)) "$@"
    upstream+="server 127.0.0.1:$((port + k));"
  done
  mkdir -p "$root/nginx"
  cat >"$root/nginx/nginx.conf" <<CONF
worker_processes 1;
pid $root/nginx/nginx.pid;
error_log $root/nginx/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  upstream hubs { $upstream keepalive 32; }
  server {
    listen 127.0.0.1:$port;
    location / { proxy_pass http://hubs; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
CONF
  nginx -p "$root/nginx" -c "$root/nginx/nginx.conf"
  nginx_up=1
  for _ in $(seq 1 100); do curl -fs "$base/health" >/dev/null && return; sleep 0.1; done
  echo "nginx did not start" >&2; exit 1
}
nginx_up=0

workloads=(
  "single GET by id|/v1/HubActivityPoi/ID"
  "list page 1 (pagesize 10)|/v1/HubActivityPoi"
  "list pagesize 100|/v1/HubActivityPoi?pagesize=100"
  "tagfilter=and(hiking,summer)|/v1/HubActivityPoi?tagfilter=and(hiking,summer)"
  "station list (Time Series API)|/v2/flat/ParkingStation"
)
declare -A rps
topologies=("primary only" "primary + replica" "PgBouncer (transaction) + replica" "1 process via nginx" "3 processes via nginx")
for topology in "${topologies[@]}"; do
  case "$topology" in
    "primary only") start_server --database "$primary" ;;
    "primary + replica") start_server --database "$primary" --database-replica "$replica" ;;
    "PgBouncer (transaction) + replica") start_server --database "$pooler" --database-pooler transaction --database-replica "$replica" ;;
    "1 process via nginx") start_behind_nginx 1 --database "$primary" ;;
    *) start_behind_nginx 3 --database "$primary" ;;
  esac
  id=$(curl -fs "$base/v1/HubActivityPoi?pagesize=1&pagenumber=37&fields=Id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Items"][0]["Id"])')
  for w in "${workloads[@]}"; do
    name=${w%%|*}; path=${w#*|}; path=${path//ID/$id}
    out=$(wrk -t2 -c8 -d"${duration}s" "$base$path")
    rps[$topology|$name]=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  done
  serving=$(curl -fs "$base/metrics" | awk '/^hub_postgres_replica_serving_reads/ {print $2}')
  [ -n "$serving" ] && echo "$topology: replica serving reads at the end: $serving"
  stop_server
done

echo "scale $scale, concurrency 8, ${duration}s per workload, $(nproc) cores (everything on this machine)"
printf '%-32s %14s %20s %8s %26s %8s\n' workload "primary only" "primary + replica" ratio "PgBouncer(tx) + replica" ratio
for w in "${workloads[@]}"; do
  name=${w%%|*}
  a=${rps[primary only|$name]}; b=${rps[primary + replica|$name]}; c=${rps[PgBouncer (transaction) + replica|$name]}
  printf '%-32s %10s r/s %16s r/s %8s %22s r/s %8s\n' "$name" "$a" "$b" \
    "$(python3 -c "print(f'{$b/$a:.2f}')")" "$c" "$(python3 -c "print(f'{$c/$a:.2f}')")"
done
echo
printf '%-32s %22s %22s %8s\n' workload "1 process via nginx" "3 processes via nginx" ratio
for w in "${workloads[@]}"; do
  name=${w%%|*}
  one=${rps[1 process via nginx|$name]}; three=${rps[3 processes via nginx|$name]}
  printf '%-32s %18s r/s %18s r/s %8s\n' "$name" "$one" "$three" "$(python3 -c "print(f'{$three/$one:.2f}')")"
done
