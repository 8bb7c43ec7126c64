// Calls to the server's public APIs, with the signed-in user's bearer token when there is one.
// The token lives in sessionStorage (this tab only, gone when it closes), never in a cookie.

const TOKEN_KEY = "hub.token";
const USER_KEY = "hub.user";

/** The token endpoint's path on this server, from the JSON index of `/` (the realm is configurable). */
async function tokenPath() {
  const index = await fetch("/", { headers: { Accept: "application/json" }, credentials: "omit" }).then((r) => r.json());
  const token = (index.Apis || []).find((a) => a.Id === "token");
  return new URL(token.Url, location.href).pathname;
}

export function session() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  return token ? { token, user: sessionStorage.getItem(USER_KEY) || "" } : null;
}

/** GET a same-origin API path; resolves to {ok, status, body} (body parsed when JSON). */
export async function apiGet(path, accept = "application/json") {
  const headers = { Accept: accept };
  const s = session();
  if (s) headers.Authorization = `Bearer ${s.token}`;
  let response;
  try {
    response = await fetch(path, { headers, credentials: "omit" });
  } catch (e) {
    return { ok: false, status: 0, body: { detail: `the server could not be reached (${e.message})` } };
  }
  const type = response.headers.get("content-type") || "";
  let body;
  if (type.includes("json")) body = await response.json().catch(() => null);
  else body = await response.text();
  if (response.status === 401 && s) signOut();
  return { ok: response.ok, status: response.status, body };
}

/** The password grant of the token service (the generic public client). */
export async function signIn(username, password) {
  const form = new URLSearchParams({ grant_type: "password", client_id: "hub-generic-client", username, password });
  const response = await fetch(await tokenPath(), { method: "POST", body: form, credentials: "omit" });
  const body = await response.json().catch(() => ({}));
  if (!response.ok || !body.access_token) {
    return { ok: false, status: response.status, body: { detail: body.error_description || body.error || "sign in failed" } };
  }
  sessionStorage.setItem(TOKEN_KEY, body.access_token);
  sessionStorage.setItem(USER_KEY, username);
  return { ok: true, status: response.status, body };
}

export function signOut() {
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(USER_KEY);
}

/** A path with query parameters, leaving out empty ones. */
export function withQuery(path, params) {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") query.set(k, v);
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}
