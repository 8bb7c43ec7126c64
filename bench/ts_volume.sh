#!/usr/bin/env bash
# Time Series at Open Data Hub volume (issue 18, target 5), release build, 127.0.0.1 only.
#
#   bench/ts_volume.sh                      both backends, the 50 M set
#   BACKENDS=sqlite bench/ts_volume.sh      one backend
#
# Generates the volume set once per backend (example `ts_volume_load`: 1,000 meteo
# stations x 5 data types = 5,000 series x 10,000 points every 53 minutes = 50 M
# measurements over 368 days, through the store's push path, among 300 provenances
# of which the set's values name 8, one after another) and keeps it:
#   TSVOL_DATA=DIR     where the SQLite store, the throwaway PostgreSQL cluster and the
#                      load figures live (default target/ts-volume; ~2 GB SQLite, ~9 GB PG)
#   TSVOL_PG_URL=URL   an admin URL of a running PostgreSQL server to use instead of a
#                      throwaway cluster in TSVOL_DATA/pg (database `hub_volume` is made)
#   TSVOL_ARGS="points=100 …"  a smaller set (keys of the example), e.g. to try the script
#   HUB_BIN=PATH       serve with another binary (before/after figures over the same set)
#   LOADER_BIN=PATH    load and ingest with another build of the example (before/after
#                      ingestion figures; nothing is built when both are given)
#   DURATION=10s       per request-rate workload (wrk -t2 -c8 after a 1 s warm-up, then
#                      wrk -c1 for the latency of a request alone)
#   INGEST_SECONDS=30  how long the ingestion-while-reading phase should last (about)
#   INGEST_WRITERS=N   that ingestion with N concurrent writers, each pushing its share of
#                      the stations (default: one push at a time, as builds before had)
# Prints per backend: the load (records, seconds, records/s; printed again from the kept
# figures on later runs), req/s + p50 + p99 of latest for 1,000 stations and of one series
# over 7 days, rows/s of streamed year answers (median of 3 curl runs), and records/s
# of a second ingestion (new stations of type EnvironmentStation, so the reads above are
# unchanged) while wrk reads the 7-day series and latest values in parallel, and the
# latest reads again after 245,000 series of 49 other station types were added. Those
# phases' stations and rows are removed again after them (and any left by an
# interrupted run before the reads), so every run reads the same set.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${TSVOL_DATA:-target/ts-volume}"
BACKENDS="${BACKENDS:-sqlite,postgres}"
DURATION="${DURATION:-10s}"
INGEST_SECONDS="${INGEST_SECONDS:-30}"
PORT="${HUB_BENCH_PORT:-18095}"
TARGET="${CARGO_TARGET_DIR:-target}"
read -r -a SET_ARGS <<<"${TSVOL_ARGS:-}"
command -v wrk >/dev/null || { echo "install wrk (apt-get install wrk)"; exit 1; }
mkdir -p "$DATA"

LOADER="${LOADER_BIN:-$TARGET/release/examples/ts_volume_load}"
[ -n "${LOADER_BIN:-}" ] || cargo build --release -p hub-timeseries --example ts_volume_load
HUB="${HUB_BIN:-$TARGET/release/hub}"
[ -n "${HUB_BIN:-}" ] || cargo build --release -p hub

PG_STARTED=""
SERVER=""
cleanup() {
  [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null || true
  [ -n "$PG_STARTED" ] && scripts/pg-throwaway.sh stop "$DATA/pg" >/dev/null 2>&1 || true
}
trap cleanup EXIT

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# wrk on one URL, 8 connections then 1: "req/s p50 p99 | c1: p50".
rate() {
  local c8 c1
  wrk -t2 -c8 -d1s "$1" >/dev/null 2>&1 || true
  c8=$(wrk -t2 -c8 -d "$DURATION" --timeout 30s --latency "$1" |
    awk '/Requests\/sec/ {r=$2} /^ +50%/ {p50=$2} /^ +99%/ {p99=$2} END {printf "%8.0f req/s  p50 %-9s p99 %-9s", r, p50, p99}')
  c1=$(wrk -t1 -c1 -d "$DURATION" --timeout 30s --latency "$1" | awk '/^ +50%/ {print $2}')
  echo "$c8 | one connection: p50 $c1"
}

# Streams URL three times: "rows  median seconds  rows/s" (rows counted in the body).
stream() {
  local rows secs
  rows=$(curl -sf "$1" | grep -o '"mvalidtime"' | wc -l)
  secs=$(for _ in 1 2 3; do curl -sf -o /dev/null -w '%{time_total}\n' "$1"; done | median)
  awk -v r="$rows" -v s="$secs" 'BEGIN {printf "%9d rows  median %.3f s  %10.0f rows/s\n", r, s, r / s}'
}

# SQL removing the stations of the phases after the reads with their series, latest
# values, history and metadata, so every run measures the loaded set: the ingestion's
# (type EnvironmentStation, codes "I…") and the other station types' (codes "K…").
ADDED="(SELECT id FROM ts_station WHERE (stationtype = 'EnvironmentStation' AND stationcode LIKE 'I%') OR (stationtype LIKE 'Other%' AND stationcode LIKE 'K%'))"
REMOVE_ADDED="BEGIN;
DELETE FROM ts_history WHERE series_id IN (SELECT id FROM ts_series WHERE station_id IN $ADDED);
DELETE FROM ts_latest WHERE series_id IN (SELECT id FROM ts_series WHERE station_id IN $ADDED);
DELETE FROM ts_series WHERE station_id IN $ADDED;
UPDATE ts_station SET meta_data_id = NULL WHERE id IN $ADDED;
DELETE FROM ts_metadata WHERE station_id IN $ADDED;
DELETE FROM ts_station WHERE id IN $ADDED;
COMMIT;"

# Removes the rows those phases added (the server is stopped: its response cache never
# sees rows change underneath it).
remove_added() {
  case "$1" in
    sqlite) sqlite3 "$DATA/sqlite/hub.sqlite3" "PRAGMA busy_timeout = 60000; $REMOVE_ADDED" >/dev/null ;;
    # VACUUM: the removed rows' space is reused and the planner's statistics describe
    # the set again, so a second run reads the tables the first one did. Without it
    # the database grew from 4.8 to 6.3 GB between two runs, and latest values for
    # 1,000 stations fell from 657 to 466 req/s; after a VACUUM, 684 (the same build).
    postgres) psql -q "$2" -v ON_ERROR_STOP=1 -c "$REMOVE_ADDED" -c "VACUUM (ANALYZE)" >/dev/null ;;
  esac
}

run_backend() {
  local backend=$1 serve_args=() env_db=()
  case "$backend" in
    sqlite)
      mkdir -p "$DATA/sqlite"
      serve_args=(--data "$DATA/sqlite")
      ;;
    postgres)
      local admin=${TSVOL_PG_URL:-}
      if [ -z "$admin" ]; then
        admin=$(scripts/pg-throwaway.sh start "$DATA/pg")
        PG_STARTED=1
      fi
      local db
      db=$(python3 -c 'import sys; u=sys.argv[1]; b,_,q=u.partition("?"); s=b.index("://")+3; h=b[s:].split("/")[0]; print(b[:s]+h+"/hub_volume"+("?"+q if q else ""))' "$admin")
      psql -q "$admin" -tAc "SELECT 1 FROM pg_database WHERE datname = 'hub_volume'" | grep -q 1 ||
        psql -q "$admin" -c "CREATE DATABASE hub_volume TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'"
      env_db=(HUB_DATABASE="$db")
      serve_args=(--data "$DATA/postgres-keys" --database "$db")
      ;;
  esac
  echo "=== $backend"
  local figures="$DATA/$backend.load"
  if [ ! -s "$figures" ]; then
    echo "   generating the volume set (once; kept in $DATA)"
    local where=-
    [ "$backend" = sqlite ] && where="$DATA/sqlite"
    env "${env_db[@]}" "$LOADER" "$where" "${SET_ARGS[@]}" >"$figures.tmp"
    mv "$figures.tmp" "$figures"
  fi
  echo "== load: $(cat "$figures")"
  if [ "$backend" = postgres ]; then
    psql -q "${db}" -tAc "SELECT 'history partitions: ' || count(*) || ', ' || pg_size_pretty(pg_database_size(current_database())) FROM pg_inherits WHERE inhparent = 'ts_history'::regclass"
  else
    echo "history file: $(du -sh "$DATA/sqlite" | cut -f1)"
  fi

  remove_added "$backend" "${db:-}"
  "$HUB" serve --no-demo --listen "127.0.0.1:$PORT" "${serve_args[@]}" >"$DATA/serve-$backend.log" 2>&1 &
  SERVER=$!
  local base="http://127.0.0.1:$PORT/v2"
  for _ in $(seq 1 600); do curl -sf "$base" >/dev/null && break; sleep 0.2; done
  # The set's newest time: the 7-day and 1-year windows end there, whenever the set was made.
  local from7 from365 to
  read -r from7 from365 to < <(curl -sf "$base/flat/MeteoStation/air-temperature/latest?where=scode.eq.%22VOL00000%22&select=mvalidtime" |
    python3 -c '
import datetime, json, sys
last = datetime.datetime.strptime(json.load(sys.stdin)["data"][0]["mvalidtime"][:19], "%Y-%m-%d %H:%M:%S")
f = lambda t: t.strftime("%Y-%m-%dT%H:%M:%S")
print(f(last - datetime.timedelta(days=7)), f(last - datetime.timedelta(days=366)), f(last + datetime.timedelta(minutes=1)))')
  local latest="$base/flat/MeteoStation/air-temperature/latest?limit=-1"
  local latest_all="$base/flat/MeteoStation/*/latest?limit=-1"
  local week="$base/flat/MeteoStation/air-temperature/$from7/$to?where=scode.eq.%22VOL00001%22&limit=-1"
  local year="$base/flat/MeteoStation/air-temperature/$from365/$to?where=scode.eq.%22VOL00001%22&limit=-1"
  local year100="$base/flat/MeteoStation/air-temperature/$from365/$to?where=scode.re.%22VOL000%5B0-9%5D%5B0-9%5D%22&limit=-1"

  echo "== latest, 1,000 stations (air-temperature): $(curl -sf "$latest" | grep -o '"mvalidtime"' | wc -l) rows"
  echo "   $(rate "$latest")"
  echo "== latest, 1,000 stations x all open types: $(curl -sf "$latest_all" | grep -o '"mvalidtime"' | wc -l) rows"
  echo "   $(rate "$latest_all")"
  echo "== one series over 7 days: $(curl -sf "$week" | grep -o '"mvalidtime"' | wc -l) rows"
  echo "   $(rate "$week")"
  echo "== one series over 1 year, limit=-1 (streamed)"
  echo "   $(stream "$year")"
  echo "== one series over 1 year, limit=-1, select=mvalidtime,mvalue (streamed)"
  echo "   $(stream "$year&select=mvalidtime,mvalue")"
  echo "== 100 series over 1 year, limit=-1 (streamed)"
  echo "   $(stream "$year100")"
  echo "== 100 series over 1 year, limit=-1, select=scode,mvalidtime,mvalue (streamed)"
  echo "   $(stream "$year100&select=scode,mvalidtime,mvalue")"

  # Ingestion while reads run: about INGEST_SECONDS of new records at the load's rate,
  # with two wrk (-c4 each) reading the 7-day series and the latest values meanwhile in
  # 5 s rounds; their p50s are printed per round.
  local rate_load points
  rate_load=$(sed -n 's/.*records_per_s=\([0-9]*\).*/\1/p' "$figures")
  points=$(( rate_load * INGEST_SECONDS / 5000 ))
  [ "$points" -ge 100 ] || points=100
  echo "== ingestion while reading: 1,000 new stations x 5 types x $points points${INGEST_WRITERS:+, $INGEST_WRITERS writers}"
  local where=-
  [ "$backend" = sqlite ] && where="$DATA/sqlite"
  local writers=()
  [ -n "${INGEST_WRITERS:-}" ] && writers=("writers=$INGEST_WRITERS")
  env "${env_db[@]}" "$LOADER" "$where" type=EnvironmentStation "prefix=I$(date +%s)" "points=$points" statistics=0 "${writers[@]}" \
    >"$DATA/ingest-$backend.txt" 2>/dev/null &
  local loader=$!
  local round=0
  while kill -0 "$loader" 2>/dev/null; do
    round=$((round + 1))
    wrk -t1 -c4 -d5s --timeout 30s --latency "$week" >"$DATA/ingest-week.txt" 2>&1 &
    local w1=$!
    wrk -t1 -c4 -d5s --timeout 30s --latency "$latest" >"$DATA/ingest-latest.txt" 2>&1 &
    wait "$w1" $!
    echo "   reads, round $round: 7-day series $(awk '/Requests\/sec/ {r=$2} /^ +50%/ {p=$2} END {printf "%.0f req/s p50 %s", r, p}' "$DATA/ingest-week.txt"), latest $(awk '/Requests\/sec/ {r=$2} /^ +50%/ {p=$2} END {printf "%.0f req/s p50 %s", r, p}' "$DATA/ingest-latest.txt")"
  done
  wait "$loader"
  echo "   ingestion: $(cat "$DATA/ingest-$backend.txt")"

  # Latest values among many series: 49 more station types of 1,000 stations x 5 data
  # types (two points each; 245,000 series next to the set's 5,000), about the spread of
  # station types the public ODH serves. An answer must cost what it holds, not what is
  # stored: the same 1,000 stations are read again.
  echo "== latest among 250,000 series (49 more station types added)"
  local k
  for k in $(seq -w 1 49); do
    env "${env_db[@]}" "$LOADER" "$where" "type=Other$k" "prefix=K$k" stations=1000 types=5 points=2 \
      "statistics=$([ "$k" = 49 ] && echo 1 || echo 0)" >/dev/null 2>&1
  done
  # A server takes statistics another process refreshed at its hourly upkeep; the
  # restart stands for that hour, so the figures are those of current statistics.
  kill "$SERVER"
  wait "$SERVER" 2>/dev/null || true
  "$HUB" serve --no-demo --listen "127.0.0.1:$PORT" "${serve_args[@]}" >>"$DATA/serve-$backend.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 1 600); do curl -sf "$base" >/dev/null && break; sleep 0.2; done
  echo "   latest, 1,000 stations: $(rate "$latest")"
  echo "   latest, 1,000 stations x all open types: $(rate "$latest_all")"
  echo "   stations of the type: $(rate "$base/flat/MeteoStation?limit=-1")"

  kill "$SERVER"
  wait "$SERVER" 2>/dev/null || true
  SERVER=""
  remove_added "$backend" "${db:-}"
  if [ -n "$PG_STARTED" ]; then
    scripts/pg-throwaway.sh stop "$DATA/pg" >/dev/null
    PG_STARTED=""
  fi
}

IFS=, read -r -a list <<<"$BACKENDS"
for b in "${list[@]}"; do run_backend "$b"; done
