// The class board: a tile per strap, following the live stream.
"use strict";
const sensors = new Map();
const energy = new Map();   // sensor address → kcal of its running session
const tiles = document.getElementById("tiles");
const order = document.getElementById("order");
order.value = params.get("order") || "fixed";
let pending = false;
function render() {
  pending = false;
  const list = [...sensors.values()];
  list.sort((a, b) => order.value === "hr" ? (b.heartRate || 0) - (a.heartRate || 0)
    : order.value === "zone" ? (b.zone || 0) - (a.zone || 0) : a.address.localeCompare(b.address));
  tiles.replaceChildren(...list.map((s) => {
    const lost = s.state !== "ready";
    const name = s.athleteName || s.name || s.address;
    const kcal = energy.get(s.address);
    return el("article", { class: "tile" + (lost ? " lost" : ""), "data-address": s.address, "data-zone": s.zone == null ? "" : s.zone,
        style: { background: zoneColour(s.zone) }, "aria-label": name },
      el("h2", { text: name }),
      el("div", { class: "bpm" }, el("span", { class: "hr", text: lost || s.heartRate == null ? "--" : s.heartRate })),
      el("div", { class: "facts" },
        el("span", { text: s.percentOfMax == null || lost ? "–" : s.percentOfMax + " % max" }),
        el("span", { text: s.zone == null || lost ? "" : "Zone " + s.zone }),
        el("span", { text: kcal == null ? "" : Math.round(kcal) + " kcal" })));
  }));
}
function schedule() { if (!pending) { pending = true; requestAnimationFrame(render); } }
order.addEventListener("change", schedule);
follow({}, (message) => {
  if (message.kind === "sensor") {
    if (message.state === "gone") sensors.delete(message.address); else sensors.set(message.address, message);
  }
  else if (message.kind === "session") {
    for (const address of message.sensors || []) {
      if (message.state === "ended") energy.delete(address);
      else if (message.activeEnergy != null) energy.set(address, message.activeEnergy);
    }
  } else return;
  schedule();
}, (up) => {
  const link = document.getElementById("link");
  link.textContent = up ? "live" : "reconnecting…";
  link.className = "status " + (up ? "live" : "down");
});
