#!/usr/bin/env bash
# Content API benchmark: starts a release `hub serve` on fresh demo data (loopback only),
# drives it with wrk at concurrency 8 and prints requests/s, p50 and p99 per workload,
# then the server's peak RSS. Usage: bench/content.sh [--scale N] [--duration SECONDS]
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

cargo build --release -q -p hub
data=$(mktemp -d)
port=18080
base="http://127.0.0.1:$port"
./target/release/hub demo --data "$data" --scale "$scale"
HUB_LOG=warn ./target/release/hub serve --data "$data" --listen "127.0.0.1:$port" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 1 100); do curl -fs "$base/health" >/dev/null && break; sleep 0.1; done

# A real id for the single-GET workload.
id=$(curl -fs "$base/v1/HubActivityPoi?pagesize=1&pagenumber=37&fields=Id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Items"][0]["Id"])')

run() {
  local name=$1 path=$2
  local out
  out=$(wrk -t2 -c8 -d"${duration}s" --latency "$base$path")
  local rps p50 p99
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1=="50%" {print $2}' <<<"$out")
  p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  printf '%-34s %10s req/s   p50 %8s   p99 %8s\n' "$name" "$rps" "$p50" "$p99"
}

echo "scale $scale, concurrency 8, ${duration}s per workload, $(nproc) cores"
run "single GET by id" "/v1/HubActivityPoi/$id"
run "list page 1 (pagesize 10)" "/v1/HubActivityPoi"
run "list pagesize 100" "/v1/HubActivityPoi?pagesize=100"
run "list pagesize 100, ODH naming" "/v1/ODHActivityPoi?pagesize=100"
run "single GET by id, ODH naming" "/v1/ODHActivityPoi/$id"
run "list fields=Id,Detail.de.Title" "/v1/HubActivityPoi?fields=Id,Detail.de.Title"
run "searchfilter=hütte" "/v1/HubActivityPoi?searchfilter=h%C3%BCtte"
run "tagfilter=and(hiking,summer)" "/v1/HubActivityPoi?tagfilter=and(hiking,summer)"
run "rawfilter 3 clauses (non-indexed)" "/v1/HubActivityPoi?rawfilter=and(gt(GpsInfo.0.Altitude,500),like(Detail.de.Title,'a'),isnotnull(ContactInfos.de.City))"
run "CSV 1000 rows" "/v1/HubActivityPoi?pagesize=1000&format=csv"
run "radius 10 km, distance order" "/v1/HubActivityPoi?latitude=46.4983&longitude=11.3548&radius=10000"
run "radius default 150 km, page 5" "/v1/HubActivityPoi?latitude=46.4983&longitude=11.3548&pagenumber=5"
run "polygon WKT (Bolzano basin)" "/v1/HubActivityPoi?polygon=POLYGON((11.2%2046.4,11.5%2046.4,11.5%2046.6,11.2%2046.6,11.2%2046.4))"
run "polygon GeoShape reference" "/v1/HubActivityPoi?polygon=IT.region.$(curl -fs "$base/v1/GeoShapes?type=region&pagesize=1&fields=Name" | python3 -c 'import json,sys,urllib.parse; print(urllib.parse.quote(json.load(sys.stdin)["Items"][0]["Name"]))')"
echo "server peak RSS: $(awk '/VmHWM/ {print $2, $3}' /proc/$server/status)"
