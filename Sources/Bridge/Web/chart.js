// A small SVG line chart with zone bands: no library (Debian packages none that fits).
"use strict";

/**
 * Draws `points` ([{t: seconds, v: bpm}]) into `svg` between `from` and `to` seconds, with
 * horizontal bands for `zones` ([{index, lower, upper}]).
 */
function drawChart(svg, points, from, to, zones) {
  const width = 600, height = 220, left = 36, bottom = 20;
  const values = points.map((p) => p.v);
  const low = Math.min(60, ...values) - 5, high = Math.max(180, ...values) + 5;
  const x = (t) => left + ((t - from) / Math.max(1, to - from)) * (width - left - 4);
  const y = (v) => (height - bottom) - ((v - low) / (high - low)) * (height - bottom - 6);
  let out = "";
  for (const zone of zones || []) {
    const top = y(Math.min(high, zone.upper == null ? high : zone.upper));
    const base = y(Math.max(low, zone.lower == null ? low : zone.lower));
    if (base > top) {
      out += `<rect x="${left}" y="${top}" width="${width - left - 4}" height="${base - top}" fill="${zoneColour(zone.index)}" opacity="0.15"><title>Zone ${zone.index}</title></rect>`;
    }
  }
  for (let v = Math.ceil(low / 20) * 20; v <= high; v += 20) {
    out += `<text x="2" y="${y(v) + 4}" font-size="11" fill="currentColor">${v}</text>`;
    out += `<line x1="${left}" x2="${width - 4}" y1="${y(v)}" y2="${y(v)}" stroke="currentColor" opacity="0.1"/>`;
  }
  if (points.length > 1) {
    const path = points.map((p, i) => (i ? "L" : "M") + x(p.t).toFixed(1) + "," + y(p.v).toFixed(1)).join("");
    out += `<path d="${path}" fill="none" stroke="#c92a2a" stroke-width="2"/>`;
  }
  out += `<g class="points">` + points.map((p) => `<circle cx="${x(p.t).toFixed(1)}" cy="${y(p.v).toFixed(1)}" r="1" fill="#c92a2a"/>`).join("") + `</g>`;
  svg.innerHTML = out;
}
