// Explorer views of the Content API, the traffic feed and signing in.

import { apiGet, session, signIn, signOut, withQuery } from "./api.js";
import { apiUrlBox, h, problemBox, show } from "./dom.js";
import { drawMap, geoShapes } from "./map.js";

const LANGUAGES = ["de", "it", "en", "nl", "cs", "pl", "fr", "ru", "ld"];
const PAGE_SIZE = 25;
const MAP_LIMIT = 1000;

const itemHref = (route, id) => `#/item/${route}/${encodeURIComponent(id)}`;

/** `#/`: the datasets with their record counts, from `GET /v1`. */
export async function datasetsView() {
  const result = await apiGet("/v1");
  if (!result.ok) return show(h("h1", {}, "Datasets"), problemBox(result));
  const rows = result.body.Items.map((d) => {
    const route = new URL(d.ApiUrl, location.href).pathname.replace(/^\/v1\//, "");
    return h("tr", {},
      h("td", {}, h("a", { href: `#/dataset/${route}` }, d.Id)),
      h("td", { class: "num" }, d.RecordCount.open),
      h("td", {}, (d.ApiDescription && d.ApiDescription.en) || ""));
  });
  show(h("h1", {}, "Datasets"),
    h("table", { id: "datasets" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Dataset"), h("th", { scope: "col", class: "num" }, "Records"), h("th", { scope: "col" }, "What it holds"))),
      h("tbody", {}, rows)));
}

/** The title of a document in `language`, whatever the dataset calls it. */
export function titleOf(item, language) {
  for (const [key, value] of Object.entries(item)) {
    if (!/Detail$/.test(key) || !value || typeof value !== "object") continue;
    const detail = value[language] || Object.values(value).find((d) => d && (d.Title || d.Name));
    if (detail && (detail.Title || detail.Name)) return detail.Title || detail.Name;
  }
  if (item.Name && typeof item.Name === "object") return item.Name[language] || Object.values(item.Name)[0];
  return item.Shortname || item.Name || "";
}

/** A document's position from GpsInfo / GpsPoints / Latitude+Longitude. */
function positionOf(item) {
  const gps = Array.isArray(item.GpsInfo) ? item.GpsInfo.find((g) => g && Number.isFinite(g.Latitude)) : null;
  if (gps) return [gps.Longitude, gps.Latitude];
  const point = item.GpsPoints && (item.GpsPoints.position || Object.values(item.GpsPoints)[0]);
  if (point && Number.isFinite(point.Latitude)) return [point.Longitude, point.Latitude];
  if (Number.isFinite(item.Latitude) && Number.isFinite(item.Longitude)) return [item.Longitude, item.Latitude];
  return null;
}

/** `#/dataset/{route}?searchfilter&language&rawfilter&pagenumber`: a page, a filter form, a map. */
export async function datasetView(route, params) {
  const language = params.get("language") || "en";
  const filters = { searchfilter: params.get("searchfilter") || "", rawfilter: params.get("rawfilter") || "" };
  const page = Math.max(1, parseInt(params.get("pagenumber") || "1", 10) || 1);
  const listPath = withQuery(`/v1/${route}`, { pagesize: PAGE_SIZE, pagenumber: page, language, ...filters });
  const form = h("form", { class: "filters", id: "filters", role: "search" },
    h("label", {}, "Search titles", h("input", { name: "searchfilter", type: "search", value: filters.searchfilter })),
    h("label", {}, "Language", h("select", { name: "language" },
      LANGUAGES.map((l) => h("option", { value: l, selected: l === language }, l)))),
    h("label", {}, "Raw filter", h("input", { name: "rawfilter", class: "wide", value: filters.rawfilter, placeholder: "eq(Active,true)" })),
    h("button", { type: "submit" }, "Apply"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    location.hash = withQuery(`#/dataset/${route}`, { searchfilter: data.get("searchfilter"), language: data.get("language"), rawfilter: data.get("rawfilter") });
  });
  const heading = h("h1", {}, route);
  const result = await apiGet(listPath);
  const urlBox = apiUrlBox(new URL(listPath, location.href).href);
  if (!result.ok) return show(heading, form, urlBox, problemBox(result));
  const body = result.body;
  const rows = body.Items.map((item) => h("tr", {},
    h("td", {}, h("a", { href: itemHref(route, item.Id) }, item.Id)),
    h("td", {}, titleOf(item, language)),
    h("td", {}, item._Meta && item._Meta.Source || item.Source || ""),
    h("td", {}, item.LastChange || item._Meta && item._Meta.LastChange || "")));
  const pageHref = (n) => withQuery(`#/dataset/${route}`, { language, ...filters, pagenumber: n });
  const pager = h("nav", { class: "pager", "aria-label": "Pages" },
    page > 1 ? h("a", { href: pageHref(page - 1), rel: "prev" }, "← Previous") : null,
    h("span", { id: "page-info" }, `Page ${body.CurrentPage} of ${body.TotalPages} (${body.TotalResults} records)`),
    page < body.TotalPages ? h("a", { href: pageHref(page + 1), rel: "next", id: "next-page" }, "Next →") : null);
  const mapBox = h("div", { id: "map" }, h("p", { class: "muted" }, "Loading the map…"));
  show(heading, form, urlBox,
    h("div", { class: "split" },
      h("div", {}, h("table", { id: "items" },
        h("thead", {}, h("tr", {}, ["Id", "Title", "Source", "Last change"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, rows)), pager),
      mapBox));
  drawDatasetMap(route, language, filters, mapBox);
}

async function drawDatasetMap(route, language, filters, box) {
  const path = withQuery(`/v1/${route}`, { pagesize: MAP_LIMIT, language, ...filters, fields: "Id,Shortname,GpsInfo,GpsPoints,Latitude,Longitude" });
  const [result, shapes] = await Promise.all([apiGet(path), geoShapes(apiGet)]);
  if (!result.ok) return box.replaceChildren(problemBox(result));
  const points = result.body.Items.map((item) => {
    const at = positionOf(item);
    return at && { lon: at[0], lat: at[1], label: item.Shortname || item.Id, href: itemHref(route, item.Id) };
  }).filter((p) => p);
  const more = result.body.TotalResults > MAP_LIMIT ? ` of the first ${MAP_LIMIT}` : "";
  box.replaceChildren(drawMap(points, shapes, `Map of ${points.length} located items`),
    h("p", { class: "muted" }, `${points.length} located items${more}; outlines from /v1/GeoShapes.`));
}

/** `#/item/{route}/{id}`: the document as pretty-printed JSON (and its rooms). */
export async function itemView(route, id) {
  const path = `/v1/${route}/${encodeURIComponent(id)}`;
  const result = await apiGet(path);
  const heading = h("h1", {}, `${route} ${id}`);
  if (!result.ok) return show(heading, problemBox(result));
  const parts = [heading, apiUrlBox(new URL(path, location.href).href)];
  if (route === "Accommodation") parts.push(await roomsOf(result.body));
  parts.push(h("pre", { id: "item-json" }, JSON.stringify(result.body, null, 2)));
  show(parts);
}

async function roomsOf(accommodation) {
  const section = h("section", { id: "rooms" }, h("h2", {}, "Rooms"));
  if (!Array.isArray(accommodation.AccoRoomInfo)) {
    section.append(h("p", { class: "muted" }, "Rooms and availability are closed data: ", h("a", { href: "#/signin" }, "sign in"), " to see them."));
    return section;
  }
  const rooms = await Promise.all(accommodation.AccoRoomInfo.slice(0, 50).map((r) => apiGet(`/v1/AccommodationRoom/${encodeURIComponent(r.Id)}`)));
  section.append(h("table", { id: "room-list" },
    h("thead", {}, h("tr", {}, ["Room", "Type", "Max. persons", "Price from"].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, rooms.filter((r) => r.ok).map(({ body }) => h("tr", {},
      h("td", {}, h("a", { href: itemHref("AccommodationRoom", body.Id) }, titleOf(body, "en"))),
      h("td", {}, body.Roomtype || ""), h("td", { class: "num" }, body.Roommax ?? ""), h("td", { class: "num" }, body.PriceFrom ?? ""))))));
  return section;
}

/** `#/traffic`: each provider's current situations, read from its DATEX II XML. */
export async function trafficView() {
  const index = await apiGet("/datex/2/");
  if (!index.ok) return show(h("h1", {}, "Traffic feed"), problemBox(index));
  const sections = await Promise.all(Object.entries(index.body).map(async ([provider, links]) => {
    const xmlPath = new URL(links["situation-publication"], location.href).pathname;
    const result = await apiGet(xmlPath, "application/xml");
    const head = h("h2", {}, provider, " ", h("a", { href: xmlPath, class: "muted" }, "(DATEX II XML)"));
    if (!result.ok) return h("section", {}, head, problemBox(result));
    const doc = new DOMParser().parseFromString(result.body, "application/xml");
    const text = (el, name) => { const n = el.getElementsByTagName(name)[0]; return n ? n.textContent : ""; };
    const lang = (navigator.language || "en").slice(0, 2);
    const rows = [...doc.getElementsByTagName("situation")].map((s) => {
      const record = s.getElementsByTagName("situationRecord")[0];
      const type = record ? record.getAttributeNS("http://www.w3.org/2001/XMLSchema-instance", "type") : "";
      const values = [...s.getElementsByTagName("comment")].flatMap((c) => [...c.getElementsByTagName("value")]);
      const comment = values.find((v) => v.getAttribute("lang") === lang) || values.find((v) => v.getAttribute("lang") === "en") || values[0];
      return h("tr", {}, h("td", {}, s.getAttribute("id")), h("td", {}, type), h("td", {}, text(s, "overallSeverity")),
        h("td", {}, text(s, "overallStartTime")), h("td", {}, text(s, "overallEndTime")), h("td", {}, comment ? comment.textContent : ""));
    });
    return h("section", {}, head, h("table", { class: "situations" },
      h("thead", {}, h("tr", {}, ["Id", "Type", "Severity", "From", "To", "Comment"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, rows)), h("p", { class: "muted" }, `${rows.length} situations`));
  }));
  show(h("h1", {}, "Traffic feed"), sections);
}

/** `#/signin`: the token service's password grant; signed in, the token for the API docs. */
export function signInView(refreshWho) {
  const s = session();
  if (s) {
    const out = h("button", { type: "button", id: "sign-out", onclick: () => { signOut(); refreshWho(); signInView(refreshWho); } }, "Sign out");
    return show(h("h1", {}, "Signed in"),
      h("p", { id: "signed-in" }, `Signed in as ${s.user}. Closed data (accommodation rooms, availability, closed measurements) now appears where your roles allow.`),
      h("p", {}, "The access token, for “Authorize” in the ", h("a", { href: "/docs/" }, "API docs"), " (it expires after a few minutes):"),
      h("textarea", { readonly: true, rows: 4, cols: 80, "aria-label": "access token" }, s.token), h("p", {}, out));
  }
  const message = h("div", {});
  const form = h("form", { class: "signin", id: "signin" },
    h("label", {}, "User ", h("input", { name: "username", autocomplete: "username", required: true })),
    h("label", {}, "Password ", h("input", { name: "password", type: "password", autocomplete: "current-password", required: true })),
    h("button", { type: "submit" }, "Sign in"), message);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const result = await signIn(data.get("username"), data.get("password"));
    if (!result.ok) return message.replaceChildren(problemBox(result));
    refreshWho();
    signInView(refreshWho);
  });
  show(h("h1", {}, "Sign in"), h("p", {}, "With a user of the token service (the demo data has demo / demo). The token stays in this tab's session storage."), form);
}
