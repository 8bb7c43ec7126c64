#!/usr/bin/env python3
"""Validates Hub responses against the Open Data Hub's published OpenAPI response schemas.

Reads one JSON object on stdin:
  {"fixtures": "<dir with content/*.json and timeseries-openapi3.yml>",
   "cases": [{"label": "...", "slice": "content/odhactivitypoi.json" | "timeseries-openapi3.yml",
              "path": "/v1/ODHActivityPoi/{id}", "body": <the response JSON>}]}
and prints one line per mismatch, `label: $.json.path: message`, then a summary. Exit
status 0 when every body fits the 200 response schema of its OpenAPI operation, 1 when
any does not, 2 when the input or a schema cannot be read, 3 when jsonschema or PyYAML
is not installed.

OpenAPI 3.0 schemas are not JSON Schema: `nullable` is rewritten to a `null` type, and
`$ref`s resolve inside the slice document.
"""
import json
import os
import sys

try:
    import jsonschema
    import yaml
except ImportError as missing:  # the caller reports the skip (exit status 3)
    print(f"python package {missing.name} is not installed", file=sys.stderr)
    sys.exit(3)


# Where Hub deliberately differs from the ODH schemas (each listed with its reason in
# docs/decisions.md, "Open Data Hub compatibility (issue 14)"). Everything else must fit.
# Properties Hub adds to an ODH object schema that forbids additional properties:
EXTRA_PROPERTIES = {
    # _Meta.LastChange: the spec's _Meta table has it (last real change).
    "Metadata": ["LastChange"],
    # GpsInfo.Default marks the position geo searches use.
    "GpsInfo": ["Default"],
    # The spec's common fields, present on every entity (Tags, TagIds, AreaIds, HasLanguage,
    # LocationInfo, _Meta, Active/Source/Shortname/Detail, the two tag systems).
    "AccommodationV2": ["AreaIds", "ContactInfos", "Detail"],
    "AreaLinked": ["AreaIds", "GpsInfo", "HasLanguage", "ImageGallery", "ODHTags", "SmgTags", "TagIds", "Tags", "VisibleInSearch"],
    "ArticlesLinked": ["AreaIds"],
    "DistrictLinked": ["AreaIds", "LocationInfo", "TagIds", "Tags"],
    "EventLinked": ["AreaIds"],
    "EventShort": ["AreaIds", "ODHTags", "SmgTags", "TagIds", "Tags", "_Meta"],
    "MunicipalityLinked": ["AreaIds", "LocationInfo", "TagIds", "Tags"],
    "RegionLinked": ["AreaIds", "TagIds", "Tags"],
    "SkiAreaLinked": ["TagIds", "Tags", "VisibleInSearch"],
    "SkiRegionLinked": ["AreaIds", "SkiAreaIds", "TagIds", "Tags", "VisibleInSearch"],
    "SourceLinked": ["Active", "Detail", "HasLanguage", "Shortname", "Source"],
    "TagLinked": ["HasLanguage"],
    "TourismvereinLinked": ["AreaIds", "LocationInfo", "TagIds", "Tags"],
    "WebcamInfo": ["LocationInfo", "ODHTags", "TagIds", "Tags", "_Meta"],
    "BezirksWeather": ["Active", "FirstImport", "HasLanguage", "LastChange", "Shortname", "Source", "_Meta"],
    "WeatherRealTime": ["Active", "FirstImport", "GpsInfo", "HasLanguage", "LastChange", "LicenseInfo", "Shortname", "Source", "_Meta", "wg"],
    "WeatherForecastLinked": ["Active", "HasLanguage", "Source"],
    # Announcement: DATEX II times and the situation's geometry.
    "Announcement": ["CreationTime", "Geo", "VersionTime"],
    # EventShort rooms carry their booking window; the envelope always has page links.
    "RoomBooked": ["End", "Start"],
    "EventShortResult": ["NextPage", "PreviousPage"],
    # GeoShapes answer GeoJSON geometry, their own link and the output SRID.
    "GeoShapeJson": ["Self", "Srid"],
    "Geometry": ["coordinates", "type"],
}
# Properties Hub types differently on purpose: ids are strings everywhere; weather texts
# stay multilingual objects so that `language` projects them.
RETYPED = {
    "BezirksWeather": ["Id", "DistrictName"],
    "BezirksForecast": ["WeatherDesc"],
    "Forecast24Hours": ["WeatherDesc"],
    "Forecast3Hours": ["WeatherDesc"],
    # Real-time readings are numbers (the reference passes the provider's texts on), so
    # that rawfilter compares them as numbers.
    "WeatherRealTime": ["t", "n", "sd", "rh", "q", "p", "ff", "dd", "hs", "w", "wMax", "gs", "wt", "visibility"],
}
# `_Meta.Type` values of datasets the ODH enum does not name.
EXTRA_META_TYPES = ["source", "geoshape", "announcement"]


def apply_deviations(doc):
    schemas = doc.get("components", {}).get("schemas", {})
    for name, props in EXTRA_PROPERTIES.items():
        if name in schemas:
            schemas[name].setdefault("properties", {}).update({p: {} for p in props})
    for name, props in RETYPED.items():
        if name in schemas:
            schemas[name].setdefault("properties", {}).update({p: {} for p in props})
    meta_type = schemas.get("Metadata", {}).get("properties", {}).get("Type")
    if meta_type and isinstance(meta_type.get("enum"), list):
        meta_type["enum"] = meta_type["enum"] + EXTRA_META_TYPES
    return doc


def is_hub_envelope(body):
    return isinstance(body, dict) and "Items" in body and "TotalResults" in body


def load_slice(fixtures, name, cache={}):
    if name not in cache:
        path = os.path.join(fixtures, name)
        with open(path, encoding="utf-8") as f:
            if name.endswith((".yml", ".yaml")):
                doc = yaml.safe_load(f)
            else:
                doc = json.load(f)
        cache[name] = to_json_schema(apply_deviations(doc))
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
    responses = operation["responses"]
    content = (responses.get("200") or responses[200])["content"]
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
        body = case["body"]
        targets = [("$", body, schema)]
        resolved = schema
        if "$ref" in schema:
            resolved = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
        if is_hub_envelope(body) and "TotalResults" not in resolved.get("properties", {}):
            # Hub answers every list in the envelope (decisions.md, "Envelope always"),
            # where the reference answers a bare array or object: check each item.
            item = resolved.get("items", schema) if resolved.get("type") in ("array", ["array", "null"]) else schema
            targets = [(f"$.Items[{i}]", v, item) for i, v in enumerate(body["Items"])]
        elif isinstance(body, dict) and resolved.get("type") in ("array", ["array", "null"]):
            # A single GET answers the document itself where the reference answers a
            # one-element array (Weather/Realtime/{id}).
            targets = [("$", body, resolved["items"])]
        for prefix, instance, target in targets:
            validator = jsonschema.Draft4Validator({**doc, **target})
            errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
            for error in errors:
                mismatches += 1
                print(f"{case['label']}: {prefix}{json_path(error)[1:]}: {error.message[:300]}")
    print(f"{len(request['cases'])} responses checked, {mismatches} mismatches")
    sys.exit(1 if mismatches else 0)


if __name__ == "__main__":
    main()
