#!/usr/bin/env bash
# Soak: a release `hub serve` on fresh demo data (loopback only) under a steady mixed load
# for MINUTES (default 10) at CONNECTIONS (default 16): ~30 URLs across the Content, Time
# Series, DATEX, utility and token APIs, hostile ones among them (deep `where`, long
# searchfilter, repeated types, wrong filters). Every 30 s it prints req/s, p50/p99, the
# 5xx count and the server's RSS; at the end the RSS at start, peak and end. A healthy
# run has zero 5xx and an RSS that stops growing.
# Usage: bench/soak.sh [--minutes N] [--connections N] [--slice SECONDS] [-- SERVE-FLAGS…]
# SOAK_DATA=DIR serves an existing data directory (e.g. a scale-10 store kept by
# bench/scaling.sh) instead of a fresh scale-1 demo; the server may write to it (use a
# copy of a shared store). HUB_BIN=PATH serves with another build (no cargo build).
set -euo pipefail
cd "$(dirname "$0")/.."

minutes=10
connections=16
slice=30
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --slice) slice=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }

hub=${HUB_BIN:-./target/release/hub}
[ -n "${HUB_BIN:-}" ] || cargo build --release -q -p hub
work=$(mktemp -d)
port=${SOAK_PORT:-18090}
base="http://127.0.0.1:$port"
if [ -n "${SOAK_DATA:-}" ]; then
  data=$SOAK_DATA
  serve_data=(--no-demo --data "$data")
else
  data=$work/data
  "$hub" demo --data "$data" >/dev/null
  serve_data=(--data "$data")
fi
HUB_LOG=warn "$hub" serve "${serve_data[@]}" --listen "127.0.0.1:$port" "$@" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do curl -fs "$base/health" >/dev/null && break; sleep 0.1; done

first_id() { curl -fs "$base$1" | python3 -c 'import json,sys; d=json.load(sys.stdin); print((d.get("Items") or d.get("data"))[0][sys.argv[1]])' "$2"; }
poi=$(first_id "/v1/HubActivityPoi?pagesize=1&pagenumber=37&fields=Id" Id)
acco=$(first_id "/v1/Accommodation?pagesize=1&pagenumber=5&fields=Id" Id)
station=$(first_id "/v2/flat/ParkingStation?limit=1&select=scode" scode)
deep_where=$(python3 -c 'print("and(" * 40 + "sname.eq.%22a%22" + ")" * 40)')
long_search=$(python3 -c 'print("x" * 1500)')
many_types=$(python3 -c 'print("&".join(["type=Accommodation"] * 300))')
week_ago=$(date -u -d '7 days ago' +%Y-%m-%dT%H:%M:%S)
now=$(date -u +%Y-%m-%dT%H:%M:%S)

cat >"$work/urls" <<URLS
/v1
/v1/HubActivityPoi
/v1/HubActivityPoi/$poi
/v1/HubActivityPoi?fields=Id,Detail.de.Title&language=de&pagenumber=3
/v1/HubActivityPoi?searchfilter=h%C3%BCtte
/v1/HubActivityPoi?tagfilter=and(hiking,summer)
/v1/HubActivityPoi?rawfilter=and(gt(GpsInfo.0.Altitude,500),like(Detail.de.Title,'a'))
/v1/HubActivityPoi?latitude=46.4983&longitude=11.3548&radius=10000
/v1/HubActivityPoi?pagesize=200&format=csv
/v1/Accommodation/$acco
/v1/Accommodation?pagesize=50&pagenumber=20
/v1/Event?seed=7&pagenumber=2
/v1/Find?term=alm&pagesize=5
/v1/Filter?type=Event&expression=gt(EventDate.0.PriceFrom,0)&pagesize=10
/v1/Distinct?type=HubActivityPoi&fields=_Meta.Source
/v1/GeoShapes?pagesize=5
/v1/Location?pagesize=5
/v2/flat/ParkingStation?limit=20
/v2/tree/EChargingStation?where=sactive.eq.true
/v2/flat/ParkingStation/*/latest?limit=50
/v2/flat/ParkingStation/free/$week_ago/$now?where=scode.eq.%22$station%22&limit=-1
/v2/flat/MeteoStation/*/latest
/datex/2/
/swagger/v1/swagger.json
/metrics
/v2/flat/TrafficSensor?where=$deep_where
/v1/HubActivityPoi?searchfilter=$long_search
/v1/Filter?$many_types&expression=eq(Active,true)
/v1/HubActivityPoi?rawfilter=eq(Active,
/v1/Accommodation?rawfilter=eq(Availability.0.PriceFrom,147)
/v1/HubActivityPoi?pagesize=5000
/v1/Nope
URLS
echo "soak: $(wc -l <"$work/urls") URLs, $connections connections, $minutes min in ${slice}s slices, $(nproc) cores"
rss() { awk '/VmRSS/ {print $2}' "/proc/$server/status"; }
start_rss=$(rss)
echo "RSS after start: $((start_rss / 1024)) MB"
printf '%6s %10s %9s %9s %6s %8s\n' time req/s p50 p99 5xx RSS
slices=$((minutes * 60 / slice))
total_5xx=0
for n in $(seq 1 "$slices"); do
  out=$(SOAK_URLS="$work/urls" wrk -t2 -c"$connections" -d"${slice}s" --latency -s bench/soak/rotate.lua "$base")
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1=="50%" {print $2}' <<<"$out")
  p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  errors=$(awk -F= '/^SOAK 5xx/ {print $2}' <<<"$out")
  total_5xx=$((total_5xx + errors))
  printf '%5ss %10s %9s %9s %6s %5s MB\n' "$((n * slice))" "$rps" "$p50" "$p99" "$errors" "$(($(rss) / 1024))"
done
echo "RSS start $((start_rss / 1024)) MB, peak $(($(awk '/VmHWM/ {print $2}' "/proc/$server/status") / 1024)) MB, end $(($(rss) / 1024)) MB; 5xx in total: $total_5xx"
