#!/usr/bin/env python3
"""Time the first request of a list after a write, on several running servers.

A live deployment is written to all day (imports, editors), and each write to an
entity ends what servers keep for its lists (counts, bookmarks, prefixes of orders), so
the request a user most often waits for is the first one after a write, which
`slow_requests.py` (repeats) does not time. For each round and server in turn this
writes one document of the list's entity through that server (a PUT of the document
as read, which changes nothing but its revision) and times the next request of PATH,
then prints per server the median and what the answer held.

Usage: bench/after_write.py [--rounds 5] [--write TYPE] PATH NAME=PORT [NAME=PORT ...]
  PATH       a Content API list, e.g. '/v1/ODHActivityPoi?rawsort=Shortname', or any
             other request with --write naming the type written before it
  TYPE       the Content API type to write (default: the list's, from PATH)
  NAME=PORT  a Hub server on 127.0.0.1:PORT with the demo writer client (`hub serve`
             prints its warning), started with `--response-cache-bytes 0`
Servers may share one store: each round writes just before each request it times.
"""

import argparse
import http.client
import json
import statistics
import urllib.parse

from slow_requests import fetch

WRITER = {
    "grant_type": "client_credentials",
    "client_id": "hub-demo-writer",
    "client_secret": "hub-demo-writer-secret-for-demonstration-only",
}


def call(port, method, path, body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    conn.request(method, path, body=body, headers=headers or {})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    if response.status >= 300:
        raise SystemExit(f"{port}: {method} {path} answered {response.status}: {data[:200]!r}")
    return data


def token(port):
    form = urllib.parse.urlencode(WRITER)
    path = "/auth/realms/hub/protocol/openid-connect/token"
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    return json.loads(call(port, "POST", path, form, headers))["access_token"]


def rewrite_one(port, route, bearer):
    """PUTs the list's first document back as read."""
    doc = json.loads(call(port, "GET", f"/v1/{route}?pagesize=1"))["Items"][0]
    headers = {"Authorization": f"Bearer {bearer}", "Content-Type": "application/json"}
    call(port, "PUT", f"/v1/{route}/{urllib.parse.quote(doc['Id'])}", json.dumps(doc), headers)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--write", metavar="TYPE")
    parser.add_argument("path")
    parser.add_argument("servers", nargs="+", metavar="NAME=PORT")
    args = parser.parse_args()
    route = args.write or args.path.split("?")[0].removeprefix("/v1/").split("/")[0]
    servers = [(s.split("=", 1)[0], int(s.split("=", 1)[1])) for s in args.servers]
    bearers = {port: token(port) for _, port in servers}
    times = {name: [] for name, _ in servers}
    answers = {}
    for _ in range(args.rounds):
        for name, port in servers:
            rewrite_one(port, route, bearers[port])
            seconds, status, held = fetch(port, args.path)
            if status != 200:
                raise SystemExit(f"{port}: GET {args.path} answered {status} ({held})")
            times[name].append(seconds * 1000)
            answers[name] = held
    print(args.path)
    for name, _ in servers:
        print(f"  {name:>12}: median {statistics.median(times[name]):9.1f} ms"
              f"  ({answers[name]})")


if __name__ == "__main__":
    main()
