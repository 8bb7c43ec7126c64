#!/usr/bin/env python3
"""Side-by-side benchmark of the two storage backends.

Loads the same demo data into a SQLite store and a PostgreSQL database, serves each with
a release `hub serve` on loopback, and per workload prints for both backends:

* throughput and p50 under load (wrk, concurrency 8),
* the median latency of sequential requests (one client, keep-alive),
* the median time the store spent in the query (`hub_store::sql` debug log: SQL sent,
  rows received), so `latency - store time` is the API's own overhead,
* for PostgreSQL, the server-side execution time of the same SQL (EXPLAIN ANALYZE),
* for PostgreSQL, its own CPU per request under load: utime + stime of the server
  processes serving the benchmark's database (/proc, sampled around each wrk run),
  divided by the requests wrk counted (needs the server on this machine),
* Hub's own CPU per request under load (the server process, the same way), so on a
  box shared with other work the cost of a request can be compared where throughput
  is noise: SQLite's cost is Hub's CPU, PostgreSQL's is Hub's plus the server's,
* the PostgreSQL / SQLite throughput ratio per workload (issue 18: at least 0.8x), and
  the ratio of CPU per request (SQLite / PostgreSQL, Hub + server: above 1 means a
  PostgreSQL request costs less).

Usage: bench/backends.py [--postgres ADMIN_URL] [--scale N] [--duration S] [--only content|timeseries]
                         [--baseline HUB_BINARY] [--repeat N] [--cache-off] [--notify] [--provenances N]
                         [--socket]
Without --postgres it starts a throwaway cluster with scripts/pg-throwaway.sh, reached
over TCP on 127.0.0.1, or with --socket over its Unix socket (what docs/deployment.md
recommends when PostgreSQL runs on the same machine; with --postgres, give a socket URL
such as postgres://postgres@%2Fpath%2Fto%2Fsocket-dir:PORT/postgres instead).
With --baseline, a second pair of servers runs that binary (an earlier build of Hub) over
the same two stores, and every workload runs on all four in turn, so a change is compared
before/after in one run on the same noisy machine; --repeat N interleaves N rounds and
prints medians. --cache-off serves with the response cache off (every request reaches
the store; by default repeated requests are cache hits that cost one revision read).
--notify adds a third server of this build on the PostgreSQL database with
`--response-cache-revisions notify` (hits answer from revisions kept by LISTEN/NOTIFY).
--provenances N adds N data collector versions to the Time Series provenances of every
store after the demo load (the demo has one; a platform that has run for years has one
per collector release), none of them used by the demo's values.
Needs wrk and psql.
"""
import argparse, http.client, json, os, re, shutil, socket, statistics, subprocess, sys, tempfile, time, urllib.parse
from datetime import datetime, timedelta, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
HUB = os.path.join(TARGET, "release", "hub")


def sh(*args, **kw):
    return subprocess.run(args, check=True, **kw)


def wait_healthy(port, proc):
    for _ in range(600):
        if proc.poll() is not None:
            sys.exit(f"hub serve on {port} exited with {proc.returncode}")
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            c.request("GET", "/health")
            if c.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    sys.exit(f"hub serve on {port} did not start")


def wrk(port, path, conc, duration):
    out = subprocess.run(["wrk", "-t2", f"-c{conc}", f"-d{duration}s", "--latency", f"http://127.0.0.1:{port}{path}"],
                         check=True, capture_output=True, text=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    p50 = re.search(r"^\s+50%\s+(\S+)", out, re.M).group(1)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return rps, p50, int(non2xx.group(1)) if non2xx else 0, requests


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def backend_cpu(database):
    """utime + stime (seconds) per PostgreSQL server process serving `database`, found by
    its process title (`postgres: USER DATABASE HOST(PORT) STATE`)."""
    cpu = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                title = f.read().replace(b"\0", b" ").decode(errors="replace").split()
            if len(title) < 3 or title[0] != "postgres:" or title[2] != database:
                continue
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu[pid] = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
        except OSError:
            continue
    return cpu


def process_cpu(pid):
    """utime + stime (seconds) of one process, its threads included."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def cpu_spent(before, after):
    """CPU seconds between two `backend_cpu` samples (a process that appeared counts whole)."""
    return sum(t - before.get(pid, 0.0) for pid, t in after.items())


def sequential(port, path, n):
    c = http.client.HTTPConnection("127.0.0.1", port)
    times = []
    status = None
    for _ in range(n):
        t = time.perf_counter()
        c.request("GET", path)
        r = c.getresponse()
        r.read()
        status = r.status
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), status


class LogTail:
    """Reads the JSON log lines a server appended since the last call."""

    def __init__(self, path):
        self.f = open(path, "r")

    def sql_events(self):
        events = []
        for line in self.f.readlines():
            try:
                e = json.loads(line)
            except ValueError:
                continue
            fields = e.get("fields", {})
            if "micros" in fields and e.get("target") == "hub_store::sql":
                events.append(fields)
        return events


def literal(value):
    """A SqlValue debug rendering (Text("a"), Int(1), Real(1.5), Bool(true), Null) as SQL."""
    m = re.fullmatch(r'Text\("(.*)"\)', value, re.S)
    if m:
        s = json.loads('"' + m.group(1) + '"')
        return "'" + s.replace("'", "''") + "'"
    m = re.fullmatch(r"(?:Int|Real)\((.*)\)", value)
    if m:
        return m.group(1)
    m = re.fullmatch(r"Bool\((.*)\)", value)
    if m:
        return m.group(1)
    return "NULL"


def split_params(rendered):
    inner = rendered.strip()[1:-1]
    out, depth, cur, in_str, esc = [], 0, "", False, False
    for ch in inner:
        if in_str:
            cur += ch
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def explain_ms(db_url, sql, params):
    lits = [literal(p) for p in split_params(params)]
    # Substitute from the highest number down so $1 does not eat $10.
    for i in range(len(lits), 0, -1):
        sql = re.sub(r"\$%d(?!\d)" % i, lambda _m, v=lits[i - 1]: v, sql)
    times = []
    for _ in range(5):
        out = subprocess.run(["psql", db_url, "-X", "-q", "-t", "-A", "-c", "EXPLAIN (ANALYZE, FORMAT JSON) " + sql],
                             capture_output=True, text=True)
        if out.returncode != 0:
            return None
        times.append(json.loads(out.stdout)[0]["Execution Time"])
    return statistics.median(times)


def workloads(kind, base_port):
    c = http.client.HTTPConnection("127.0.0.1", base_port)
    c.request("GET", "/v1/HubActivityPoi?pagesize=1&pagenumber=37&fields=Id")
    poi = json.loads(c.getresponse().read())["Items"][0]["Id"]
    now = datetime.now(timezone.utc)
    frm = (now - timedelta(days=7)).strftime("%Y-%m-%dT%H:%M")
    to = now.strftime("%Y-%m-%dT%H:%M")
    q = urllib.parse.quote
    content = [
        ("single GET by id", f"/v1/HubActivityPoi/{poi}"),
        ("list page 1", "/v1/HubActivityPoi"),
        ("list fields=Id,Detail.de.Title", "/v1/HubActivityPoi?fields=Id,Detail.de.Title"),
        ("searchfilter=hütte", "/v1/HubActivityPoi?searchfilter=" + q("hütte")),
        ("tagfilter=and(hiking,summer)", "/v1/HubActivityPoi?tagfilter=and(hiking,summer)"),
        ("rawfilter, 3 clauses", "/v1/HubActivityPoi?rawfilter=" + q("and(gt(GpsInfo.0.Altitude,500),like(Detail.de.Title,'a'),isnotnull(ContactInfos.de.City))")),
        ("radius 10 km", "/v1/HubActivityPoi?latitude=46.4983&longitude=11.3548&radius=10000"),
        ("WKT polygon", "/v1/HubActivityPoi?polygon=" + q("POLYGON((11.2 46.4,11.5 46.4,11.5 46.6,11.2 46.6,11.2 46.4))")),
        ("seed order, page 3", "/v1/Event?seed=7&pagenumber=3"),
        ("deep page 300 of 10", "/v1/Accommodation?pagesize=10&pagenumber=300"),
        ("OGC bbox page", "/ogc/collections/HubActivityPoi/items?bbox=11.3,46.4,11.5,46.6&limit=100"),
    ]
    timeseries = [
        ("TS latest, all ParkingStation", "/v2/flat/ParkingStation/free,occupied/latest?limit=-1"),
        ("TS 7 days of one series, flat", f"/v2/flat/ParkingStation/free/{frm}/{to}?where=scode.eq.%22P0001%22&limit=-1"),
        ("TS 7 days of one series, tree", f"/v2/tree/ParkingStation/free/{frm}/{to}?where=scode.eq.%22P0001%22&limit=-1"),
        ("TS stations of a type", "/v2/flat/ParkingStation?limit=-1"),
        ("TS where mvalue + bbox", "/v2/flat/ParkingStation/free/latest?limit=-1&where=" + q("mvalue.gt.100,scoordinate.bbi.(11.3,46.45,11.4,46.55)")),
    ]
    return {"content": content, "timeseries": timeseries, "all": content + timeseries}[kind]


def add_provenances(sqlite_dir, pg_url, n):
    """N more provenances in both stores: releases of a few dozen data collectors."""
    rows = [(f"bench-provenance-{k}", "bench", f"bench-collector-{k % 40}", f"1.{k}") for k in range(n)]
    import sqlite3
    conn = sqlite3.connect(os.path.join(sqlite_dir, "hub.sqlite3"))
    with conn:
        conn.executemany("INSERT INTO ts_provenance (uuid, lineage, data_collector, data_collector_version) VALUES (?, ?, ?, ?)", rows)
    conn.close()
    sh("psql", pg_url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c",
       "INSERT INTO ts_provenance (uuid, lineage, data_collector, data_collector_version) "
       f"SELECT 'bench-provenance-' || k, 'bench', 'bench-collector-' || (k % 40), '1.' || k FROM generate_series(0, {n - 1}) k")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--postgres")
    ap.add_argument("--socket", action="store_true",
                    help="reach the throwaway cluster over its Unix socket instead of TCP")
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--sequential", type=int, default=40)
    ap.add_argument("--only", choices=["content", "timeseries"], default="all")
    ap.add_argument("--baseline", help="an earlier hub binary served side by side over the same stores")
    ap.add_argument("--repeat", type=int, default=1, help="interleaved rounds per workload; medians are printed")
    ap.add_argument("--cache-off", action="store_true", help="serve with the response cache off")
    ap.add_argument("--provenances", type=int, default=0,
                    help="data collector versions added to the Time Series provenances of every store")
    ap.add_argument("--notify", action="store_true",
                    help="a third server of this build on the same PostgreSQL database with --response-cache-revisions notify")
    args = ap.parse_args()
    if args.socket and args.postgres:
        sys.exit("--socket applies to the throwaway cluster; give --postgres a socket URL instead")
    for tool in ("wrk", "psql"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is missing (apt-get install {'wrk' if tool == 'wrk' else 'postgresql-client'})")

    sh("cargo", "build", "--release", "-q", "-p", "hub", cwd=ROOT)
    work = tempfile.mkdtemp(prefix="hub-bench-")
    cluster = None
    admin = args.postgres
    if not admin:
        # Its own directory under the temporary root: the cluster runs as the postgres
        # user when we are root, and that user cannot enter our private work directory.
        cluster = tempfile.mkdtemp(prefix="hub-bench-pg-")
        admin = subprocess.run([os.path.join(ROOT, "scripts", "pg-throwaway.sh"), "start", cluster],
                               check=True, capture_output=True, text=True).stdout.strip()
        if args.socket:
            # The script puts the socket in the cluster's directory; the port names it.
            port = urllib.parse.urlparse(admin).port
            admin = f"postgres://postgres@{urllib.parse.quote(cluster, safe='')}:{port}/postgres"
    print(f"PostgreSQL: {re.sub(r'//[^@/]*@', '//', admin)}")
    def database(name):
        url = re.sub(r"/[^/?]*(\?|$)", rf"/{name}\1", admin, count=1) if admin.count("/") >= 3 else f"{admin}/{name}"
        sh("psql", admin, "-X", "-q", "-c", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)", "-c",
           f"CREATE DATABASE {name} TEMPLATE template0 ENCODING 'UTF8'")
        return url

    procs = []
    try:
        # Each binary loads its own pair of stores (the demo is deterministic): a newer
        # build may have migrated a schema an older one refuses to open.
        binaries = [("", HUB)] + ([("base-", os.path.abspath(args.baseline))] if args.baseline else [])
        stores = {}
        for prefix, binary in binaries:
            data = os.path.join(work, prefix + "sqlite")
            db = database("hub_bench" + ("_base" if prefix else ""))
            env = dict(os.environ, HUB_LOG="warn")
            t = time.perf_counter()
            sh(binary, "demo", "--data", data, "--scale", str(args.scale), env=env, stdout=subprocess.DEVNULL)
            load_sqlite = time.perf_counter() - t
            t = time.perf_counter()
            sh(binary, "demo", "--database", db, "--scale", str(args.scale), env=env, stdout=subprocess.DEVNULL)
            load_pg = time.perf_counter() - t
            print(f"{prefix or 'this '}build: demo scale {args.scale} loaded: SQLite {load_sqlite:.1f} s, PostgreSQL {load_pg:.1f} s")
            if args.provenances:
                add_provenances(data, db, args.provenances)
                print(f"{prefix or 'this '}build: {args.provenances} provenances added to each store")
            stores[prefix] = (data, db)
        servers = {}
        databases = {}
        pids = {}
        instances = [(prefix + name, binary, store_args, port + 10 * i)
                     for i, (prefix, binary) in enumerate(binaries)
                     for name, store_args, port in (("sqlite", ["--data", stores[prefix][0]], 18181),
                                                    ("postgres", ["--database", stores[prefix][1]], 18182))]
        if args.notify:
            instances.append(("notify-postgres", HUB, ["--database", stores[""][1], "--response-cache-revisions", "notify"], 18183))
        for name, binary, store_args, port in instances:
            # Another session's server on the port would answer /health for ours and
            # be measured in its place.
            probe = socket.socket()
            # Connections of an earlier run left in TIME_WAIT do not count; a listener does.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                sys.exit(f"port {port} is in use (another benchmark running?)")
            finally:
                probe.close()
            log = os.path.join(work, f"{name}.log")
            env = dict(os.environ, HUB_LOG="warn,hub_store::sql=debug")
            cache = ["--response-cache-bytes", "0"] if args.cache_off else []
            p = subprocess.Popen([binary, "serve", "--no-demo", "--log-format", "json", "--listen", f"127.0.0.1:{port}", *store_args, *cache],
                                 env=env, stdout=subprocess.DEVNULL, stderr=open(log, "w"))
            procs.append(p)
            wait_healthy(port, p)
            servers[name] = (port, LogTail(log))
            pids[name] = p.pid
            databases[name] = store_args[1]
        print(f"{os.cpu_count()} cores; wrk -c8 for {args.duration}s; {args.sequential} sequential requests for latency and store time;"
              f" response cache {'off' if args.cache_off else 'on'}\n")
        header = f"{'workload':32} {'backend':14} {'req/s c=8':>10} {'p50 c=8':>9} {'latency c=1':>12} {'store':>8} {'API share':>10} {'EXPLAIN':>9} {'Hub CPU/req':>12} {'PG CPU/req':>11}"
        print(header)
        print("-" * len(header))
        for label, path in workloads(args.only, servers["sqlite"][0]):
            rounds = {name: [] for name in servers}
            pg_cpu = {name: [] for name in servers}
            hub_cpu = {name: [] for name in servers}
            for _ in range(args.repeat):
                for name, (port, _tail) in servers.items():
                    database = urllib.parse.urlparse(databases[name]).path.lstrip("/") if name.endswith("postgres") else None
                    before = backend_cpu(database) if database else None
                    hub_before = process_cpu(pids[name])
                    rounds[name].append(wrk(port, path, 8, args.duration))
                    hub_cpu[name].append((process_cpu(pids[name]) - hub_before) / max(rounds[name][-1][3], 1))
                    if database:
                        pg_cpu[name].append(cpu_spent(before, backend_cpu(database)) / max(rounds[name][-1][3], 1))
            for name, (port, tail) in servers.items():
                rps = statistics.median(r[0] for r in rounds[name])
                p50 = sorted(rounds[name], key=lambda r: r[0])[len(rounds[name]) // 2][1]
                non2xx = sum(r[2] for r in rounds[name])
                tail.sql_events()
                lat, status = sequential(port, path, args.sequential)
                events = tail.sql_events()
                store = statistics.median(float(e["micros"]) for e in events) / 1000 if events else None
                explain = None
                if name.endswith("postgres") and events:
                    explain = explain_ms(databases[name], events[-1]["sql"], events[-1]["params"])
                fmt = lambda v: f"{v:.2f} ms" if v is not None else "-"
                share = f"{lat - store:.2f} ms" if store is not None else "-"
                warn = f"  ({non2xx} non-2xx, last {status})" if non2xx or status != 200 else ""
                cpu = f"{statistics.median(pg_cpu[name]) * 1e6:.0f} us" if pg_cpu[name] else "-"
                own = f"{statistics.median(hub_cpu[name]) * 1e6:.0f} us"
                print(f"{label:32} {name:14} {rps:10.0f} {p50:>9} {fmt(lat):>12} {fmt(store):>8} {share:>10} {fmt(explain):>9} {own:>12} {cpu:>11}{warn}")
            ratios = []
            for prefix in [p for p, _b in binaries]:
                pg = statistics.median(r[0] for r in rounds[prefix + "postgres"])
                lite = statistics.median(r[0] for r in rounds[prefix + "sqlite"])
                pg_cost = statistics.median(hub_cpu[prefix + "postgres"]) + (statistics.median(pg_cpu[prefix + "postgres"]) if pg_cpu[prefix + "postgres"] else 0)
                lite_cost = statistics.median(hub_cpu[prefix + "sqlite"])
                ratios.append(f"{prefix or 'this '}req/s {pg / lite:.2f}x, CPU {lite_cost / pg_cost:.2f}x" if pg_cost else f"{prefix or 'this '}req/s {pg / lite:.2f}x")
            if args.notify:
                pg = statistics.median(r[0] for r in rounds["notify-postgres"])
                lite = statistics.median(r[0] for r in rounds["sqlite"])
                pg_cost = statistics.median(hub_cpu["notify-postgres"]) + (statistics.median(pg_cpu["notify-postgres"]) if pg_cpu["notify-postgres"] else 0)
                ratios.append(f"notify req/s {pg / lite:.2f}x, CPU {statistics.median(hub_cpu['sqlite']) / pg_cost:.2f}x")
            print(f"{'':32} {'PG/SQLite':14} {'; '.join(ratios)}")
            if args.baseline:
                ratios = []
                for backend in ("sqlite", "postgres"):
                    now_rps = statistics.median(r[0] for r in rounds[backend])
                    base_rps = statistics.median(r[0] for r in rounds["base-" + backend])
                    ratios.append(f"{backend} {now_rps / base_rps:.2f}x")
                print(f"{'':32} {'this/baseline':14} {', '.join(ratios)}")
        for name, p in zip(servers, procs):
            with open(f"/proc/{p.pid}/status") as f:
                rss = next(l for l in f if l.startswith("VmHWM")).split()[1]
            print(f"{name} server peak RSS: {int(rss) // 1024} MB")
    finally:
        for p in procs:
            p.terminate()
            p.wait()
        if cluster:
            subprocess.run([os.path.join(ROOT, "scripts", "pg-throwaway.sh"), "stop", cluster])
            shutil.rmtree(cluster, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
