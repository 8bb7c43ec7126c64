// The explorer's entry: a hash router over the views (one page, no build step).

import { session } from "./api.js";
import { h } from "./dom.js";
import { datasetView, datasetsView, itemView, signInView, trafficView } from "./views.js";
import { seriesView, stationTypesView, stationView, stationsView } from "./timeseries.js";

function refreshWho() {
  const s = session();
  document.getElementById("who").replaceChildren(s
    ? h("a", { href: "#/signin", id: "who-user" }, `Signed in as ${s.user}`)
    : h("a", { href: "#/signin" }, "Sign in"));
}

const dec = decodeURIComponent;

async function route() {
  const hash = location.hash.replace(/^#/, "") || "/";
  const [path, query] = hash.split("?", 2);
  const params = new URLSearchParams(query || "");
  const parts = path.split("/").filter((p) => p);
  const [view, ...rest] = parts;
  if (!view) return datasetsView();
  switch (view) {
    case "dataset": return datasetView(rest.join("/"), params);
    case "item": return itemView(rest.slice(0, -1).join("/"), dec(rest[rest.length - 1] || ""));
    case "timeseries": return stationTypesView();
    case "stations": return stationsView(dec(rest[0] || ""));
    case "station": return stationView(dec(rest[0] || ""), dec(rest[1] || ""));
    case "series": return seriesView(dec(rest[0] || ""), dec(rest[1] || ""), dec(rest[2] || ""), params);
    case "traffic": return trafficView();
    case "signin": return signInView(refreshWho);
    default: return datasetsView();
  }
}

let first = true;
async function render() {
  document.body.setAttribute("aria-busy", "true");
  try {
    await route();
  } catch (e) {
    document.getElementById("view").replaceChildren(h("p", { class: "problem", role: "alert" }, `The page failed: ${e.message}`));
  }
  document.body.removeAttribute("aria-busy");
  document.body.dataset.view = location.hash || "#/";
  // The benchmark reads this mark: the first screen is on the page.
  if (first) { performance.mark("hub-first-screen"); first = false; }
}

window.addEventListener("hashchange", render);
refreshWho();
render();
