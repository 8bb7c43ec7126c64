#!/usr/bin/env bash
# CSV throughput and memory (issue 18, "CSV of 10,000 rows streamed at ≥ 50,000 rows/s
# with < 50 MB growth"): serves a store with a release build (loopback only) and
# downloads CSV lists with curl, RUNS times each after RUNS warm-up downloads; prints per
# workload the rows, the median time and rows/s, and the server's memory: VmRSS right
# after start, before the timed downloads, after them, and the peak (VmHWM). "growth" =
# peak − before: what downloading costs once SQLite's page caches (8 MiB per reader
# connection by default, see docs/deployment.md "Memory") are filled by the warm-up;
# "from start" = peak − start includes filling them. A fresh server per build and
# workload, so each peak is that workload's own. The same rows as one streamed JSON list
# are measured too: the store's read rate, which bounds the CSV's.
#
# Workloads: the whole dataset as one streamed CSV (`pagesize=-1&format=csv`) of Article
# (12,000 rows at scale 10) and HubActivityPoi (70,000 rows at scale 10), and the same
# Article rows read as CSV pages of 1,000 one after the other (the only way to read them
# as CSV before the stream; a build without it answers `pagesize=-1&format=csv` with 400,
# printed as such).
#
# Usage: bench/csv.sh [--data DIR | --database URL] [--before BINARY] [--runs N]
#   --data DIR       serve this data directory (e.g. a copy of a scale-10 store kept by
#                    bench/scaling.sh; the server may write to it) instead of a fresh
#                    scale-1 demo
#   --database URL   serve this PostgreSQL database instead (e.g. hub_scale_10 of the
#                    cluster bench/scaling.sh keeps)
#   --before BINARY  also measure another build (e.g. one of `main`), side by side
#   HUB_BIN=PATH     the build measured as "after" (default: this tree's release build)
set -euo pipefail
cd "$(dirname "$0")/.."

data=""
database=""
before=""
runs=5
while [ $# -gt 0 ]; do
  case "$1" in
    --data) data=$2; shift 2 ;;
    --database) database=$2; shift 2 ;;
    --before) before=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

after=${HUB_BIN:-./target/release/hub}
[ -n "${HUB_BIN:-}" ] || cargo build --release -q -p hub
port=${CSV_PORT:-18185}
base="http://127.0.0.1:$port"
work=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

if [ -n "$database" ]; then
  store=(--database "$database")
elif [ -z "$data" ]; then
  data=$work/data
  "$after" demo --data "$data" >/dev/null 2>&1
fi
[ -n "$database" ] || store=(--data "$data")

kib() { awk '/^'"$1"':/ {print $2}' "/proc/$server/status"; }

start() {
  HUB_LOG=error "$1" serve --no-demo "${store[@]}" --listen "127.0.0.1:$port" 2>/dev/null &
  server=$!
  for _ in $(seq 1 300); do curl -fs "$base/health" >/dev/null 2>&1 && return; sleep 0.1; done
  echo "the server did not start" >&2
  exit 1
}

stop() {
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  server=""
}

# Downloads every URL of the workload (one or several pages) into one file; prints the
# wall time in seconds, or "status N" when one answer is not a 200.
download() {
  local out=$1; shift
  : >"$out"
  local t0 t1 status
  t0=$(date +%s.%N)
  for url in "$@"; do
    status=$(curl -s -o "$out.part" -w '%{http_code}' "$base$url")
    if [ "$status" != 200 ]; then echo "status $status"; return; fi
    cat "$out.part" >>"$out"
  done
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}

# Data rows of the downloaded CSV (a page's header line is not a row).
rows_of() { python3 - "$1" "$2" <<'PY'
import csv, sys
with open(sys.argv[1], newline="", encoding="utf-8") as f:
    records = sum(1 for _ in csv.reader(f))
print(records - int(sys.argv[2]))
PY
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

pages() { # URLs of the CSV pages of 1,000 of an entity with N documents
  local entity=$1 total=$2 n
  for n in $(seq 1 $(((total + 999) / 1000))); do
    echo "/v1/$entity?pagesize=1000&pagenumber=$n&format=csv"
  done
}

measure() { # label binary urls…
  local label=$1 binary=$2; shift 2
  start "$binary"
  curl -fs "$base/v1/Article?pagesize=1" >/dev/null
  local start_kib warm
  start_kib=$(kib VmRSS)
  for _ in $(seq 1 "$runs"); do warm=$(download "$work/answer.csv" "$@"); done
  if [[ $warm == status* ]]; then
    printf '%-34s %s\n' "$label" "$warm"
    stop
    return
  fi
  local rows before_kib times=()
  case $1 in
    *format=csv*) rows=$(rows_of "$work/answer.csv" "$#") ;;
    *) rows=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["Items"]))' "$work/answer.csv") ;;
  esac
  before_kib=$(kib VmRSS)
  for _ in $(seq 1 "$runs"); do times+=("$(download "$work/answer.csv" "$@")"); done
  local after_kib hwm_kib med
  after_kib=$(kib VmRSS)
  hwm_kib=$(kib VmHWM)
  med=$(printf '%s\n' "${times[@]}" | median)
  printf '%-32s %6d rows %7.3f s %7.0f rows/s | RSS start %3d, before %3d, after %3d, peak %3d MB; growth %3d MB, from start %3d MB\n' \
    "$label" "$rows" "$med" "$(echo "$rows / $med" | bc -l)" \
    $((start_kib / 1024)) $((before_kib / 1024)) $((after_kib / 1024)) $((hwm_kib / 1024)) \
    $(((hwm_kib - before_kib) / 1024)) $(((hwm_kib - start_kib) / 1024))
  stop
}

start "$after"
# Exact totals (a page's total is an estimate above the exact-count limit).
total() { curl -fs "$base/v1/$1?pagesize=-1&fields=Id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["TotalResults"])'; }
articles=$(total Article)
pois=$(total HubActivityPoi)
stop
mapfile -t article_pages < <(pages Article "$articles")

echo "csv: $articles articles, $pois POIs, median of $runs downloads after $runs warm-up downloads, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for build in ${before:+before} after; do
  binary=$after
  [ "$build" = before ] && binary=$before
  echo "== $build: $binary"
  measure "Article pagesize=-1 CSV" "$binary" "/v1/Article?pagesize=-1&format=csv"
  measure "Article pagesize=-1 JSON" "$binary" "/v1/Article?pagesize=-1"
  measure "Article, CSV pages of 1,000" "$binary" "${article_pages[@]}"
  measure "HubActivityPoi pagesize=-1 CSV" "$binary" "/v1/HubActivityPoi?pagesize=-1&format=csv"
  measure "HubActivityPoi pagesize=-1 JSON" "$binary" "/v1/HubActivityPoi?pagesize=-1"
done
