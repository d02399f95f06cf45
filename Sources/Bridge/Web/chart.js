// A small SVG line chart with zone bands: no library (Debian packages none that fits).
"use strict";

// Each chart is drawn in its own pixels (a viewBox the size the page gives it), so it fills its
// box and its lines and labels keep their size whatever the card's shape; drawn again when the
// box changes size.
const chartDrawings = new WeakMap();   // svg → the function that draws it at its current size
const chartResizes = new ResizeObserver((entries) => {
  for (const entry of entries) {
    const draw = chartDrawings.get(entry.target);
    if (draw) draw();
  }
});

/** Calls `draw(width, height)` with the size of `svg` in CSS pixels, now and whenever it changes. */
function drawSized(svg, draw) {
  const sized = () => {
    const width = Math.max(120, Math.round(svg.clientWidth || 600)), height = Math.max(80, Math.round(svg.clientHeight || 220));
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    draw(width, height);
  };
  if (!chartDrawings.has(svg)) chartResizes.observe(svg);
  chartDrawings.set(svg, sized);
  sized();
}

/**
 * Draws `points` ([{t: seconds, v: bpm}]) into `svg` between `from` and `to` seconds, with
 * horizontal bands for `zones` ([{index, lower, upper}]). Built as SVG nodes, never as markup.
 */
function drawChart(svg, points, from, to, zones) {
  drawSized(svg, (width, height) => drawHeartRate(svg, width, height, points, from, to, zones));
}

function drawHeartRate(svg, width, height, points, from, to, zones) {
  const left = 36, bottom = 20;
  const values = points.map((p) => Number(p.v));
  const low = Math.min(60, ...values) - 5, high = Math.max(180, ...values) + 5;
  const x = (t) => left + ((t - from) / Math.max(1, to - from)) * (width - left - 4);
  const y = (v) => (height - bottom) - ((v - low) / (high - low)) * (height - bottom - 6);
  const nodes = [];
  for (const zone of zones || []) {
    const top = y(Math.min(high, zone.upper == null ? high : Number(zone.upper)));
    const base = y(Math.max(low, zone.lower == null ? low : Number(zone.lower)));
    if (base > top) {
      nodes.push(el("svg:rect", { x: left, y: top, width: width - left - 4, height: base - top, fill: zoneColour(zone.index), opacity: 0.15 },
        el("svg:title", { text: "Zone " + Number(zone.index) })));
    }
  }
  for (let v = Math.ceil(low / 20) * 20; v <= high; v += 20) {
    nodes.push(el("svg:text", { x: 2, y: y(v) + 4, "font-size": 12, fill: "currentColor", text: v }));
    nodes.push(el("svg:line", { x1: left, x2: width - 4, y1: y(v), y2: y(v), stroke: "currentColor", opacity: 0.1 }));
  }
  if (points.length > 1) {
    const path = points.map((p, i) => (i ? "L" : "M") + x(p.t).toFixed(1) + "," + y(p.v).toFixed(1)).join("");
    nodes.push(el("svg:path", { d: path, fill: "none", stroke: "#c92a2a", "stroke-width": 2 }));
  }
  // A reading heard as a broadcast (anyone could have sent it) is hollow.
  nodes.push(el("svg:g", { class: "points" },
    ...points.map((p) => p.via === "advertisement"
      ? el("svg:circle", { cx: x(p.t).toFixed(1), cy: y(p.v).toFixed(1), r: 2, fill: "none", stroke: "#c92a2a", "data-via": p.via })
      : el("svg:circle", { cx: x(p.t).toFixed(1), cy: y(p.v).toFixed(1), r: 1, fill: "#c92a2a", "data-via": p.via || "" }))));
  svg.replaceChildren(...nodes);
}

/**
 * Draws DFA α1 `points` ([{t: seconds, v: α1, reliable}]) into `svg`, with dashed lines at 0.75
 * (HRVT1) and 0.5 (HRVT2); unreliable windows (over 5 % artefacts) are hollow.
 */
function drawAlpha1Chart(svg, points) {
  drawSized(svg, (width, height) => drawAlpha1(svg, width, height, points));
}

function drawAlpha1(svg, width, height, points) {
  const left = 36, bottom = 20, low = 0.2, high = 1.6;
  const from = points.length ? points[0].t : 0, to = points.length ? points[points.length - 1].t : 1;
  const x = (t) => left + ((t - from) / Math.max(1, to - from)) * (width - left - 4);
  const y = (v) => (height - bottom) - ((Math.min(high, Math.max(low, v)) - low) / (high - low)) * (height - bottom - 6);
  const nodes = [];
  for (const v of [0.4, 0.8, 1.2, 1.6]) {
    nodes.push(el("svg:text", { x: 2, y: y(v) + 4, "font-size": 12, fill: "currentColor", text: v.toFixed(1) }));
    nodes.push(el("svg:line", { x1: left, x2: width - 4, y1: y(v), y2: y(v), stroke: "currentColor", opacity: 0.1 }));
  }
  for (const [v, label] of [[0.75, "HRVT1 0.75"], [0.5, "HRVT2 0.5"]]) {
    nodes.push(el("svg:line", { class: "threshold", "data-alpha1": v, x1: left, x2: width - 4, y1: y(v), y2: y(v), stroke: "#e67700", "stroke-dasharray": "6 4" }));
    nodes.push(el("svg:text", { x: width - 90, y: y(v) - 4, "font-size": 12, fill: "#e67700", text: label }));
  }
  const shown = points.filter((p) => p.v != null);
  if (shown.length > 1) {
    const path = shown.map((p, i) => (i ? "L" : "M") + x(p.t).toFixed(1) + "," + y(p.v).toFixed(1)).join("");
    nodes.push(el("svg:path", { d: path, fill: "none", stroke: "#1864ab", "stroke-width": 2 }));
  }
  nodes.push(el("svg:g", { class: "points" },
    ...shown.map((p) => el("svg:circle", { cx: x(p.t).toFixed(1), cy: y(p.v).toFixed(1), r: 2.5,
      fill: p.reliable ? "#1864ab" : "none", stroke: "#1864ab", "data-reliable": p.reliable ? "true" : "false" }))));
  svg.replaceChildren(...nodes);
}
