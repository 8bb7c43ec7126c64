#!/usr/bin/env bash
# The project's test command (see the README):
#   1. the whole workspace's tests on the embedded SQLite store;
#   2. the API test suites a second time on PostgreSQL + PostGIS, through the same tests
#      (`HUB_TEST_DATABASE` makes each suite's store a fresh PostgreSQL database);
#   3. the Content, token and Time Series API suites a third time through PgBouncer in
#      transaction pooling mode (scripts/pg-topology.sh), with `--database-pooler
#      transaction`'s statement mode; skipped with a message when PgBouncer is missing.
# PostgreSQL comes from HUB_TEST_DATABASE (an admin URL of a running server) or, when
# that is unset, from a throwaway cluster started in a temporary directory. Without
# PostgreSQL and PostGIS installed, step 2 is skipped with a message, and the command
# still passes — unless HUB_REQUIRE_POSTGRES=1 (CI sets it), which makes that a failure.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each pass gets a temporary directory of its own, removed when it ends: a store a test
# binary keeps in a static for all its tests (the demo, ~360 MB on SQLite) is never
# dropped, so its directory outlives the binary. Open to every user as /tmp is: tests
# start PostgreSQL clusters there as the `postgres` user. The SQLite and PostgreSQL
# passes keep snapshots there (HUB_TEST_SNAPSHOTS, see hub_store::test_snapshot): the
# first demo a test loads, and on PostgreSQL an empty migrated database. Every later test
# store of the pass is a copy of one, made by the same build.
passes=$(mktemp -d "${TMPDIR:-/tmp}/hub-test-passes.XXXXXX")
chmod 755 "$passes"
trap 'rm -rf "$passes"' EXIT
pass() {
  mkdir -p "$passes/tmp"
  chmod 1777 "$passes/tmp"
  TMPDIR=$passes/tmp "$@"
  rm -rf "$passes/tmp"
}

echo "== tests on the embedded SQLite store"
pass env -u HUB_TEST_DATABASE HUB_TEST_SNAPSHOTS="$passes/tmp/snapshots" cargo test --workspace --locked

skip() {
  if [ "${HUB_REQUIRE_POSTGRES:-0}" = 1 ]; then
    echo "PostgreSQL run required (HUB_REQUIRE_POSTGRES=1) but unavailable: $1" >&2
    exit 1
  fi
  echo "== PostgreSQL run skipped: $1"
  exit 0
}

url=${HUB_TEST_DATABASE:-}
if [ -z "$url" ]; then
  cluster=$(mktemp -d "${TMPDIR:-/tmp}/hub-pg.XXXXXX")
  trap 'scripts/pg-throwaway.sh stop "$cluster" 2>/dev/null || true; rm -rf "$cluster" "$passes"' EXIT
  set +e
  url=$(scripts/pg-throwaway.sh start "$cluster" 2>"$cluster/reason")
  status=$?
  set -e
  if [ $status = 3 ]; then skip "$(cat "$cluster/reason")"; fi
  if [ $status != 0 ]; then
    echo "starting a throwaway PostgreSQL cluster failed:" >&2
    cat "$cluster/reason" >&2
    exit 1
  fi
fi

echo "== API test suites again on PostgreSQL ($(echo "$url" | sed -E 's#://([^:@/]*):[^@]*@#://\1@#'))"
HUB_TEST_DATABASE=$url HUB_TEST_SNAPSHOTS="$passes/tmp/snapshots" \
  pass cargo test --locked -p hub -p hub-timeseries -p hub-auth -p hub-store --tests
# The throwaway cluster's disk goes back before the next pass starts a cluster of its own.
if [ -n "${cluster:-}" ]; then
  scripts/pg-throwaway.sh stop "$cluster" 2>/dev/null || true
  rm -rf "$cluster"
  cluster=""
fi

echo "== Content, token and Time Series API suites through PgBouncer (transaction pooling)"
topology=$(mktemp -d "${TMPDIR:-/tmp}/hub-topology.XXXXXX")
chmod 755 "$topology"
trap 'scripts/pg-topology.sh stop "$topology/t" 2>/dev/null || true; rm -rf "$topology" "$passes"' EXIT
set +e
urls=$(scripts/pg-topology.sh start "$topology/t" 2>"$topology/reason")
status=$?
set -e
if [ $status = 3 ]; then skip "$(cat "$topology/reason")"; fi
[ $status = 0 ] || { cat "$topology/reason" >&2; exit 1; }
pooler=$(echo "$urls" | sed -n 's/^POOLER_URL=//p')
HUB_TEST_DATABASE=$pooler HUB_TEST_DATABASE_POOLER=transaction \
  pass cargo test --locked -p hub --test content_api --test auth_api --test response_cache -p hub-timeseries --test api
