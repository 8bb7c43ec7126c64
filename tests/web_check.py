"""Drives the web face of a running Hub in headless Chromium, as a person would.

Usage: python3 tests/web_check.py BASE_URL SCREENSHOT_DIR [CHROMIUM]

Opens `/`, follows a dataset link into the explorer, pages, searches, sees the API's 400
message for a wrong rawfilter, opens an item, sees map markers, opens a station and its
chart, browses the OGC API's HTML views (collections, a page of features with its map,
a feature), reads the traffic feed, signs in as the demo user and sees an accommodation's room
list appear, and loads the Swagger UI with both OpenAPI documents. Throughout, every
request must stay on the server's host and the console must stay free of errors (a
Content-Security-Policy violation is one). Prints `web_check: ok` at the end; any failed
expectation raises and exits non-zero. Called by crates/hub/tests/web_browser.rs.
"""

import re
import sys
import tempfile
import urllib.parse

from playwright.sync_api import expect, sync_playwright

CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
TIMEOUT_MS = 20_000


def main():
    base, shots = sys.argv[1].rstrip("/"), sys.argv[2]
    executable = sys.argv[3] if len(sys.argv) > 3 else "/usr/bin/chromium"
    host = urllib.parse.urlsplit(base).hostname
    requests, outside, errors = [], [], []

    with sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=executable, args=CHROMIUM_ARGS, headless=True,
            viewport={"width": 1280, "height": 900},
        )
        context.set_default_timeout(TIMEOUT_MS)

        def on_request(request):
            requests.append(request.url)
            parts = urllib.parse.urlsplit(request.url)
            if parts.scheme not in ("data", "blob", "about") and parts.hostname != host:
                outside.append(request.url)

        context.on("request", on_request)
        page = context.pages[0] if context.pages else context.new_page()
        # Chromium logs every answer >= 400 as a console error; the steps that provoke one
        # on purpose (a wrong rawfilter, a wrong password) list its URL here first.
        expected_failures = []

        def on_console(message):
            if message.type != "error":
                return
            url = message.location.get("url", "")
            if "Failed to load resource" in message.text and any(e in url for e in expected_failures):
                return
            errors.append(f"console {message.type}: {message.text} ({url})")

        page.on("console", on_console)
        page.on("pageerror", lambda e: errors.append(f"page error: {e}"))

        def step(name):
            print(f"web_check: {name}", flush=True)

        def screenshot(name):
            path = f"{shots}/{name}.png"
            page.screenshot(path=path, full_page=True)
            print(f"web_check: screenshot {path}", flush=True)

        step("landing page")
        page.goto(f"{base}/")
        expect(page.locator("h1")).to_contain_text("Hub")
        counts = {d["Id"]: d["RecordCount"]["open"] for d in page.request.get(f"{base}/v1").json()["Items"]}
        row = page.locator("#datasets tr", has=page.locator("a", has_text="Accommodation")).first
        expect(row.locator("td.num")).to_have_text(str(counts["Accommodation"]))
        expect(page.locator("#station-types li")).not_to_have_count(0)
        expect(page.locator("#providers li")).not_to_have_count(0)
        screenshot("landing")

        step("dataset table, paging, map")
        page.locator("#datasets a", has_text="Accommodation").first.click()
        expect(page.locator("#items tbody tr")).to_have_count(25)
        expect(page.locator("#page-info")).to_contain_text(f"Page 1 of {-(-counts['Accommodation'] // 25)}")
        expect(page.locator("#api-url")).to_have_value(f"{base}/v1/Accommodation?pagesize=25&pagenumber=1&language=en")
        expect(page.locator("#map circle.point").first).to_be_visible()
        markers = page.locator("#map circle.point").count()
        assert markers > 100, f"only {markers} map markers for the accommodations"
        assert int(page.locator("#map svg").get_attribute("data-shapes")) > 0, "no GeoShapes outlines"
        screenshot("dataset-with-map")
        first_id = page.locator("#items tbody tr td a").first.inner_text()
        page.locator("#next-page").click()
        expect(page.locator("#page-info")).to_contain_text("Page 2 of")
        assert page.locator("#items tbody tr td a").first.inner_text() != first_id, "page 2 shows page 1"

        step("search and language")
        page.fill("input[name=searchfilter]", "hotel")
        page.select_option("select[name=language]", "de")
        page.click("#filters button[type=submit]")
        expect(page.locator("#page-info")).to_contain_text("Page 1 of")
        expect(page.locator("#api-url")).to_have_value(
            f"{base}/v1/Accommodation?pagesize=25&pagenumber=1&language=de&searchfilter=hotel")
        found = int(page.locator("#page-info").inner_text().split("(")[1].split()[0])
        assert 0 < found < counts["Accommodation"], f"search for hotel found {found}"
        expect(page.locator("#items tbody tr").first).to_contain_text("otel")

        step("wrong rawfilter shows the API's message")
        page.fill("input[name=searchfilter]", "")
        expected_failures.append("rawfilter=eq%28Active%2C")
        page.fill("input[name=rawfilter]", "eq(Active,")
        page.click("#filters button[type=submit]")
        problem = page.locator(".problem")
        expect(problem).to_contain_text("400")
        expect(problem).to_contain_text("parameter rawfilter")
        expect(problem).to_contain_text("position")
        expect(page.locator("#items")).to_have_count(0)

        step("a good rawfilter, then an item")
        page.fill("input[name=rawfilter]", "eq(Active,true)")
        page.click("#filters button[type=submit]")
        expect(page.locator("#items tbody tr")).not_to_have_count(0)
        item_id = page.locator("#items tbody tr td a").first.inner_text()
        page.locator("#items tbody tr td a").first.click()
        expect(page.locator("#item-json")).to_contain_text(f'"Id": "{item_id}"')
        expect(page.locator("#rooms")).to_contain_text("sign in")
        expect(page.locator("#room-list")).to_have_count(0)
        item_url = page.url

        step("time series: stations, data types, chart")
        page.goto(f"{base}/explorer#/timeseries")
        page.locator("#station-types a", has_text="ParkingStation").click()
        expect(page.locator("#stations tbody tr").first).to_be_attached()
        expect(page.locator("#map circle.point").first).to_be_visible()
        assert page.locator("#map circle.point").count() > 5, "no station markers"
        page.locator("#stations tbody tr td a").first.click()
        expect(page.locator("#datatypes tbody tr").first).to_be_attached()
        page.locator("#datatypes tbody tr td a").first.click()
        chart = page.locator("#chart svg path.series")
        expect(chart).to_be_attached()
        day = int(page.locator("#chart svg").get_attribute("data-points"))
        assert day >= 24, f"only {day} points in 24 h"
        screenshot("station-chart")
        page.locator("#range a", has_text="Last 7 days").click()
        expect(page.locator("#api-url")).not_to_have_value("")
        page.wait_for_function(
            "n => { const s = document.querySelector('#chart svg'); return s && +s.dataset.points > n; }",
            arg=day)
        page.fill("#range input[name=from]", "2000-01-01T00:00")
        page.fill("#range input[name=to]", "2000-01-02T00:00")
        page.click("#range button[type=submit]")
        expect(page.locator("#api-url")).to_have_value(re.compile("/2000-01-01T00:00/2000-01-02T00:00\\?"))
        expect(page.locator("main")).to_contain_text("No numeric measurements in this range.")

        step("OGC API in a browser: landing, collections, a page of features with its map, a feature")
        page.goto(f"{base}/ogc")
        page.locator("#links a", has_text=re.compile("collections", re.I)).first.click()
        expect(page.locator("#collections tbody tr").first).to_be_attached()
        collections = page.request.get(f"{base}/ogc/collections", headers={"Accept": "application/json"}).json()
        expect(page.locator("#collections tbody tr")).to_have_count(len(collections["collections"]))
        page.locator("#collections tbody tr", has=page.locator("a", has_text=re.compile("^hubactivitypoi$"))) \
            .locator("a", has_text="items").click()
        expect(page.locator("#features tbody tr")).to_have_count(10)
        expect(page.locator("#map circle.point").first).to_be_visible()
        matched = page.request.get(f"{base}/ogc/collections/hubactivitypoi/items?limit=10&f=json").json()["numberMatched"]
        expect(page.locator("#page-info")).to_have_text(f"features 1–10 of {matched}")
        first_id = page.locator("#features tbody tr td a").first.text_content()
        page.locator("#next-page").click()
        expect(page).to_have_url(re.compile("offset=10"))
        expect(page.locator("#page-info")).to_have_text(f"features 11–20 of {matched}")
        expect(page.locator("#features tbody tr td a").first).not_to_have_text(first_id)
        screenshot("ogc-items")
        page.locator("#features tbody tr td a").first.click()
        expect(page.locator("#feature-json")).to_contain_text('"type": "Feature"')
        expect(page.locator("#map circle.point")).to_have_count(1)
        # Other clients still get JSON from the same URL; a missing collection is a 404 page.
        assert page.request.get(f"{base}/ogc/collections/hubactivitypoi/items?limit=1").headers["content-type"] \
            .startswith("application/geo+json")
        expected_failures.append("/ogc/collections/nosuchthing")
        missing = page.goto(f"{base}/ogc/collections/nosuchthing")
        assert missing.status == 404, missing.status
        expect(page.locator(".problem")).to_contain_text("not a collection")

        step("traffic feed")
        page.goto(f"{base}/explorer#/traffic")
        expect(page.locator("table.situations tbody tr").first).to_be_attached()
        expect(page.locator("a", has_text="(DATEX II XML)").first).to_have_attribute(
            "href", "/datex/2/province-bz/situation-publication.xml")

        step("sign in as the demo user; the room list appears")
        page.goto(f"{base}/explorer#/signin")
        page.fill("input[name=username]", "demo")
        expected_failures.append("/protocol/openid-connect/token")
        page.fill("input[name=password]", "wrong")
        page.click("#signin button[type=submit]")
        expect(page.locator(".problem")).to_be_visible()
        page.fill("input[name=password]", "demo")
        page.click("#signin button[type=submit]")
        expect(page.locator("#signed-in")).to_contain_text("demo")
        expect(page.locator("#who")).to_contain_text("Signed in as demo")
        cookies = context.cookies()
        assert not cookies, f"the token must not be in a cookie: {cookies}"
        page.goto(item_url)
        expect(page.locator("#room-list tbody tr").first).to_be_attached()
        page.goto(f"{base}/explorer#/signin")
        page.click("#sign-out")
        expect(page.locator("#who")).to_contain_text("Sign in")
        page.goto(item_url)
        expect(page.locator("#rooms")).to_contain_text("sign in")

        step("API docs")
        page.goto(f"{base}/docs/")
        expect(page.locator(".swagger-ui .opblock").first).to_be_attached()
        expect(page.locator(".swagger-ui .info .title")).to_contain_text("Content")
        op = page.locator(".opblock-get", has=page.locator(".opblock-summary-path[data-path='/v1']")).first
        op.locator(".opblock-summary-control").click()
        # "Try it out" is on from the start (tryItOutEnabled): Execute is there at once.
        op.locator("button.execute").click()
        expect(op.locator(".live-responses-table tbody .response-col_status").first).to_contain_text("200")

        step("API docs: Try it out with the demo user's bearer token")
        token = page.request.post(f"{base}/auth/realms/hub/protocol/openid-connect/token", form={
            "grant_type": "password", "client_id": "hub-generic-client", "username": "demo", "password": "demo",
        }).json()["access_token"]
        page.goto(f"{base}/docs/")
        page.locator(".swagger-ui .auth-wrapper .authorize").click()
        # The dialog lists every scheme (Basic for the token endpoint, bearer for the APIs).
        bearer = page.locator(".auth-container", has=page.locator("h4 code", has_text=re.compile(r"^bearer$")))
        bearer.locator("input[type=text], input:not([type])").first.fill(token)
        bearer.locator(".auth-btn-wrapper button.authorize").click()
        page.locator(".auth-btn-wrapper button.btn-done").first.click()
        op = page.locator(".opblock-get", has=page.locator(".opblock-summary-path[data-path='/v1/Accommodation']")).first
        op.locator(".opblock-summary-control").click()
        op.locator("button.execute").click()
        expect(op.locator(".live-responses-table tbody .response-col_status").first).to_contain_text("200")
        expect(op.locator(".request-url")).to_contain_text("/v1/Accommodation")
        expect(op.locator(".curl-command")).to_contain_text("Authorization: Bearer")
        expect(op.locator(".live-responses-table .microlight").first).to_contain_text('"AccoRoomInfo": [')

        context.close()

    assert not outside, f"requests left {host}: {outside}"
    assert not errors, "console errors:\n" + "\n".join(errors)
    print(f"web_check: {len(requests)} requests, all to {host}; no console errors")
    print("web_check: ok")


if __name__ == "__main__":
    main()
