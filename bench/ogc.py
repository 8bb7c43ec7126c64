#!/usr/bin/env python3
"""OGC API - Features: Hub against pygeoapi and tipg, same box, same data (issue 16).

The workload is "items of a collection, 100 per page" on `hubactivitypoi`. Goal of the
issue: Hub >= 10x pygeoapi and >= 5x tipg in req/s.

What it does, everything on loopback and in one temporary directory removed on exit:

1. `hub demo` + two `hub serve` on that store (release build unless --binary names
   another): "hub" with its response cache off (`--response-cache-bytes 0`), so every
   request reads and writes its page as the peers do and the ratios compare that work;
   and "hub cached", the default server, whose repeated pages are cache hits (printed
   beside, never used for the ratios).
2. Exports the collection from Hub's own `/ogc/collections/hubactivitypoi/items`
   (limit=10000, paged by offset until there is no `next` link) into one GeoJSON file,
   so the peers serve exactly the features Hub serves.
3. Starts a throwaway PostgreSQL 15 + PostGIS cluster (scripts/pg-throwaway.sh) and loads
   that file with `ogr2ogr -f PostgreSQL` into table `hubactivitypoi`: a serial
   primary key `ogc_fid`, a GiST index on `geom`, one column per top-level property with
   the original (unlaundered) names; nested objects and arrays of objects become `json`
   columns, so the peers answer with the same nested properties Hub does. Both peers
   read this one table: pygeoapi through its `PostgreSQL` provider, tipg natively.
4. Installs pinned pygeoapi and tipg from PyPI into a throwaway virtualenv (bench-only;
   never part of tests/requirements*), or reuses one given with --venv.
5. Runs pygeoapi (Flask app under gunicorn, sync workers: its documented production
   setup; --pygeoapi-server uvicorn runs its Starlette app under uvicorn instead) and
   tipg (FastAPI app under uvicorn) with as many worker processes as the box has cores.
   Hub runs its default runtime (one worker thread per core).
6. Checks that every server answers page 1 with 200 and 100 features (and prints the
   counts and body sizes of every workload), so error pages are never compared.
7. wrk -t2 -c16 -d10s per server and workload, interleaved across servers for N rounds;
   prints the median req/s, the ratios Hub/pygeoapi and Hub/tipg, and the versions.

Written for this project from the tools' documented command lines and settings; no code
is taken from pygeoapi, tipg or their examples (the YAML below follows pygeoapi's
documented configuration keys).

Usage: bench/ogc.py [--rounds N] [--duration S] [--connections N] [--workers N]
                    [--binary HUB] [--venv DIR] [--pygeoapi-server gunicorn|uvicorn]
Needs wrk, ogr2ogr (GDAL), psql and PostgreSQL 15 with PostGIS, python3 -m venv, PyPI.
"""
import argparse
import atexit
import http.client
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
COLLECTION = "hubactivitypoi"
# Exact pins: the newest releases that install on this box's Python 3.11 (pygeoapi
# 0.22 and later need Python 3.12). geoalchemy2 and psycopg2 are what pygeoapi's
# PostgreSQL provider imports; they are not among its own requirements.
PINS = [
    "pygeoapi==0.21.0",
    "tipg==1.6.1",
    "uvicorn==0.54.0",
    "gunicorn==27.0.1",
    "geoalchemy2==0.20.0",
    "psycopg2-binary==2.9.13",
]
WORKLOADS = [
    ("page 1", "limit=100"),
    ("deep page", "offset=5000&limit=100"),
    ("bbox page", "bbox=11.3,46.4,11.5,46.6&limit=100"),
]

procs = []  # (name, Popen) of every server this script started, stopped on exit
cleanups = []  # further callables run on exit, last first


def cleanup():
    for _, proc in reversed(procs):
        if proc.poll() is None:
            try:
                # Each server runs in its own session (start_new_session), so its process
                # group holds it and the workers it forked, and nothing else.
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    for _, proc in reversed(procs):
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
    procs.clear()
    while cleanups:
        try:
            cleanups.pop()()
        except Exception as e:  # keep cleaning up the rest
            print(f"cleanup: {e}", file=sys.stderr)


def on_signal(signum, _frame):
    sys.exit(128 + signum)  # runs the atexit cleanup


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(name, args, log, **kw):
    out = open(log, "w")
    proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, **kw)
    procs.append((name, proc))
    return proc


def get(port, path, timeout=60):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    c.request("GET", path)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, body


def wait_for(name, proc, port, path, log, seconds=120):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            sys.exit(f"{name} exited with {proc.returncode}; its log:\n{open(log).read()[-4000:]}")
        try:
            if get(port, path, timeout=5)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.3)
    sys.exit(f"{name} did not answer {path} within {seconds}s; its log:\n{open(log).read()[-4000:]}")


def export_features(port, path):
    """Every feature of the collection, paged by offset until Hub gives no `next` link."""
    features, offset = [], 0
    while True:
        status, body = get(port, f"/ogc/collections/{COLLECTION}/items?limit=10000&offset={offset}")
        if status != 200:
            sys.exit(f"export: Hub answered {status} at offset {offset}")
        page = json.loads(body)
        # The top-level `id` is dropped: the properties carry it as `Id` already, and
        # GDAL (case-insensitive field names) would rename that one to `Id2`.
        features.extend({k: v for k, v in f.items() if k != "id"} for f in page["features"])
        if not any(link.get("rel") == "next" for link in page.get("links", [])):
            break
        offset += len(page["features"])
    with open(path, "w") as f:
        json.dump({"type": "FeatureCollection", "features": features}, f)
    return len(features)


def load_postgis(workdir, features_path):
    pgdir = os.path.join(workdir, "pg")
    url = subprocess.run([os.path.join(ROOT, "scripts", "pg-throwaway.sh"), "start", pgdir],
                         check=True, capture_output=True, text=True).stdout.strip()
    cleanups.append(lambda: subprocess.run([os.path.join(ROOT, "scripts", "pg-throwaway.sh"), "stop", pgdir]))
    port = urllib.parse.urlparse(url).port
    subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", url, "-c", "CREATE EXTENSION IF NOT EXISTS postgis"],
                   check=True)
    subprocess.run(["ogr2ogr", "-f", "PostgreSQL", f"PG:host=127.0.0.1 port={port} user=postgres dbname=postgres",
                    features_path, "-nln", COLLECTION, "-lco", "GEOMETRY_NAME=geom", "-lco", "SPATIAL_INDEX=GIST",
                    "-lco", "LAUNDER=NO", "-lco", "FID=ogc_fid"], check=True)
    subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", url, "-c", f"VACUUM ANALYZE {COLLECTION}"], check=True)
    count = subprocess.run(["psql", "-tA", url, "-c", f"SELECT count(*) FROM {COLLECTION}"],
                           check=True, capture_output=True, text=True).stdout.strip()
    versions = subprocess.run(["psql", "-tA", url, "-c", "SELECT split_part(version(), ' ', 2) || ' / PostGIS ' || postgis_lib_version()"],
                              check=True, capture_output=True, text=True).stdout.strip()
    return url, port, int(count), versions


def make_venv(workdir, given):
    if given:
        venv = given
        if not os.path.exists(os.path.join(venv, "bin", "python")):
            subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    else:
        venv = os.path.join(workdir, "venv")
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    pip = os.path.join(venv, "bin", "pip")
    subprocess.run([pip, "install", "-q", "--disable-pip-version-check", *PINS], check=True)
    return venv


def pygeoapi_config(workdir, port, pg_port, nfeatures):
    # pygeoapi's documented configuration keys; limits raised so limit=100 is honoured.
    text = f"""
server:
  bind: {{host: 127.0.0.1, port: {port}}}
  url: http://127.0.0.1:{port}
  mimetype: application/json; charset=UTF-8
  encoding: utf-8
  languages: [en-US]
  pretty_print: false
  limits: {{default_items: 10, max_items: 10000}}
  map: {{url: 'https://tile.openstreetmap.org/{{z}}/{{x}}/{{y}}.png', attribution: OpenStreetMap}}
logging:
  level: ERROR
metadata:
  identification:
    title: Hub benchmark peer
    description: the features of Hub's hubactivitypoi collection
    keywords: [bench]
    url: http://127.0.0.1:{port}
    terms_of_service: https://creativecommons.org/publicdomain/zero/1.0/
  license: {{name: CC0, url: 'https://creativecommons.org/publicdomain/zero/1.0/'}}
  provider: {{name: bench, url: 'http://127.0.0.1:{port}'}}
  contact: {{name: bench, email: bench@example.org}}
resources:
  {COLLECTION}:
    type: collection
    title: hubactivitypoi
    description: {nfeatures} points of interest exported from Hub
    keywords: [poi]
    extents:
      spatial:
        bbox: [-180, -90, 180, 90]
        crs: http://www.opengis.net/def/crs/OGC/1.3/CRS84
    providers:
      - type: feature
        name: PostgreSQL
        data:
          host: 127.0.0.1
          port: {pg_port}
          dbname: postgres
          user: postgres
          password: ''
          search_path: [public]
        id_field: ogc_fid
        table: {COLLECTION}
        geom_field: geom
"""
    path = os.path.join(workdir, "pygeoapi.yml")
    with open(path, "w") as f:
        f.write(text)
    return path


def wrk(port, path, threads, connections, duration):
    out = subprocess.run(["wrk", f"-t{threads}", f"-c{connections}", f"-d{duration}s",
                          f"http://127.0.0.1:{port}{path}"], check=True, capture_output=True, text=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    errors = (int(bad.group(1)) if bad else 0) + (sum(int(x) for x in sock.groups()) if sock else 0)
    return rps, errors


def main():
    cores = os.cpu_count() or 1
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=int, default=10, help="seconds per wrk run")
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2, help="wrk threads")
    ap.add_argument("--workers", type=int, default=cores, help="worker processes of pygeoapi and tipg")
    ap.add_argument("--binary", help="a built hub binary (default: cargo build --release -p hub)")
    ap.add_argument("--venv", help="reuse (or create) this virtualenv instead of a throwaway one")
    ap.add_argument("--pygeoapi-server", choices=["gunicorn", "uvicorn"], default="gunicorn")
    opts = ap.parse_args()
    for tool in ("wrk", "ogr2ogr", "psql"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is missing")

    atexit.register(cleanup)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    workdir = tempfile.mkdtemp(prefix="hub-ogc-bench-")
    os.chmod(workdir, 0o755)  # the throwaway cluster runs as `postgres` when we are root
    cleanups.append(lambda: shutil.rmtree(workdir, ignore_errors=True))

    binary = opts.binary
    if binary is None:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "hub"], cwd=ROOT, check=True)
        binary = os.path.join(TARGET, "release", "hub")

    # 1. Hub on demo data.
    data = os.path.join(workdir, "data")
    subprocess.run([binary, "demo", "--data", data], check=True, stdout=subprocess.DEVNULL,
                   env=dict(os.environ, HUB_LOG="warn"))
    # "hub" runs with its response cache off, so every request does the work the peers do
    # (they keep no answers); "hub cached" is the default server on the same store, whose
    # repeated requests are cache hits (quoted separately, never as the ratio).
    hub_port = free_port()
    hub = start("hub", [binary, "serve", "--data", data, "--listen", f"127.0.0.1:{hub_port}",
                        "--response-cache-bytes", "0"],
                os.path.join(workdir, "hub.log"), env=dict(os.environ, HUB_LOG="warn"))
    wait_for("hub", hub, hub_port, "/health", os.path.join(workdir, "hub.log"))
    cached_port = free_port()
    cached = start("hub cached", [binary, "serve", "--data", data, "--listen", f"127.0.0.1:{cached_port}"],
                   os.path.join(workdir, "hub-cached.log"), env=dict(os.environ, HUB_LOG="warn"))
    wait_for("hub cached", cached, cached_port, "/health", os.path.join(workdir, "hub-cached.log"))

    # 2. + 3. The same features into PostGIS.
    features_path = os.path.join(workdir, "features.geojson")
    exported = export_features(hub_port, features_path)
    print(f"exported {exported} features of {COLLECTION} from Hub ({os.path.getsize(features_path) // 1024} KiB GeoJSON)")
    pg_url, pg_port, loaded, pg_version = load_postgis(workdir, features_path)
    print(f"loaded {loaded} rows into PostGIS table {COLLECTION}")
    if loaded != exported:
        sys.exit("PostGIS holds a different number of features than Hub exported")

    # 4. The peers.
    venv = make_venv(workdir, opts.venv)
    vbin = os.path.join(venv, "bin")
    pyver = subprocess.run([os.path.join(vbin, "python"), "-c",
                            "import importlib.metadata as m; print(' '.join(f'{p} {m.version(p)}' for p in "
                            "['pygeoapi', 'tipg', 'uvicorn', 'gunicorn', 'Flask', 'fastapi', 'SQLAlchemy', 'asyncpg']))"],
                           check=True, capture_output=True, text=True).stdout.strip()

    # 5. pygeoapi.
    pg_port_pygeoapi = free_port()
    config = pygeoapi_config(workdir, pg_port_pygeoapi, pg_port, exported)
    openapi = os.path.join(workdir, "pygeoapi-openapi.yml")
    penv = dict(os.environ, PYGEOAPI_CONFIG=config, PYGEOAPI_OPENAPI=openapi)
    subprocess.run([os.path.join(vbin, "pygeoapi"), "openapi", "generate", config, "--output-file", openapi],
                   check=True, env=penv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if opts.pygeoapi_server == "gunicorn":
        pargs = [os.path.join(vbin, "gunicorn"), "--workers", str(opts.workers), "--bind",
                 f"127.0.0.1:{pg_port_pygeoapi}", "pygeoapi.flask_app:APP"]
        pserver = f"gunicorn, {opts.workers} sync workers, Flask app"
    else:
        pargs = [os.path.join(vbin, "uvicorn"), "--workers", str(opts.workers), "--no-access-log", "--host", "127.0.0.1",
                 "--port", str(pg_port_pygeoapi), "pygeoapi.starlette_app:APP"]
        pserver = f"uvicorn, {opts.workers} workers, Starlette app"
    plog = os.path.join(workdir, "pygeoapi.log")
    pygeoapi = start("pygeoapi", pargs, plog, env=penv, cwd=workdir)
    wait_for("pygeoapi", pygeoapi, pg_port_pygeoapi, f"/collections/{COLLECTION}", plog)

    # tipg.
    tipg_port = free_port()
    tenv = dict(os.environ, DATABASE_URL=pg_url.replace("postgres://", "postgresql://", 1),
                TIPG_DB_SCHEMAS='["public"]', TIPG_DB_TABLES=f'["public.{COLLECTION}"]')
    tlog = os.path.join(workdir, "tipg.log")
    tipg = start("tipg", [os.path.join(vbin, "uvicorn"), "--workers", str(opts.workers), "--no-access-log", "--host",
                          "127.0.0.1", "--port", str(tipg_port), "tipg.main:app"], tlog, env=tenv, cwd=workdir)
    wait_for("tipg", tipg, tipg_port, f"/collections/public.{COLLECTION}", tlog)

    servers = [
        ("hub", hub_port, f"/ogc/collections/{COLLECTION}/items"),
        ("pygeoapi", pg_port_pygeoapi, f"/collections/{COLLECTION}/items"),
        ("tipg", tipg_port, f"/collections/public.{COLLECTION}/items"),
        ("hub cached", cached_port, f"/ogc/collections/{COLLECTION}/items"),
    ]

    # 6. Same answers before any measuring.
    print("\nanswers before measuring (status, features, body bytes):")
    for wname, query in WORKLOADS:
        row = []
        for name, port, path in servers:
            status, body = get(port, f"{path}?{query}")
            n = len(json.loads(body).get("features", [])) if status == 200 else 0
            row.append((name, status, n, len(body)))
            if wname == "page 1" and (status != 200 or n != 100):
                sys.exit(f"{name} answered {status} with {n} features for page 1; not measuring error pages")
        print(f"  {wname:<10} " + "   ".join(f"{name} {status} {n} {size}" for name, status, n, size in row))
        if len({n for _, _, n, _ in row}) != 1:
            print(f"  warning: the servers return different feature counts for {wname}")

    # 7. Interleaved rounds.
    print(f"\nwrk -t{opts.threads} -c{opts.connections} -d{opts.duration}s, {opts.rounds} rounds, interleaved; "
          f"{cores} cores; pygeoapi: {pserver}; tipg: uvicorn, {opts.workers} workers; hub: its default runtime")
    results = {(w, s): [] for w, _ in WORKLOADS for s, _, _ in servers}
    errors = 0
    for r in range(1, opts.rounds + 1):
        for wname, query in WORKLOADS:
            for name, port, path in servers:
                rps, errs = wrk(port, f"{path}?{query}", opts.threads, opts.connections, opts.duration)
                results[(wname, name)].append(rps)
                errors += errs
                print(f"  round {r} {wname:<10} {name:<9} {rps:10.1f} req/s" + (f"  {errs} errors" if errs else ""),
                      flush=True)

    med = {k: statistics.median(v) for k, v in results.items()}
    print(f"\nmedian req/s of {opts.rounds} rounds, items of {COLLECTION}, 100 per page ({exported} features)")
    print(f"{'workload':<12}{'hub':>10}{'pygeoapi':>10}{'tipg':>10}{'hub/pygeoapi':>14}{'hub/tipg':>10}"
          f"{'hub cached':>12}")
    for wname, _ in WORKLOADS:
        h, p, t = med[(wname, "hub")], med[(wname, "pygeoapi")], med[(wname, "tipg")]
        c = med[(wname, "hub cached")]
        print(f"{wname:<12}{h:>10.1f}{p:>10.1f}{t:>10.1f}{h / p:>13.1f}x{h / t:>9.1f}x{c:>12.1f}")
    print("goal: hub/pygeoapi >= 10x, hub/tipg >= 5x (hub without its response cache)"
          + (f"; {errors} wrk errors (non-2xx or socket)" if errors else ""))
    hubver = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
    gdal = subprocess.run(["ogr2ogr", "--version"], capture_output=True, text=True).stdout.strip()
    print(f"versions: {hubver}; {pyver}; PostgreSQL {pg_version}; {gdal}; Python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
