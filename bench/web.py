#!/usr/bin/env python3
"""First-screen timing of the explorer, in headless Chromium on the demo data.

Starts `hub serve` (release build unless --binary names another) on fresh demo data on a
loopback port, then loads explorer pages N times each in a fresh browser context (no
cache) and prints the medians of the browser's navigation timing: time to first byte,
DOMContentLoaded, load, and the explorer's own `hub-first-screen` mark (set when the
first view, including its data, is on the page). The goal is a first screen under 300 ms.

Usage: python3 bench/web.py [--runs N] [--binary PATH] [--chromium PATH]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

from playwright.sync_api import sync_playwright

PAGES = [
    ("datasets", "/explorer#/"),
    ("dataset table + map", "/explorer#/dataset/Accommodation"),
    ("stations + map", "/explorer#/stations/ParkingStation"),
    ("landing", "/"),
]
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
TIMING = """() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const mark = performance.getEntriesByName("hub-first-screen")[0];
  return {ttfb: nav.responseStart, dcl: nav.domContentLoadedEventEnd, load: nav.loadEventEnd,
          first: mark ? mark.startTime : null};
}"""


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--binary", default=None)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--port", type=int, default=18083)
    opts = parser.parse_args()
    binary = opts.binary
    if binary is None:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "hub"], cwd=root, check=True)
        target = os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target"))
        binary = os.path.join(target, "release", "hub")
    data = tempfile.mkdtemp(prefix="hub-web-bench-")
    base = f"http://127.0.0.1:{opts.port}"
    env = dict(os.environ, HUB_LOG="warn")
    server = subprocess.Popen([binary, "serve", "--data", data, "--listen", f"127.0.0.1:{opts.port}"], env=env)
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(f"{base}/health", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        else:
            sys.exit("the server did not start")
        measure(base, opts)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(data, ignore_errors=True)


def measure(base, opts):
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=opts.chromium, args=ARGS, headless=True)
        print(f"explorer first screen, medians of {opts.runs} cold loads (fresh context, no cache), ms")
        print(f"{'page':<22}{'TTFB':>8}{'DOMContentLoaded':>18}{'load':>8}{'first screen':>14}")
        results = {}
        for name, path in PAGES:
            samples = []
            for run in range(opts.runs + 1):
                context = browser.new_context()
                page = context.new_page()
                page.goto(base + path)
                if path.startswith("/explorer"):
                    page.wait_for_function("() => performance.getEntriesByName('hub-first-screen').length > 0")
                page.wait_for_load_state("load")
                timing = page.evaluate(TIMING)
                # Let the view's later requests (the map's) finish, so they do not slow
                # the next load down.
                page.wait_for_load_state("networkidle")
                context.close()
                if run:  # the first load warms the server's caches and is not counted
                    samples.append(timing)
            med = {k: statistics.median(s[k] for s in samples) if samples[0][k] is not None else None
                   for k in samples[0]}
            results[name] = med
            first = f"{med['first']:.0f}" if med["first"] is not None else "-"
            print(f"{name:<22}{med['ttfb']:>8.0f}{med['dcl']:>18.0f}{med['load']:>8.0f}{first:>14}")
        browser.close()
        print(json.dumps({"runs": opts.runs, "medians_ms": results}))


if __name__ == "__main__":
    main()
