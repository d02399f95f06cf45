// The streaming overlay: one strap's heart rate, pulsing once per beat.
"use strict";
// Query parameters: sensor (address; default the first streaming one), size (px), colour (CSS, the
// digits), heart (CSS, the heart), zone (1: show the zone badge).
const sensor = params.get("sensor");
if (params.get("size")) document.body.style.setProperty("--size", parseInt(params.get("size"), 10) + "px");
if (params.get("colour") || params.get("color")) document.body.style.setProperty("--colour", params.get("colour") || params.get("color"));
if (params.get("heart")) document.body.style.setProperty("--heart", params.get("heart"));
const showZone = params.get("zone") === "1" || params.get("zone") === "true";
let followed = sensor ? sensor.toUpperCase() : null;
const heart = document.getElementById("heart");
/** The strap followed by default is gone: show nothing of it, and follow the next one that streams. */
function letGo() {
  followed = null;
  document.getElementById("hr").textContent = "--";
  document.body.classList.remove("lost");
  document.getElementById("zone").hidden = true;
}
// After a reconnection: a strap the restarted daemon no longer has is let go too.
const followedCheck = snapshotCheck((gone) => { if (gone.size && !sensor) letGo(); });
follow(sensor ? { sensor } : {}, (message) => {
  if (message.kind === "sensor") {
    if (!followed && message.state === "ready") followed = message.address;
    if (message.address !== followed) return;
    followedCheck.confirm(message.address);
    if (message.state === "gone" && !sensor) {
      letGo();
      return;
    }
    document.body.classList.toggle("lost", message.state !== "ready");
    if (message.state !== "ready") document.getElementById("hr").textContent = "--";
    if (showZone && message.zone != null) {
      const zone = document.getElementById("zone");
      zone.hidden = false;
      zone.textContent = "Z" + message.zone;
      zone.style.background = zoneColour(message.zone);
    }
  } else if (message.kind === "measurement" && message.sensor === followed) {
    document.getElementById("hr").textContent = message.heartRate;
    // Pulse once per beat: the period is the last RR interval, else 60 / HR.
    const rr = message.rrIntervals && message.rrIntervals.length ? message.rrIntervals[message.rrIntervals.length - 1] : 60 / Math.max(30, message.heartRate);
    document.body.style.setProperty("--beat", Math.min(2, rr) + "s");
    heart.classList.remove("beat");
    void heart.offsetWidth;
    heart.classList.add("beat");
  }
}, null, () => {
  if (followed) followedCheck.begin([followed]);
});
