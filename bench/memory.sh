#!/usr/bin/env bash
# Memory benchmark for large answers (issue 13): starts a release `hub serve` on fresh
# demo data (loopback only), fires one kind of large request at a time at concurrency C
# (a fresh server per workload, so each peak is that workload's own) and prints, per
# workload, the status and size of one answer, the server's RSS when idle, its peak RSS
# (VmHWM) during the workload and its RSS afterwards, and the wall time.
#
# Usage: bench/memory.sh [--scale N] [--concurrency C] [--rounds R] [--before BINARY]
#   --before BINARY  also measure another build (for example one of `main`) on its own
#                    demo data, printed side by side with this tree's release build.
set -euo pipefail
cd "$(dirname "$0")/.."

scale=1
concurrency=8
rounds=2
before=""
while [ $# -gt 0 ]; do
  case "$1" in
    --scale) scale=$2; shift 2 ;;
    --concurrency) concurrency=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --before) before=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

cargo build --release -q -p hub
after=./target/release/hub
port=18181
base="http://127.0.0.1:$port"
work=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# A week of history ending now (the demo's series end at the time they are generated).
to=$(date -u +%Y-%m-%dT%H:%M:%S)
from=$(date -u -d '8 days ago' +%Y-%m-%dT%H:%M:%S)
workloads=(
  "history flat limit=-1, 1 week|/v2/flat/*/*/$from/$to?limit=-1"
  "history tree limit=-1, 1 week|/v2/tree/*/*/$from/$to?limit=-1"
  "CSV 1000 rows|/v1/HubActivityPoi?pagesize=1000&format=csv"
  "Distinct Id (every document)|/v1/Distinct?type=accommodation&fields=Id"
  "Distinct Features.[*].Name|/v1/Distinct?type=accommodation&fields=Features.%5B*%5D.Name"
  "whole dataset pagesize=-1|/v1/Accommodation?pagesize=-1"
  "largest page pagesize=1000|/v1/Accommodation?pagesize=1000"
)

kib() { awk '/^'"$1"':/ {print $2}' "/proc/$2/status"; }

start() {
  local binary=$1 data=$2
  HUB_LOG=error "$binary" serve --data "$data" --listen "127.0.0.1:$port" 2>/dev/null &
  server=$!
  for _ in $(seq 1 200); do curl -fs "$base/health" >/dev/null 2>&1 && return; sleep 0.1; done
  echo "the server did not start" >&2
  exit 1
}

stop() {
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  server=""
}

# measure BINARY DATA: one line per workload, `name|status|bytes|idle|peak|after|seconds`.
measure() {
  local binary=$1 data=$2 entry name path
  for entry in "${workloads[@]}"; do
    name=${entry%%|*}
    path=${entry#*|}
    start "$binary" "$data"
    local idle one t0 t1
    idle=$(kib VmRSS "$server")
    one=$(curl -s -o /dev/null -w '%{http_code}|%{size_download}' "$base$path")
    t0=$(date +%s.%N)
    seq 1 $((concurrency * rounds)) |
      xargs -P "$concurrency" -I{} curl -s -o /dev/null "$base$path"
    t1=$(date +%s.%N)
    echo "$name|$one|$idle|$(kib VmHWM "$server")|$(kib VmRSS "$server")|$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')"
    stop
  done
}

demo() {
  local binary=$1 data=$2
  "$binary" demo --data "$data" --scale "$scale" >/dev/null 2>&1
}

echo "scale $scale, concurrency $concurrency, $((concurrency * rounds)) requests per workload, $(nproc) cores"
echo "RSS in MiB: idle before the workload, peak (VmHWM) during it, after it; size of one answer"
mkdir -p "$work/after"
demo "$after" "$work/after"
results_after=$(measure "$after" "$work/after")
results_before=""
if [ -n "$before" ]; then
  mkdir -p "$work/before"
  demo "$before" "$work/before"
  results_before=$(measure "$before" "$work/before")
fi

mib() { awk -v k="$1" 'BEGIN {printf "%.0f", k / 1024}'; }
row() {
  IFS='|' read -r name status bytes idle peak rss secs <<<"$1"
  printf '%-8s %-34s %3s %12s B  idle %5s  peak %5s  after %5s  %6.1f s\n' \
    "$2" "$name" "$status" "$bytes" "$(mib "$idle")" "$(mib "$peak")" "$(mib "$rss")" "$secs"
}
i=0
while IFS= read -r line; do
  i=$((i + 1))
  if [ -n "$results_before" ]; then
    row "$(sed -n "${i}p" <<<"$results_before")" before
  fi
  row "$line" after
done <<<"$results_after"
