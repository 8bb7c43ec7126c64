// Explorer views of the Time Series API: station types → stations → data types → a chart.

import { apiGet, withQuery } from "./api.js";
import { apiUrlBox, h, problemBox, show } from "./dom.js";
import { drawChart } from "./chart.js";
import { drawMap, geoShapes } from "./map.js";

const enc = encodeURIComponent;
/** `where` value matching one station code (quoted: codes may hold commas or dots). */
const byCode = (code) => `scode.eq."${code.replaceAll('"', '')}"`;

/** `#/timeseries`: the station types. */
export async function stationTypesView() {
  const result = await apiGet("/v2/flat");
  if (!result.ok) return show(h("h1", {}, "Time series"), problemBox(result));
  show(h("h1", {}, "Time series: station types"),
    h("ul", { id: "station-types" }, result.body.map((t) => h("li", {}, h("a", { href: `#/stations/${enc(t.id)}` }, t.id)))));
}

/** `#/stations/{type}`: the stations of a type, on a map and in a table. */
export async function stationsView(type) {
  const path = withQuery(`/v2/flat/${enc(type)}`, { limit: -1, select: "scode,sname,sorigin,sactive,scoordinate" });
  const [result, shapes] = await Promise.all([apiGet(path), geoShapes(apiGet)]);
  const heading = h("h1", {}, `Stations: ${type}`);
  if (!result.ok) return show(heading, problemBox(result));
  const stations = result.body.data;
  const href = (s) => `#/station/${enc(type)}/${enc(s.scode)}`;
  const points = stations.filter((s) => s.scoordinate).map((s) => ({ lon: s.scoordinate.x, lat: s.scoordinate.y, label: s.sname, href: href(s) }));
  show(heading, apiUrlBox(new URL(path, location.href).href),
    h("div", { class: "split" },
      h("table", { id: "stations" },
        h("thead", {}, h("tr", {}, ["Code", "Name", "Origin", "Active"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, stations.map((s) => h("tr", {}, h("td", {}, h("a", { href: href(s) }, s.scode)), h("td", {}, s.sname), h("td", {}, s.sorigin || ""), h("td", {}, s.sactive ? "yes" : "no"))))),
      h("div", { id: "map" }, drawMap(points, shapes, `Map of ${points.length} stations`))));
}

/** `#/station/{type}/{code}`: the station's data types with their latest values. */
export async function stationView(type, code) {
  const path = withQuery(`/v2/flat/${enc(type)}/*/latest`, { where: byCode(code), limit: -1, select: "tname,tdescription,tunit,mvalue,mvalidtime,mperiod" });
  const result = await apiGet(path);
  const heading = h("h1", {}, `Station ${code} (${type})`);
  if (!result.ok) return show(heading, problemBox(result));
  const rows = result.body.data.map((m) => h("tr", {},
    h("td", {}, h("a", { href: `#/series/${enc(type)}/${enc(code)}/${enc(m.tname)}?range=24h` }, m.tname)),
    h("td", {}, m.tdescription || ""), h("td", { class: "num" }, String(m.mvalue)), h("td", {}, m.tunit || ""),
    h("td", {}, m.mvalidtime), h("td", { class: "num" }, m.mperiod)));
  show(heading, apiUrlBox(new URL(path, location.href).href),
    rows.length ? h("table", { id: "datatypes" },
      h("thead", {}, h("tr", {}, ["Data type", "Description", "Latest value", "Unit", "Measured at", "Period (s)"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, rows))
      : h("p", { class: "muted" }, "No measurements you may read (closed measurements need signing in)."));
}

const isoMinute = (date) => date.toISOString().slice(0, 16);

/** `#/series/{type}/{code}/{datatype}?range=24h|7d|custom&from&to`: a chart over a range. */
export async function seriesView(type, code, datatype, params) {
  const range = params.get("range") || "24h";
  const now = new Date();
  let from = new Date(now.getTime() - (range === "7d" ? 7 : 1) * 864e5), to = now;
  if (range === "custom" && params.get("from") && params.get("to")) {
    from = new Date(params.get("from") + "Z");
    to = new Date(params.get("to") + "Z");
  }
  const base = `#/series/${enc(type)}/${enc(code)}/${enc(datatype)}`;
  const form = h("form", { class: "filters", id: "range" },
    h("a", { href: `${base}?range=24h`, "aria-current": range === "24h" ? "page" : null }, "Last 24 h"),
    h("a", { href: `${base}?range=7d`, "aria-current": range === "7d" ? "page" : null }, "Last 7 days"),
    h("label", {}, "From (UTC)", h("input", { type: "datetime-local", name: "from", value: isoMinute(from) })),
    h("label", {}, "To (UTC)", h("input", { type: "datetime-local", name: "to", value: isoMinute(to) })),
    h("button", { type: "submit" }, "Show"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    location.hash = withQuery(base, { range: "custom", from: data.get("from"), to: data.get("to") });
  });
  const path = withQuery(`/v2/flat/${enc(type)}/${enc(datatype)}/${isoMinute(from)}/${isoMinute(to)}`,
    { where: byCode(code), limit: -1, select: "mvalue,mvalidtime,mperiod,tunit" });
  const heading = h("h1", {}, `${datatype} at ${code}`);
  const back = h("p", {}, h("a", { href: `#/station/${enc(type)}/${enc(code)}` }, `← all data types of ${code}`));
  const result = await apiGet(path);
  if (!result.ok) return show(heading, back, form, apiUrlBox(new URL(path, location.href).href), problemBox(result));
  const data = result.body.data;
  // One series: the shortest period when the station reports several.
  const period = Math.min(...data.map((m) => m.mperiod));
  const points = data.filter((m) => m.mperiod === period && typeof m.mvalue === "number")
    .map((m) => ({ t: Date.parse(m.mvalidtime.replace(" ", "T").replace(/\+0000$/, "Z")), v: m.mvalue }))
    .sort((a, b) => a.t - b.t);
  show(heading, back, form, apiUrlBox(new URL(path, location.href).href),
    points.length ? h("div", { id: "chart" }, drawChart(points, `${datatype} over time`, data[0] && data[0].tunit))
      : h("p", { class: "muted" }, "No numeric measurements in this range."),
    h("p", { class: "muted" }, `${points.length} measurements, period ${Number.isFinite(period) ? period : "–"} s.`));
}
