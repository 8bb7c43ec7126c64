#!/usr/bin/env python3
"""Checks Hub's CSV and JSON-LD output with standard readers.

Usage: formats_check.py DIR — DIR holds files written by the Rust test
`content_api::filters_formats::formats_pass_standard_readers`: *.csv (parsed with the
csv module: every row has as many fields as the header) and *.jsonld (expanded with
pyld, installed with pip when missing; skipped with a printed reason if that fails).
"""
import csv
import glob
import io
import json
import os
import subprocess
import sys


def check_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        data = f.read()
    assert data.endswith("\r\n"), f"{path}: lines must end with CRLF"
    rows = list(csv.reader(io.StringIO(data, newline=""), strict=True))
    header, body = rows[0], rows[1:]
    assert len(set(header)) == len(header), f"{path}: duplicate columns"
    for n, row in enumerate(body, 2):
        assert len(row) == len(header), f"{path}: row {n} has {len(row)} fields, header {len(header)}"
    print(f"ok   csv    {os.path.basename(path)}: {len(body)} rows x {len(header)} columns")


def load_pyld():
    try:
        from pyld import jsonld  # noqa: F401
        return jsonld
    except ImportError:
        pass
    try:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--user", "pyld"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    except Exception:
        try:
            subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--break-system-packages", "--user", "pyld"],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        except Exception as e:  # no network or no pip
            print(f"skip jsonld: pyld is not installed and pip failed ({e})")
            return None
    import site
    import importlib
    sys.path.append(site.getusersitepackages())
    importlib.invalidate_caches()
    try:
        from pyld import jsonld
        return jsonld
    except ImportError as e:
        print(f"skip jsonld: pyld cannot be imported ({e})")
        return None


def check_jsonld(jsonld, path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    expanded = jsonld.expand(doc)
    assert expanded, f"{path}: expands to nothing"
    types = sorted({t for node in expanded for t in node.get("@type", [])})
    assert all(t.startswith("https://schema.org/") for t in types), f"{path}: types {types}"
    print(f"ok   jsonld {os.path.basename(path)}: {len(expanded)} nodes, types {', '.join(types)}")


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "."
    csvs = sorted(glob.glob(os.path.join(folder, "*.csv")))
    docs = sorted(glob.glob(os.path.join(folder, "*.jsonld")))
    if not csvs and not docs:
        print(f"nothing to check in {folder}")
        return 1
    for path in csvs:
        check_csv(path)
    jsonld = load_pyld() if docs else None
    if jsonld:
        for path in docs:
            check_jsonld(jsonld, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
