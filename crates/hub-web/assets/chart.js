// A line chart of one measurement series as SVG: time on x, value on y.

import { h } from "./dom.js";

const W = 720, H = 300, LEFT = 56, RIGHT = 12, TOP = 12, BOTTOM = 36;

function ticks(min, max, count) {
  if (min === max) return [min];
  const step = Math.pow(10, Math.floor(Math.log10((max - min) / count)));
  const nice = [1, 2, 5, 10].map((m) => m * step).find((s) => (max - min) / s <= count) || step * 10;
  const out = [];
  for (let v = Math.ceil(min / nice) * nice; v <= max; v += nice) out.push(+v.toFixed(10));
  return out;
}

/** `points`: [{t: milliseconds, v: number}] sorted by time. */
export function drawChart(points, label, unit) {
  const ts = points.map((p) => p.t), vs = points.map((p) => p.v);
  const [t0, t1] = [Math.min(...ts), Math.max(...ts)];
  let [v0, v1] = [Math.min(...vs), Math.max(...vs)];
  if (v0 === v1) { v0 -= 1; v1 += 1; }
  const x = (t) => LEFT + (t1 === t0 ? 0 : (t - t0) / (t1 - t0)) * (W - LEFT - RIGHT);
  const y = (v) => TOP + (1 - (v - v0) / (v1 - v0)) * (H - TOP - BOTTOM);
  const d = points.map((p, i) => `${i ? "L" : "M"}${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join("");
  const yTicks = ticks(v0, v1, 5).map((v) => [
    h("line", { class: "grid", x1: LEFT, x2: W - RIGHT, y1: y(v), y2: y(v) }),
    h("text", { x: LEFT - 6, y: y(v) + 4, "text-anchor": "end" }, String(v)),
  ]);
  const spanDays = (t1 - t0) / 864e5;
  const fmt = (t) => {
    const date = new Date(t);
    return spanDays > 2 ? date.toISOString().slice(5, 10) : date.toISOString().slice(11, 16);
  };
  const xTicks = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const t = t0 + f * (t1 - t0);
    const anchor = f === 0 ? "start" : f === 1 ? "end" : "middle";
    return h("text", { x: x(t), y: H - BOTTOM + 16, "text-anchor": anchor }, fmt(t));
  });
  return h("svg", { class: "chart", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": label, "data-points": points.length },
    yTicks, xTicks,
    h("text", { x: 4, y: 12 }, unit || ""),
    h("text", { x: W - RIGHT, y: H - 4, "text-anchor": "end" }, spanDays > 2 ? "date (UTC)" : "time (UTC)"),
    h("path", { class: "series", d }));
}
