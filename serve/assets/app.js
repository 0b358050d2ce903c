// flipzero serve: the page. It draws what the API returns; every rule is the server's.
"use strict";

const TOKEN = new URLSearchParams(location.search).get("token") || "";
const SVGNS = "http://www.w3.org/2000/svg";
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

function el(tag, attrs, parent) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

function td(tr, text, cls) {
  const c = document.createElement("td");
  c.textContent = text;
  if (cls) c.className = cls;
  tr.appendChild(c);
  return c;
}

// ---------- pages ----------
function route() {
  const page = (location.hash || "#dashboard").slice(1);
  for (const p of ["dashboard", "games", "play"]) {
    $("page-" + p).classList.toggle("active", p === page);
    $("nav-" + p).classList.toggle("active", p === page);
  }
  if (page === "games" && document.body.dataset.ready === "true") refreshGames().catch(showError);
  if (page === "dashboard" && document.body.dataset.ready === "true") refreshDashboard().catch(showError);
}
window.addEventListener("hashchange", route);

// ---------- board drawing ----------
// Cell centres: square boards by (x, y), rank 1 at the bottom; the hexagonal board in
// axial coordinates (see engine::game), flat-topped hexagons.
function layout(view) {
  const hex = view.shape === "hex";
  const pts = view.cells.map((c) => hex
    ? [c.x * 1.5, -(c.y - c.x / 2) * Math.sqrt(3)]
    : [c.x, -c.y]);
  const xs = pts.map((p) => p[0]), ys = pts.map((p) => p[1]);
  const minx = Math.min(...xs), maxx = Math.max(...xs), miny = Math.min(...ys), maxy = Math.max(...ys);
  const pad = hex ? 1.1 : 0.6;
  return { hex, pts, vb: [minx - pad, miny - pad, maxx - minx + 2 * pad, maxy - miny + 2 * pad] };
}

function drawBoard(svg, view, opts) {
  opts = opts || {};
  svg.innerHTML = "";
  const L = layout(view);
  svg.setAttribute("viewBox", L.vb.join(" "));
  svg.dataset.position = view.position;
  svg.dataset.game = view.game;
  const heat = opts.heat || {};
  const maxHeat = Math.max(1e-9, ...Object.values(heat));
  view.cells.forEach((c, i) => {
    const [cx, cy] = L.pts[i];
    const g = el("g", { class: "cell", "data-cell": c.cell, "data-name": c.name }, svg);
    if (opts.targets && opts.targets.has(c.cell)) g.classList.add("target");
    if (opts.source === c.cell) g.classList.add("source");
    if (opts.last && opts.last.has(c.cell)) g.classList.add("last");
    let shape;
    if (L.hex) {
      const r = 0.98, p = [];
      for (let k = 0; k < 6; k++) {
        const a = Math.PI / 3 * k;
        p.push((cx + r * Math.cos(a)).toFixed(3) + "," + (cy + r * Math.sin(a)).toFixed(3));
      }
      shape = el("polygon", { points: p.join(" "), class: "cell-bg" }, g);
    } else {
      shape = el("rect", { x: cx - 0.5, y: cy - 0.5, width: 1, height: 1, class: "cell-bg" }, g);
    }
    if (c.blocked) shape.classList.add("blocked");
    el("title", {}, g).textContent = c.name;
    if (heat[c.cell] > 0) {
      el("circle", { cx, cy, r: 0.45, class: "heat", opacity: (0.12 + 0.8 * heat[c.cell] / maxHeat).toFixed(3) }, g);
    }
    if (c.piece) el("circle", { cx, cy, r: 0.36, class: "piece-" + c.piece, "stroke-width": 0.05 }, g);
    if (opts.hints && opts.hints.has(c.cell) && !c.piece) el("circle", { cx, cy, r: 0.12, class: "hint" }, g);
    if (opts.labels !== false) {
      const t = el("text", { x: cx - (L.hex ? 0.45 : 0.47), y: cy + (L.hex ? 0.75 : 0.45), class: "label" }, g);
      t.textContent = c.name;
    }
    if (opts.onClick) g.addEventListener("click", () => opts.onClick(c.cell));
  });
}

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
function drawChart(svg, series, opts) {
  svg.innerHTML = "";
  const W = 420, H = 240, m = { l: 44, r: 10, t: 10, b: 40 };
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  const all = series.flatMap((s) => s.points).filter((p) => Number.isFinite(p[0]) && Number.isFinite(p[1]));
  svg.dataset.points = all.length;
  if (!all.length) {
    el("text", { x: W / 2 - 40, y: H / 2, class: "tick" }, svg).textContent = "no data yet";
    return;
  }
  let [x0, x1] = [Math.min(...all.map((p) => p[0])), Math.max(...all.map((p) => p[0]))];
  let [y0, y1] = [Math.min(...all.map((p) => p[1])), Math.max(...all.map((p) => p[1]))];
  if (opts && opts.zero) { y0 = Math.min(y0, 0); y1 = Math.max(y1, 0); }
  if (x1 === x0) { x0 -= 1; x1 += 1; }
  if (y1 === y0) { y0 -= 1; y1 += 1; }
  const sx = (x) => m.l + (x - x0) / (x1 - x0) * (W - m.l - m.r);
  const sy = (y) => H - m.b - (y - y0) / (y1 - y0) * (H - m.t - m.b);
  el("line", { x1: m.l, y1: H - m.b, x2: W - m.r, y2: H - m.b, class: "axis" }, svg);
  el("line", { x1: m.l, y1: m.t, x2: m.l, y2: H - m.b, class: "axis" }, svg);
  const xs = [];
  if (opts && opts.integerX) {
    const stepX = Math.max(1, Math.ceil((x1 - x0) / 6));
    for (let x = Math.ceil(x0); x <= x1; x += stepX) xs.push(x);
  } else {
    for (let k = 0; k <= 4; k++) xs.push(x0 + (x1 - x0) * k / 4);
  }
  for (let k = 0; k <= 4; k++) {
    const y = y0 + (y1 - y0) * k / 4;
    el("text", { x: 2, y: sy(y) + 3, class: "tick" }, svg).textContent = fmt(y);
  }
  xs.forEach((x, k) => {
    const anchor = k === 0 ? "start" : k === xs.length - 1 ? "end" : "middle";
    el("text", { x: sx(x), y: H - m.b + 12, class: "tick", "text-anchor": anchor }, svg).textContent = fmt(x);
  });
  if (opts && opts.zero && y0 < 0 && y1 > 0) el("line", { x1: m.l, y1: sy(0), x2: W - m.r, y2: sy(0), class: "axis", "stroke-dasharray": "3 3" }, svg);
  series.forEach((s, i) => {
    const pts = s.points.filter((p) => Number.isFinite(p[0]) && Number.isFinite(p[1]));
    if (!pts.length) return;
    const color = COLORS[i % COLORS.length];
    el("path", { d: pts.map((p, k) => (k ? "L" : "M") + sx(p[0]).toFixed(1) + "," + sy(p[1]).toFixed(1)).join(" "), class: "series", stroke: color, "data-name": s.name }, svg);
    for (const p of pts) el("circle", { cx: sx(p[0]), cy: sy(p[1]), r: 2.5, fill: color }, svg);
    el("text", { x: m.l + 6 + (i % 3) * 125, y: H - 6 - Math.floor(i / 3) * 11, class: "legend", fill: color }, svg).textContent = s.name;
  });
}

function fmt(v) {
  const a = Math.abs(v);
  return Number.isInteger(v) || a >= 100 ? v.toFixed(0) : a >= 1 ? v.toFixed(1) : v.toFixed(2);
}

// ---------- dashboard ----------
const dash = { runs: [], shown: new Set(), data: {} };

async function loadRuns() {
  dash.runs = await api("runs");
  for (const sel of [$("dash-run"), $("games-run")]) {
    sel.innerHTML = "";
    for (const r of dash.runs) sel.add(new Option(r.id, r.id));
  }
  const box = $("dash-runs");
  box.innerHTML = "";
  for (const r of dash.runs) {
    dash.shown.add(r.id);
    const l = document.createElement("label");
    const c = document.createElement("input");
    c.type = "checkbox"; c.checked = true; c.value = r.id;
    c.addEventListener("change", () => { c.checked ? dash.shown.add(r.id) : dash.shown.delete(r.id); renderCharts(); });
    l.append(c, " " + r.id);
    box.appendChild(l);
  }
  const nets = $("an-net");
  nets.innerHTML = "";
  nets.add(new Option("bootstrap", "bootstrap"));
  const players = $("players");
  players.innerHTML = "";
  for (const p of ["random", "greedy", "ab1", "ab2", "ab3", "ab4", "mcts:bootstrap"]) players.appendChild(new Option(p, p));
  for (const r of dash.runs) {
    nets.add(new Option(r.id + " (best)", r.id));
    players.appendChild(new Option("mcts:" + r.id, "mcts:" + r.id));
  }
}

async function refreshDashboard() {
  if (!dash.runs.length) { $("dash-updated").textContent = "no runs given (flipzero serve --run DIR)"; return; }
  const ids = new Set([...dash.shown, $("dash-run").value]);
  for (const id of ids) {
    if (id) dash.data[id] = await api("runs/" + encodeURIComponent(id));
  }
  renderTable();
  renderCharts();
  $("dash-updated").textContent = "updated " + new Date().toLocaleTimeString();
}

function renderTable() {
  const d = dash.data[$("dash-run").value];
  const body = $("gen-table").tBodies[0];
  body.innerHTML = "";
  if (!d) return;
  d.generations.forEach((g, i) => {
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
  });
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

function renderCharts() {
  const byGen = [], byTime = [];
  const many = dash.shown.size > 1;
  for (const id of dash.shown) {
    const d = dash.data[id];
    if (!d) continue;
    const names = [...new Set(d.elo.map((p) => p.baseline))];
    for (const b of names) {
      const pts = d.elo.filter((p) => p.baseline === b);
      const name = (many ? id + ": " : "") + "vs " + b;
      byGen.push({ name, points: pts.map((p) => [p.generation, p.elo]) });
      byTime.push({ name, points: pts.map((p) => [p.elapsed_s / 60, p.elo]) });
    }
  }
  drawChart($("elo-chart"), byGen, { zero: true, integerX: true });
  drawChart($("elo-time-chart"), byTime, { zero: true });
  const d = dash.data[$("dash-run").value];
  drawChart($("loss-chart"), d ? d.losses : [], {});
}

// ---------- games ----------
const viewer = { game: null, ply: 0 };

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
      tr.addEventListener("click", () => openGame(run, g, tr).catch(showError));
    }
    body.appendChild(tr);
  }
}

async function openGame(run, g, tr) {
  const r = encodeURIComponent(run);
  viewer.game = await api(g.source === "selfplay"
    ? `runs/${r}/games/${g.generation}/${g.id}`
    : `runs/${r}/matches/${g.generation}/${g.source}/${g.id}`);
  viewer.ply = 0;
  for (const r of $("games-table").querySelectorAll("tr.selected")) r.classList.remove("selected");
  if (tr) tr.classList.add("selected");
  renderViewer();
}

function renderViewer() {
  const g = viewer.game;
  if (!g) return;
  const n = g.plies.length;
  const svg = $("view-board");
  svg.dataset.ply = viewer.ply;
  if (viewer.ply < n) {
    const p = g.plies[viewer.ply];
    const last = new Set([p.from, p.to].filter((c) => c !== null && c !== undefined));
    drawBoard(svg, p.view, { heat: heatOf(p.policy), last });
    $("view-ply").textContent = `ply ${viewer.ply + 1} of ${n}`;
    const search = p.root_q === null ? "" : `; root value ${p.root_q.toFixed(3)} (${p.visits} visits${p.full_search ? "" : ", fast search"})`;
    $("view-info").textContent = `${p.view.side_to_move} to move (x ${p.view.counts[0]}, o ${p.view.counts[1]}); played ${p.played}${search}`;
    $("view-policy").textContent = p.policy.length ? policyText(p.policy, p.played) : "(no search policy recorded for match games)";
    $("view-policy").style.whiteSpace = "pre";
  } else {
    drawBoard(svg, g.end, {});
    $("view-ply").textContent = `end (${n} plies)`;
    $("view-info").textContent = `${g.game}, generation ${g.generation}, game ${g.id} by ${g.players}: ${g.result} (${g.reason}). ` + (g.end.outcome ? g.end.outcome.explanation : "");
    $("view-policy").textContent = "";
  }
}

function step(d) {
  if (!viewer.game) return;
  viewer.ply = Math.max(0, Math.min(viewer.game.plies.length, d === "first" ? 0 : d === "last" ? viewer.game.plies.length : viewer.ply + d));
  renderViewer();
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
    const v = await sessionApi(s, "position?" + new URLSearchParams({ game: $("play-game").value }));
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
  if (play.selected !== null) {
    const jump = v.legal.find((m) => m.from === play.selected && m.to === cell);
    if (jump) { playMove(jump.text).catch(showError); return; }
  }
  const place = v.legal.find((m) => m.from === null && m.to === cell);
  if (place) { playMove(place.text).catch(showError); return; }
  play.selected = v.legal.some((m) => m.from === cell) && play.selected !== cell ? cell : null;
  renderPlay();
}

function renderPlay() {
  const v = play.view;
  if (!v) return;
  const mine = !v.outcome && v.side_to_move === humanSide();
  const hints = new Set(), targets = new Set();
  if (mine && $("play-hints").checked) {
    for (const m of v.legal) {
      if (m.to === null) continue;
      if (m.from === null) hints.add(m.to);
      if (play.selected !== null && m.from === play.selected) targets.add(m.to);
    }
  }
  if (mine && play.selected !== null && !$("play-hints").checked) {
    for (const m of v.legal) if (m.from === play.selected) targets.add(m.to);
  }
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
async function analyse() {
  const text = $("an-position").value.trim();
  const game = $("play-game").value;
  const position = text || (play.view && play.view.game === game ? play.view.position : "");
  const a = await api("analyse", { game, position, net: $("an-net").value });
  const h = heatOf(a.policy);
  drawBoard($("an-board"), a.view, { heat: h, labels: true });
  $("an-result").textContent = `${a.net}: value ${a.value.toFixed(3)} for ${a.view.side_to_move}` + (a.wdl ? ` (win ${(100 * a.wdl[0]).toFixed(0)}%, draw ${(100 * a.wdl[1]).toFixed(0)}%, loss ${(100 * a.wdl[2]).toFixed(0)}%)` : "");
  $("an-policy").textContent = policyText(a.policy, null);
  $("an-policy").style.whiteSpace = "pre";
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
  $("dash-run").addEventListener("change", () => refreshDashboard().catch(showError));
  $("games-gen").addEventListener("change", () => { $("games-gen").dataset.chosen = "1"; });
  for (const id of ["games-run", "games-gen", "games-result", "games-source"]) $(id).addEventListener("change", () => refreshGames().catch(showError));
  $("view-first").onclick = () => step("first");
  $("view-prev").onclick = () => step(-1);
  $("view-next").onclick = () => step(1);
  $("view-last").onclick = () => step("last");
  $("play-new").onclick = () => newGame().catch(showError);
  $("play-pass").onclick = () => { const m = play.view && play.view.legal[0]; if (m) playMove(m.text).catch(showError); };
  $("play-hints").onchange = renderPlay;
  $("play-game").onchange = () => newGame().catch(showError);
  $("an-go").onclick = () => analyse().catch(showError);
  await refreshDashboard().catch(showError);
  await refreshGames().catch(showError);
  await newGame().catch(showError);
  document.body.dataset.ready = "true";
  setInterval(() => { if ((location.hash || "#dashboard") === "#dashboard") refreshDashboard().then(() => showError(null), showError); }, 2000);
}
start().catch(showError);
