#!/usr/bin/env bash
# Starts a throwaway PostgreSQL 15 cluster in a temporary directory, listening on
# loopback only, with trust authentication, and prints its URL on stdout.
#   scripts/pg-throwaway.sh start DIR [PORT]   (DIR may hold a cluster of an earlier run) -> prints postgres://postgres@127.0.0.1:PORT/postgres
#   scripts/pg-throwaway.sh start-tls DIR [PORT] -> the same URL; the server has ssl=on with a
#       throwaway CA (DIR/tls/ca.pem) and a server certificate for localhost and 127.0.0.1,
#       and pg_hba.conf accepts TCP only over TLS (hostssl); needs openssl
#   scripts/pg-throwaway.sh stop DIR
# As root, the cluster runs as the `postgres` system user (initdb refuses root).
# Exits non-zero with a reason on stderr when PostgreSQL or PostGIS is not installed.
set -euo pipefail

cmd=${1:?start|stop}
dir=${2:?directory}
bin=""
for candidate in "${PG_BIN:-}" /usr/lib/postgresql/15/bin "$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/x)")"; do
  if [ -n "$candidate" ] && [ -x "$candidate/initdb" ] && [ -x "$candidate/pg_ctl" ]; then bin=$candidate; break; fi
done
[ -n "$bin" ] || { echo "no PostgreSQL server binaries (initdb, pg_ctl) found" >&2; exit 3; }
sharedir=$("$bin/pg_config" --sharedir 2>/dev/null || echo /usr/share/postgresql/15)
[ -f "$sharedir/extension/postgis.control" ] || { echo "PostGIS is not installed (no $sharedir/extension/postgis.control)" >&2; exit 3; }

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# A CA and a server certificate (ECDSA P-256, valid two days) in DIR/tls, readable only
# by the server's user as PostgreSQL requires of the key.
make_certificates() {
  command -v openssl >/dev/null || { echo "openssl is not installed (Debian package openssl)" >&2; exit 3; }
  local tls=$dir/tls
  mkdir -p "$tls"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj "/CN=Hub throwaway CA" -keyout "$tls/ca.key" -out "$tls/ca.pem" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -subj "/CN=localhost" -keyout "$tls/server.key" -out "$tls/server.csr" 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n' >"$tls/server.ext"
  openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" -CAcreateserial \
    -days 2 -extfile "$tls/server.ext" -out "$tls/server.crt" 2>/dev/null
  chmod 600 "$tls/server.key"
  [ "$(id -u)" = 0 ] && chown -R postgres: "$tls"
  chmod 755 "$tls"; chmod 644 "$tls/ca.pem"
}

case "$cmd" in
  start|start-tls)
    port=${3:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    # A directory kept from an earlier run (bench/scaling.sh reuses its loaded databases)
    # starts as it is.
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    tls_options=""
    if [ "$cmd" = start-tls ]; then
      make_certificates
      tls_options="-c ssl=on -c ssl_cert_file=$dir/tls/server.crt -c ssl_key_file=$dir/tls/server.key"
      # Unix socket for the owner's tools; over TCP, TLS or nothing.
      printf 'local all all trust\nhostssl all all 127.0.0.1/32 trust\nhostssl all all ::1/128 trust\n' >"$dir/data/pg_hba.conf"
    fi
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 -c shared_buffers=256MB $tls_options" \
      start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
  stop)
    [ -d "$dir/data" ] && as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    ;;
  *) echo "usage: $0 start|start-tls|stop DIR [PORT]" >&2; exit 2 ;;
esac
