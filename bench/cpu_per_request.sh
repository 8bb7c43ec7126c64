#!/usr/bin/env bash
# CPU per request of one URL on several running Hub servers, side by side: for each
# server in turn, wrk with one connection for DURATION, and the CPU the server process
# used (utime + stime from /proc) and, with --pgdata, the CPU the PostgreSQL cluster's
# backends used, divided by the requests answered. Rounds are interleaved and the
# medians printed. CPU per request stays meaningful on a busy, shared machine where
# throughput does not (the load generator and other work take turns with the server).
#
# Usage: bench/cpu_per_request.sh [--rounds 3] [--duration 3s] [--connections 1] [--pgdata DIR]
#            URL_PATH NAME=PORT [NAME=PORT ...]
#   URL_PATH   e.g. '/v2/flat/ParkingStation/free/latest?limit=-1'
#   NAME=PORT  a server listening on 127.0.0.1:PORT (started with `--listen`)
#   --connections  wrk's connections (one thread each, at most 2): 8 is what
#              bench/backends.py loads with, where hand-offs between threads cost more
#   --pgdata   the data directory of the PostgreSQL cluster the servers use (its
#              postmaster.pid names the cluster; only its backends are counted)
# Prints per server: median requests/s at those connections, Hub µs/request, and
# PostgreSQL µs/request.
set -euo pipefail

rounds=3
duration=3s
connections=1
pgdata=
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --pgdata) pgdata=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || { sed -n '2,18p' "$0"; exit 2; }
[[ $connections =~ ^[1-9][0-9]*$ ]] || { echo "--connections takes a positive number" >&2; exit 2; }
threads=$((connections < 2 ? connections : 2))
command -v wrk >/dev/null || { echo "install wrk (apt-get install wrk)"; exit 1; }
path=$1
shift

ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
postgres_ticks() {
  [ -n "$pgdata" ] || { echo 0; return; }
  local total=0 p
  for p in $(pgrep -P "$(head -1 "$pgdata/postmaster.pid")"); do
    total=$((total + $(ticks "$p")))
  done
  echo "$total"
}
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

hz=$(getconf CLK_TCK)
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for round in $(seq 1 "$rounds"); do
  for spec in "$@"; do
    name=${spec%%=*}
    port=${spec#*=}
    pid=$(pgrep -f -- "--listen 127.0.0.1:$port" | head -1)
    [ -n "$pid" ] || { echo "no server with --listen 127.0.0.1:$port" >&2; exit 1; }
    url="http://127.0.0.1:$port$path"
    wrk -t"$threads" -c"$connections" -d1s "$url" >/dev/null
    h0=$(ticks "$pid")
    g0=$(postgres_ticks)
    out=$(wrk -t"$threads" -c"$connections" -d "$duration" "$url")
    h1=$(ticks "$pid")
    g1=$(postgres_ticks)
    n=$(awk '/requests in/ {print $1}' <<<"$out")
    rate=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    awk -v name="$name" -v r="$rate" -v n="$n" -v h=$((h1 - h0)) -v g=$((g1 - g0)) -v hz="$hz" \
      'BEGIN {printf "%s %s %.0f %.0f\n", name, r, h * 1e6 / hz / n, g * 1e6 / hz / n}' >>"$results"
  done
done
printf '%-24s %12s %14s %14s\n' server "req/s c=$connections" "Hub µs/req" "PG µs/req"
for spec in "$@"; do
  name=${spec%%=*}
  col() { awk -v name="$name" -v c="$1" '$1 == name {print $c}' "$results" | median; }
  printf '%-24s %12.0f %14s %14s\n' "$name" "$(col 2)" "$(col 3)" "$(col 4)"
done
echo "($rounds interleaved rounds of wrk -t$threads -c$connections -d $duration; medians)"
