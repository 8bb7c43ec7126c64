"""Reads Hub's OGC API - Features with OWSLib, the client QGIS plugins and notebooks use.

Usage: ogc_owslib_check.py BASE_URL COLLECTION MINX MINY MAXX MAXY PAGE_SIZE

Prints one JSON object: the collection ids, the feature ids of every page of the bbox
query (paged with limit/offset until a short page), and the id of one feature fetched
by id. The Rust test (crates/hub/tests/ogc_clients.rs) compares them with the Content API.
"""

import json
import sys

from owslib.ogcapi.features import Features


def main():
    base, collection = sys.argv[1], sys.argv[2]
    bbox = [float(v) for v in sys.argv[3:7]]
    page_size = int(sys.argv[7])
    api = Features(base + "/ogc")
    collections = [c["id"] for c in api.collections()["collections"]]
    ids, offset, pages, matched = [], 0, 0, None
    while True:
        page = api.collection_items(collection, bbox=bbox, limit=page_size, offset=offset)
        matched = page.get("numberMatched")
        got = [f["id"] for f in page["features"]]
        ids.extend(got)
        pages += 1
        if len(got) < page_size or pages > 1000:
            break
        offset += page_size
    one = api.collection_item(collection, ids[0]) if ids else None
    print(json.dumps({
        "collections": collections,
        "ids": ids,
        "pages": pages,
        "matched": matched,
        "item": one["id"] if one else None,
        "item_geometry": one["geometry"] if one else None,
    }))


if __name__ == "__main__":
    main()
