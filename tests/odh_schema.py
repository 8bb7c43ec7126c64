#!/usr/bin/env python3
"""Validates Hub responses against the Open Data Hub's published OpenAPI response schemas.

Reads one JSON object on stdin:
  {"fixtures": "<dir with content/*.json and timeseries-openapi3.yml>",
   "cases": [{"label": "...", "slice": "content/odhactivitypoi.json" | "timeseries-openapi3.yml",
              "path": "/v1/ODHActivityPoi/{id}", "body": <the response JSON>}]}
and prints one line per mismatch, `label: $.json.path: message`, then a summary. Exit
status 0 when every body fits the 200 response schema of its OpenAPI operation, 1 when
any does not, 2 when the input or a schema cannot be read.

OpenAPI 3.0 schemas are not JSON Schema: `nullable` is rewritten to a `null` type, and
`$ref`s resolve inside the slice document.
"""
import json
import os
import sys

try:
    import jsonschema
except ImportError:  # the caller reports the skip
    print("python package jsonschema is not installed", file=sys.stderr)
    sys.exit(3)


def load_slice(fixtures, name, cache={}):
    if name not in cache:
        path = os.path.join(fixtures, name)
        with open(path, encoding="utf-8") as f:
            if name.endswith((".yml", ".yaml")):
                import yaml

                doc = yaml.safe_load(f)
            else:
                doc = json.load(f)
        cache[name] = to_json_schema(doc)
    return cache[name]


def to_json_schema(node):
    """OpenAPI 3.0 `nullable: true` becomes JSON Schema's `null` member of `type`/`enum`."""
    if isinstance(node, list):
        return [to_json_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: to_json_schema(v) for k, v in node.items()}
    if out.pop("nullable", False) is True:
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = out["enum"] + [None]
        if "$ref" in out or "allOf" in out or "oneOf" in out or "anyOf" in out:
            out = {"anyOf": [{"type": "null"}, out]}
    return out


def response_schema(doc, path):
    operation = doc["paths"][path]["get"]
    content = operation["responses"]["200"]["content"]
    media = content.get("application/json") or next(iter(content.values()))
    return media["schema"]


def json_path(error):
    out = "$"
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def main():
    request = json.load(sys.stdin)
    fixtures = request["fixtures"]
    mismatches = 0
    for case in request["cases"]:
        try:
            doc = load_slice(fixtures, case["slice"])
            schema = dict(response_schema(doc, case["path"]))
        except (OSError, KeyError, ValueError) as e:
            print(f"{case['label']}: cannot read the schema: {e!r}", file=sys.stderr)
            sys.exit(2)
        root = {**doc, **schema}
        validator = jsonschema.Draft4Validator(root)
        errors = sorted(validator.iter_errors(case["body"]), key=lambda e: list(e.absolute_path))
        for error in errors:
            mismatches += 1
            print(f"{case['label']}: {json_path(error)}: {error.message[:300]}")
    print(f"{len(request['cases'])} responses checked, {mismatches} mismatches")
    sys.exit(1 if mismatches else 0)


if __name__ == "__main__":
    main()
