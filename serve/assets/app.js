// flipzero serve: the page. It draws what the API returns; every rule is the server's.
"use strict";
// board.js (loaded first) draws the board: el, layout, drawBoard.

const TOKEN = new URLSearchParams(location.search).get("token") || "";
const COLORS = ["#e2574c", "#2f6fd6", "#2d9a4a", "#9b59b6", "#e67e22", "#16a085", "#7f8c8d", "#c0392b"];
const $ = (id) => document.getElementById(id);

// A request of the API; `signal` (an AbortSignal) cancels it.
async function api(path, body, signal) {
  const opts = { headers: { "x-flipzero-token": TOKEN }, signal };
  if (body !== undefined) {
    opts.method = "POST";
    opts.headers["content-type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const r = await fetch("/api/" + path, opts);
  const j = await r.json().catch(() => ({ error: r.statusText }));
  if (!r.ok) throw new Error(j.error || r.statusText);
  return j;
}

function showError(e) { $("error").textContent = e ? String(e.message || e) : ""; }

function td(tr, text, cls) {
  const c = document.createElement("td");
  c.textContent = text;
  if (cls) c.className = cls;
  tr.appendChild(c);
  return c;
}

// ---------- pages ----------
function route() {
  const parts = (location.hash || "#dashboard").slice(1).split("/");
  const page = ["dashboard", "games", "play"].includes(parts[0]) ? parts[0] : "dashboard";
  for (const p of ["dashboard", "games", "play"]) {
    $("page-" + p).classList.toggle("active", p === page);
    $("nav-" + p).classList.toggle("active", p === page);
    if (p === page) $("nav-" + p).setAttribute("aria-current", "page"); else $("nav-" + p).removeAttribute("aria-current");
  }
  if (document.body.dataset.ready !== "true") return;
  if (page === "games" && parts.length >= 5) openLinkedGame(parts.slice(1)).catch(showError);
  else if (page === "games") refreshGames().catch(showError);
  if (page === "dashboard") refreshDashboard().catch(showError);
}
window.addEventListener("hashchange", route);

function heatOf(policy) {
  const h = {};
  for (const e of policy) if (e.to !== null && e.to !== undefined) h[e.to] = (h[e.to] || 0) + e.p;
  return h;
}

function policyText(policy, played) {
  return policy.slice().sort((a, b) => b.p - a.p).slice(0, 12)
    .map((e) => (e.text === played ? "▶ " : "  ") + e.text.padEnd(6) + (100 * e.p).toFixed(1).padStart(6) + "%")
    .join("\n");
}

// ---------- charts ----------
// A chart keeps its series and view (zoom, log scale, smoothing) and redraws itself:
// hover shows the values at the nearest x, a drag across the plot zooms to that range
// and a double click (or "reset zoom") returns to the whole range. A series is
// { name, points: [[x, y]], band: [[x, lo, hi]] (a 95% interval, shaded), kind:
// "line" | "dots", color }.
const CHART_W = 640, CHART_H = 280, CHART_M = { l: 52, r: 12, t: 10, b: 28 };

// Ticks at 1, 2 or 5 times a power of ten, about `n` of them over [a, b].
function niceTicks(a, b, n) {
  if (!(b > a)) return [a];
  const raw = (b - a) / Math.max(1, n);
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((k) => k * p).find((s) => s >= raw) || 10 * p;
  const out = [];
  for (let v = Math.ceil(a / step) * step; v <= b + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
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
    svg.setAttribute("viewBox", `0 0 ${CHART_W} ${CHART_H}`);
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
  }

  set(series) { this.series = series; this.draw(); }

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
    const px = (e.clientX - r.left) / r.width * CHART_W;
    return this.x0 + (px - CHART_M.l) / (CHART_W - CHART_M.l - CHART_M.r) * (this.x1 - this.x0);
  }

  draw() {
    const svg = this.svg, o = this.opts, m = CHART_M;
    svg.innerHTML = "";
    this.scale = null;
    const vis = this.visible();
    const all = vis.flatMap((s) => s.pts);
    svg.dataset.points = vis.filter((s) => s.kind === "dots" || s.sample).reduce((n, s) => n + s.pts.length, 0);
    this.drawLegend();
    if (!all.length) {
      el("text", { x: CHART_W / 2, y: CHART_H / 2, class: "tick", "text-anchor": "middle" }, svg).textContent = "no data yet";
      return;
    }
    let [x0, x1] = this.zoom || [Math.min(...all.map((p) => p[0])), Math.max(...all.map((p) => p[0]))];
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
    for (const y of yt) {
      el("line", { x1: m.l, y1: sy(y), x2: CHART_W - m.r, y2: sy(y), class: "grid" }, svg);
      el("text", { x: m.l - 4, y: sy(y) + 3, class: "tick", "text-anchor": "end" }, svg).textContent = fmt(y);
    }
    let xt = niceTicks(x0, x1, 6);
    if (o.integerX) xt = xt.filter((x) => Number.isInteger(x));
    for (const x of xt) el("text", { x: sx(x), y: CHART_H - m.b + 14, class: "tick", "text-anchor": "middle" }, svg).textContent = fmt(x);
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
    this.tip.innerHTML = `<div>${escapeHtml(this.opts.xLabel || "x")} ${fmt(best)}</div>` + rows.join("<br>");
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

// ---------- dashboard ----------
// Each run's records are kept here and refreshed incrementally: a poll asks only for the
// generations from the last one the page has (which may still be changing) on, and the
// browser's cache answers an unchanged run with "304 Not Modified" (no body).
const dash = { runs: [], shown: new Set(), data: {}, page: 0, charts: null };
const PAGE_ROWS = 25;

// The run list again (networks added since), keeping every choice made on the page.
async function loadRunList() {
  dash.runs = await api("runs");
  fillNets();
}

async function loadRuns() {
  dash.runs = await api("runs");
  for (const sel of [$("dash-run"), $("games-run"), $("cfg-other")]) {
    sel.innerHTML = "";
    if (sel.id === "cfg-other") sel.add(new Option("(none)", ""));
    for (const r of dash.runs) sel.add(new Option(r.id, r.id));
  }
  const box = $("dash-runs");
  box.innerHTML = "";
  for (const r of dash.runs) {
    dash.shown.add(r.id);
    const l = document.createElement("label");
    const c = document.createElement("input");
    c.type = "checkbox"; c.checked = true; c.value = r.id;
    c.addEventListener("change", () => { c.checked ? dash.shown.add(r.id) : dash.shown.delete(r.id); refreshDashboard().catch(showError); });
    l.append(c, " " + r.id);
    box.appendChild(l);
  }
  fillNets();
}

// Every network the server has: bootstrap, each run's best and each generation's.
function netNames() {
  const out = [["bootstrap", "bootstrap"]];
  for (const r of dash.runs) {
    out.push([r.id, r.id + " (best" + (r.best ? ": " + r.best : "") + ")"]);
    for (const m of (r.models || []).slice().reverse()) out.push([r.id + "/" + m, r.id + " / " + m]);
  }
  return out;
}

function fillNets() {
  const nets = netNames();
  for (const id of ["an-net", "an-net2", "opp-net"]) {
    const sel = $(id);
    const keep = sel.value;
    sel.innerHTML = "";
    if (id === "an-net2") sel.add(new Option("(none)", ""));
    if (id === "opp-net") for (const p of ["random", "greedy", "ab1", "ab2", "ab3", "ab4"]) sel.add(new Option(p, p));
    for (const [v, t] of nets) sel.add(new Option(t, v));
    if ([...sel.options].some((o) => o.value === keep)) sel.value = keep;
  }
  const players = $("players");
  players.innerHTML = "";
  for (const p of ["random", "greedy", "ab1", "ab2", "ab3", "ab4", "ab:time=100", "mcts:bootstrap"]) players.appendChild(new Option(p, p));
  for (const [v] of nets.slice(1)) players.appendChild(new Option("mcts:" + v, "mcts:" + v));
}

// Merges a dashboard answer that starts at generation `from` into what the page has.
function mergeRun(old, d, from) {
  if (!old || from === 0) return d;
  const keep = old.generations.findIndex((g) => g.generation >= from);
  const n = keep < 0 ? old.generations.length : keep;
  return Object.assign({}, d, {
    generations: old.generations.slice(0, n).concat(d.generations),
    elapsed_s: old.elapsed_s.slice(0, n).concat(d.elapsed_s),
    elo: old.elo.filter((p) => p.generation < from).concat(d.elo),
  });
}

// Polls between whole reads of a run (which also catch a finished generation's record
// rewritten, e.g. redone after it was found corrupt).
const WHOLE_EVERY = 30;

async function refreshRun(id, whole) {
  const old = dash.data[id];
  // From the oldest generation that may still change (no finished evaluation yet: with
  // separate roles, a gate can finish after the next generation has trained).
  let from = 0;
  if (old && old.generations.length && !whole) {
    const open = old.generations.find((g) => !(g.eval && g.eval.finished));
    from = open ? open.generation : old.generations[old.generations.length - 1].generation;
  }
  const d = await api("runs/" + encodeURIComponent(id) + (from ? "?from=" + from : ""));
  let merged = mergeRun(old, d, from);
  // A run whose record count changed otherwise (a generation redone) is read again whole.
  if (merged.generations.length !== merged.total_generations) merged = await api("runs/" + encodeURIComponent(id));
  dash.data[id] = merged;
  return merged;
}

// Each run's data as last drawn, to skip drawing what has not changed.
const drawn = { key: null, polls: 0, busy: false };

async function refreshDashboard() {
  if (!dash.runs.length) { $("dash-updated").textContent = "no runs given (flipzero serve --run DIR)"; return; }
  // One poll at a time: a slow answer is not overtaken by the next poll.
  if (drawn.busy) return;
  drawn.busy = true;
  try {
    const whole = ++drawn.polls % WHOLE_EVERY === 0;
    const ids = [...new Set([...dash.shown, $("dash-run").value])].filter((id) => id);
    const before = ids.map((id) => dash.data[id] ? dash.data[id].total_generations : -1).join();
    for (const id of ids) await refreshRun(id, whole);
    // New generations may bring networks to pick: the run list is read again.
    if (before !== ids.map((id) => dash.data[id].total_generations).join()) await loadRunList();
    const key = JSON.stringify([ids, $("dash-run").value, ids.map((id) => dash.data[id])]);
    if (key !== drawn.key) {
      drawn.key = key;
      renderStatus();
      renderTable();
      renderCharts();
    }
    $("dash-updated").textContent = "updated " + new Date().toLocaleTimeString();
  } finally {
    drawn.busy = false;
  }
}

// A span of seconds in words ("40 s", "12 min", "1.5 h").
function span(seconds) {
  const s = Math.max(0, seconds);
  return s < 90 ? Math.round(s) + " s" : s < 5400 ? Math.round(s / 60) + " min" : (s / 3600).toFixed(1) + " h";
}

function ago(unix) { return span(Date.now() / 1000 - unix); }

function until(unix) { return span(unix - Date.now() / 1000); }

function renderStatus() {
  const d = dash.data[$("dash-run").value];
  const box = $("run-status");
  if (!d || !d.status) { box.textContent = ""; return; }
  const s = d.status;
  box.dataset.state = s.state;
  const parts = [];
  if (s.generation !== null && s.state === "running") parts.push(`generation ${s.generation}, ${s.stage}`);
  parts.push(`${s.generations_done} generation${s.generations_done === 1 ? "" : "s"} done` + (s.generations_planned ? ` of ${s.generations_planned}` : ""));
  parts.push(`${(s.elapsed_s / 60).toFixed(0)} min` + (s.time_budget_minutes ? ` of ${s.time_budget_minutes}` : ""));
  if (s.positions) parts.push(`${s.positions.toLocaleString()} positions` + (s.positions_per_s ? ` (last self-play ${Math.round(s.positions_per_s)}/s)` : ""));
  if (s.recent_generation_s) parts.push(`${(s.recent_generation_s / 60).toFixed(1)} min a generation`);
  if (s.eta_unix) parts.push(`ends about ${new Date(s.eta_unix * 1000).toLocaleTimeString()} (in ${until(s.eta_unix)})`);
  if (s.roles && s.roles.length) parts.push("roles: " + s.roles.join(", "));
  box.innerHTML = "";
  const badge = document.createElement("span");
  badge.className = "badge " + s.state;
  badge.textContent = s.state;
  badge.title = s.why;
  const text = document.createElement("span");
  text.textContent = " " + parts.join(" · ");
  box.append(badge, text);
  if (s.last_line) {
    const l = document.createElement("div");
    l.className = "muted last-line";
    l.textContent = `last line ${ago(s.last_line_unix)} ago: ${s.last_line}`;
    box.appendChild(l);
  }
}

function renderTable() {
  const d = dash.data[$("dash-run").value];
  const body = $("gen-table").tBodies[0];
  body.innerHTML = "";
  if (!d) return;
  // Pages counted back from the newest generations (page 0), which are shown until
  // another page is chosen.
  const n = d.generations.length, pages = Math.max(1, Math.ceil(n / PAGE_ROWS));
  const page = Math.min(dash.page || 0, pages - 1);
  const all = $("gen-all").checked;
  const to = all ? n : n - page * PAGE_ROWS, from = all ? 0 : Math.max(0, to - PAGE_ROWS);
  $("gen-page").textContent = all ? `all ${n}` : `${Math.min(from + 1, n)}–${to} of ${n}`;
  $("gen-prev").disabled = all || page >= pages - 1;
  $("gen-next").disabled = all || page === 0;
  dash.shownPage = page;
  for (let i = from; i < to; i++) {
    const g = d.generations[i];
    const tr = document.createElement("tr");
    tr.dataset.generation = g.generation;
    const sp = g.selfplay, t = g.train, e = g.eval, v = e && e.gate;
    td(tr, g.generation);
    td(tr, sp ? sp.model : "-", "l");
    td(tr, sp ? sp.games : "-");
    td(tr, sp ? sp.positions : "-");
    // The record lists [x wins, o wins, draws]; the column reads x wins / draws / o wins.
    td(tr, sp ? `${sp.results[0]} / ${sp.results[2]} / ${sp.results[1]}` : "-");
    td(tr, t ? `${t.loss.toFixed(3)} (${t.policy_loss.toFixed(3)} / ${t.value_loss.toFixed(3)})` : "-");
    td(tr, v ? `${v.matched.games} games, ${(100 * v.matched.score).toFixed(1)}%, Elo ${fmtElo(v.matched.elo, v.matched.elo_ci95)}` : (e ? e.reason : "-"), "l");
    td(tr, v ? `${v.llr.toFixed(2)} [${v.bounds[0].toFixed(2)}, ${v.bounds[1].toFixed(2)}] ${v.sprt}` : "-");
    td(tr, e ? (e.promoted ? "yes" : "no") : "-");
    td(tr, e ? e.best : "-");
    td(tr, e ? e.anchor.map((a) => `${a.b}: ${fmtElo(a.elo, a.elo_ci95)}`).join(", ") : "-", "l");
    td(tr, (d.elapsed_s[i] / 60).toFixed(1) + " min");
    const bad = (d.problems || []).filter((p) => p.generation === g.generation);
    if (bad.length) {
      tr.classList.add("problem");
      tr.title = bad.map((p) => `${p.file}: ${p.problem}`).join("\n");
    }
    body.appendChild(tr);
  }
  // Records that could not be read: their generations are shown without them.
  $("gen-problems").textContent = (d.problems || [])
    .map((p) => `generation ${p.generation}: ${p.file} left out (${p.problem})`).join("\n");
  const rb = $("rating-table").tBodies[0];
  rb.innerHTML = "";
  $("rating-anchor").textContent = d.anchor ? `(anchor ${d.anchor} = 0)` : (d.ratings_note || "");
  d.ratings.forEach((r, i) => {
    const tr = document.createElement("tr");
    td(tr, i + 1); td(tr, r.name, "l"); td(tr, r.elo.toFixed(0)); td(tr, r.ci95.toFixed(0)); td(tr, r.games);
    rb.appendChild(tr);
  });
}

function fmtElo(elo, ci) {
  return (elo >= 0 ? "+" : "") + elo.toFixed(0) + " ± " + (ci === null || ci === undefined ? "inf" : ci.toFixed(0));
}

function charts() {
  if (!dash.charts) {
    dash.charts = {
      elo: new Chart($("elo-chart"), { zero: true, integerX: true, xLabel: "generation" }),
      time: new Chart($("elo-time-chart"), { zero: true, xLabel: "minute" }),
      loss: new Chart($("loss-chart"), { xLabel: "step" }),
    };
  }
  return dash.charts;
}

// The run's maximum-likelihood rating of each generation's network (from every gating
// and anchoring game), as (generation, Elo, lo, hi).
function ratingCurve(d) {
  const out = [];
  for (const r of d.ratings || []) {
    const m = /(?:^|[/:])gen-(\d{4,})(?::|$)/.exec(r.name);
    if (m) out.push([+m[1], r.elo, r.elo - r.ci95, r.elo + r.ci95]);
  }
  return out.sort((a, b) => a[0] - b[0]);
}

function renderCharts() {
  const byGen = [], byTime = [];
  const many = dash.shown.size > 1;
  let k = 0;
  const color = () => COLORS[k++ % COLORS.length];
  for (const id of dash.shown) {
    const d = dash.data[id];
    if (!d) continue;
    const pre = many ? id + ": " : "";
    const curve = ratingCurve(d);
    if (curve.length) {
      const c = color();
      const timeOf = new Map(d.generations.map((g, i) => [g.generation, d.elapsed_s[i] / 60]));
      byGen.push({ name: pre + `rating (anchor ${d.anchor})`, points: curve.map((r) => [r[0], r[1]]), band: curve.map((r) => [r[0], r[2], r[3]]), color: c });
      byTime.push({ name: pre + `rating (anchor ${d.anchor})`, points: curve.filter((r) => timeOf.has(r[0])).map((r) => [timeOf.get(r[0]), r[1]]), color: c });
    }
    for (const b of [...new Set(d.elo.map((p) => p.baseline))]) {
      const pts = d.elo.filter((p) => p.baseline === b);
      const c = color();
      const band = pts.filter((p) => p.ci95 !== null).map((p) => [p.generation, p.elo - p.ci95, p.elo + p.ci95]);
      byGen.push({ name: pre + "vs " + b, points: pts.map((p) => [p.generation, p.elo]), band, color: c, sample: true });
      byTime.push({ name: pre + "vs " + b, points: pts.map((p) => [p.elapsed_s / 60, p.elo]), color: c, sample: true });
    }
  }
  const ch = charts();
  ch.elo.set(byGen);
  ch.time.set(byTime);
  const d = dash.data[$("dash-run").value];
  k = 0;
  ch.loss.set(d ? d.losses.map((s) => Object.assign({ color: color() }, s)) : []);
}

// ---------- config ----------
// A run's config.toml, and the keys in which another run's differs.
function flattenToml(text) {
  const out = new Map();
  let section = "";
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\s+#.*$/, "").trim();
    if (!line || line.startsWith("#")) continue;
    const h = /^\[([^\]]+)\]$/.exec(line);
    if (h) { section = h[1].trim(); continue; }
    const kv = /^([A-Za-z0-9_.-]+)\s*=\s*(.*)$/.exec(line);
    if (kv) out.set((section ? section + "." : "") + kv[1], kv[2]);
  }
  return out;
}

async function renderConfig() {
  const id = $("dash-run").value, other = $("cfg-other").value;
  if (!id) return;
  const a = await api("runs/" + encodeURIComponent(id) + "/config");
  $("cfg-text").textContent = a.text;
  const diff = $("cfg-diff");
  diff.innerHTML = "";
  if (!other) return;
  const b = await api("runs/" + encodeURIComponent(other) + "/config");
  const fa = flattenToml(a.text), fb = flattenToml(b.text);
  const keys = [...new Set([...fa.keys(), ...fb.keys()])].sort().filter((k) => fa.get(k) !== fb.get(k));
  const head = document.createElement("tr");
  for (const t of ["key", id, other]) { const th = document.createElement("th"); th.textContent = t; th.className = "l"; head.appendChild(th); }
  diff.appendChild(head);
  for (const key of keys) {
    const tr = document.createElement("tr");
    td(tr, key, "l"); td(tr, fa.has(key) ? fa.get(key) : "(default)", "l"); td(tr, fb.has(key) ? fb.get(key) : "(default)", "l");
    diff.appendChild(tr);
  }
  if (!keys.length) { const tr = document.createElement("tr"); td(tr, "the two configs are the same", "l"); diff.appendChild(tr); }
}

// ---------- games ----------
// The study board: a recorded game with its move list and value graph, stepped by the
// buttons, the arrow keys (Home/End for the ends) or a click on a move or the graph.
// Every ply has a link: #games/<run>/<generation>/<source>/<id>/<ply>.
const viewer = { game: null, ply: 0, ref: null };

async function refreshGames() {
  const run = $("games-run").value;
  if (!run) return;
  const d = dash.data[run] || await api("runs/" + encodeURIComponent(run));
  // The latest generation until another is chosen: "all" reads every shard of the run.
  const gsel = $("games-gen"), keep = gsel.dataset.chosen ? gsel.value : null;
  gsel.innerHTML = "";
  gsel.add(new Option("all", ""));
  for (const g of d.generations) gsel.add(new Option(g.generation, g.generation));
  const latest = d.generations.length ? String(d.generations[d.generations.length - 1].generation) : "";
  gsel.value = keep !== null ? keep : latest;
  const q = new URLSearchParams();
  if (gsel.value !== "") q.set("generation", gsel.value);
  if ($("games-result").value) q.set("result", $("games-result").value);
  if ($("games-source").value) q.set("source", $("games-source").value);
  const list = await api("runs/" + encodeURIComponent(run) + "/games?" + q);
  const body = $("games-table").tBodies[0];
  body.innerHTML = "";
  for (const g of list) {
    const tr = document.createElement("tr");
    tr.dataset.generation = g.generation;
    tr.dataset.id = g.id;
    tr.dataset.source = g.source;
    td(tr, g.generation); td(tr, g.source, "l"); td(tr, g.id); td(tr, g.players, "l");
    td(tr, g.viewable ? g.plies : "-"); td(tr, g.result); td(tr, g.reason, "l");
    if (g.viewable) {
      tr.classList.add("viewable");
      tr.tabIndex = 0;
      const open = () => openGame(run, g, tr, 0).catch(showError);
      tr.addEventListener("click", open);
      tr.addEventListener("keydown", (e) => { if (e.key === "Enter") open(); });
    }
    body.appendChild(tr);
  }
}

async function openGame(run, g, tr, ply) {
  const r = encodeURIComponent(run);
  viewer.game = await api(g.source === "selfplay"
    ? `runs/${r}/games/${g.generation}/${g.id}`
    : `runs/${r}/matches/${encodeURIComponent(g.generation)}/${encodeURIComponent(g.source)}/${encodeURIComponent(g.id)}`);
  viewer.ref = { run, generation: g.generation, source: g.source, id: g.id };
  viewer.ply = Math.max(0, Math.min(viewer.game.plies.length, ply || 0));
  for (const row of $("games-table").querySelectorAll("tr.selected")) row.classList.remove("selected");
  if (tr) tr.classList.add("selected");
  renderMoveList();
  renderViewer();
}

// The position of the viewer's ply (the end when past the last move).
function viewedPosition() {
  const g = viewer.game;
  if (!g) return null;
  return viewer.ply < g.plies.length ? g.plies[viewer.ply].view : g.end;
}

// The value of each ply's search from x's side (null where none was recorded).
function valuesForX(g) {
  return g.plies.map((p) => p.root_q === null || p.root_q === undefined ? null : (p.view.side_to_move === "x" ? p.root_q : -p.root_q));
}

function renderMoveList() {
  const g = viewer.game, box = $("view-moves");
  box.innerHTML = "";
  g.plies.forEach((p, i) => {
    if (i % 2 === 0) {
      const n = document.createElement("span");
      n.className = "move-no";
      n.textContent = (i / 2 + 1) + ".";
      box.appendChild(n);
    }
    const b = document.createElement("button");
    b.type = "button";
    b.className = "move";
    b.dataset.ply = i + 1;
    b.textContent = p.played;
    b.title = `after ${p.view.side_to_move}'s move ${p.played}`;
    b.onclick = () => { viewer.ply = i + 1; renderViewer(); };
    box.appendChild(b);
  });
  const vs = valuesForX(g);
  const svg = $("view-value");
  svg.innerHTML = "";
  const W = 460, H = 90;
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  const n = Math.max(1, g.plies.length);
  const sx = (i) => 4 + i / n * (W - 8), sy = (v) => H / 2 - v * (H / 2 - 4);
  el("line", { x1: 0, x2: W, y1: H / 2, y2: H / 2, class: "axis", "stroke-dasharray": "3 3" }, svg);
  const pts = vs.map((v, i) => [i, v]).filter((p) => p[1] !== null);
  svg.dataset.points = pts.length;
  if (pts.length) {
    const d = pts.map((p, k) => (k ? "L" : "M") + sx(p[0]).toFixed(1) + "," + sy(p[1]).toFixed(1)).join(" ");
    el("path", { d: d + ` L${sx(pts[pts.length - 1][0]).toFixed(1)},${H / 2} L${sx(pts[0][0]).toFixed(1)},${H / 2} Z`, class: "value-area" }, svg);
    el("path", { d, class: "value-line" }, svg);
  } else {
    el("text", { x: W / 2, y: H / 2 - 6, class: "tick", "text-anchor": "middle" }, svg).textContent = "no search values recorded for this game";
  }
  el("line", { class: "value-cursor", y1: 0, y2: H }, svg);
  svg.onclick = (e) => {
    const r = svg.getBoundingClientRect();
    viewer.ply = Math.max(0, Math.min(g.plies.length, Math.round(((e.clientX - r.left) / r.width * W - 4) / (W - 8) * n)));
    renderViewer();
  };
}

function renderViewer() {
  const g = viewer.game;
  if (!g) return;
  const n = g.plies.length;
  const svg = $("view-board");
  svg.dataset.ply = viewer.ply;
  if (viewer.ply < n) {
    const p = g.plies[viewer.ply];
    // The move played from this position, as the policy's ▶ marks it.
    const last = new Set([p.from, p.to].filter((c) => c !== null && c !== undefined));
    drawBoard(svg, p.view, { heat: heatOf(p.policy), last });
    $("view-ply").textContent = `ply ${viewer.ply + 1} of ${n}`;
    const search = p.root_q === null ? "" : `; root value ${p.root_q.toFixed(3)} (${p.visits} visits${p.full_search ? "" : ", fast search"})`;
    $("view-info").textContent = `${p.view.side_to_move} to move (x ${p.view.counts[0]}, o ${p.view.counts[1]}); played ${p.played}${search}`;
    $("view-policy").textContent = p.policy.length ? policyText(p.policy, p.played) : "(no search policy recorded for match games)";
    $("view-policy").style.whiteSpace = "pre";
  } else {
    const p = g.plies[n - 1];
    drawBoard(svg, g.end, { last: new Set(p ? [p.from, p.to].filter((c) => c !== null && c !== undefined) : []) });
    $("view-ply").textContent = `end (${n} plies)`;
    $("view-info").textContent = `${g.game}, generation ${g.generation}, game ${g.id} by ${g.players}: ${g.result} (${g.reason}). ` + (g.end.outcome ? g.end.outcome.explanation : "");
    $("view-policy").textContent = "";
  }
  for (const b of $("view-moves").querySelectorAll("button.move")) {
    const on = +b.dataset.ply === viewer.ply;
    b.classList.toggle("current", on);
    if (on) b.setAttribute("aria-current", "step"); else b.removeAttribute("aria-current");
  }
  const cur = $("view-value").querySelector(".value-cursor");
  if (cur) { const x = 4 + viewer.ply / Math.max(1, n) * (460 - 8); cur.setAttribute("x1", x); cur.setAttribute("x2", x); }
  const ref = viewer.ref;
  if (ref) {
    const link = `#games/${encodeURIComponent(ref.run)}/${ref.generation}/${ref.source}/${ref.id}/${viewer.ply}`;
    $("view-link").href = link;
    if (location.hash.startsWith("#games")) history.replaceState(null, "", location.pathname + location.search + link);
  }
  for (const id of ["view-analyse", "view-play"]) $(id).disabled = false;
}

function step(d) {
  if (!viewer.game) return;
  viewer.ply = Math.max(0, Math.min(viewer.game.plies.length, d === "first" ? 0 : d === "last" ? viewer.game.plies.length : viewer.ply + d));
  renderViewer();
}

// Opens the game a link names (#games/run/generation/source/id/ply).
async function openLinkedGame(parts) {
  let run, generation, source, id, ply;
  try {
    [run, generation, source, id, ply] = parts.map(decodeURIComponent);
  } catch (e) {
    throw new Error("this link to a game is not well formed");
  }
  if (!["selfplay", "gate", "anchor"].includes(source) || !/^\d+$/.test(generation) || !/^\d+$/.test(id)) throw new Error("this link does not name a recorded game");
  if (!run || generation === undefined || !source || id === undefined) return;
  if ($("games-run").value !== run) { $("games-run").value = run; }
  const g = { generation: +generation, source, id: +id };
  if (viewer.ref && viewer.ref.run === run && viewer.ref.generation === g.generation && viewer.ref.source === source && viewer.ref.id === g.id) {
    viewer.ply = Math.max(0, Math.min(viewer.game.plies.length, +ply || 0));
    renderViewer();
    return;
  }
  await openGame(run, g, null, +ply || 0);
}

function studyKeys(e) {
  if ((location.hash || "").split("/")[0] !== "#games" || !viewer.game) return;
  const t = e.target.tagName;
  if (t === "INPUT" || t === "SELECT" || t === "TEXTAREA" || e.altKey || e.ctrlKey || e.metaKey) return;
  const k = { ArrowLeft: -1, ArrowRight: 1, Home: "first", End: "last" }[e.key];
  if (k === undefined) return;
  e.preventDefault();
  step(k);
}

// ---------- play ----------
// Every game on the board is a session: New game and a change of game start the next
// one and cancel the requests of the last (the server stops a search whose request is
// cancelled). Each request belongs to the session that sent it, and an answer that
// arrives after its session ended is dropped, so an old game's move never lands on
// the new board.
const play = { view: null, selected: null, busy: false, moves: [], last: null, session: 0, abort: null };

function humanSide() { return $("play-side").value; }

function setBusy(b) {
  play.busy = b;
  $("play-board").dataset.busy = b ? "true" : "false";
}

// Thrown where an answer comes back after its session ended; never shown.
class Stale extends Error {}

// Ends the current session (cancelling its requests) and starts the next.
function nextSession() {
  if (play.abort) play.abort.abort();
  play.abort = new AbortController();
  return ++play.session;
}

// A request of session `s`: its answer, or Stale if the session has ended meanwhile.
async function sessionApi(s, path, body) {
  try {
    const r = await api(path, body, play.abort.signal);
    if (s !== play.session) throw new Stale();
    return r;
  } catch (e) {
    if (s !== play.session) throw new Stale();
    throw e;
  }
}

// Runs `work` for session `s` with the board busy; a stale session leaves the board alone.
async function inSession(s, work) {
  setBusy(true);
  try {
    await work();
  } catch (e) {
    if (!(e instanceof Stale)) throw e;
  } finally {
    if (s === play.session) { setBusy(false); renderPlay(); }
  }
}

async function newGame() {
  const s = nextSession();
  await inSession(s, async () => {
    const q = { game: $("play-game").value };
    if ($("play-start").value.trim()) q.position = $("play-start").value.trim();
    const v = await sessionApi(s, "position?" + new URLSearchParams(q));
    play.view = v;
    play.moves = []; play.selected = null; play.last = null;
    renderPlay();
    await opponentTurn(s);
  });
}

async function opponentTurn(s) {
  while (play.view && !play.view.outcome && play.view.side_to_move !== humanSide()) {
    $("play-status").textContent = `${$("play-player").value} is thinking…`;
    const a = await sessionApi(s, "think", { game: play.view.game, position: play.view.position, player: $("play-player").value, seed: play.moves.length + 1 });
    play.moves.push(a.move);
    play.last = new Set([a.from, a.to].filter((c) => c !== null && c !== undefined));
    play.view = a.view;
    renderPlay();
  }
}

async function playMove(text) {
  const s = play.session;
  await inSession(s, async () => {
    const v = await sessionApi(s, "move?" + new URLSearchParams({ game: play.view.game, position: play.view.position, move: text }));
    const m = play.view.legal.find((l) => l.text === text);
    play.last = new Set(m ? [m.from, m.to].filter((c) => c !== null && c !== undefined) : []);
    play.moves.push(text);
    play.view = v;
    play.selected = null;
    renderPlay();
    await opponentTurn(s);
  });
}

function clickCell(cell) {
  const v = play.view;
  if (!v || play.busy || v.outcome || v.side_to_move !== humanSide()) return;
  const c = clickMeaning(v, play.selected, cell);
  if (c.move) { playMove(c.move).catch(showError); return; }
  play.selected = c.selected;
  renderPlay();
}

function renderPlay() {
  const v = play.view;
  if (!v) return;
  const mine = !v.outcome && v.side_to_move === humanSide();
  const { hints, targets } = mine ? moveMarks(v, play.selected, $("play-hints").checked) : moveMarks(null);
  drawBoard($("play-board"), v, { onClick: clickCell, hints, targets, source: play.selected, last: play.last || new Set() });
  $("play-board").dataset.busy = play.busy ? "true" : "false";
  $("play-board").dataset.turn = mine ? "human" : "opponent";
  $("play-pass").disabled = !(mine && v.must_pass && !play.busy);
  const o = $("play-outcome");
  if (v.outcome) {
    o.textContent = v.outcome.explanation + " " + (v.outcome.winner === null ? "" : v.outcome.winner === humanSide() ? "You win." : "You lose.");
    o.dataset.result = v.outcome.result;
    $("play-status").textContent = "";
  } else {
    o.textContent = "";
    delete o.dataset.result;
    $("play-status").textContent = mine
      ? (v.must_pass ? "You have no legal move: press Pass." : `Your move (${v.side_to_move}); x ${v.counts[0]}, o ${v.counts[1]}. ` + (v.legal.some((m) => m.from !== null) ? "Click an empty cell to clone, or a piece and then a cell to jump." : "Click a cell to place."))
      : `${v.side_to_move} to move`;
  }
  $("play-moves").textContent = play.moves.length ? "Moves: " + play.moves.join(" ") : "";
}

// ---------- analysis ----------
// The network's own view (policy and value), then its tree search watched as it grows:
// searches of 25, 100, 400, … simulations up to the chosen count, each table replacing
// the last. A second network, when chosen, is searched beside the first. A new analysis
// (or Stop) cancels the searches under way.
const insight = { abort: null, run: 0 };

function analysedPosition() {
  const text = $("an-position").value.trim();
  const game = $("play-game").value;
  return { game, position: text || (play.view && play.view.game === game ? play.view.position : "") };
}

async function analyse() {
  const { game, position } = analysedPosition();
  // A new analysis ends the last (its answers, if late, are dropped).
  stopInsight();
  const run = ++insight.run;
  const ctl = new AbortController();
  insight.abort = ctl;
  $("an-stop").disabled = false;
  let a;
  try {
    a = await api("analyse", { game, position, net: $("an-net").value }, ctl.signal);
  } catch (e) {
    if (e.name === "AbortError") return;
    throw e;
  } finally {
    if (run === insight.run) $("an-stop").disabled = true;
  }
  if (run !== insight.run) return;
  const h = heatOf(a.policy);
  drawBoard($("an-board"), a.view, { heat: h, labels: true });
  $("an-result").textContent = `${a.net}: value ${a.value.toFixed(3)} for ${a.view.side_to_move}` + (a.wdl ? ` (win ${(100 * a.wdl[0]).toFixed(0)}%, draw ${(100 * a.wdl[1]).toFixed(0)}%, loss ${(100 * a.wdl[2]).toFixed(0)}%)` : "");
  $("an-policy").textContent = policyText(a.policy, null);
  $("an-policy").style.whiteSpace = "pre";
  if (a.view.outcome) return;
  await searchLive(game, position, run, ctl);
}

function stopInsight() {
  if (insight.abort) insight.abort.abort();
  insight.abort = null;
  $("an-stop").disabled = true;
}

async function searchLive(game, position, run, ctl) {
  $("an-stop").disabled = false;
  const target = +$("an-sims").value;
  const steps = [];
  for (let n = 25; n < target; n *= 4) steps.push(n);
  steps.push(target);
  const nets = [$("an-net").value, $("an-net2").value].filter((n) => n);
  const boxes = [$("an-search"), $("an-search2")];
  boxes[1].hidden = nets.length < 2;
  try {
    const failed = new Set();
    for (const sims of steps) {
      // Each network on its own: one that cannot search (another game's) shows why.
      const answers = await Promise.allSettled(nets.map((net, i) => failed.has(i) ? null : api("search", { game, position, net, sims, seed: 1 }, ctl.signal)));
      if (run !== insight.run) return;
      answers.forEach((r, i) => {
        if (failed.has(i)) return;
        if (r.status === "fulfilled") renderSearch(boxes[i], r.value, sims === target);
        else if (r.reason.name === "AbortError") throw r.reason;
        else { failed.add(i); boxes[i].textContent = `${nets[i]}: ${r.reason.message}`; boxes[i].dataset.done = "true"; }
      });
      const first = answers[0].status === "fulfilled" && answers[0].value;
      if (first) drawBoard($("an-board"), first.view, { heat: visitHeat(first), labels: true });
      if (failed.size === nets.length) break;
    }
  } catch (e) {
    if (e.name !== "AbortError") throw e;
  } finally {
    if (run === insight.run) { insight.abort = null; $("an-stop").disabled = true; }
  }
}

function visitHeat(r) {
  const h = {}, total = r.candidates.reduce((n, c) => n + c.visits, 0) || 1;
  for (const c of r.candidates) if (c.to !== null && c.to !== undefined) h[c.to] = (h[c.to] || 0) + c.visits / total;
  return h;
}

function renderSearch(box, r, done) {
  box.innerHTML = "";
  box.dataset.sims = r.sims;
  box.dataset.done = done ? "true" : "false";
  const h = document.createElement("div");
  h.className = "search-head";
  h.textContent = r.value === null
    ? `${r.net}: a forced move, not searched`
    : `${r.net}: ${r.sims} simulations, value ${r.value.toFixed(3)} for ${r.view.side_to_move}` + (done ? "" : " …");
  box.appendChild(h);
  const t = document.createElement("table");
  t.className = "search";
  const head = document.createElement("tr");
  for (const [c, tip] of [["move", ""], ["visits", "simulations through the move"], ["Q", "mean value for the side that plays it"], ["prior", "the network's policy"], ["line", "the principal variation"]]) {
    const th = document.createElement("th");
    th.textContent = c;
    if (tip) th.title = tip;
    if (c === "line" || c === "move") th.className = "l";
    head.appendChild(th);
  }
  t.appendChild(head);
  for (const c of r.candidates.slice(0, 12)) {
    const tr = document.createElement("tr");
    td(tr, c.text, "l");
    td(tr, c.visits);
    td(tr, c.proof ? c.proof : c.q === null ? "-" : c.q.toFixed(3));
    td(tr, (100 * c.prior).toFixed(1) + "%");
    td(tr, c.pv.join(" "), "l pv");
    t.appendChild(tr);
  }
  box.appendChild(t);
}

// The viewer's position on the analysis board, or as the start of a game to play.
function fromViewer(then) {
  const v = viewedPosition();
  if (!v) return;
  $("play-game").value = v.game;
  if (then === "analyse") {
    $("an-position").value = v.position;
    location.hash = "#play";
    analyse().catch(showError);
  } else {
    $("play-start").value = v.position;
    location.hash = "#play";
    newGame().catch(showError);
  }
}

// The opponent chosen from the lists: a network searched at the chosen strength, or a
// baseline; written into the player field, which can also be edited by hand.
function pickOpponent() {
  const net = $("opp-net").value, strength = $("opp-strength").value;
  const baseline = ["random", "greedy", "ab1", "ab2", "ab3", "ab4"].includes(net);
  $("play-player").value = baseline ? net : `mcts:${net}:${strength}`;
  $("opp-strength").disabled = baseline;
}

// ---------- start ----------
async function start() {
  route();
  const games = await api("games");
  for (const g of games) $("play-game").add(new Option(g, g));
  await loadRuns();
  const params = new URLSearchParams(location.search);
  if (params.get("game")) $("play-game").value = params.get("game");
  if (params.get("player")) $("play-player").value = params.get("player");
  if (params.get("side")) $("play-side").value = params.get("side");
  if (params.get("position")) $("play-start").value = params.get("position");
  $("dash-run").addEventListener("change", () => { dash.page = 0; refreshDashboard().then(renderConfig).catch(showError); });
  $("cfg-other").addEventListener("change", () => renderConfig().catch(showError));
  $("gen-prev").onclick = () => { dash.page = dash.shownPage + 1; renderTable(); };
  $("gen-next").onclick = () => { dash.page = Math.max(0, dash.shownPage - 1); renderTable(); };
  $("gen-all").onchange = renderTable;
  $("loss-log").onchange = () => charts().loss.setOption("log", $("loss-log").checked);
  $("loss-smooth").oninput = () => { charts().loss.setOption("smooth", +$("loss-smooth").value); $("loss-smooth-v").textContent = $("loss-smooth").value; };
  $("elo-bands").onchange = () => charts().elo.setOption("bands", $("elo-bands").checked);
  for (const [b, c] of [["elo-reset", "elo"], ["time-reset", "time"], ["loss-reset", "loss"]]) $(b).onclick = () => { const ch = charts()[c]; ch.zoom = null; ch.draw(); };
  $("games-gen").addEventListener("change", () => { $("games-gen").dataset.chosen = "1"; });
  for (const id of ["games-run", "games-gen", "games-result", "games-source"]) $(id).addEventListener("change", () => refreshGames().catch(showError));
  $("view-first").onclick = () => step("first");
  $("view-prev").onclick = () => step(-1);
  $("view-next").onclick = () => step(1);
  $("view-last").onclick = () => step("last");
  $("view-analyse").onclick = () => fromViewer("analyse");
  $("view-play").onclick = () => fromViewer("play");
  document.addEventListener("keydown", studyKeys);
  $("play-new").onclick = () => newGame().catch(showError);
  $("play-pass").onclick = () => { const m = play.view && play.view.legal[0]; if (m) playMove(m.text).catch(showError); };
  $("play-hints").onchange = renderPlay;
  $("play-game").onchange = () => { $("play-start").value = ""; newGame().catch(showError); };
  $("opp-net").onchange = pickOpponent;
  $("opp-strength").onchange = pickOpponent;
  $("an-go").onclick = () => analyse().catch(showError);
  $("an-stop").onclick = stopInsight;
  $("an-here").onclick = () => { $("an-position").value = ""; analyse().catch(showError); };
  await refreshDashboard().catch(showError);
  await renderConfig().catch(showError);
  await refreshGames().catch(showError);
  await newGame().catch(showError);
  const link = (location.hash || "").split("/");
  if (link[0] === "#games" && link.length >= 5) await openLinkedGame(link.slice(1)).catch(showError);
  document.body.dataset.ready = "true";
  setInterval(() => { if ((location.hash || "#dashboard") === "#dashboard" && !document.hidden) refreshDashboard().then(() => showError(null), showError); }, 2000);
}
start().catch(showError);
