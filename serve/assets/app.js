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
  if (!r.ok) {
    const e = new Error(j.error || r.statusText);
    e.status = r.status;
    throw e;
  }
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
  if (page === "games" && parts.length >= 5) openLinkedGame(parts.slice(1)).catch((e) => { clearViewer(); showError(e); });
  else if (page === "games") refreshGames().catch(showError);
  if (page === "dashboard") {
    // Charts drawn while the page was hidden are redrawn at their figure's width.
    for (const c of Chart.all) if (c.series.length && c.W !== c.width()) c.draw();
    refreshDashboard().catch(showError);
  }
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

// The game of a network name (`bootstrap` plays every game: null).
function netGame(name) {
  if (name === "bootstrap") return null;
  const r = dash.runs.find((x) => x.id === name.split("/")[0]);
  return r ? r.game : null;
}

// The network a page starts with for `game`: the best of the first run of that game.
function defaultNet(game) {
  const r = dash.runs.find((x) => x.game === game && x.best);
  return r ? r.id : null;
}

const BASELINES = ["random", "greedy", "ab1", "ab2", "ab3", "ab4"];

// The network lists, offering only the networks of the game on the board.
function fillNets() {
  const game = $("play-game").value;
  const nets = netNames().filter(([v]) => { const g = netGame(v); return g === null || !game || g === game; });
  const best = defaultNet(game);
  for (const id of ["an-net", "an-net2", "opp-net"]) {
    const sel = $(id);
    const keep = sel.value;
    sel.innerHTML = "";
    if (id === "an-net2") sel.add(new Option("(none)", ""));
    if (id === "opp-net") for (const p of BASELINES) sel.add(new Option(p, p));
    for (const [v, t] of nets) sel.add(new Option(t, v));
    // A list keeps its choice if the user made one and the game allows it; else it
    // takes the default for the game.
    // The user's choice (remembered by value) when this game offers it, else the
    // game's default.
    const has = (v) => v && [...sel.options].some((o) => o.value === v);
    if (has(sel.dataset.chosen)) sel.value = sel.dataset.chosen;
    else if (id === "an-net") sel.value = best || "bootstrap";
    else if (id === "opp-net") sel.value = best || "ab2";
    else sel.value = has(keep) ? keep : "";
  }
  const players = $("players");
  players.innerHTML = "";
  for (const p of BASELINES.concat(["ab:time=100", "mcts:bootstrap"])) players.appendChild(new Option(p, p));
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
    dashboardLive();
  } finally {
    drawn.busy = false;
  }
}

// Whether the dashboard polls: not when every run it shows has finished (a finished run
// does not change; "refresh" reads it again).
function dashboardLive() {
  const ids = [...new Set([...dash.shown, $("dash-run").value])].filter((id) => id);
  const live = ids.some((id) => !dash.data[id] || !dash.data[id].status || dash.data[id].status.state !== "finished");
  $("dash-poll").hidden = live;
  document.body.dataset.polling = live ? "true" : "false";
  return live;
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
  // Runs without ratings: one line that says why, instead of two empty charts.
  const none = !byGen.length;
  $("elo-fig").hidden = none;
  $("elo-time-fig").hidden = none;
  $("elo-note").hidden = !none;
  $("elo-note").textContent = none ? [...dash.shown].map((id) => dash.data[id] && eloAbsence(id, dash.data[id])).filter((t) => t).join(" ") : "";
  ch.elo.set(byGen);
  ch.time.set(byTime);
  const d = dash.data[$("dash-run").value];
  k = 0;
  ch.loss.set(d ? d.losses.map((s) => Object.assign({ color: color() }, s)) : [], d ? generationMarks(d) : []);
}

// Why run `id` (its dashboard `d`) has no Elo to chart.
function eloAbsence(id, d) {
  const evals = d.generations.filter((g) => g.eval);
  const trained = d.generations.filter((g) => g.train).length;
  if (!d.generations.length) return `${id}: no generation has finished yet.`;
  if (!evals.length) return `${id}: no Elo — none of its ${d.generations.length} generations was evaluated (no gating or anchoring record)${trained ? "" : ", and none trained"}.`;
  const gated = evals.filter((g) => g.eval.gate).length, anchored = evals.filter((g) => g.eval.anchor.length).length;
  const why = evals[evals.length - 1].eval.reason;
  return `${id}: no Elo — ${gated ? gated + " gating matches" : "no gating matches"} and ${anchored ? anchored + " anchoring matches" : "no anchoring games (its config names no ladder)"} in ${evals.length} evaluated generations` + (why ? ` (the last: ${why})` : "") + ". Gating and a ladder (the gate and anchor sections of the config) give a run its ratings.";
}

// The step at which each generation's training began, for the loss chart.
function generationMarks(d) {
  const out = [];
  let step = 0;
  for (const g of d.generations) {
    if (!g.train) continue;
    out.push({ x: step, label: "gen " + g.generation });
    step += g.train.steps;
  }
  return out;
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
  // Until a generation is chosen: the newest that played games (the newest
  // generation may be a final net that never played).
  const played = d.generations.filter((g) => (g.selfplay && g.selfplay.games > 0) || (g.eval && (g.eval.gate || g.eval.anchor.length)));
  const latest = played.length ? String(played[played.length - 1].generation) : "";
  gsel.value = keep !== null && [...gsel.options].some((o) => o.value === keep) ? keep : latest;
  const q = new URLSearchParams();
  if (gsel.value !== "") q.set("generation", gsel.value);
  if ($("games-result").value) q.set("result", $("games-result").value);
  if ($("games-source").value) q.set("source", $("games-source").value);
  const list = await api("runs/" + encodeURIComponent(run) + "/games?" + q);
  const body = $("games-table").tBodies[0];
  body.innerHTML = "";
  if (!list.length) {
    const tr = document.createElement("tr");
    tr.className = "empty";
    const filters = [$("games-result").value && "result " + $("games-result").value, $("games-source").value && "source " + $("games-source").value].filter((f) => f);
    const c = td(tr, (gsel.value === "" ? `no recorded games in run ${run}` : `no recorded games in generation ${gsel.value}` + (played.length ? "" : ` (no generation of run ${run} recorded games)`)) + (filters.length ? " with " + filters.join(" and ") : "") + ".", "l");
    c.colSpan = 7;
    body.appendChild(tr);
  }
  for (const g of list) {
    const tr = document.createElement("tr");
    tr.dataset.generation = g.generation;
    tr.dataset.id = g.id;
    tr.dataset.source = g.source;
    td(tr, g.generation); td(tr, g.source, "l"); td(tr, g.id); td(tr, g.players, "l");
    td(tr, g.viewable ? g.plies : "-"); td(tr, g.result); td(tr, g.reason, "l");
    if (viewer.ref && viewer.ref.run === run && viewer.ref.generation === g.generation && viewer.ref.source === g.source && viewer.ref.id === g.id) tr.classList.add("selected");
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
  numberedMoves(box, g.plies, g.plies.length ? g.plies[0].view.side_to_move : "x", (p, i) => {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "move";
    b.dataset.ply = i + 1;
    b.textContent = p.played;
    b.title = `after ${p.view.side_to_move}'s move ${p.played}`;
    b.onclick = () => { viewer.ply = i + 1; renderViewer(); };
    return b;
  });
  drawValueGraph(g);
}

// The value graph: each ply's search value for x (+1 x wins, −1 o wins), an axis with
// its labels, a cursor at the viewed ply, a readout on hover, a click to go there.
const VG = { W: 460, H: 110, l: 34, r: 6, t: 6, b: 18 };
const VG_HINT = "Hover the graph for a ply's value, click to go there.";

function drawValueGraph(g) {
  const vs = valuesForX(g);
  const svg = $("view-value");
  svg.innerHTML = "";
  const { W, H, l, r, t, b } = VG;
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  const n = Math.max(1, g.plies.length);
  const sx = (i) => l + i / n * (W - l - r), sy = (v) => t + (1 - v) / 2 * (H - t - b);
  for (const [v, label] of [[1, "+1 x"], [0.5, ""], [0, "0"], [-0.5, ""], [-1, "−1 o"]]) {
    el("line", { x1: l, x2: W - r, y1: sy(v), y2: sy(v), class: v === 0 ? "axis" : "grid", "stroke-dasharray": v === 0 ? "3 3" : "" }, svg);
    if (label) el("text", { x: l - 3, y: sy(v) + 3, class: "vg-tick", "text-anchor": "end" }, svg).textContent = label;
  }
  const step = [10, 20, 50, 100, 200].find((k) => n / k <= 8) || 500;
  for (let i = 0; i <= n; i += step) el("text", { x: sx(i), y: H - 4, class: "vg-tick", "text-anchor": "middle" }, svg).textContent = i;
  const pts = vs.map((v, i) => [i, v]).filter((p) => p[1] !== null);
  svg.dataset.points = pts.length;
  if (pts.length) {
    const d = pts.map((p, k) => (k ? "L" : "M") + sx(p[0]).toFixed(1) + "," + sy(p[1]).toFixed(1)).join(" ");
    el("path", { d: d + ` L${sx(pts[pts.length - 1][0]).toFixed(1)},${sy(0)} L${sx(pts[0][0]).toFixed(1)},${sy(0)} Z`, class: "value-area" }, svg);
    el("path", { d, class: "value-line" }, svg);
  } else {
    el("text", { x: W / 2, y: sy(0) - 6, class: "tick", "text-anchor": "middle" }, svg).textContent = "no search values recorded for this game";
  }
  el("line", { class: "value-cursor", y1: t, y2: H - b }, svg);
  const plyAt = (e) => {
    const rc = svg.getBoundingClientRect();
    return Math.max(0, Math.min(g.plies.length, Math.round(((e.clientX - rc.left) / rc.width * W - l) / (W - l - r) * n)));
  };
  svg.onclick = (e) => { viewer.ply = plyAt(e); renderViewer(); };
  const tip = $("view-value-tip");
  svg.onmousemove = (e) => {
    const k = plyAt(e);
    const v = k < vs.length ? vs[k] : null;
    const p = g.plies[k];
    const lead = v === null ? "" : Math.abs(v) < 0.005 ? "even" : `${v > 0 ? "x" : "o"} ahead`;
    tip.textContent = k >= g.plies.length ? `end: ${g.result}` : `${k === 0 ? "start" : "after ply " + k}, ${p.view.side_to_move} to move (next ${p.played}): ` + (v === null ? "no value recorded" : `${v >= 0 ? "+" : ""}${v.toFixed(2)} for x, ${lead}`);
    tip.hidden = false;
    svg.dataset.hover = k;
  };
  svg.onmouseleave = () => { tip.textContent = VG_HINT; };
  tip.textContent = VG_HINT;
  tip.hidden = false;
}

// The viewer's ply k shows the position after k plies (0: the start), outlines the move
// that led to it (the list marks that move too) and says which move was played next.
function renderViewer() {
  const g = viewer.game;
  if (!g) return;
  const n = g.plies.length, k = viewer.ply;
  const svg = $("view-board");
  svg.dataset.ply = k;
  const prev = k > 0 ? g.plies[k - 1] : null;
  const last = new Set(prev ? [prev.from, prev.to].filter((c) => c !== null && c !== undefined) : []);
  const where = k === 0 ? "start" : `after ply ${k} of ${n}` + (prev ? ` (${prev.view.side_to_move} ${prev.played})` : "");
  if (k < n) {
    const p = g.plies[k];
    drawBoard(svg, p.view, { heat: heatOf(p.policy), last });
    $("view-ply").textContent = k === 0 ? `start (${n} plies)` : where;
    const search = p.root_q === null ? "" : `; its search's value ${p.root_q.toFixed(3)} for ${p.view.side_to_move} (${p.visits} visits${p.full_search ? "" : ", fast search"})`;
    $("view-info").textContent = `${p.view.side_to_move} to move (x ${p.view.counts[0]}, o ${p.view.counts[1]}); next ${p.played} (ply ${k + 1})${search}. Shaded: the search's policy for that move.`;
    $("view-policy").textContent = p.policy.length ? policyText(p.policy, p.played) : "(no search policy recorded for match games)";
    $("view-policy").style.whiteSpace = "pre";
  } else {
    drawBoard(svg, g.end, { last });
    $("view-ply").textContent = `end, ${where}`;
    $("view-info").textContent = `${g.game}, generation ${g.generation}, game ${g.id} by ${g.players}: ${g.result} (${g.reason}). ` + (g.end.outcome ? g.end.outcome.explanation : "");
    $("view-policy").textContent = "";
  }
  const box = $("view-moves");
  for (const b of box.querySelectorAll("button.move")) {
    const on = +b.dataset.ply === k;
    b.classList.toggle("current", on);
    if (on) {
      b.setAttribute("aria-current", "step");
      scrollToItem(box, b);
    } else b.removeAttribute("aria-current");
  }
  if (k === 0) box.scrollTop = 0;
  const cur = $("view-value").querySelector(".value-cursor");
  if (cur) { const x = VG.l + k / Math.max(1, n) * (VG.W - VG.l - VG.r); cur.setAttribute("x1", x); cur.setAttribute("x2", x); }
  const ref = viewer.ref;
  if (ref) {
    const link = `#games/${encodeURIComponent(ref.run)}/${ref.generation}/${ref.source}/${ref.id}/${k}`;
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
  const g = { generation: +generation, source, id: +id };
  // Checked before any selector moves: a link to another server's run or a generation
  // this run lacks changes nothing.
  if (!dash.runs.some((r) => r.id === run)) throw new Error(`this link names run \`${run}\`, which this server does not show`);
  const d = dash.data[run] || await api("runs/" + encodeURIComponent(run));
  if (!d.generations.some((x) => x.generation === g.generation)) throw new Error(`run ${run} has no generation ${g.generation}`);
  // The selectors follow the link: its run, its generation, its source, any result.
  const gsel = $("games-gen");
  const listed = $("games-run").value === run && gsel.value === String(g.generation) && gsel.dataset.chosen && ["", source].includes($("games-source").value);
  if (!listed) {
    $("games-run").value = run;
    gsel.dataset.chosen = "1";
    if (![...gsel.options].some((o) => o.value === String(g.generation))) gsel.add(new Option(g.generation, g.generation));
    gsel.value = String(g.generation);
    if (!["", source].includes($("games-source").value)) $("games-source").value = "";
    $("games-result").value = "";
    await refreshGames();
  }
  if (viewer.game && viewer.ref && viewer.ref.run === run && viewer.ref.generation === g.generation && viewer.ref.source === source && viewer.ref.id === g.id) {
    viewer.ply = Math.max(0, Math.min(viewer.game.plies.length, +ply || 0));
    renderViewer();
    return;
  }
  const row = [...$("games-table").querySelectorAll("tbody tr")].find((t) => t.dataset.generation === String(g.generation) && t.dataset.source === source && t.dataset.id === String(g.id));
  await openGame(run, g, row || null, +ply || 0);
  if (row) row.scrollIntoView({ block: "nearest" });
  showError(null);
}

// The viewer with no game (a link that named none shown here).
function clearViewer() {
  viewer.game = null;
  viewer.ref = null;
  $("view-board").innerHTML = "";
  delete $("view-board").dataset.ply;
  delete $("view-board").dataset.position;
  $("view-ply").textContent = "no game";
  $("view-info").textContent = "";
  $("view-moves").innerHTML = "";
  $("view-value").innerHTML = "";
  $("view-policy").textContent = "";
  for (const id of ["view-analyse", "view-play"]) $(id).disabled = true;
  for (const row of $("games-table").querySelectorAll("tr.selected")) row.classList.remove("selected");
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
// Every game on the board is a session: New game, a change of game and a take-back start
// the next one and cancel the requests of the last (the server stops a search whose
// request is cancelled). Each request belongs to the session that sent it, and an answer
// that arrives after its session ended is dropped, so an old game's move never lands on
// the new board. The game is a line of positions (`play.line`, the start first), so a
// move can be taken back and any earlier position looked at (`play.viewing`).
const play = { line: [], view: null, selected: null, busy: false, session: 0, abort: null, viewing: null, hint: "", evalAbort: null };

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

// Adds a position to the game: the move that led to it and its view.
function pushPosition(move, from, to, view) {
  play.line.push({ move, last: new Set([from, to].filter((c) => c !== null && c !== undefined)), view });
  play.view = view;
  // A reply leaves the user where they were looking (the list says a move came).
  play.hint = "";
}

// A new game; with `moves` (from the page's address), the game those moves made, so
// that a reload or a shared link goes on where it was.
async function newGame(moves) {
  const s = nextSession();
  showError(null);
  await inSession(s, async () => {
    const q = { game: $("play-game").value };
    if ($("play-start").value.trim()) q.position = $("play-start").value.trim();
    const v = await sessionApi(s, "position?" + new URLSearchParams(q));
    play.line = [];
    play.viewing = null;
    pushPosition(null, null, null, v);
    for (const m of moves || []) {
      const cur = play.view;
      const next = await sessionApi(s, "move?" + new URLSearchParams({ game: cur.game, position: cur.position, move: m }));
      const l = cur.legal.find((x) => x.text === m);
      pushPosition(m, l ? l.from : null, l ? l.to : null, next);
    }
    play.selected = null;
    renderPlay();
    await opponentTurn(s);
  });
}

// The game in the page's address (?game, side, player, position, moves), so that a
// reload keeps it; other parameters (the token) stay.
function saveGameInAddress() {
  if ((location.hash || "").split("/")[0] !== "#play" || !play.line.length) return;
  const q = new URLSearchParams(location.search);
  q.set("game", play.line[0].view.game);
  q.set("side", humanSide());
  q.set("player", $("play-player").value);
  if ($("play-start").value.trim()) q.set("position", $("play-start").value.trim()); else q.delete("position");
  const moves = play.line.slice(1).map((p) => p.move);
  if (moves.length) q.set("moves", moves.join(",")); else q.delete("moves");
  history.replaceState(null, "", location.pathname + "?" + q + location.hash);
}

async function opponentTurn(s) {
  while (play.view && !play.view.outcome && play.view.side_to_move !== humanSide()) {
    $("play-status").textContent = `${$("play-player").value} is thinking…`;
    let a;
    for (let tries = 1; ; tries++) {
      try {
        a = await sessionApi(s, "think", { game: play.view.game, position: play.view.position, player: $("play-player").value, seed: play.line.length });
        break;
      } catch (e) {
        // The server's search slots all taken (analyses running): ask again, a few
        // times, rather than leave the game stuck with the opponent to move.
        if (e.status !== 503 || tries >= 5) throw e;
        $("play-status").textContent = `the server is busy (analyses running); asking ${$("play-player").value} again…`;
        await new Promise((r) => setTimeout(r, 1000));
        if (s !== play.session) throw new Stale();
      }
    }
    pushPosition(a.move, a.from, a.to, a.view);
    renderPlay();
  }
}

async function playMove(text) {
  const s = play.session;
  await inSession(s, async () => {
    const v = await sessionApi(s, "move?" + new URLSearchParams({ game: play.view.game, position: play.view.position, move: text }));
    const m = play.view.legal.find((l) => l.text === text);
    pushPosition(text, m ? m.from : null, m ? m.to : null, v);
    play.selected = null;
    showError(null);
    renderPlay();
    await opponentTurn(s);
  });
}

// Takes back the human's last move (and the replies since); a search under way is
// cancelled. At the start with the opponent to move, it moves again.
function takeBack() {
  if (play.line.length < 2) return;
  const s = nextSession();
  setBusy(false);
  do play.line.pop();
  while (play.line.length > 1 && play.line[play.line.length - 1].view.side_to_move !== humanSide());
  play.view = play.line[play.line.length - 1].view;
  play.viewing = null;
  play.selected = null;
  play.hint = "";
  showError(null);
  renderPlay();
  inSession(s, () => opponentTurn(s)).catch(showError);
}

// Why a click on `cell` plays nothing.
function illegalClick(v, cell) {
  const c = v.cells.find((x) => x.cell === cell) || {};
  const name = c.name || "that cell";
  if (v.outcome) return "The game is over: New game starts another.";
  if (play.busy) return v.side_to_move === humanSide() ? "Your move is being played…" : `Wait: ${$("play-player").value} is thinking.`;
  if (v.side_to_move !== humanSide()) return `Not your move: ${v.side_to_move} is to move.`;
  if (v.must_pass) return "You have no legal move: press Pass.";
  if (c.blocked) return `${name} is blocked.`;
  if (!v.moves_pieces) {
    return c.piece ? `${name} is taken: place a piece on an empty cell (the dots, with hints on).`
      : `${name} is not a legal move: a piece must outflank at least one of ${v.side_to_move === "x" ? "o" : "x"}'s.`;
  }
  if (c.piece && c.piece !== v.side_to_move) return `${name} holds ${c.piece}'s piece: click one of yours, or an empty cell in reach.`;
  if (c.piece === v.side_to_move) return `${name} cannot move: no empty cell within two steps.`;
  if (play.selected !== null) return `${name} is not a legal move from ${(v.cells.find((x) => x.cell === play.selected) || {}).name}: a jump goes two steps, a clone one.`;
  return `${name} is not a legal move: no piece of yours is next to it (click a piece first to jump).`;
}

function clickCell(cell) {
  const v = play.view;
  if (!v) return;
  if (play.viewing !== null) { play.hint = "You are looking at an earlier position: click the last move (or Back to the game) to play on."; renderPlay(); return; }
  if (play.busy || v.outcome || v.side_to_move !== humanSide()) { play.hint = illegalClick(v, cell); renderPlay(); return; }
  const c = clickMeaning(v, play.selected, cell);
  if (c.move) { playMove(c.move).catch(showError); return; }
  const chose = c.selected !== null || play.selected !== null && c.selected === null && play.selected === cell;
  play.hint = chose ? "" : illegalClick(v, cell);
  play.selected = c.selected;
  renderPlay();
}

function renderPlay() {
  const v = play.view;
  if (!v) return;
  saveGameInAddress();
  const viewing = play.viewing !== null ? play.line[play.viewing] : null;
  const shown = viewing ? viewing.view : v;
  const mine = !viewing && !v.outcome && v.side_to_move === humanSide();
  const { hints, targets } = mine ? moveMarks(v, play.selected, $("play-hints").checked) : moveMarks(null);
  const last = (viewing || play.line[play.line.length - 1] || {}).last || new Set();
  drawBoard($("play-board"), shown, { onClick: clickCell, hints, targets, source: play.selected, last });
  $("play-board").dataset.busy = play.busy ? "true" : "false";
  $("play-board").dataset.turn = mine ? "human" : "opponent";
  $("play-board").dataset.viewing = viewing ? String(play.viewing) : "";
  $("play-pass").disabled = !(mine && v.must_pass && !play.busy);
  $("play-back").disabled = play.line.length < 2 || !play.line.slice(1).some((p, i) => play.line[i].view.side_to_move === humanSide());
  $("play-resume").hidden = !viewing;
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
  if (viewing) $("play-status").textContent = `Looking at the position ${play.viewing === 0 ? "at the start" : "after " + moveLabel(play.viewing)}; the game goes on from the last move.`;
  $("play-hint").textContent = play.hint;
  renderPlayMoves();
  playEval(shown);
}

// "3. e4" or "3... e4": the move that led to line position `i` (1 = the first move),
// counted from the side to move at the start (o, when the game began at an odd ply).
function moveLabel(i) {
  const { number, x } = moveNumber(i, play.line[0].view.side_to_move);
  return `${number}${x ? "." : "..."} ${play.line[i].move}`;
}

// A numbered list of moves in `box`: "1." before x's moves, "1..." when o moves first.
function numberedMoves(box, moves, startSide, button) {
  box.innerHTML = "";
  moves.forEach((m, k) => {
    const { number, x } = moveNumber(k + 1, startSide);
    if (x || k === 0) {
      const n = document.createElement("span");
      n.className = "move-no";
      n.textContent = number + (x ? "." : "...");
      box.appendChild(n);
    }
    box.appendChild(button(m, k));
  });
}

// The move list, numbered as the viewer's; a click looks at the position after a move.
function renderPlayMoves() {
  const box = $("play-moves");
  numberedMoves(box, play.line.slice(1), play.line[0].view.side_to_move, (p, k) => {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "move";
    b.dataset.ply = k + 1;
    b.textContent = p.move;
    const current = play.viewing === null ? k + 1 === play.line.length - 1 : play.viewing === k + 1;
    b.classList.toggle("current", current);
    b.onclick = () => { play.viewing = k + 1 === play.line.length - 1 ? null : k + 1; play.hint = ""; renderPlay(); };
    return b;
  });
  box.dataset.moves = play.line.slice(1).map((p) => p.move).join(" ");
  scrollToItem(box, box.querySelector(".current"));
}

// Scrolls `box` (a list that scrolls itself, not the page) just enough to show `item`.
function scrollToItem(box, item) {
  if (!item) return;
  const top = item.offsetTop - box.offsetTop, bottom = top + item.offsetHeight;
  if (top < box.scrollTop) box.scrollTop = top - 4;
  else if (bottom > box.scrollTop + box.clientHeight) box.scrollTop = bottom - box.clientHeight + 4;
}

// The network's evaluation of the shown position (the opponent's network, else the
// analysis board's), from x's side, when "evaluation" is ticked.
async function playEval(v) {
  const box = $("play-eval");
  if (play.evalAbort) play.evalAbort.abort();
  play.evalAbort = null;
  const player = $("play-player").value;
  const m = /^mcts:([^:]+)/.exec(player);
  const net = m ? m[1] : $("an-net").value;
  if (!$("play-eval-on").checked || !net || v.outcome) { box.textContent = ""; delete box.dataset.value; return; }
  // Not while the opponent thinks: the evaluation would take one of the server's
  // search slots from it (asked again when the move comes).
  if (play.busy) { box.textContent = ""; delete box.dataset.value; return; }
  box.textContent = `${net}: evaluating…`;
  delete box.dataset.value;
  const ctl = new AbortController();
  play.evalAbort = ctl;
  try {
    const a = await api("analyse", { game: v.game, position: v.position, net }, ctl.signal);
    if (play.evalAbort !== ctl) return;
    const forX = v.side_to_move === "x" ? a.value : -a.value;
    box.dataset.value = forX.toFixed(3);
    const wdl = a.wdl && (v.side_to_move === "x" ? a.wdl : [a.wdl[2], a.wdl[1], a.wdl[0]]);
    box.textContent = `${net}: ${forX >= 0 ? "+" : ""}${forX.toFixed(2)} for x (${winPct(forX)} expected score for x` + (wdl ? `; x wins ${pct(wdl[0])}, draws ${pct(wdl[1])}, loses ${pct(wdl[2])}` : "") + `)`;
  } catch (e) {
    if (e.name !== "AbortError" && play.evalAbort === ctl) box.textContent = `${net}: ${e.message}`;
  }
}

// The network that played the viewed game: a self-play game's generation net (when it
// is kept), else the run's best.
function viewerNet() {
  const ref = viewer.ref;
  const r = ref && dash.runs.find((x) => x.id === ref.run);
  if (!r) return null;
  const d = dash.data[ref.run];
  const gen = d && d.generations.find((g) => g.generation === ref.generation);
  const by = gen && gen.selfplay ? gen.selfplay.model : "";
  const m = /gen-\d{4,}/.exec(by || "");
  if (ref.source === "selfplay" && m && (r.models || []).includes(m[0])) return `${r.id}/${m[0]}`;
  if (ref.source === "selfplay" && by === "bootstrap") return "bootstrap";
  return r.best ? r.id : null;
}

// Chooses `net` in a network list (added if the list lacks it).
function chooseNet(sel, net) {
  if (!net) return;
  if (![...sel.options].some((o) => o.value === net)) sel.add(new Option(net, net));
  sel.value = net;
  sel.dataset.chosen = net;
}

// The viewer's position on the analysis board, or as the start of a game to play, with
// the network that played the game.
function fromViewer(then) {
  const v = viewedPosition();
  if (!v) return;
  const other = $("play-game").value !== v.game;
  if (other) { $("play-game").value = v.game; fillNets(); resetAnalysis(); }
  const net = viewerNet();
  if (then === "analyse") {
    chooseNet($("an-net"), net);
    $("an-position").value = v.position;
    location.hash = "#play";
    // The play board follows the game too (from its start).
    if (other) { $("play-start").value = ""; newGame().catch(showError); }
    analyse().catch(showError);
  } else {
    if (net) { chooseNet($("opp-net"), net); pickOpponent(); }
    $("play-start").value = v.position;
    location.hash = "#play";
    newGame().catch(showError);
  }
}

// The opponent chosen from the lists: a network searched at the chosen strength, or a
// baseline; written into the player field, which can also be edited by hand.
function pickOpponent() {
  const net = $("opp-net").value, strength = $("opp-strength").value;
  const baseline = BASELINES.includes(net);
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
  if (params.get("player")) { $("play-player").value = params.get("player"); $("play-player").dataset.typed = "1"; }
  if (params.get("side")) $("play-side").value = params.get("side");
  if (params.get("position")) $("play-start").value = params.get("position");
  // The lists for the game on the board; the opponent, unless the address names one,
  // the run's best network at 200 simulations (or ab2 where no run plays the game).
  fillNets();
  if (!params.get("player")) pickOpponent();
  $("play-player").addEventListener("change", () => renderPlay());
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
  $("play-game").onchange = () => {
    $("play-start").value = "";
    if (an.root && an.root.view.game !== $("play-game").value) resetAnalysis();
    // Another game's networks cannot play this one: the lists follow the game.
    fillNets();
    const typed = /^mcts:([^:]+)/.exec($("play-player").value);
    // The opponent follows the lists, unless a player was typed (and can play this game).
    if (!$("play-player").dataset.typed || typed && ![null, $("play-game").value].includes(netGame(typed[1]))) {
      delete $("play-player").dataset.typed;
      pickOpponent();
    }
    newGame().catch(showError);
  };
  $("play-back").onclick = takeBack;
  $("play-resume").onclick = () => { play.viewing = null; play.hint = ""; renderPlay(); };
  $("play-eval-on").onchange = renderPlay;
  $("an-search").addEventListener("mouseleave", endPreview);
  $("an-back").onclick = () => treeStep("back");
  $("an-next").onclick = () => treeStep("next");
  $("an-delete").onclick = deleteVariation;
  document.addEventListener("keydown", analysisKeys);
  $("dash-refresh").onclick = () => refreshDashboard().catch(showError);
  // A choice made by hand is kept when the game changes (if that game allows it).
  $("opp-net").onchange = () => { $("opp-net").dataset.chosen = $("opp-net").value; delete $("play-player").dataset.typed; pickOpponent(); };
  $("opp-strength").onchange = () => { delete $("play-player").dataset.typed; pickOpponent(); };
  $("play-player").addEventListener("input", () => { $("play-player").dataset.typed = "1"; });
  for (const id of ["an-net", "an-net2"]) $(id).addEventListener("change", () => { $(id).dataset.chosen = $(id).value; });
  // Another side: the opponent moves if it is now its turn (a search for the other side
  // is cancelled).
  $("play-side").onchange = () => {
    const s = nextSession();
    setBusy(false);
    play.selected = null;
    play.hint = "";
    renderPlay();
    inSession(s, () => opponentTurn(s)).catch(showError);
  };
  // Enter in the text boxes: a game from that position, an analysis of that position.
  $("play-start").addEventListener("keydown", (e) => { if (e.key === "Enter") newGame().catch(showError); });
  $("an-position").addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); analyse().catch(showError); } });
  // Another network or count: the analysis board's position is analysed again.
  for (const id of ["an-net", "an-net2", "an-sims"]) $(id).addEventListener("change", () => { if (an.cur) analyseNode().catch(showError); });
  $("an-go").onclick = () => analyse().catch(showError);
  $("an-stop").onclick = stopAnalysis;
  $("an-here").onclick = () => { $("an-position").value = ""; analyse().catch(showError); };
  await refreshDashboard().catch(showError);
  await renderConfig().catch(showError);
  await refreshGames().catch(showError);
  // A game in the address (a reload, a shared link) is played again up to where it was.
  const saved = (params.get("moves") || "").split(",").filter((m) => m);
  await newGame(saved).catch(showError);
  const link = (location.hash || "").split("/");
  if (link[0] === "#games" && link.length >= 5) await openLinkedGame(link.slice(1)).catch((e) => { clearViewer(); showError(e); });
  document.body.dataset.ready = "true";
  setInterval(() => {
    if ((location.hash || "#dashboard") !== "#dashboard" || document.hidden || !dashboardLive()) return;
    refreshDashboard().then(() => showError(null), showError);
  }, 2000);
}
start().catch(showError);
