// Building DOM nodes without HTML strings: text is always text, never markup.

const SVG_TAGS = ["svg", "g", "path", "circle", "line", "text", "title", "polyline", "rect"];

/**
 * h("a", {href: "#/"}, "text", child…): an element with attributes and children. SVG
 * elements by name; "svg:a" for a link inside an SVG (an HTML <a> there hides its shapes).
 */
export function h(tag, attrs, ...children) {
  const svg = SVG_TAGS.includes(tag) || tag.startsWith("svg:");
  const name = tag.replace(/^svg:/, "");
  const el = svg ? document.createElementNS("http://www.w3.org/2000/svg", name) : document.createElement(name);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replaces the contents of the main view. */
export function show(...nodes) {
  const view = document.getElementById("view");
  view.replaceChildren(...nodes.flat(Infinity).filter((n) => n));
  return view;
}

/** A problem body (RFC 7807) or a network failure as an inline message. */
export function problemBox(result) {
  const body = result.body || {};
  const where = body.parameter ? ` (parameter ${body.parameter}${body.position !== undefined ? `, position ${body.position}` : ""})` : "";
  const text = body.detail || body.message || body.title || `HTTP ${result.status}`;
  return h("p", { class: "problem", role: "alert" }, `${result.status || "Error"}: ${text}${where}`);
}

/** A read-only field with the API URL and a copy button. */
export function apiUrlBox(url) {
  const input = h("input", { type: "text", readonly: true, value: url, "aria-label": "API URL", id: "api-url" });
  const copy = h("button", {
    type: "button",
    onclick: async () => {
      input.select();
      try { await navigator.clipboard.writeText(url); copy.textContent = "Copied"; } catch { copy.textContent = "Select and copy"; }
    },
  }, "Copy");
  return h("div", { class: "apiurl" }, h("span", {}, "API call:"), input, copy, h("a", { href: url }, "open"));
}
