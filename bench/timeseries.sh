#!/usr/bin/env bash
# Time Series API benchmarks on demo data (release build, 127.0.0.1 only).
#
#   bench/timeseries.sh [SCALE] [DURATION]      defaults: 10, 10s
#
# Needs `oha` (cargo install oha) or `wrk` (apt-get install wrk). Loads the demo data
# with scale SCALE into a data directory (reused when it exists), serves the Time Series
# router alone (example `ts_bench_server`, so the figures do not depend on the binary's
# wiring), and prints req/s, p50 and p99 per scenario. Then runs the ingestion
# benchmark (records/s through the writer endpoint).
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE="${1:-10}"
DURATION="${2:-10s}"
PORT="${HUB_BENCH_PORT:-18089}"
DATA="${HUB_BENCH_DATA:-target/bench-ts-data-$SCALE}"
BASE="http://127.0.0.1:$PORT/v2"

TARGET="${CARGO_TARGET_DIR:-target}"
cargo build --release -p hub-timeseries --example ts_ingest_bench --example ts_bench_server
"$TARGET/release/examples/ts_bench_server" "$DATA" "$PORT" "$SCALE" &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
for _ in $(seq 1 3000); do curl -sf "$BASE" >/dev/null && break; sleep 0.2; done

TO=$(date -u +%Y-%m-%dT%H:%M)
FROM=$(date -u -d '7 days ago' +%Y-%m-%dT%H:%M)
declare -a NAMES URLS
NAMES+=("latest, all ParkingStation (1,000 x 2 series at scale 10), flat"); URLS+=("$BASE/flat/ParkingStation/free,occupied/latest?limit=-1")
NAMES+=("one series over 7 days, flat");  URLS+=("$BASE/flat/ParkingStation/free/$FROM/$TO?where=scode.eq.%22P0001%22&limit=-1")
NAMES+=("one series over 7 days, tree");  URLS+=("$BASE/tree/ParkingStation/free/$FROM/$TO?where=scode.eq.%22P0001%22&limit=-1")
NAMES+=("where mvalue + bounding box, latest"); URLS+=("$BASE/flat/ParkingStation/free/latest?limit=-1&where=mvalue.gt.100,scoordinate.bbi.(11.3,46.45,11.4,46.55)")

for i in "${!URLS[@]}"; do
  echo "== ${NAMES[$i]}"
  echo "   ${URLS[$i]}"
  if command -v oha >/dev/null; then
    oha -z "$DURATION" -c 4 --no-tui "${URLS[$i]}" | grep -E "Requests/sec|50.00%|99.00%|Success rate"
  elif command -v wrk >/dev/null; then
    wrk -t2 -c4 -d "$DURATION" --latency "${URLS[$i]}" | grep -E "Requests/sec|50%|99%"
  else
    echo "   install oha or wrk"; exit 1
  fi
done
echo "== ingestion"
"$TARGET/release/examples/ts_ingest_bench"
