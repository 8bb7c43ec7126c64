#!/usr/bin/env bash
# Growth with data size: the same release `hub serve` on demo scale 1 and on scale 10
# (≈ 23,500 and ≈ 235,000 documents), loopback only, driven by wrk (-t2 -c8) per
# workload; prints req/s and p50 on both scales and the growth factor
# (p50 at scale 10 / p50 at scale 1). Servers run one after the other, never together.
# The response cache is off (`--response-cache-bytes 0`): the figures are the cost of
# answering, not of replaying an answer. Per scale it also prints the time from start to
# the first answer of a restarted server over the kept store, each workload's first
# request (before any warm-up: nothing of it kept yet, e.g. no list total), and the
# server's resident memory after the run (VmRSS, and its peak VmHWM).
#
# Usage: bench/scaling.sh [--duration SECONDS] [--scales "1 10"] [--rounds N]
# With --rounds N every backend and scale is served N times in turn (1, 10, 1, 10, …) and
# the medians are printed: on a shared machine a single run mostly measures the load of
# the moment.
# Environment:
#   BACKENDS=sqlite,postgres   also PostgreSQL (a throwaway cluster, scripts/pg-throwaway.sh)
#   SCALING_DATA=DIR           keep the demo stores (and the cluster) in DIR and reuse them on
#                              the next run: the scale-10 load takes minutes, a rerun seconds
#   HUB_BIN=PATH               serve with this binary instead of building target/release/hub
#   SCALING_PORT=N             loopback port of the servers (default 18090)
#   SCALING_PG_URL=URL         with BACKENDS=…postgres: an admin URL of a running cluster to
#                              load into and read from (left running) instead of starting one
#                              (for before/after figures over the same stores)
set -euo pipefail
cd "$(dirname "$0")/.."

duration=5
scales="1 10"
rounds=1
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --scales) scales=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
backends=${BACKENDS:-sqlite}
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }
if [ -z "${HUB_BIN:-}" ]; then
  CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-1} cargo build --release -q -p hub
  HUB_BIN=./target/release/hub
fi

if [ -n "${SCALING_DATA:-}" ]; then
  work=$SCALING_DATA
  mkdir -p "$work"
  keep=1
else
  work=$(mktemp -d)
  keep=0
fi
port=${SCALING_PORT:-18090}
base="http://127.0.0.1:$port"
server=""
pg_dir=""
cleanup() {
  [ -n "$server" ] && { kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true; }
  [ -n "$pg_dir" ] && [ -z "${SCALING_PG_URL:-}" ] && scripts/pg-throwaway.sh stop "$pg_dir"
  [ "$keep" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT

pg_url=""
if [[ ",$backends," == *",postgres,"* ]]; then
  command -v psql >/dev/null || { echo "psql is missing: apt-get install -y postgresql-client" >&2; exit 1; }
  # Outside a private temporary directory: the cluster runs as the postgres user when we are root.
  if [ -n "${SCALING_PG_URL:-}" ]; then
    pg_url=$SCALING_PG_URL
    pg_dir="$work/pg"  # the loaded-database markers; the cluster is not ours to stop
    mkdir -p "$pg_dir"
  else
    pg_dir="$work/pg"
    [ "$keep" = 1 ] || pg_dir=$(mktemp -d)
    pg_url=$(scripts/pg-throwaway.sh start "$pg_dir")
  fi
fi

# Loads the demo at $2 into backend $1 once (a marker file says it is complete) and
# prints the store arguments for `hub serve`.
store_args() {
  local backend=$1 scale=$2
  if [ "$backend" = sqlite ]; then
    if [ ! -f "$work/sqlite-$scale.loaded" ]; then
      rm -rf "$work/sqlite-$scale"
      local t=$SECONDS
      HUB_LOG=warn "$HUB_BIN" demo --data "$work/sqlite-$scale" --scale "$scale" >/dev/null
      echo "  (sqlite scale $scale demo loaded in $((SECONDS - t)) s)" >&2
      touch "$work/sqlite-$scale.loaded"
    fi
    echo "--data $work/sqlite-$scale"
  else
    local db="hub_scale_$scale" url="${pg_url%/*}/hub_scale_$scale"
    if [ ! -f "$pg_dir/hub_scale_$scale.loaded" ]; then
      psql "$pg_url" -X -q -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db TEMPLATE template0 ENCODING 'UTF8'"
      local t=$SECONDS
      HUB_LOG=warn "$HUB_BIN" demo --database "$url" --scale "$scale" >/dev/null
      echo "  (postgres scale $scale demo loaded in $((SECONDS - t)) s)" >&2
      touch "$pg_dir/hub_scale_$scale.loaded"
    fi
    echo "--database $url"
  fi
}

# wrk's latency figures in milliseconds.
to_ms() {
  awk '{v=$1; if (v ~ /us$/) {sub(/us$/,"",v); print v/1000} else if (v ~ /ms$/) {sub(/ms$/,"",v); print v+0} else if (v ~ /s$/) {sub(/s$/,"",v); print v*1000} else print v}'
}

# The median of the numbers given.
median() {
  printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2] + v[NR/2+1]) / 2}'
}

declare -A rps p50 first_ms startup rss
names=()
for round in $(seq 1 "$rounds"); do
for backend in ${backends//,/ }; do
  for scale in $scales; do
    args=$(store_args "$backend" "$scale")
    # The first start of a new build may migrate the kept stores (minutes at scale 10);
    # the second start is the one timed.
    for start in first timed; do
      t0=$(date +%s%N)
      # shellcheck disable=SC2086
      HUB_LOG=warn "$HUB_BIN" serve --no-demo --response-cache-bytes 0 --listen "127.0.0.1:$port" $args &
      server=$!
      for _ in $(seq 1 30000); do curl -fs "$base/health" >/dev/null && break; sleep 0.01; done
      curl -fs "$base/v1/HubActivityPoi?pagesize=1" >/dev/null || { echo "hub serve ($backend, scale $scale) did not come up" >&2; exit 1; }
      startup["$backend|$scale|$round"]=$(( ($(date +%s%N) - t0) / 1000000 ))
      [ "$start" = timed ] || { kill "$server"; wait "$server" 2>/dev/null || true; }
    done
    id=$(curl -fs "$base/v1/HubActivityPoi?pagesize=1&pagenumber=37&fields=Id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Items"][0]["Id"])')
    workloads=(
      "single GET|/v1/HubActivityPoi/$id"
      "list page 1|/v1/HubActivityPoi?pagesize=10"
      "searchfilter=hütte|/v1/HubActivityPoi?searchfilter=h%C3%BCtte"
      "tagfilter=and(hiking,summer)|/v1/HubActivityPoi?tagfilter=and(hiking,summer)"
      "radius 10 km|/v1/HubActivityPoi?latitude=46.4983&longitude=11.3548&radius=10000"
      "polygon ~12 km²|/v1/HubActivityPoi?polygon=POLYGON((11.33%2046.48,11.38%2046.48,11.38%2046.51,11.33%2046.51,11.33%2046.48))"
      "rawfilter 3 clauses|/v1/HubActivityPoi?rawfilter=and(gt(GpsInfo.0.Altitude,500),like(Detail.de.Title,'a'),isnotnull(ContactInfos.de.City))"
    )
    names=()
    for w in "${workloads[@]}"; do
      name=${w%%|*}
      names+=("$name")
      first_ms["$backend|$scale|$name|$round"]=$(curl -s -o /dev/null -w '%{time_total}' "$base${w#*|}" | awk '{printf "%.1f", $1 * 1000}')
      # A short warm-up so both scales start from a warm cache.
      wrk -t1 -c1 -d1s --timeout 60s "$base${w#*|}" >/dev/null
      out=$(wrk -t2 -c8 -d"${duration}s" --timeout 60s --latency "$base${w#*|}")
      rps["$backend|$scale|$name|$round"]=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
      p50["$backend|$scale|$name|$round"]=$(awk '$1=="50%" {print $2}' <<<"$out" | to_ms)
    done
    rss["$backend|$scale"]=$(awk '/^VmRSS/ {r=$2} /^VmHWM/ {h=$2} END {printf "%d MB (peak %d MB)", r/1024, h/1024}' "/proc/$server/status")
    kill "$server"; wait "$server" 2>/dev/null || true; server=""
  done
done
done

# Medians over the rounds (a workload with no request done in a round counts as none).
for backend in ${backends//,/ }; do
  for scale in $scales; do
    values=(); for r in $(seq 1 "$rounds"); do values+=("${startup["$backend|$scale|$r"]}"); done
    startup["$backend|$scale"]=$(median "${values[@]}")
    for name in "${names[@]}"; do
      for metric in rps p50 first_ms; do
        declare -n table=$metric
        values=(); for r in $(seq 1 "$rounds"); do [ -n "${table["$backend|$scale|$name|$r"]:-}" ] && values+=("${table["$backend|$scale|$name|$r"]}"); done
        [ ${#values[@]} -gt 0 ] && table["$backend|$scale|$name"]=$(median "${values[@]}")
        unset -n table
      done
    done
  done
done

read -r -a sc <<<"$scales"
first=${sc[0]}; last=${sc[${#sc[@]}-1]}
echo "wrk -t2 -c8, ${duration}s per workload after a 1 s warm-up; medians of $rounds round(s); $(nproc) cores; $HUB_BIN"
for backend in ${backends//,/ }; do
  echo
  printf '%-30s' "$backend"
  for scale in $scales; do printf '%24s' "scale $scale: req/s, p50"; done
  printf '%10s\n' "growth"
  for name in "${names[@]}"; do
    printf '%-30s' "$name"
    for scale in $scales; do
      # No request finished within the run: no latency to show (raise --duration).
      if [ -n "${p50["$backend|$scale|$name"]}" ]; then
        printf '%14s %7.2f ms' "${rps["$backend|$scale|$name"]}" "${p50["$backend|$scale|$name"]}"
      else
        printf '%14s %10s' "${rps["$backend|$scale|$name"]:-0}" "none done"
      fi
    done
    awk -v a="${p50["$backend|$first|$name"]}" -v b="${p50["$backend|$last|$name"]}" 'BEGIN { if (a > 0 && b > 0) printf "%9.1f×\n", b / a; else print "        —" }'
  done
  printf '%-30s' "first request, ms"
  for scale in $scales; do printf '%24s' "scale $scale"; done
  echo
  for name in "${names[@]}"; do
    printf '%-30s' "  $name"
    for scale in $scales; do printf '%24s' "${first_ms["$backend|$scale|$name"]}"; done
    echo
  done
  printf '%-30s' "restart to first answer"
  for scale in $scales; do printf '%21s ms' "${startup["$backend|$scale"]}"; done
  echo
  printf '%-30s' "server memory after the run"
  for scale in $scales; do printf '%24s' "${rss["$backend|$scale"]}"; done
  echo
done
