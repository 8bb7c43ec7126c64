#!/usr/bin/env bash
# Instructions Hub executes per request, counted by valgrind (cachegrind, no cache
# simulation): a figure that does not move with the machine's load, for comparing two
# builds where CPU time per request (bench/cpu_per_request.sh) varies by ±10 % from run
# to run on a shared box. Each build serves the same store under valgrind twice: once
# for the warm-up requests, once for the warm-up and --requests more; the difference
# divided by --requests is what one request costs, without start-up and shutdown.
# Counts Hub's process only: PostgreSQL's own work is not in it (see
# bench/cpu_per_request.sh --pgdata). Requests are sequential (one client), so costs
# that come from cores sharing memory do not show either.
#
# Usage: bench/instructions.sh [--requests 200] [--warmup 20] [--port 8190]
#                              (--data DIR | --database URL) PATH NAME=HUB_BINARY...
#   PATH       the request, e.g. '/v2/flat/ParkingStation/free/latest?limit=-1'
#   --data     a SQLite store directory; --database a PostgreSQL URL (as `hub serve`)
# Needs valgrind (apt-get install valgrind) and curl.
set -euo pipefail

requests=200
warmup=20
port=8190
store=()
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in
    --requests) requests=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --data | --database) store=("$1" "$2"); shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[[ $requests =~ ^[1-9][0-9]*$ ]] || { echo "--requests takes a positive number" >&2; exit 2; }
[[ $warmup =~ ^[0-9]+$ ]] || { echo "--warmup takes a number" >&2; exit 2; }
[ ${#store[@]} -eq 2 ] || { echo "give --data DIR or --database URL" >&2; exit 2; }
[ $# -ge 2 ] || { echo "give a PATH and at least one NAME=HUB_BINARY" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "install valgrind (apt-get install valgrind)" >&2; exit 1; }
path=$1
shift

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Total instructions of one server run that answers `n` requests.
count() {
  local bin=$1 n=$2 out=$work/cachegrind.out
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$out" \
    "$bin" serve --listen "127.0.0.1:$port" "${store[@]}" --response-cache-bytes 0 \
    >"$work/serve.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 1200); do
    curl -sf -o /dev/null "http://127.0.0.1:$port/health" && break
    kill -0 "$pid" 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
    sleep 0.5
  done
  for _ in $(seq 1 "$n"); do
    curl -sf -o /dev/null "http://127.0.0.1:$port$path" || { echo "request failed: $path" >&2; kill "$pid"; exit 1; }
  done
  kill -INT "$pid"
  wait "$pid" || true
  awk '/^summary:/ {print $2}' "$out"
}

printf '%-24s %16s\n' build "instructions/req"
for spec in "$@"; do
  name=${spec%%=*}
  bin=${spec#*=}
  base=$(count "$bin" "$warmup")
  more=$(count "$bin" $((warmup + requests)))
  printf '%-24s %16d\n' "$name" $(((more - base) / requests))
done
echo "($requests sequential requests after $warmup, under valgrind --tool=cachegrind)"
