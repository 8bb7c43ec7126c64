#!/usr/bin/env bash
# Token service benchmark: starts a release `hub serve` on fresh demo data (loopback only)
# and prints tokens/s for client_credentials and password grants, then the throughput
# of a single GET with and without a bearer token (the token should cost at most 10 %).
# Usage: bench/auth.sh [--duration SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."

duration=10
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }

target=${CARGO_TARGET_DIR:-target}
cargo build --release -q -p hub
data=$(mktemp -d)
lua=$(mktemp -d)
port=18081
base="http://127.0.0.1:$port"
"$target/release/hub" demo --data "$data" --scale 1 >/dev/null
HUB_LOG=warn "$target/release/hub" serve --data "$data" --listen "127.0.0.1:$port" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$data" "$lua"' EXIT
for _ in $(seq 1 100); do curl -fs "$base/health" >/dev/null && break; sleep 0.1; done

token_url="$base/auth/realms/hub/protocol/openid-connect/token"
post() {
  cat >"$lua/$1.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.body = "$2"
LUA
}
post client "grant_type=client_credentials&client_id=hub-demo-writer&client_secret=hub-demo-writer-secret-for-demonstration-only"
post password "grant_type=password&client_id=hub-generic-client&username=demo&password=demo"

token=$(curl -fs -d 'grant_type=password&client_id=hub-generic-client&username=demo&password=demo' "$token_url" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
id=$(curl -fs "$base/v1/HubActivityPoi?pagesize=1&pagenumber=37&fields=Id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Items"][0]["Id"])')
cat >"$lua/bearer.lua" <<LUA
wrk.headers["Authorization"] = "Bearer $token"
LUA

run() {
  local name=$1 url=$2 script=${3:-}
  local out
  out=$(wrk -t2 -c8 -d"${duration}s" --latency ${script:+-s "$script"} "$url")
  local rps p50 p99 errors
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1=="50%" {print $2}' <<<"$out")
  p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  errors=$(awk '/Non-2xx/ {print $4}' <<<"$out")
  printf '%-40s %10s /s   p50 %8s   p99 %8s %s\n' "$name" "$rps" "$p50" "$p99" "${errors:+  non-2xx: $errors}"
}

echo "concurrency 8, ${duration}s per workload, $(nproc) cores"
run "token: client_credentials" "$token_url" "$lua/client.lua"
run "token: password (Argon2id)" "$token_url" "$lua/password.lua"
run "single GET, anonymous" "$base/v1/HubActivityPoi/$id"
run "single GET, bearer token" "$base/v1/HubActivityPoi/$id" "$lua/bearer.lua"
echo "server peak RSS: $(awk '/VmHWM/ {print $2, $3}' /proc/$server/status)"
