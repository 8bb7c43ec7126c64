// A map without tiles: outlines (GeoJSON polygons) and points, projected into an SVG.

import { h } from "./dom.js";

const WIDTH = 640;

/** Bounds [minLon, minLat, maxLon, maxLat] of points and shapes; null when there are none. */
function bounds(points, shapes) {
  let b = null;
  const add = (lon, lat) => {
    if (!Number.isFinite(lon) || !Number.isFinite(lat)) return;
    if (!b) b = [lon, lat, lon, lat];
    else b = [Math.min(b[0], lon), Math.min(b[1], lat), Math.max(b[2], lon), Math.max(b[3], lat)];
  };
  for (const p of points) add(p.lon, p.lat);
  if (!b) for (const s of shapes) for (const ring of rings(s)) for (const [lon, lat] of ring) add(lon, lat);
  return b;
}

/** The outer and inner rings of a Polygon or MultiPolygon geometry. */
function rings(geometry) {
  if (!geometry || !geometry.coordinates) return [];
  if (geometry.type === "Polygon") return geometry.coordinates;
  if (geometry.type === "MultiPolygon") return geometry.coordinates.flat(1);
  return [];
}

/**
 * An SVG map of `points` ({lon, lat, label, href}) over `shapes` (GeoJSON geometries with a
 * name). Equirectangular projection scaled by the cosine of the middle latitude: at the size
 * of a province the distortion is invisible and no projection library is needed.
 */
export function drawMap(points, shapes, label) {
  const b = bounds(points, shapes) || [10.3, 46.2, 12.5, 47.1];
  const pad = Math.max((b[2] - b[0]) * 0.05, (b[3] - b[1]) * 0.05, 0.01);
  const [minLon, minLat, maxLon, maxLat] = [b[0] - pad, b[1] - pad, b[2] + pad, b[3] + pad];
  const kx = Math.cos(((minLat + maxLat) / 2) * Math.PI / 180);
  const spanX = (maxLon - minLon) * kx;
  const spanY = maxLat - minLat;
  const height = Math.max(160, Math.min(640, Math.round(WIDTH * spanY / spanX)));
  const scale = Math.min(WIDTH / spanX, height / spanY);
  const x = (lon) => ((lon - minLon) * kx * scale).toFixed(1);
  const y = (lat) => ((maxLat - lat) * scale).toFixed(1);
  const outlines = shapes.map((s) => {
    const d = rings(s.geometry).map((ring) => "M" + ring.map(([lon, lat]) => `${x(lon)},${y(lat)}`).join("L") + "Z").join("");
    return d ? h("path", { class: "shape", d }, h("title", {}, s.name || "")) : null;
  });
  const markers = points
    .filter((p) => Number.isFinite(p.lon) && Number.isFinite(p.lat))
    .map((p) => {
      const dot = h("circle", { class: "point", cx: x(p.lon), cy: y(p.lat), r: 3.5 }, h("title", {}, p.label || ""));
      return p.href ? h("svg:a", { href: p.href, "aria-label": p.label || "" }, dot) : dot;
    });
  return h("svg", {
    class: "map", viewBox: `0 0 ${WIDTH} ${height}`, role: "img", "aria-label": label,
    "data-points": markers.length, "data-shapes": outlines.filter((o) => o).length,
  }, h("g", {}, outlines), h("g", {}, markers));
}

/** Outlines from `/v1/GeoShapes` (one request, cached for the page's life). */
let shapeCache = null;
export async function geoShapes(apiGet) {
  if (!shapeCache) {
    shapeCache = apiGet("/v1/GeoShapes?pagesize=1000&fields=Id,Name,Type,Geometry").then((r) =>
      r.ok ? r.body.Items.filter((s) => s.Type !== "region").map((s) => ({ name: s.Name, geometry: s.Geometry })) : []);
  }
  return shapeCache;
}
