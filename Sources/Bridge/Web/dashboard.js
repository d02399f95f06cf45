// The dashboard: sensors, one session's live figures and controls, a 10-minute chart, workouts.
"use strict";

const sensors = new Map();    // address → sensor status
const sessions = new Map();   // id → session object
const history = new Map();    // address → [{t, v}] heart rate, last 10 minutes
const alphaHistory = new Map(); // session id → [{t, v, reliable}] DFA α1 windows
let latest = 0;               // the daemon's time of the newest reading (s): the chart's "now"
let chosen = params.get("sensor");   // the strap the user picked (kept while it is away)
let selected = chosen;              // the strap shown: the chosen one, else the first ready
let drawPending = false;
let renderedOptions = "";   // the sensor choices as last written

const $ = (id) => document.getElementById(id);
$("link-board").href = withToken("/board");

function sessionOf(address) {
  for (const session of sessions.values()) {
    if (session.state !== "ended" && session.sensors.includes(address)) return session;
  }
  return null;
}

const thisYear = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", hour: "numeric", minute: "2-digit" });
const anotherYear = new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", day: "numeric", hour: "numeric", minute: "2-digit" });

/**
 * A date as a `<time>`: compact, in the browser's language and time zone ("Nov 24, 11:57 AM"; the
 * year only when it is not this one), the full date and time as its title.
 */
function when(iso) {
  const date = new Date(iso);
  const format = date.getFullYear() === new Date().getFullYear() ? thisYear : anotherYear;
  return el("time", { datetime: date.toISOString(), title: date.toLocaleString(), text: format.format(date) });
}

function showError(error) { $("error").textContent = error ? String(error.message || error) : ""; }

async function act(method, path, body) {
  showError(null);
  try { return await api(method, path, body); } catch (error) { showError(error); }
}

function render() {
  drawPending = false;
  const rows = [...sensors.values()].sort((a, b) => a.address.localeCompare(b.address));
  selected = chosen && sensors.has(chosen) ? chosen : (rows.find((s) => s.state === "ready") || rows[0] || {}).address;
  $("sensors").replaceChildren(...rows.map((s) => el("tr", { "data-address": s.address, "aria-current": s.address === selected ? "true" : null },
    el("td", {}, el("button", { class: "pick name", "data-address": s.address, text: s.athleteName || s.name || s.address })),
    el("td", { text: s.state + (s.reason ? " (" + s.reason + ")" : "") }),
    el("td", { class: "num", text: s.batteryLevel == null ? "–" : s.batteryLevel + " %" }),
    el("td", { class: "num", text: s.heartRate == null ? "–" : s.heartRate }))));
  const choices = rows.map((s) => [s.address, s.athleteName || s.name || s.address]);
  const options = JSON.stringify([choices, selected]);
  if (options !== renderedOptions) {
    // Rewrite the choices only when they change, so an open list is not reset under the user.
    renderedOptions = options;
    $("start-sensor").replaceChildren(...choices.map(([address, label]) =>
      el("option", { value: address, selected: address === selected, text: label })));
  }

  const session = selected ? sessionOf(selected) : null;
  $("start").hidden = !!session;
  $("live").hidden = !session;
  const status = selected ? sensors.get(selected) : null;
  if (session) {
    $("session-state").textContent = session.state;
    $("session-athlete").textContent = session.athlete + (session.guest ? " (guest)" : "");
    $("hr").textContent = status && status.heartRate != null ? status.heartRate : "--";
    const stats = (session.statistics || {}).heartRate || {};
    $("elapsed").textContent = formatDuration(session.elapsedTime);
    $("average").textContent = stats.average == null ? "–" : Math.round(stats.average) + " bpm";
    $("maximum").textContent = stats.max == null ? "–" : Math.round(stats.max) + " bpm";
    $("rmssd").textContent = session.rmssd == null ? "–" : Math.round(session.rmssd * 1000) + " ms";
    const alpha1 = session.alpha1;
    $("alpha1").textContent = alpha1 == null || alpha1.alpha1 == null ? "–" : Number(alpha1.alpha1).toFixed(2) + (alpha1.reliable ? "" : "?");
    $("artefacts").textContent = alpha1 == null ? "–" : Number(alpha1.artefactPercent).toFixed(1) + " %";
    $("energy").textContent = session.activeEnergy == null ? "–" : Math.round(session.activeEnergy) + " kcal";
    $("laps").textContent = session.laps || 0;
    const zone = session.zone;
    $("zone-label").textContent = zone ? `Zone ${zone.index}` + (zone.lower != null ? ` (${Math.round(zone.lower)}${zone.upper != null ? "–" + Math.round(zone.upper) : "+"} bpm)` : "") : "Zone –";
    $("zone-label").dataset.zone = zone ? zone.index : "";
    $("zonebar").replaceChildren(...(session.zones || []).map((z) =>
      el("span", { style: { background: zoneColour(z.index) }, class: zone && zone.index === z.index ? "current" : null, text: "Z" + z.index })));
    $("zonebar").setAttribute("aria-label", zone ? `current zone ${zone.index} of ${(session.zones || []).length}` : "zones");
    const plan = session.plan;
    $("plan").hidden = !plan;
    $("next").hidden = !plan || plan.complete;
    if (plan && !plan.complete) {
      const step = plan.current;
      $("plan-step").textContent = `${step.step}, ${step.purpose}${step.name ? " “" + step.name + "”" : ""}`;
      $("plan-progress").value = plan.progress == null ? 0 : plan.progress;
      $("plan-goal").textContent = step.goal + (plan.progress == null ? "" : ` · ${Math.round(plan.progress * 100)} %`);
      if (plan.alertTarget) {
        const [low, high] = plan.alertTarget.map((v) => Math.round(v));
        const value = plan.alertValue == null ? "–" : Math.round(plan.alertValue);
        $("plan-alert").textContent = `${step.alert}: target ${low}–${high}, now ${value} ${plan.alertInRange ? "✓ in range" : "✗ out of range"}`;
        $("plan-alert").dataset.inRange = plan.alertInRange;
      } else {
        $("plan-alert").textContent = "";
      }
      $("plan-next").textContent = plan.next ? `next: ${plan.next.purpose} ${plan.next.goal}` : "last step";
    } else if (plan) {
      $("plan-step").textContent = "complete";
    }
    $("pause").disabled = session.state !== "running";
    $("resume").disabled = session.state !== "paused";
    $("lap").disabled = session.state !== "running";
  }
  const alphaPoints = session ? alphaHistory.get(session.id) || [] : [];
  $("alpha1-section").hidden = alphaPoints.length === 0;
  if (alphaPoints.length) drawAlpha1Chart($("alpha1-chart"), alphaPoints);
  const points = history.get(selected) || [];
  if (points.length) {
    const to = points[points.length - 1].t;
    drawChart($("chart"), points, to - 600, to, session ? session.zones : []);
    $("chart-caption").textContent = `${points.length} readings from ${status ? status.athleteName || status.name || status.address : ""}`;
  } else {
    drawChart($("chart"), [], 0, 600, session ? session.zones : []);   // the empty grid, until readings come
  }
}

function schedule() {
  if (!drawPending) { drawPending = true; requestAnimationFrame(render); }
}

/** Keeps a session while it runs; an ended one goes, with its α1 history (a page open for days). */
function noteSession(session) {
  sessionsCheck.confirm(session.id);
  if (session.state === "ended") {
    sessions.delete(session.id);
    alphaHistory.delete(session.id);
  } else {
    sessions.set(session.id, session);
  }
}

/** Readings older than the chart's 10 minutes go, and straps with none left. */
function trimHistory() {
  for (const [address, points] of history) {
    while (points.length && points[0].t < latest - 600) points.shift();
    if (!points.length) history.delete(address);
  }
}
setInterval(trimHistory, 60000);

function onMessage(message) {
  switch (message.kind) {
    case "sensor":
      sensorsCheck.confirm(message.address);
      if (message.state === "gone") {
        sensors.delete(message.address);
        history.delete(message.address);
      } else {
        sensors.set(message.address, message);
      }
      break;
    case "plan":
      break;
    case "hrv": {
      if (!sessions.has(message.session)) break;   // not (or no longer) running
      const points = alphaHistory.get(message.session) || [];
      points.push({ t: Number(message.end), v: message.alpha1, reliable: message.reliable === true });
      if (points.length > 2000) points.shift();
      alphaHistory.set(message.session, points);
      const session = sessions.get(message.session);
      if (session) session.alpha1 = message;
      break;
    }
    case "session":
      noteSession(message);
      if (message.state === "ended") loadWorkouts();
      break;
    case "figures":
      // Every session's figures of the last second, in one message.
      for (const session of message.sessions || []) noteSession(session);
      break;
    case "measurement": {
      const points = history.get(message.sensor) || [];
      const t = Date.parse(message.time) / 1000;
      latest = Math.max(latest, t);
      points.push({ t, v: message.heartRate });
      while (points.length && points[0].t < t - 600) points.shift();
      history.set(message.sensor, points);
      const status = sensors.get(message.sensor);
      if (status) status.heartRate = message.heartRate;
      break;
    }
  }
  schedule();
}

// After a reconnection: straps and sessions the new snapshot does not bring back (a restarted
// daemon may have forgotten some). The readings stay for the chart. A session's α1 history stays
// 10 minutes more: a restarted daemon recovers its sessions once their straps stream again.
const sensorsCheck = snapshotCheck((gone) => {
  for (const address of gone) { sensors.delete(address); history.delete(address); }
  schedule();
});
const sessionsCheck = snapshotCheck((gone) => {
  for (const id of gone) sessions.delete(id);
  setTimeout(() => { for (const id of gone) if (!sessions.has(id)) alphaHistory.delete(id); }, 600000);
  schedule();
});
follow({}, onMessage, (up) => {
  $("link").textContent = up ? "live" : "reconnecting…";
  $("link").className = "status " + (up ? "live" : "down");
}, () => {
  sensorsCheck.begin(sensors.keys());
  sessionsCheck.begin(sessions.keys());
});

$("sensors").addEventListener("click", (event) => {
  const button = event.target.closest("button.pick");
  if (button) { chosen = selected = button.dataset.address; schedule(); }
});
$("start-sensor").addEventListener("change", (event) => { chosen = selected = event.target.value; schedule(); });
$("start").addEventListener("submit", async (event) => {
  event.preventDefault();
  const session = await act("POST", "/v1/sessions", {
    sensors: [$("start-sensor").value], activity: $("start-activity").value, guest: $("start-guest").checked,
  });
  if (session) { noteSession(session); chosen = selected = $("start-sensor").value; schedule(); }
});
for (const action of ["pause", "resume", "lap", "next", "stop"]) {
  $(action).addEventListener("click", async () => {
    const session = sessionOf(selected);
    if (!session) return;
    const updated = await act("POST", `/v1/sessions/${encodeURIComponent(session.id)}/${action}`);
    if (updated) { noteSession(updated); schedule(); }
    if (action === "stop") loadWorkouts();
  });
}

async function loadWorkouts() {
  const data = await act("GET", "/v1/workouts?limit=20");
  if (!data) return;
  $("workout-list").replaceChildren(...data.workouts.map((w) => el("tr", {},
    el("td", {}, el("button", { class: "open", "data-id": w.id }, when(w.start))),
    el("td", { text: w.activity }), el("td", { text: w.athlete }),
    el("td", { class: "num", text: w.elapsedTime == null ? "running" : formatDuration(w.elapsedTime) }),
    el("td", { class: "links" }, ...(w.active ? ["–"] : ["fit", "tcx", "csv"].flatMap((f, i) => [i ? " " : null,
      el("a", { href: withToken(`/v1/workouts/${encodeURIComponent(w.id)}/export?format=${f}`), download: true, text: f.toUpperCase() })]))))));
}

/**
 * How the workout's heart rates came: through a link, or heard as a broadcast (which anyone in
 * range can forge; those points are drawn hollow).
 */
function viaSummary(points) {
  const linked = points.filter((p) => p.via === "connection").length;
  const broadcast = points.filter((p) => p.via === "advertisement").length;
  const unknown = points.length - linked - broadcast;
  const parts = [];
  if (linked) parts.push(linked + " through a link");
  if (broadcast) parts.push(broadcast + " heard as a broadcast (hollow: anyone in range could have sent them)");
  if (unknown) parts.push(unknown + " recorded before hrbridge kept how");
  return parts.length ? "Heart rates: " + parts.join(", ") + "." : "";
}

/** Shows one workout under the list; its address (`?workout=ID`) opens the dashboard on it. */
async function openWorkout(id) {
  const workout = await act("GET", `/v1/workouts/${encodeURIComponent(id)}`);
  const samples = await act("GET", `/v1/workouts/${encodeURIComponent(id)}/samples?type=heartRate`);
  if (!workout || !samples) return false;
  const address = new URL(location.href);
  address.searchParams.set("workout", id);
  window.history.replaceState(null, "", address);   // `history` here is the chart's readings
  $("workout-detail").hidden = false;
  $("workout-title").replaceChildren(workout.activity + ", ", when(workout.start));
  const summary = workout.summary || {};
  const zones = summary.zones || [];
  const points = samples.samples.map((s) => ({ t: Date.parse(s.start) / 1000, v: s.value, via: (s.metadata || {}).via }));
  if (points.length) drawChart($("workout-chart"), points, points[0].t, points[points.length - 1].t, zones);
  $("workout-via").textContent = viaSummary(points);
  const total = zones.reduce((sum, z) => sum + z.duration, 0) || 1;
  $("workout-zones").replaceChildren(...zones.map((z) => el("div", {},
    el("span", { text: "Zone " + z.index }),
    el("i", { style: { width: (100 * z.duration / total).toFixed(1) + "%", background: zoneColour(z.index) }, role: "img", "aria-label": Math.round(100 * z.duration / total) + " percent" }),
    el("span", { text: formatDuration(z.duration) }))));
  return true;
}

$("workout-list").addEventListener("click", (event) => {
  const button = event.target.closest("button.open");
  if (button) openWorkout(button.dataset.id);
});

loadWorkouts();
if (params.get("workout")) {
  openWorkout(params.get("workout")).then((shown) => { if (shown) $("workout-detail").scrollIntoView(); });
}
