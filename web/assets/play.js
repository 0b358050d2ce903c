// The serverless player's page: a game against the net of bundle.json, every rule and
// every move of the net computed in this page by the WebAssembly player (flipzero.js).
// The page's URL may set ?sims=N&seed=S&human=x|o|both|none.
"use strict";

const $ = (id) => document.getElementById(id);
const st = { player: null, answer: null, selected: null, busy: false };

function showError(e) { $("error").textContent = e ? String(e.message || e) : ""; }

function human() { return $("human").value; }

// Whether the side to move is the net's.
function netToMove(a) {
  const h = human();
  return !a.view.outcome && h !== "both" && (h === "none" || a.view.side_to_move !== h);
}

function render() {
  const a = st.answer;
  const v = a.view;
  const mine = !v.outcome && !netToMove(a) && !st.busy;
  const { hints, targets } = moveMarks(mine ? v : null, st.selected, true);
  const last = new Set(a.last_cells);
  drawBoard($("board"), v, { onClick: click, hints, targets, source: st.selected, last });
  $("board").dataset.busy = st.busy ? "true" : "false";
  $("board").dataset.turn = mine ? "human" : "net";
  $("board").setAttribute("aria-label", `${v.game} board, ${v.side_to_move} to move, x ${v.counts[0]} o ${v.counts[1]}`);
  $("pass").disabled = !(mine && v.must_pass);
  $("go").disabled = st.busy || !!v.outcome;
  $("undo").disabled = st.busy || a.moves.length === 0;
  $("position").value = v.position;
  $("status").textContent = v.outcome ? "Game over."
    : st.busy ? `The net is thinking (${a.effort})…`
    : `${v.side_to_move} to move · x ${v.counts[0]}, o ${v.counts[1]}` + (mine ? " · your move" : "");
  $("outcome").textContent = v.outcome ? v.outcome.explanation : "";
  $("outcome").dataset.result = v.outcome ? v.outcome.result : "";
  // Numbered by moves as flipzero serve's lists are: "1." before x's move, "1..." when
  // the game began with o to move (moves alternate, passes included).
  const ol = $("moves");
  ol.innerHTML = "";
  const startO = (a.moves.length % 2 === 0) === (v.side_to_move === "o");
  a.moves.forEach((m, i) => {
    const { number, x } = moveNumber(i + 1, startO ? "o" : "x");
    if (x || i === 0) {
      const n = document.createElement("span");
      n.className = "move-no";
      n.textContent = number + (x ? "." : "...");
      ol.appendChild(n);
    }
    const b = document.createElement("span");
    b.className = "move";
    b.textContent = m;
    ol.appendChild(b);
  });
  ol.dataset.moves = a.moves.join(" ");
  // The search's values are for the side that played the move (the net, after it moved).
  const mover = a.played ? (v.side_to_move === "x" ? "o" : "x") : null;
  $("search-note").textContent = a.played && a.value !== null && a.value !== undefined
    ? `The net (${mover}) played ${a.played}; its search's value ${a.value >= 0 ? "+" : ""}${a.value.toFixed(3)} for ${mover} (+1: ${mover} wins, −1: ${mover} loses).`
    : "";
  const tb = $("lines").tBodies[0];
  tb.innerHTML = "";
  for (const l of a.lines || []) {
    const tr = tb.insertRow();
    for (const t of [l.move, l.visits, l.q === null ? "–" : l.q.toFixed(3), (100 * l.prior).toFixed(1) + "%"]) {
      tr.insertCell().textContent = t;
    }
  }
}

// Runs `f` (a call of the player) and shows its answer; a refusal is shown, the game
// stays as it was.
function act(f) {
  try {
    const a = f(st.player);
    // A search's lines stay on show until the next search.
    if (!a.played && st.answer) a.lines = st.answer.lines;
    st.answer = a;
    st.selected = null;
    showError(null);
  } catch (e) {
    showError(e instanceof WebAssembly.RuntimeError ? new Error("the player stopped: " + e.message + " (reload the page)") : e);
  }
  render();
  schedule();
}

// Lets the net move when it is its turn, after the page has drawn the position.
function schedule() {
  if (!st.answer || st.busy || !netToMove(st.answer)) return;
  st.busy = true;
  render();
  setTimeout(() => { st.busy = false; act((p) => p.think()); }, 30);
}

function click(cell) {
  const a = st.answer;
  if (!a || st.busy || a.view.outcome || netToMove(a)) return;
  const c = clickMeaning(a.view, st.selected, cell);
  if (c.move) { act((p) => p.play(c.move)); return; }
  st.selected = c.selected;
  render();
}

function configure() {
  const sims = +$("sims").value, seed = Math.max(0, Math.floor(+$("seed").value || 0));
  act((p) => p.configure({ sims, seed }));
}

async function start() {
  const cfg = await (await fetch("bundle.json")).json();
  const q = new URLSearchParams(location.search);
  const sims = +(q.get("sims") || cfg.sims), seed = +(q.get("seed") || cfg.seed);
  if (!$("sims").querySelector(`option[value="${sims}"]`)) {
    const o = document.createElement("option");
    o.value = sims; o.textContent = sims + " simulations";
    $("sims").appendChild(o);
  }
  $("sims").value = String(sims);
  $("seed").value = String(seed);
  if (["x", "o", "both", "none"].includes(q.get("human"))) $("human").value = q.get("human");
  document.title = `${cfg.title} · flipzero`;
  $("title").textContent = cfg.title;
  st.player = await FlipzeroPlayer.load({ wasm: cfg.wasm, model: cfg.model, weights: cfg.weights, sims, seed });
  st.answer = st.player.last;
  $("net").textContent = st.answer.net;
  render();
  document.body.dataset.ready = "true";
  schedule();
}

$("human").addEventListener("change", () => { st.selected = null; render(); schedule(); });
$("sims").addEventListener("change", configure);
$("seed").addEventListener("change", configure);
$("new").addEventListener("click", () => act((p) => p.newGame("")));
$("undo").addEventListener("click", () => {
  // Against the net, take back the net's reply too.
  const h = human(), a = st.answer;
  const back = (h === "x" || h === "o") && a.moves.length >= 2 && a.view.side_to_move === h ? 2 : 1;
  act((p) => p.undo(back));
});
$("pass").addEventListener("click", () => act((p) => p.play("0000")));
$("go").addEventListener("click", () => act((p) => p.think()));
$("move-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const m = $("move").value.trim();
  if (m) act((p) => p.play(m));
  $("move").value = "";
});
$("position-form").addEventListener("submit", (e) => {
  e.preventDefault();
  act((p) => p.newGame($("position").value));
});
start().catch((e) => { showError(e); $("status").textContent = "The player could not start."; });
