#!/usr/bin/env python3
"""Time requests too slow for wrk (tenths of a second to seconds each) on several running
servers, side by side.

`bench/cpu_per_request.sh` loads a server with wrk, whose requests time out when one
answer takes a second, so a slow request before a fix has no figure there. This sends
the same request to each server in turn, one at a time, in interleaved rounds, and
prints per server the median time and what the answer held: its status, its total and a
digest of its items' ids (or of the whole body when it is not a list), so a faster
answer is seen to be the same answer.

Usage: bench/slow_requests.py [--rounds 5] PATH NAME=PORT [NAME=PORT ...]
  PATH       e.g. '/v1/ODHActivityPoi?rawsort=Shortname&pagenumber=2'
  NAME=PORT  a Hub server on 127.0.0.1:PORT (start it with `--response-cache-bytes 0`
             to time the store rather than the response cache)
The first round includes what a server keeps between requests (bookmarks, prefixes,
counts); a fresh server's first answer is printed on its own as `first`.
"""

import argparse
import hashlib
import http.client
import json
import statistics
import time


def fetch(port, path):
    """Seconds, status and a short description of the answer to one request."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    start = time.perf_counter()
    conn.request("GET", path)
    response = conn.getresponse()
    body = response.read()
    seconds = time.perf_counter() - start
    conn.close()
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("Items"), list):
        ids = [item.get("Id") if isinstance(item, dict) else item for item in parsed["Items"]]
        digest = hashlib.sha256(json.dumps(ids).encode()).hexdigest()[:10]
        held = f"total {parsed.get('TotalResults')}, {len(ids)} items {digest}"
    else:
        held = f"{len(body)} bytes {hashlib.sha256(body).hexdigest()[:10]}"
    return seconds, response.status, held


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("path")
    parser.add_argument("servers", nargs="+", metavar="NAME=PORT")
    args = parser.parse_args()
    servers = [(s.split("=", 1)[0], int(s.split("=", 1)[1])) for s in args.servers]
    times = {name: [] for name, _ in servers}
    answers = {}
    for round_number in range(1, args.rounds + 1):
        for name, port in servers:
            seconds, status, held = fetch(port, args.path)
            times[name].append(seconds)
            answers[name] = f"{status}, {held}"
            if round_number == 1:
                print(f"first  {name:<16} {seconds * 1000:10.1f} ms  {answers[name]}", flush=True)
    print(f"medians of {args.rounds} interleaved rounds, one request at a time:")
    for name, _ in servers:
        print(f"  {name:<16} {statistics.median(times[name]) * 1000:10.1f} ms  {answers[name]}")
    if len(set(answers.values())) > 1:
        print("the answers differ between servers")


if __name__ == "__main__":
    main()
