// flipzero serve: the charts of the dashboard (SVG, no library). A chart keeps its
// series and view (zoom, log scale, smoothing) and redraws itself at the width of its
// figure.
"use strict";
// board.js (loaded first) gives el().
// Hover shows the values at the nearest x, a drag across the plot zooms to that range
// and a double click (or "reset zoom") returns to the whole range. A series is
// { name, points: [[x, y]], band: [[x, lo, hi]] (a 95% interval, shaded), kind:
// "line" | "dots", color }. Markers are vertical lines at given x ({ x, label }: the
// generations on the loss chart).
const CHART_H = 280, CHART_M = { l: 52, r: 12, t: 10, b: 28 };

// The labels of a set of ticks, all in one format: the fewest decimals that tell the
// ticks apart (0.05 0.1 0.2, or 0.10 0.15 0.20), powers of ten beyond [0.001, 10^6).
function tickLabels(ticks, log) {
  const big = ticks.some((v) => v !== 0 && (Math.abs(v) < 0.001 || Math.abs(v) >= 1e6));
  if (big) return ticks.map((v) => (v === 0 ? "0" : v.toExponential(0).replace("e+", "e")));
  if (log) return ticks.map((v) => String(+v.toPrecision(6)));
  const step = ticks.length > 1 ? Math.abs(ticks[1] - ticks[0]) : 1;
  const dec = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  return ticks.map((v) => v.toFixed(dec));
}

// Ticks at 1, 2 or 5 times a power of ten, about `n` of them over [a, b].
function niceTicks(a, b, n) {
  if (!(b > a)) return [a];
  const raw = (b - a) / Math.max(1, n);
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((k) => k * p).find((s) => s >= raw) || 10 * p;
  const out = [];
  // Each tick from its index (adding steps up would drift: 0.1 ten times is not 1).
  const first = Math.ceil(a / step - 1e-9);
  for (let i = first; i * step <= b + step * 1e-9; i++) out.push(+(i * step).toPrecision(12));
  return out;
}

function logTicks(a, b) {
  const out = [];
  for (let e = Math.floor(Math.log10(a)); e <= Math.ceil(Math.log10(b)); e++) {
    for (const k of [1, 2, 5]) { const v = k * Math.pow(10, e); if (v >= a && v <= b) out.push(v); }
  }
  return out.length >= 2 ? out : [a, b];
}

// Exponential moving average (TensorBoard's smoothing, debiased), `w` in [0, 1).
function smooth(points, w) {
  if (!(w > 0)) return points;
  let acc = 0, norm = 0;
  return points.map(([x, y]) => { acc = acc * w + (1 - w) * y; norm = norm * w + (1 - w); return [x, acc / norm]; });
}

class Chart {
  constructor(svg, opts) {
    this.svg = svg;
    this.opts = Object.assign({ zero: false, integerX: false, log: false, smooth: 0, bands: true }, opts || {});
    this.series = [];
    this.zoom = null;
    this.hidden = new Set();
    this.markers = [];
    this.W = 640;
    svg.setAttribute("role", "img");
    this.tip = document.createElement("div");
    this.tip.className = "tip";
    this.tip.hidden = true;
    svg.parentNode.appendChild(this.tip);
    this.legend = document.createElement("div");
    this.legend.className = "legend-box";
    svg.parentNode.appendChild(this.legend);
    svg.addEventListener("mousemove", (e) => this.hover(e));
    svg.addEventListener("mouseleave", () => { this.tip.hidden = true; const c = this.svg.querySelector(".cross"); if (c) c.remove(); });
    svg.addEventListener("mousedown", (e) => { this.drag = this.dataX(e); });
    svg.addEventListener("mouseup", (e) => {
      const a = this.drag, b = this.dataX(e);
      this.drag = null;
      if (a !== null && b !== null && Math.abs(this.sx(a) - this.sx(b)) > 8) { this.zoom = [Math.min(a, b), Math.max(a, b)]; this.draw(); }
    });
    svg.addEventListener("dblclick", () => { this.zoom = null; this.draw(); });
    Chart.all.push(this);
  }

  // The chart's width in its figure (its viewBox is as wide as it is drawn, so text
  // keeps its size on a wide screen and on a phone).
  width() {
    const w = this.svg.parentNode.clientWidth - 12;
    return Math.max(300, Math.round(w > 0 ? w : 640));
  }

  set(series, markers) { this.series = series; this.markers = markers || []; this.draw(); }

  setOption(k, v) { this.opts[k] = v; this.draw(); }

  visible() {
    return this.series.filter((s) => !this.hidden.has(s.name)).map((s) => {
      let pts = s.points.filter((p) => Number.isFinite(p[0]) && Number.isFinite(p[1]) && (!this.opts.log || p[1] > 0));
      if (s.kind !== "dots") pts = smooth(pts, this.opts.smooth);
      if (this.zoom) pts = pts.filter((p) => p[0] >= this.zoom[0] && p[0] <= this.zoom[1]);
      const band = this.opts.bands && s.band ? s.band.filter((b) => b.every(Number.isFinite) && (!this.zoom || (b[0] >= this.zoom[0] && b[0] <= this.zoom[1]))) : null;
      return Object.assign({}, s, { pts, bandPts: band });
    });
  }

  dataX(e) {
    if (!this.scale) return null;
    const r = this.svg.getBoundingClientRect();
    const px = (e.clientX - r.left) / r.width * this.W;
    return this.x0 + (px - CHART_M.l) / (this.W - CHART_M.l - CHART_M.r) * (this.x1 - this.x0);
  }

  draw() {
    const svg = this.svg, o = this.opts, m = CHART_M;
    const CHART_W = this.W = this.width();
    svg.setAttribute("viewBox", `0 0 ${CHART_W} ${CHART_H}`);
    svg.innerHTML = "";
    this.scale = null;
    const vis = this.visible();
    const all = vis.flatMap((s) => s.pts);
    svg.dataset.points = vis.filter((s) => s.kind === "dots" || s.sample).reduce((n, s) => n + s.pts.length, 0);
    this.drawLegend();
    if (!all.length) {
      el("text", { x: CHART_W / 2, y: CHART_H / 2, class: "tick", "text-anchor": "middle" }, svg).textContent = this.opts.empty || "no data yet";
      return;
    }
    // The whole range takes in the markers (the first generation's starts at step 0).
    let [x0, x1] = this.zoom || [Math.min(...all.map((p) => p[0]), ...this.markers.map((k) => k.x)), Math.max(...all.map((p) => p[0]))];
    // Bands widen the range only up to twice the points' spread (an interval of ±900 Elo
    // would flatten every curve).
    let y0 = Math.min(...all.map((p) => p[1])), y1 = Math.max(...all.map((p) => p[1]));
    const spread = Math.max(y1 - y0, 1);
    for (const s of vis) for (const b of s.bandPts || []) { y0 = Math.min(y0, Math.max(b[1], y0 - spread)); y1 = Math.max(y1, Math.min(b[2], y1 + spread)); }
    if (o.zero && !o.log) { y0 = Math.min(y0, 0); y1 = Math.max(y1, 0); }
    if (x1 === x0) { x0 -= 1; x1 += 1; }
    if (y1 === y0) { y0 -= 1; y1 += 1; }
    const ly = (y) => (o.log ? Math.log10(y) : y);
    const [Y0, Y1] = [ly(y0), ly(y1)];
    const sx = (x) => m.l + (x - x0) / (x1 - x0) * (CHART_W - m.l - m.r);
    const sy = (y) => CHART_H - m.b - (ly(y) - Y0) / (Y1 - Y0 || 1) * (CHART_H - m.t - m.b);
    Object.assign(this, { x0, x1, sx, sy, scale: true, vis });
    const clip = "clip-" + svg.id;
    const defs = el("defs", {}, svg);
    const cp = el("clipPath", { id: clip }, defs);
    el("rect", { x: m.l, y: m.t, width: CHART_W - m.l - m.r, height: CHART_H - m.t - m.b }, cp);
    const yt = o.log ? logTicks(y0, y1) : niceTicks(y0, y1, 5);
    const yl = tickLabels(yt, o.log);
    svg.dataset.yTicks = yl.join(" ");
    yt.forEach((y, i) => {
      el("line", { x1: m.l, y1: sy(y), x2: CHART_W - m.r, y2: sy(y), class: "grid" }, svg);
      el("text", { x: m.l - 4, y: sy(y) + 3, class: "tick y-tick", "text-anchor": "end" }, svg).textContent = yl[i];
    });
    let xt = niceTicks(x0, x1, Math.max(3, Math.round(CHART_W / 110)));
    if (o.integerX) xt = xt.filter((x) => Number.isInteger(x));
    if (o.integerX && xt.length < 2) xt = niceTicks(Math.ceil(x0), Math.floor(x1), Math.max(1, Math.floor(x1) - Math.ceil(x0)));
    const xl = tickLabels(xt, false);
    xt.forEach((x, i) => { el("text", { x: sx(x), y: CHART_H - m.b + 14, class: "tick", "text-anchor": "middle" }, svg).textContent = xl[i]; });
    // Markers inside the range, every k-th labelled so labels do not collide.
    const marks = this.markers.filter((k) => k.x >= x0 && k.x <= x1);
    const every = Math.max(1, Math.ceil(marks.length * 40 / (CHART_W - m.l - m.r)));
    marks.forEach((k, i) => {
      el("line", { x1: sx(k.x), x2: sx(k.x), y1: m.t, y2: CHART_H - m.b, class: "marker" }, svg);
      if (i % every === 0 && sx(k.x) < CHART_W - m.r - 36) el("text", { x: sx(k.x) + 2, y: m.t + 9, class: "marker-label" }, svg).textContent = k.label;
    });
    svg.dataset.markers = marks.length;
    el("line", { x1: m.l, y1: CHART_H - m.b, x2: CHART_W - m.r, y2: CHART_H - m.b, class: "axis" }, svg);
    el("line", { x1: m.l, y1: m.t, x2: m.l, y2: CHART_H - m.b, class: "axis" }, svg);
    if (o.zero && !o.log && y0 < 0 && y1 > 0) el("line", { x1: m.l, y1: sy(0), x2: CHART_W - m.r, y2: sy(0), class: "axis", "stroke-dasharray": "3 3" }, svg);
    const plot = el("g", { "clip-path": `url(#${clip})` }, svg);
    for (const s of vis) {
      // A curve's interval is a band; samples' intervals are whiskers (bands of many
      // noisy samples would cover each other).
      if (s.bandPts && s.bandPts.length > 1 && !s.sample) {
        const up = s.bandPts.map((b) => sx(b[0]).toFixed(1) + "," + sy(b[2]).toFixed(1));
        const down = s.bandPts.slice().reverse().map((b) => sx(b[0]).toFixed(1) + "," + sy(b[1]).toFixed(1));
        el("polygon", { points: up.concat(down).join(" "), class: "band", fill: s.color }, plot);
      } else if (s.bandPts) {
        for (const b of s.bandPts) el("line", { x1: sx(b[0]), x2: sx(b[0]), y1: sy(b[1]), y2: sy(b[2]), class: "whisker", stroke: s.color }, plot);
      }
      if (!s.pts.length) continue;
      if (s.kind !== "dots") {
        el("path", { d: s.pts.map((p, k) => (k ? "L" : "M") + sx(p[0]).toFixed(1) + "," + sy(p[1]).toFixed(1)).join(" "), class: "series" + (s.sample ? "" : " curve"), stroke: s.color, "data-name": s.name, "data-kind": s.sample ? "sample" : "curve" }, plot);
      }
      if (s.kind === "dots" || s.pts.length < 80) {
        for (const p of s.pts) el("circle", { cx: sx(p[0]), cy: sy(p[1]), r: s.kind === "dots" ? 2.5 : 2, fill: s.color, "fill-opacity": s.kind === "dots" ? 0.6 : 1 }, plot);
      }
    }
  }

  drawLegend() {
    this.legend.innerHTML = "";
    for (const s of this.series) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "legend-item" + (this.hidden.has(s.name) ? " off" : "");
      b.setAttribute("aria-pressed", this.hidden.has(s.name) ? "false" : "true");
      b.title = "show or hide this series";
      const sw = document.createElement("span");
      sw.className = "swatch";
      sw.style.background = s.color;
      b.append(sw, s.name);
      b.onclick = () => { this.hidden.has(s.name) ? this.hidden.delete(s.name) : this.hidden.add(s.name); this.draw(); };
      this.legend.appendChild(b);
    }
  }

  hover(e) {
    if (!this.scale) return;
    const x = this.dataX(e);
    let best = null;
    for (const s of this.vis) for (const p of s.pts) if (best === null || Math.abs(p[0] - x) < Math.abs(best - x)) best = p[0];
    if (best === null) return;
    let c = this.svg.querySelector(".cross");
    if (!c) c = el("line", { class: "cross" }, this.svg);
    Object.entries({ x1: this.sx(best), x2: this.sx(best), y1: CHART_M.t, y2: CHART_H - CHART_M.b }).forEach(([k, v]) => c.setAttribute(k, v));
    const rows = [];
    for (const s of this.vis) {
      const p = s.pts.find((q) => q[0] === best);
      if (!p) continue;
      const b = (s.bandPts || []).find((q) => q[0] === best);
      rows.push(`<span class="swatch" style="background:${s.color}"></span>${escapeHtml(s.name)}: <b>${fmt(p[1])}</b>` + (b ? ` [${fmt(b[1])}, ${fmt(b[2])}]` : ""));
    }
    const mark = this.markers.filter((k) => k.x <= best).pop();
    this.tip.innerHTML = `<div>${escapeHtml(this.opts.xLabel || "x")} ${fmt(best)}` + (mark ? ` (${escapeHtml(mark.label)})` : "") + "</div>" + rows.join("<br>");
    this.tip.hidden = false;
    const pr = this.svg.parentNode.getBoundingClientRect();
    const left = e.clientX - pr.left + 12;
    this.tip.style.left = Math.min(left, pr.width - 220) + "px";
    this.tip.style.top = (e.clientY - pr.top + 12) + "px";
    this.svg.dataset.hover = best;
  }
}

function escapeHtml(t) {
  return String(t).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

function fmt(v) {
  const a = Math.abs(v);
  if (a !== 0 && (a < 0.001 || a >= 1e6)) return v.toExponential(1);
  return Number.isInteger(v) || a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) : v.toFixed(3);
}

// Every chart, redrawn at its new width when the window's changes.
Chart.all = [];
let chartResize = null;
window.addEventListener("resize", () => {
  clearTimeout(chartResize);
  chartResize = setTimeout(() => { for (const c of Chart.all) if (c.series.length) c.draw(); }, 150);
});
