#!/usr/bin/env bash
# SQLite cache/mmap settings side by side: one release `hub serve` per setting on copies
# of the same demo store (loopback only), wrk runs interleaved across them (REPEAT rounds),
# then per setting the median req/s of each workload and the server's RSS after the load.
# Usage: bench/sqlite_tuning.sh [--duration SECONDS] [--repeat N] CACHE_MIB/MMAP_MIB…
# (default settings: 32/256 16/0 8/32)
set -euo pipefail
cd "$(dirname "$0")/.."
duration=4
repeat=3
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    *) break ;;
  esac
done
settings=("$@")
[ ${#settings[@]} -gt 0 ] || settings=(32/256 16/0 8/32)
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }

cargo build --release -q -p hub
work=$(mktemp -d)
./target/release/hub demo --data "$work/seed" >/dev/null
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
for i in "${!settings[@]}"; do
  cache=${settings[$i]%/*}; mmap=${settings[$i]#*/}
  cp -r "$work/seed" "$work/s$i"
  HUB_LOG=warn ./target/release/hub serve --data "$work/s$i" --listen "127.0.0.1:$((18100 + i))" \
    --sqlite-cache-mib "$cache" --sqlite-mmap-mib "$mmap" &
  pids+=($!)
done
for i in "${!settings[@]}"; do
  for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$((18100 + i))/health" >/dev/null && break; sleep 0.1; done
done
id=$(curl -fs "http://127.0.0.1:18100/v1/HubActivityPoi?pagesize=1&pagenumber=37&fields=Id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Items"][0]["Id"])')
workloads=(
  "single GET|/v1/HubActivityPoi/$id"
  "list page 1|/v1/HubActivityPoi"
  "searchfilter=hütte|/v1/HubActivityPoi?searchfilter=h%C3%BCtte"
  "rawfilter 3 clauses|/v1/HubActivityPoi?rawfilter=and(gt(GpsInfo.0.Altitude,500),like(Detail.de.Title,'a'),isnotnull(ContactInfos.de.City))"
  "deep page|/v1/Accommodation?pagesize=10&pagenumber=300"
  "7-day series|/v2/flat/ParkingStation/free/$(date -u -d '7 days ago' +%Y-%m-%d)/$(date -u +%Y-%m-%d)?limit=1000"
)
declare -A results
for round in $(seq 1 "$repeat"); do
  for w in "${workloads[@]}"; do
    for i in "${!settings[@]}"; do
      rps=$(wrk -t2 -c8 -d"${duration}s" "http://127.0.0.1:$((18100 + i))${w#*|}" | awk '/Requests\/sec/ {print $2}')
      results["$i|${w%%|*}"]+="$rps "
    done
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
printf '%-22s' "cache/mmap MiB →"; for s in "${settings[@]}"; do printf '%14s' "$s"; done; echo
for w in "${workloads[@]}"; do
  printf '%-22s' "${w%%|*}"
  for i in "${!settings[@]}"; do printf '%14s' "$(median <<<"${results["$i|${w%%|*}"]}")"; done; echo
done
printf '%-22s' "RSS after, MB"
for i in "${!settings[@]}"; do printf '%14s' "$(($(awk '/VmRSS/ {print $2}' "/proc/${pids[$i]}/status") / 1024))"; done; echo
echo "(req/s medians of $repeat interleaved ${duration}s wrk runs, -t2 -c8; $(nproc) cores)"
