// The board as an SVG drawing, shared by `flipzero serve`'s page and the serverless
// player of `flipzero export --web`: it draws a position view (web::position, JSON)
// and reports clicks; every rule is the engine's.
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";

function el(tag, attrs, parent) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

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
  if (opts.arrows && opts.arrows.length) drawArrows(svg, view, L, opts.arrows);
}

// Arrows over the board, as lichess draws a search's best moves: a jump from its
// source to its target, a placement or clone as a ring on its target; `weight` (0 to 1)
// sets the width, `best` the colour. Clicks pass through them to the cells.
function drawArrows(svg, view, L, arrows) {
  const at = new Map(view.cells.map((c, i) => [c.cell, L.pts[i]]));
  const defs = el("defs", {}, svg);
  for (const [id, color] of [["arrow-best", "#15781b"], ["arrow-other", "#003088"]]) {
    const m = el("marker", { id, viewBox: "0 0 10 10", refX: 5, refY: 5, markerWidth: 2.6, markerHeight: 2.6, orient: "auto-start-reverse" }, defs);
    el("path", { d: "M0,0 L10,5 L0,10 z", fill: color }, m);
  }
  const g = el("g", { class: "arrows", "pointer-events": "none" }, svg);
  for (const a of arrows) {
    const to = at.get(a.to);
    if (!to) continue;
    const color = a.best ? "#15781b" : "#003088";
    const w = (0.07 + 0.13 * Math.min(1, a.weight)).toFixed(3);
    const attrs = { class: "arrow", "data-move": a.move || "", stroke: color, "stroke-width": w, fill: "none", opacity: (0.45 + 0.4 * Math.min(1, a.weight)).toFixed(2) };
    const from = a.from === null || a.from === undefined ? null : at.get(a.from);
    if (!from) {
      el("circle", Object.assign({ cx: to[0], cy: to[1], r: 0.3 }, attrs), g);
      continue;
    }
    // Shortened at both ends so the head sits inside the target cell.
    const dx = to[0] - from[0], dy = to[1] - from[1], len = Math.hypot(dx, dy) || 1;
    const ux = dx / len, uy = dy / len;
    el("line", Object.assign({ x1: from[0] + ux * 0.25, y1: from[1] + uy * 0.25, x2: to[0] - ux * 0.3, y2: to[1] - uy * 0.3, "stroke-linecap": "round", "marker-end": `url(#${a.best ? "arrow-best" : "arrow-other"})` }, attrs), g);
  }
}

// The number of the move at `ply` (1 = the first) of a game that began with
// `startSide` to move: "3." before x's third move, "3..." before o's when it starts a
// line (moves alternate, passes included). Both pages number their lists with it.
function moveNumber(ply, startSide) {
  const k = ply - 1 + (startSide === "o" ? 1 : 0);
  return { number: Math.floor(k / 2) + 1, x: k % 2 === 0 };
}

// What a click on `cell` means to a player choosing a move in `view`, with `selected`
// the source cell chosen so far (or null): a move to play ({ move: text }), or the
// source chosen now ({ selected: cell or null }).
function clickMeaning(view, selected, cell) {
  if (selected !== null) {
    const jump = view.legal.find((m) => m.from === selected && m.to === cell);
    if (jump) return { move: jump.text };
  }
  const place = view.legal.find((m) => m.from === null && m.to === cell);
  if (place) return { move: place.text };
  return { selected: view.legal.some((m) => m.from === cell) && selected !== cell ? cell : null };
}

// The cells to mark for a player choosing a move in `view` (none when null): the
// jumps' targets from `selected`, and with `hints` every cell a piece can be placed or
// cloned on.
function moveMarks(view, selected, hints) {
  const out = { hints: new Set(), targets: new Set() };
  if (!view) return out;
  for (const m of view.legal) {
    if (m.to === null) continue;
    if (hints && m.from === null) out.hints.add(m.to);
    if (selected !== null && m.from === selected) out.targets.add(m.to);
  }
  return out;
}
