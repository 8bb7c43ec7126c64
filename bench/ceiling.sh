#!/usr/bin/env bash
# The ceiling: how close Hub gets to a static file server handing out the very same
# bytes. Builds a release `hub`, loads the demo data, starts two Hub servers on it (the
# response cache on, and off with `--response-cache-bytes 0`), fetches the exact bytes
# of one document and of list page 1, serves those files from a throwaway nginx
# (installed with apt-get when missing; own config in a temporary directory, loopback,
# a free port), then runs wrk against all three interleaved, 3 rounds, and prints the
# median req/s and the ratio Hub / nginx per workload. Targets (issue 18): single GET
# >= 0.7x nginx, repeated list page >= 0.5x.
# Usage: bench/ceiling.sh [--duration SECONDS] [--rounds N] [--database POSTGRES_URL]
#                         [--hub-args "SERVE OPTIONS"]   (e.g. "--response-cache-revisions notify")
#                         [--baseline HUB_BINARY]  (another build, cache on, in the same rounds)
set -euo pipefail
cd "$(dirname "$0")/.."

duration=5
rounds=3
database=
baseline=
hub_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --database) database=$2; shift 2 ;;
    --hub-args) read -r -a hub_args <<<"$2"; shift 2 ;;
    --baseline) baseline=$(realpath "$2"); shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
if [ ! -x "$nginx_bin" ]; then
  echo "installing nginx (apt-get)" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
  nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
fi

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

target=${CARGO_TARGET_DIR:-target}
cargo build --release -q -p hub
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

store_args=(--data "$work/data")
[ -n "$database" ] && store_args=(--database "$database")
"$target/release/hub" demo "${store_args[@]}" --scale 1 >/dev/null 2>&1

serve_hub() {
  local binary=$1 port=$2
  shift 2
  # One public base URL for all, so their links (and bytes) are the same.
  HUB_LOG=error "$binary" serve "${store_args[@]}" --no-demo \
    --listen "127.0.0.1:$port" --content-base-url http://hub.bench "${hub_args[@]}" "$@" >/dev/null 2>&1 &
  pids+=($!)
  for _ in $(seq 1 200); do curl -fs "http://127.0.0.1:$port/health" >/dev/null && return; sleep 0.1; done
  echo "hub on port $port did not start" >&2
  exit 1
}
cached_port=$(free_port)
serve_hub "$target/release/hub" "$cached_port"
uncached_port=$(free_port)
serve_hub "$target/release/hub" "$uncached_port" --response-cache-bytes 0
cached="http://127.0.0.1:$cached_port"
uncached="http://127.0.0.1:$uncached_port"
if [ -n "$baseline" ]; then
  baseline_port=$(free_port)
  serve_hub "$baseline" "$baseline_port"
  baseline_url="http://127.0.0.1:$baseline_port"
fi

id=$(curl -fs "$cached/v1/HubActivityPoi?pagesize=1&pagenumber=37&fields=Id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Items"][0]["Id"])')
item_path="/v1/HubActivityPoi/$id"
list_path="/v1/HubActivityPoi"

# The exact bytes, as files nginx serves (its workers drop root: world-readable).
mkdir -p "$work/www"
curl -fs "$cached$item_path" -o "$work/www/item.json"
curl -fs "$cached$list_path" -o "$work/www/list.json"
for path in "$item_path" "$list_path"; do
  for other in "$uncached" ${baseline:+"$baseline_url"}; do
    cmp -s <(curl -fs "$cached$path") <(curl -fs "$other$path") \
      || { echo "the Hub servers answer $path differently" >&2; exit 1; }
  done
done
chmod 755 "$work" "$work/www"
chmod 644 "$work/www/"*.json

nginx_port=$(free_port)
cat >"$work/nginx.conf" <<CONF
worker_processes auto;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $work/nginx-body;
  proxy_temp_path $work/nginx-proxy;
  fastcgi_temp_path $work/nginx-fastcgi;
  uwsgi_temp_path $work/nginx-uwsgi;
  scgi_temp_path $work/nginx-scgi;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$nginx_port;
    root $work/www;
    default_type application/json;
  }
}
CONF
"$nginx_bin" -c "$work/nginx.conf" -p "$work" -g 'daemon off;' &
pids+=($!)
nginx="http://127.0.0.1:$nginx_port"
for _ in $(seq 1 100); do curl -fs "$nginx/item.json" >/dev/null && break; sleep 0.1; done
cmp -s "$work/www/item.json" <(curl -fs "$nginx/item.json") || { echo "nginx does not serve the item" >&2; exit 1; }

rps() {
  wrk -t2 -c8 -d"${duration}s" "$1" | awk '/Requests\/sec/ {print $2}'
}
median() {
  sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

declare -A results
workloads=(item list)
declare -A hub_path=([item]="$item_path" [list]="$list_path")
declare -A label=([item]="single GET by id" [list]="repeated list page 1 (10 items)")
declare -A target_ratio=([item]=0.7 [list]=0.5)
echo "backend ${database:+postgres}${database:-sqlite}${hub_args[*]:+ (${hub_args[*]})}, wrk -t2 -c8, ${duration}s per run, $rounds rounds interleaved, $(nproc) cores"
for round in $(seq 1 "$rounds"); do
  for w in "${workloads[@]}"; do
    results[$w,nginx]+="$(rps "$nginx/$w.json") "
    results[$w,cached]+="$(rps "$cached${hub_path[$w]}") "
    results[$w,uncached]+="$(rps "$uncached${hub_path[$w]}") "
    [ -z "$baseline" ] || results[$w,baseline]+="$(rps "$baseline_url${hub_path[$w]}") "
  done
  echo "round $round done" >&2
done

printf '\n%-34s %12s %14s %8s %14s %8s %8s\n' "workload (req/s, median)" "nginx" "hub cache on" "ratio" "hub cache off" "ratio" "target"
for w in "${workloads[@]}"; do
  n=$(tr ' ' '\n' <<<"${results[$w,nginx]}" | grep . | median)
  c=$(tr ' ' '\n' <<<"${results[$w,cached]}" | grep . | median)
  u=$(tr ' ' '\n' <<<"${results[$w,uncached]}" | grep . | median)
  awk -v l="${label[$w]}" -v n="$n" -v c="$c" -v u="$u" -v t="${target_ratio[$w]}" \
    'BEGIN {printf "%-34s %12.0f %14.0f %7.2fx %14.0f %7.2fx %7.1fx\n", l, n, c, c / n, u, u / n, t}'
done
if [ -n "$baseline" ]; then
  echo
  printf '%-34s %12s %14s %8s %14s\n' "baseline $(basename "$baseline")" "nginx" "baseline" "ratio" "this / baseline"
  for w in "${workloads[@]}"; do
    n=$(tr ' ' '\n' <<<"${results[$w,nginx]}" | grep . | median)
    c=$(tr ' ' '\n' <<<"${results[$w,cached]}" | grep . | median)
    b=$(tr ' ' '\n' <<<"${results[$w,baseline]}" | grep . | median)
    awk -v l="${label[$w]}" -v n="$n" -v b="$b" -v c="$c" \
      'BEGIN {printf "%-34s %12.0f %14.0f %7.2fx %13.2fx\n", l, n, b, b / n, c / b}'
  done
fi
echo
echo "bytes: item $(stat -c %s "$work/www/item.json"), list $(stat -c %s "$work/www/list.json")"
cached_pid=${pids[0]}
echo "hub (cache on) peak RSS: $(awk '/VmHWM/ {print $2, $3}' "/proc/$cached_pid/status")"
curl -fs "$cached/metrics" | grep '^hub_response_cache_' || true
