// flipzero serve: the analysis board (the "Analyse" panel of the play page). Moves are
// played on its board and kept as a variation tree, as lichess keeps them: the first
// child of a position is its main line, the others its variations. Each position the
// board goes to is analysed: the network's own view (averaged over the board's
// symmetries), then its tree search watched as it grows (25, 100, 400, … simulations up
// to the chosen count), with arrows for the best moves; a line of the search previews
// on hover and is played onto the board by a click. A second network, when chosen, is
// searched beside the first.
"use strict";
// app.js gives $, api, showError, td, heatOf and policyText; board.js the board.

// `nav` counts the moves through the tree: an answer for an older one is dropped, so a
// slow request never moves the board after the user has moved on. `preview` is the
// line whose end the board shows while the pointer is on it.
const an = { root: null, cur: null, abort: null, run: 0, selected: null, nodes: 0, shown: null, nav: 0, preview: null, stopped: null };

function pct(p) { return (100 * p).toFixed(0) + "%"; }

// The expected score (a win counts 1, a draw ½) of a value in [-1, 1].
function winPct(v) { return (50 * (1 + v)).toFixed(0) + "%"; }

function anNode(parent, move, position, view) {
  const n = { id: ++an.nodes, parent, move, position, view, children: [], ply: parent ? parent.ply + 1 : 0 };
  if (parent) parent.children.push(n);
  return n;
}

// The position the panel's text box names, or the play board's (the one shown there,
// an earlier one when the move list is being looked through).
function analysedPosition() {
  const text = $("an-position").value.trim();
  const game = $("play-game").value;
  const shown = play.viewing !== null && play.line[play.viewing] ? play.line[play.viewing].view : play.view;
  return { game, position: text || (shown && shown.game === game ? shown.position : "") };
}

// A new tree from the text box's position (or the play board's), analysed; the
// current position of the tree is analysed again instead when the box names it.
async function analyse() {
  const { game, position } = analysedPosition();
  stopInsight();
  if (an.cur && an.cur.view.game === game && an.cur.position === position) return analyseNode();
  const token = ++an.nav;
  const v = await api("position?" + new URLSearchParams(position ? { game, position } : { game }));
  // Dropped when the user has moved on (another game chosen, another position).
  if (token !== an.nav || v.game !== $("play-game").value) return;
  an.root = anNode(null, null, v.position, v);
  await goTo(an.root, token);
}

// The view of `node` (read when only its text is known).
async function nodeView(node) {
  if (!node.view) node.view = await api("position?" + new URLSearchParams({ game: an.root.view.game, position: node.position }));
  return node.view;
}

// Goes to `node` of the tree (its view, and its parent's for the last move's outline,
// read first when only their text is known), unless the user has moved on meanwhile.
async function goTo(node, token) {
  token = token || ++an.nav;
  await nodeView(node);
  if (node.parent) await nodeView(node.parent);
  if (token !== an.nav) return;
  an.cur = node;
  an.preview = null;
  an.selected = null;
  $("an-position").value = node.position;
  renderTree();
  drawAnBoard({});
  // Stop pressed while this move was on its way: the position is shown, not analysed.
  if (an.stopped === token) return;
  await analyseNode();
}

// Stop: the searches under way end, and a move on its way is not analysed.
function stopAnalysis() {
  an.stopped = an.nav;
  stopInsight();
}

// Plays `text` from the current position: the child that has it, or a new variation.
async function anPlay(text) {
  const cur = an.cur, token = ++an.nav;
  let child = cur.children.find((c) => c.move === text);
  if (!child) {
    const v = await api("move?" + new URLSearchParams({ game: cur.view.game, position: cur.position, move: text }));
    if (token !== an.nav || an.cur !== cur) return;
    child = cur.children.find((c) => c.move === text) || anNode(cur, text, v.position, v);
  }
  return goTo(child, token);
}

// Forgets the tree (the game on the board changed).
function resetAnalysis() {
  stopInsight();
  an.nav++;
  an.root = an.cur = null;
  an.preview = null;
  $("an-position").value = "";
  $("an-tree").innerHTML = "";
  $("an-board").innerHTML = "";
  $("an-result").textContent = "";
  $("an-policy").textContent = "";
  for (const b of [$("an-search"), $("an-search2")]) { b.innerHTML = ""; delete b.dataset.done; }
}

// Plays a search's line (its moves and the positions after them) onto the tree.
async function playLine(c) {
  let node = an.cur;
  c.pv.slice(0, (c.pv_positions || []).length).forEach((m, i) => {
    node = node.children.find((x) => x.move === m) || anNode(node, m, c.pv_positions[i], null);
  });
  if (node !== an.cur) await goTo(node);
}

function anClick(cell) {
  const v = an.cur && an.cur.view;
  if (!v || v.outcome) return;
  const c = clickMeaning(v, an.selected, cell);
  if (c.move) { anPlay(c.move).catch(showError); return; }
  an.selected = c.selected;
  drawAnBoard(an.shown || {});
}

// Draws the current position, clickable, with `extra` (heat, arrows) on it.
function drawAnBoard(extra) {
  const v = an.cur.view;
  an.shown = extra;
  // A line previewed stays on the board while the search grows beneath it.
  if (an.preview) return;
  const { hints, targets } = moveMarks(v.outcome ? null : v, an.selected, false);
  const last = an.cur.parent ? lastCells(an.cur) : new Set();
  drawBoard($("an-board"), v, Object.assign({ labels: true, onClick: anClick, targets, hints, source: an.selected, last }, extra));
  delete $("an-board").dataset.preview;
}

// The cells of the move that led to `node`.
function lastCells(node) {
  const m = node.parent.view && node.parent.view.legal.find((l) => l.text === node.move);
  return new Set(m ? [m.from, m.to].filter((c) => c !== null && c !== undefined) : []);
}

// The tree as text: the main line, each variation in parentheses after its move.
function renderTree() {
  const box = $("an-tree");
  box.innerHTML = "";
  if (!an.root) return;
  treeLine(box, an.root);
  scrollToItem(box, box.querySelector(".current"));
  $("an-back").disabled = !an.cur.parent;
  $("an-next").disabled = !an.cur.children.length;
  $("an-delete").disabled = !an.cur.parent;
}

function treeMove(box, node, numbered) {
  const { number, x } = moveNumber(node.ply, an.root.view.side_to_move);
  if (x || numbered) {
    const n = document.createElement("span");
    n.className = "move-no";
    n.textContent = number + (x ? "." : "...");
    box.appendChild(n);
  }
  const b = document.createElement("button");
  b.type = "button";
  b.className = "move" + (node === an.cur ? " current" : "");
  b.dataset.node = node.id;
  b.dataset.ply = node.ply;
  b.textContent = node.move;
  b.onclick = () => goTo(node).catch(showError);
  box.appendChild(b);
}

function treeLine(box, from) {
  // The first move of the game is numbered whoever plays it (a variation numbers its own).
  let n = from, numbered = from === an.root;
  while (n.children.length) {
    const [main, ...alts] = n.children;
    treeMove(box, main, numbered);
    numbered = false;
    for (const alt of alts) {
      const v = document.createElement("span");
      v.className = "variation";
      v.append("(");
      treeMove(v, alt, true);
      treeLine(v, alt);
      v.append(")");
      box.appendChild(v);
      numbered = true;
    }
    n = main;
  }
}

function treeStep(k) {
  if (!an.cur) return;
  const to = k === "back" ? an.cur.parent : k === "next" ? an.cur.children[0] : k === "start" ? an.root : k === "end" ? mainEnd(an.cur) : null;
  if (to && to !== an.cur) goTo(to).catch(showError);
}

function mainEnd(n) { while (n.children.length) n = n.children[0]; return n; }

// Removes the current position and what follows it from the tree.
function deleteVariation() {
  const n = an.cur;
  if (!n.parent) return;
  n.parent.children = n.parent.children.filter((c) => c !== n);
  goTo(n.parent).catch(showError);
}

function analysisKeys(e) {
  if ((location.hash || "").split("/")[0] !== "#play" || !an.cur) return;
  const t = e.target.tagName;
  if (t === "INPUT" || t === "SELECT" || t === "TEXTAREA" || e.altKey || e.ctrlKey || e.metaKey) return;
  const k = { ArrowLeft: "back", ArrowRight: "next", Home: "start", End: "end" }[e.key];
  if (!k) return;
  e.preventDefault();
  treeStep(k);
}

// The network's view of the current position, then the growing search.
async function analyseNode() {
  stopInsight();
  const node = an.cur, v = node.view;
  const run = ++an.run;
  const ctl = new AbortController();
  an.abort = ctl;
  $("an-stop").disabled = false;
  // Nothing of the last position stays on show while this one is analysed.
  for (const b of [$("an-search"), $("an-search2")]) { b.innerHTML = ""; delete b.dataset.done; }
  $("an-result").textContent = "analysing…";
  delete $("an-result").dataset.value;
  $("an-policy").textContent = "";
  if (v.outcome) {
    $("an-result").textContent = v.outcome.explanation;
    $("an-policy").textContent = "";
    $("an-stop").disabled = true;
    return;
  }
  let a;
  try {
    a = await api("analyse", { game: v.game, position: v.position, net: $("an-net").value }, ctl.signal);
  } catch (e) {
    if (run === an.run) { $("an-stop").disabled = true; $("an-result").textContent = ""; }
    if (e.name === "AbortError") return;
    throw e;
  }
  if (run !== an.run) return;
  drawAnBoard({ heat: heatOf(a.policy) });
  const side = v.side_to_move;
  $("an-result").dataset.value = a.value.toFixed(3);
  $("an-result").textContent = `${a.net}: value ${a.value >= 0 ? "+" : ""}${a.value.toFixed(3)} for ${side}, expected score ${winPct(a.value)}` +
    (a.wdl ? ` (win ${pct(a.wdl[0])}, draw ${pct(a.wdl[1])}, loss ${pct(a.wdl[2])})` : "") +
    (a.symmetries > 1 ? `; the mean over the board's ${a.symmetries} symmetries, which range from ${a.value_range[0].toFixed(3)} to ${a.value_range[1].toFixed(3)}` : "") + ".";
  $("an-policy").textContent = policyText(a.policy, null);
  $("an-policy").style.whiteSpace = "pre";
  await searchLive(v.game, v.position, run, ctl);
}

function stopInsight() {
  if (an.abort) an.abort.abort();
  an.abort = null;
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
      if (run !== an.run) return;
      answers.forEach((r, i) => {
        if (failed.has(i)) return;
        if (r.status === "fulfilled") renderSearch(boxes[i], r.value, sims === target);
        else if (r.reason.name === "AbortError") throw r.reason;
        // The server busy (its search slots taken): this step is skipped, not the net.
        else if (r.reason.status === 503 && sims !== target) return;
        else { failed.add(i); boxes[i].textContent = `${nets[i]}: ${r.reason.message}`; boxes[i].dataset.done = "true"; }
      });
      const first = answers[0].status === "fulfilled" && answers[0].value;
      if (first) drawAnBoard({ heat: visitHeat(first), arrows: bestArrows(first) });
      if (failed.size === nets.length) break;
    }
  } catch (e) {
    if (e.name !== "AbortError") throw e;
  } finally {
    if (run === an.run) { an.abort = null; $("an-stop").disabled = true; }
  }
}

function visitHeat(r) {
  const h = {}, total = r.candidates.reduce((n, c) => n + c.visits, 0) || 1;
  for (const c of r.candidates) if (c.to !== null && c.to !== undefined) h[c.to] = (h[c.to] || 0) + c.visits / total;
  return h;
}

// Arrows for the most visited moves: the best, green, and up to two more with a tenth
// of the visits or more; thicker for more visits.
function bestArrows(r) {
  const total = r.candidates.reduce((n, c) => n + c.visits, 0);
  if (!total) return [];
  const best = r.candidates[0];
  return r.candidates.filter((c) => c.to !== null && c.to !== undefined && (c === best || c.visits >= 0.1 * total)).slice(0, 3)
    .map((c) => ({ from: c.from, to: c.to, weight: c.visits / total, best: c === best, move: c.text }));
}

function renderSearch(box, r, done) {
  box.innerHTML = "";
  box.dataset.sims = r.sims;
  box.dataset.done = done ? "true" : "false";
  const side = r.view.side_to_move;
  const h = document.createElement("div");
  h.className = "search-head";
  h.textContent = r.value === null
    ? `${r.net}: a forced move, not searched`
    : `${r.net}: ${r.sims} simulations, value ${r.value >= 0 ? "+" : ""}${r.value.toFixed(3)} for ${side} (expected score ${winPct(r.value)})` + (done ? "" : " …");
  box.appendChild(h);
  const t = document.createElement("table");
  t.className = "search";
  const head = document.createElement("tr");
  const priorTip = r.prior_symmetries > 1 ? `the network's policy, averaged over the board's ${r.prior_symmetries} symmetries (the search evaluates each position under one drawn at random)` : "the network's policy";
  for (const [c, tip] of [["move", ""], ["visits", "simulations through the move"], ["Q", `mean value for ${side}, who plays it (+1 a win, −1 a loss)`], ["score", `expected score for ${side} (a win 1, a draw ½), from Q`], ["prior", priorTip], ["line", "the principal variation: hover to see where it leads, click to play it on the board"]]) {
    const th = document.createElement("th");
    th.textContent = c;
    if (tip) th.title = tip;
    if (c === "line" || c === "move") th.className = "l";
    head.appendChild(th);
  }
  t.appendChild(head);
  for (const c of r.candidates.slice(0, 12)) {
    const tr = document.createElement("tr");
    tr.className = "candidate";
    tr.dataset.move = c.text;
    td(tr, c.text, "l");
    td(tr, c.visits);
    td(tr, c.proof ? c.proof : c.q === null ? "-" : c.q.toFixed(3));
    td(tr, c.proof ? { win: "100%", loss: "0%", draw: "50%" }[c.proof] : c.q === null ? "-" : winPct(c.q));
    td(tr, (100 * c.prior).toFixed(1) + "%");
    td(tr, c.pv.join(" "), "l pv");
    if (box.id === "an-search" && c.pv_end) {
      tr.tabIndex = 0;
      tr.title = "hover: the position at the end of this line; click: play it on the board";
      tr.addEventListener("mouseenter", () => previewLine(c));
      tr.addEventListener("mouseleave", endPreview);
      // The table is drawn again as the search grows: the line under the pointer
      // stays previewed, with its new end.
      if (an.preview && an.preview.text === c.text) previewLine(c);
      tr.addEventListener("click", () => playLine(c).catch(showError));
      tr.addEventListener("keydown", (e) => { if (e.key === "Enter") playLine(c).catch(showError); });
    }
    t.appendChild(tr);
  }
  box.appendChild(t);
}

// The board at the end of a line.
function previewLine(c) {
  an.preview = c;
  drawBoard($("an-board"), c.pv_end, { labels: true });
  $("an-board").dataset.preview = c.pv.join(" ");
}

function endPreview() {
  if (!an.preview) return;
  an.preview = null;
  if (an.cur) drawAnBoard(an.shown || {});
}
