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
 * Follows /v1/events: `onReset()` as each (re)connection opens (the daemon first sends the current
 * state, which is to confirm what the last connection said: a restarted daemon may no longer have
 * a strap, a session or a class; see `snapshotCheck`), `onMessage(message)` for each message,
 * `onState(connected)` when the link changes. The browser reconnects by itself after a dropped
 * connection; a stream it gives up on (an HTTP error: 503 while the daemon's connections are full,
 * 401 for a token that no longer works) is opened again after a growing, jittered wait (0.5–1 s,
 * doubling each time, at most 30 s). A
 * stream that lost messages (`dropped`: the page fell 4 MiB behind) is opened again at once, for a
 * fresh snapshot. Nothing polls.
 */
function follow(query, onMessage, onState, onReset) {
  const search = new URLSearchParams(query || {});
  if (token) search.set("token", token);
  const url = "/v1/events" + (search.toString() ? "?" + search : "");
  const kinds = ["sensor", "measurement", "sample", "session", "figures", "event", "zone", "adapter", "plan", "hrv", "class", "dropped"];
  const shortest = 1000, longest = 30000;
  let source = null, wait = shortest, retry = null;
  function open() {
    retry = null;
    const current = new EventSource(url);
    source = current;
    for (const kind of kinds) {
      current.addEventListener(kind, (event) => {
        if (current !== source) return;
        const message = JSON.parse(event.data);
        if (message.kind === "dropped") reopen(0);
        else onMessage(message);
      });
    }
    current.onopen = () => {
      if (current !== source) return;
      wait = shortest;
      if (onReset) onReset();
      if (onState) onState(true);
    };
    current.onerror = () => {
      if (current !== source) return;
      if (onState) onState(false);
      // CONNECTING: the browser is trying again by itself. CLOSED: it gave up; we do not.
      if (current.readyState === EventSource.CLOSED) {
        reopen(wait / 2 + Math.random() * wait / 2);
        wait = Math.min(longest, wait * 2);
      }
    };
  }
  function reopen(delay) {
    source.close();
    if (onState) onState(false);
    if (retry === null) retry = setTimeout(open, delay);
  }
  open();
}

/**
 * What a new connection's snapshot must confirm: `begin(keys)` as it opens, `confirm(key)` for each
 * key a message of the stream sets; a second later `onExpired(keys)` gets those it never set (a
 * restarted daemon no longer has them). Until then the page keeps showing them, so a reconnection
 * does not blank it.
 */
function snapshotCheck(onExpired) {
  let waiting = null, timer = null;
  return {
    begin(keys) {
      clearTimeout(timer);
      waiting = new Set(keys);
      timer = setTimeout(() => { const expired = waiting; waiting = null; onExpired(expired); }, 1000);
    },
    confirm(key) { if (waiting) waiting.delete(key); },
  };
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
