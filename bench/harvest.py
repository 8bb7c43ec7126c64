#!/usr/bin/env python3
"""Time a harvester paging through a whole collection, on several running servers.

A client that copies a dataset (a harvester, `ogr2ogr`, a mirror) asks for page 1, 2, 3, …
until a page comes back empty. Each deep page used to step over every document before
it, so the whole walk cost grew with the square of the collection. This prints, per
server, the seconds for one complete walk (`fields=Id`, so the time is the store's and
not the serialisation's), in interleaved rounds, and the medians.

Usage: bench/harvest.py [--rounds 2] [--pagesize 100] PATH NAME=PORT [NAME=PORT ...]
  PATH       a Content API list, e.g. /v1/HubActivityPoi, with filters if any
             (/v1/HubActivityPoi?publishedon=idm-marketplace: a marketplace harvest)
  NAME=PORT  a Hub server on 127.0.0.1:PORT (start it with `--response-cache-bytes 0`
             to time the store rather than the response cache)
Round 1 of a freshly started server includes reading its page bookmarks.
"""
import argparse
import http.client
import json
import statistics
import time


def walk(port, path, pagesize):
    """Seconds and documents for one walk through every page of `path`."""
    conn = http.client.HTTPConnection("127.0.0.1", port)
    start, documents, page = time.perf_counter(), 0, 1
    joint = "&" if "?" in path else "?"
    while True:
        conn.request("GET", f"{path}{joint}pagesize={pagesize}&pagenumber={page}&fields=Id")
        response = conn.getresponse()
        body = response.read()
        if response.status != 200:
            raise SystemExit(f"{port}: page {page} answered {response.status}: {body[:200]!r}")
        items = json.loads(body)["Items"]
        if not items:
            return time.perf_counter() - start, documents
        documents += len(items)
        page += 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--pagesize", type=int, default=100)
    parser.add_argument("path")
    parser.add_argument("servers", nargs="+", metavar="NAME=PORT")
    args = parser.parse_args()
    servers = [(s.split("=", 1)[0], int(s.split("=", 1)[1])) for s in args.servers]
    times = {name: [] for name, _ in servers}
    for round_number in range(1, args.rounds + 1):
        for name, port in servers:
            seconds, documents = walk(port, args.path, args.pagesize)
            times[name].append(seconds)
            print(f"round {round_number}  {name:<16} {documents:>8} documents  {seconds:7.2f} s", flush=True)
    print(f"medians of {args.rounds} interleaved rounds, pages of {args.pagesize}:")
    for name, _ in servers:
        print(f"  {name:<16} {statistics.median(times[name]):7.2f} s")


if __name__ == "__main__":
    main()
