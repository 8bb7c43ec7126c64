#!/usr/bin/env python3
"""Time the first request of each of several search terms on several running servers.

A search box sends a new term with every keystroke, so what a user waits for is the
first answer to a term, before the server keeps its count or prefix; `slow_requests.py`
times repeats. This sends `GET /v1/TYPE?searchfilter=TERM` once per term to each server
in turn (interleaved, one request at a time) and prints per term each server's time and
total (`~` marks an estimate), then each server's median.

Usage: bench/first_searches.py TYPE TERM [TERM ...] -- NAME=PORT [NAME=PORT ...]
  e.g. bench/first_searches.py Accommodation i e ho hotel -- before=18503 after=18501
Start the servers just before (`hub serve --no-demo --response-cache-bytes 0`), so no
term was asked before, and use terms not asked in an earlier run of the same servers.
"""

import http.client
import json
import statistics
import sys
import time
import urllib.parse


def main():
    args = sys.argv[1:]
    if "--" not in args or args.index("--") < 2:
        sys.exit(__doc__)
    split = args.index("--")
    entity, terms = args[0], args[1:split]
    servers = [(s.split("=")[0], int(s.split("=")[1])) for s in args[split + 1 :]]
    times = {name: [] for name, _ in servers}
    for term in terms:
        row = []
        for name, port in servers:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
            start = time.perf_counter()
            conn.request("GET", f"/v1/{entity}?searchfilter={urllib.parse.quote(term)}")
            response = conn.getresponse()
            body = json.loads(response.read())
            ms = (time.perf_counter() - start) * 1000
            conn.close()
            times[name].append(ms)
            estimated = "~" if body.get("TotalResultsEstimated") else ""
            row.append(f"{name} {ms:7.1f} ms {body.get('TotalResults')}{estimated}")
        print(f"{term:8} " + " | ".join(row))
    print("medians: " + ", ".join(f"{n} {statistics.median(v):.1f} ms" for n, v in times.items()))


if __name__ == "__main__":
    main()
