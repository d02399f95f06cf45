// The class board: a tile per athlete (a session's straps share one; a strap in no session has its
// own), following the live stream, sized so that a whole class (60 straps on a 1080p screen) fits
// without scrolling.
"use strict";
const sensors = new Map();
const energy = new Map();   // sensor address → kcal of its running session
const sessionSensors = new Map(); // running session id → its sensors, in the session's order
const heard = new Map();    // sensor address → when (page clock) its last reading arrived
const staleAfter = 5000;    // ms without a reading before a tile says so
const tiles = document.getElementById("tiles");
const order = document.getElementById("order");
const classStatus = document.getElementById("class");
order.value = params.get("order") || "fixed";
let pending = false;

/**
 * Columns and tile height that give the largest tiles fitting the window (at most half its height:
 * a few straps on a TV get tiles to read from across the room, not one giant one); below a legible
 * minimum (a phone, or a huge class) the columns stay legible and the page scrolls instead.
 */
function fit(count) {
  const gap = 8, padding = 16, minimumHeight = 110, minimumWidth = 150, largest = Math.max(260, window.innerHeight / 2);
  const width = tiles.clientWidth - padding;
  const height = window.innerHeight - document.querySelector("header").offsetHeight - padding;
  let columns = 1, size = 0;
  for (let candidate = 1; candidate <= Math.max(count, 1); candidate++) {
    const rows = Math.ceil(count / candidate);
    const tileWidth = (width - gap * (candidate - 1)) / candidate;
    const tileHeight = (height - gap * (rows - 1)) / rows;
    const fits = Math.min(tileWidth / 1.25, tileHeight);
    if (fits > size) { size = fits; columns = candidate; }
  }
  if (size < minimumHeight) {
    columns = Math.max(1, Math.floor((width + gap) / (minimumWidth + gap)));
    size = minimumHeight;
  }
  tiles.style.setProperty("--columns", String(columns));
  tiles.style.setProperty("--tile-height", Math.floor(Math.min(size, largest)) + "px");
  // Small tiles keep names to one line (ellipsis; the full name is the tile's title and label).
  tiles.classList.toggle("dense", size < 180);
}

/**
 * One sensor per athlete: a session recording several sensors (two straps, a strap and a power
 * meter) is shown once, by the first of its sensors that gives a heart rate now (else its first).
 */
function shown() {
  const bySession = new Map();
  const list = [];
  for (const s of sensors.values()) {
    if (s.session == null) list.push(s);
    else bySession.set(s.session, [...(bySession.get(s.session) || []), s]);
  }
  for (const [session, members] of bySession) {
    const order = sessionSensors.get(session) || [];
    const rank = (s) => { const index = order.indexOf(s.address); return index < 0 ? order.length : index; };
    members.sort((a, b) => rank(a) - rank(b) || a.address.localeCompare(b.address));
    const beating = (s) => s.heartRate != null && (s.state === "ready" || s.via === "advertisement");
    list.push(members.find(beating) || members[0]);
  }
  return list;
}

function render() {
  pending = false;
  const now = performance.now();
  const list = shown();
  list.sort((a, b) => order.value === "hr" ? (b.heartRate || 0) - (a.heartRate || 0)
    : order.value === "zone" ? (b.zone || 0) - (a.zone || 0) : a.address.localeCompare(b.address));
  fit(list.length);
  tiles.replaceChildren(...list.map((s) => {
    const broadcast = s.via === "advertisement";
    // A strap followed through its broadcast has no link to lose: its readings say whether it is there.
    const lost = s.state !== "ready" && !broadcast;
    const last = heard.get(s.address);
    const age = last == null ? null : Math.floor((now - last) / 1000);
    const stale = !lost && s.heartRate != null && last != null && now - last > staleAfter;
    const name = s.athleteName || s.name || s.address;
    const kcal = energy.get(s.address);
    const mode = s.via == null ? null : broadcast ? "broadcast" : "link";
    return el("article", { class: "tile" + (lost ? " lost" : "") + (stale ? " stale" : ""), "data-address": s.address,
        "data-session": s.session || "",
        "data-zone": s.zone == null ? "" : s.zone, "data-via": s.via || "", style: { background: zoneColour(s.zone) },
        "aria-label": name },
      el("div", { class: "top" },
        el("h2", { text: name, title: name }),
        mode && el("span", { class: "via", text: mode,
          title: broadcast ? "heard in its advertisements: heart rate only, no RR intervals or battery" : "connected: full data" })),
      el("div", { class: "bpm" }, el("span", { class: "hr", text: lost || s.heartRate == null ? "--" : s.heartRate })),
      stale ? el("div", { class: "facts age", text: "no data for " + age + " s" })
        : el("div", { class: "facts" },
          el("span", { text: s.percentOfMax == null || lost ? "–" : s.percentOfMax + " %" }),
          el("span", { text: s.zone == null || lost ? "" : "Zone " + s.zone }),
          el("span", { text: kcal == null ? "" : Math.round(kcal) + " kcal" })));
  }));
}
function schedule() { if (!pending) { pending = true; requestAnimationFrame(render); } }
order.addEventListener("change", schedule);
window.addEventListener("resize", schedule);
// Staleness grows while nothing arrives: judged again every second (nothing is fetched).
setInterval(schedule, 1000);
// After a reconnection: tiles, calories and the class banner the new snapshot does not bring back.
const tilesCheck = snapshotCheck((gone) => {
  for (const address of gone) { sensors.delete(address); heard.delete(address); }
  schedule();
});
const energyCheck = snapshotCheck((gone) => { for (const address of gone) energy.delete(address); schedule(); });
const classCheck = snapshotCheck((gone) => { if (gone.size) classStatus.hidden = true; });
function noteSession(session) {
  if (session.state === "ended") sessionSensors.delete(session.id);
  else sessionSensors.set(session.id, session.sensors || []);
  for (const address of session.sensors || []) {
    if (session.state === "ended") energy.delete(address);
    else if (session.activeEnergy != null) energy.set(address, session.activeEnergy);
    if (session.state !== "ended") energyCheck.confirm(address);
  }
}
follow({}, (message) => {
  if (message.kind === "measurement") {
    heard.set(message.sensor, performance.now());
    return;
  }
  if (message.kind === "sensor") {
    tilesCheck.confirm(message.address);
    if (message.state === "gone") {
      sensors.delete(message.address);
      heard.delete(message.address);
    } else {
      sensors.set(message.address, message);
      if (message.heartRate != null && !heard.has(message.address)) heard.set(message.address, performance.now());
    }
  } else if (message.kind === "session") {
    noteSession(message);
  } else if (message.kind === "figures") {
    // Every session's figures of the last second, in one message.
    for (const session of message.sessions || []) noteSession(session);
  } else if (message.kind === "class") {
    classCheck.confirm("class");
    const inClass = message.members.filter((m) => m.state === "in").length;
    const away = message.members.filter((m) => m.state === "out of range").length;
    classStatus.hidden = message.state !== "running";
    classStatus.textContent = "Class: " + inClass + " in" + (away ? ", " + away + " out of range" : "");
    return;
  } else return;
  schedule();
}, (up) => {
  const link = document.getElementById("link");
  link.textContent = up ? "live" : "reconnecting…";
  link.className = "status " + (up ? "live" : "down");
}, () => {
  // A new connection: its snapshot says what is there now (the running sessions among it).
  sessionSensors.clear();
  tilesCheck.begin(sensors.keys());
  energyCheck.begin(energy.keys());
  classCheck.begin(classStatus.hidden ? [] : ["class"]);
});
