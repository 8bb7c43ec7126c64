// The HTML view of an OGC API – Features resource: the page asks the same URL for its
// JSON (the server answers browsers this page, every other client JSON) and draws it:
// the landing page's links, the collections as a table, a collection's description, a
// page of features as a table beside the explorer's offline map, one feature as JSON.

import { apiGet, session, withQuery } from "./api.js";
import { apiUrlBox, h, problemBox, show } from "./dom.js";
import { drawMap, geoShapes } from "./map.js";
import { titleOf } from "./views.js";

const GEOJSON = "application/geo+json, application/json;q=0.9";

/** The resource's own URL with `f=json`: what a client would call (and "open" shows). */
function jsonUrl() {
  const query = new URLSearchParams(location.search);
  query.set("f", "json");
  return `${location.origin}${location.pathname}?${query}`;
}

/** A link of the JSON document as a path on this server (the HTML view of that resource). */
const local = (href) => { const u = new URL(href, location.href); return u.pathname + u.search; };

function linkList(links) {
  return h("ul", { class: "actions", id: "links" }, (links || []).map((l) =>
    h("li", {}, h("a", { href: local(l.href), rel: l.rel }, l.title || l.rel), " ", h("span", { class: "muted" }, `(${l.rel}, ${l.type || ""})`))));
}

function landing(body) {
  show(h("h1", {}, body.title || "OGC API – Features"), h("p", {}, body.description || ""),
    apiUrlBox(jsonUrl()), linkList(body.links));
}

function collections(body) {
  const rows = body.collections.map((c) => h("tr", {},
    h("td", {}, h("a", { href: `/ogc/collections/${encodeURIComponent(c.id)}` }, c.id)),
    h("td", {}, c.title || ""),
    h("td", {}, h("a", { href: `/ogc/collections/${encodeURIComponent(c.id)}/items` }, "items"))));
  show(h("h1", {}, "Collections"), apiUrlBox(jsonUrl()),
    h("table", { id: "collections" },
      h("thead", {}, h("tr", {}, ["Id", "Title", "Features"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, rows)),
    h("p", { class: "muted" }, `${rows.length} collections`));
}

function collection(body) {
  const extent = body.extent && body.extent.spatial && body.extent.spatial.bbox && body.extent.spatial.bbox[0];
  show(h("h1", {}, body.title || body.id), h("p", {}, body.description || ""),
    extent ? h("p", { id: "extent" }, `Extent: ${extent.join(", ")}`) : null,
    apiUrlBox(jsonUrl()), linkList(body.links));
}

const nameOf = (f) => {
  const p = f.properties || {};
  return p.sname || titleOf(p, (navigator.language || "en").slice(0, 2)) || "";
};

function pageInfo(body) {
  const offset = Math.max(0, parseInt(new URLSearchParams(location.search).get("offset") || "0", 10) || 0);
  if (!body.numberReturned) return `none of ${body.numberMatched} features`;
  return `features ${offset + 1}–${offset + body.numberReturned} of ${body.numberMatched}`;
}

async function features(body) {
  const base = location.pathname.replace(/\/$/, "");
  const rows = body.features.map((f) => h("tr", {},
    h("td", {}, f.id === null || f.id === undefined ? "" : h("a", { href: `${base}/${encodeURIComponent(f.id)}` }, String(f.id))),
    h("td", {}, nameOf(f)),
    h("td", {}, f.geometry ? f.geometry.coordinates.map((c) => c.toFixed(5)).join(", ") : "—")));
  const link = (rel, text) => { const l = (body.links || []).find((x) => x.rel === rel); return l ? h("a", { href: local(l.href), rel, id: `${rel}-page` }, text) : null; };
  const mapBox = h("div", { id: "map" }, h("p", { class: "muted" }, "Loading the map…"));
  show(h("h1", {}, location.pathname.split("/")[3] || "Features"), apiUrlBox(jsonUrl()),
    h("div", { class: "split" },
      h("div", {},
        h("table", { id: "features" },
          h("thead", {}, h("tr", {}, ["Id", "Name", "Position"].map((c) => h("th", { scope: "col" }, c)))),
          h("tbody", {}, rows)),
        h("nav", { class: "pager", "aria-label": "Pages" }, link("prev", "← Previous"),
          h("span", { id: "page-info" }, pageInfo(body)), link("next", "Next →"))),
      mapBox));
  const shapes = await geoShapes(apiGet);
  const points = body.features.filter((f) => f.geometry && f.geometry.type === "Point").map((f) => ({
    lon: f.geometry.coordinates[0], lat: f.geometry.coordinates[1], label: nameOf(f) || String(f.id),
    href: `${base}/${encodeURIComponent(f.id)}`,
  }));
  mapBox.replaceChildren(drawMap(points, shapes, `Map of ${points.length} features`),
    h("p", { class: "muted" }, `${points.length} located features on this page; outlines from /v1/GeoShapes.`));
}

async function feature(body) {
  const point = body.geometry && body.geometry.type === "Point"
    ? [{ lon: body.geometry.coordinates[0], lat: body.geometry.coordinates[1], label: nameOf(body) }] : [];
  const shapes = await geoShapes(apiGet);
  show(h("h1", {}, `${nameOf(body) || body.id}`), apiUrlBox(jsonUrl()), linkList(body.links),
    h("div", { class: "split" },
      h("pre", { id: "feature-json" }, JSON.stringify(body, null, 2)),
      h("div", { id: "map" }, drawMap(point, shapes, point.length ? "Where the feature is" : "The feature has no position"))));
}

async function render() {
  const s = session();
  document.getElementById("who").textContent = s ? `Signed in as ${s.user}` : "";
  const query = new URLSearchParams(location.search);
  query.delete("f");
  const result = await apiGet(withQuery(location.pathname, Object.fromEntries(query)), GEOJSON);
  if (!result.ok || !result.body || typeof result.body !== "object") {
    return show(h("h1", {}, "OGC API – Features"), problemBox(result));
  }
  const body = result.body;
  if (Array.isArray(body.collections)) collections(body);
  else if (body.type === "FeatureCollection") await features(body);
  else if (body.type === "Feature") await feature(body);
  else if (body.id) collection(body);
  else landing(body);
  document.title = `${document.querySelector("h1").textContent} – Hub OGC API`;
}

render().catch((e) => show(h("p", { class: "problem", role: "alert" }, `The page failed: ${e.message}`)))
  .finally(() => document.body.setAttribute("data-ready", "true"));
