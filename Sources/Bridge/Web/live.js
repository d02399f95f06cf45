// Shared by every page: the token, API calls, and the live stream with automatic reconnection.
"use strict";

const params = new URLSearchParams(location.search);
const token = params.get("token");

/** Calls the API; throws an Error with the API's message on a non-2xx answer. */
async function api(method, path, body) {
  const headers = {};
  if (token) headers["Authorization"] = "Bearer " + token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const reply = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await reply.text();
  const data = text ? JSON.parse(text) : null;
  if (!reply.ok) throw new Error((data && data.error && data.error.message) || "HTTP " + reply.status);
  return data;
}

/**
 * Follows /v1/events: `onMessage(message)` for each one, `onState(connected)` when the link changes.
 * EventSource reconnects by itself when the daemon restarts; each (re)connection starts with the
 * current state, so nothing needs fetching by hand and nothing polls.
 */
function follow(query, onMessage, onState) {
  const search = new URLSearchParams(query || {});
  if (token) search.set("token", token);
  const source = new EventSource("/v1/events" + (search.toString() ? "?" + search : ""));
  const kinds = ["sensor", "measurement", "sample", "session", "figures", "event", "zone", "adapter", "plan", "hrv", "class", "dropped"];
  for (const kind of kinds) {
    source.addEventListener(kind, (event) => onMessage(JSON.parse(event.data)));
  }
  source.onopen = () => onState && onState(true);
  source.onerror = () => onState && onState(false);
  return source;
}

/** Zone colours, 1-based; text labels go with them everywhere (colour is never the only cue). */
// Dark enough for white text (contrast ≥ 4.5:1).
const zoneColours = ["#495057", "#1864ab", "#2b8a3e", "#a35200", "#c92a2a", "#862e9c", "#5f3dc4", "#343a40", "#212529"];
function zoneColour(index) {
  return index ? zoneColours[(index - 1) % zoneColours.length] : "#6c757d";
}

function formatDuration(seconds) {
  const s = Math.max(0, Math.floor(seconds || 0));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
  return (h ? h + ":" + String(m).padStart(2, "0") : m) + ":" + String(r).padStart(2, "0");
}

function withToken(path) {
  return token ? path + (path.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token) : path;
}

/**
 * Builds an element: `attributes` are set as attributes (or, for `text`, as the text content;
 * for `style`, as CSSOM properties), children are nodes or strings (added as text). Every page
 * builds its DOM with it: data from the bridge (a Bluetooth name is anyone's text) never becomes
 * markup.
 */
function el(tag, attributes, ...children) {
  const node = tag.startsWith("svg:") ? document.createElementNS("http://www.w3.org/2000/svg", tag.slice(4)) : document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value == null || value === false) continue;
    if (name === "text") node.textContent = String(value);
    else if (name === "style") Object.assign(node.style, value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child == null) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}
