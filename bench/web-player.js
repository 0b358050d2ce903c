// The serverless player's search in WebAssembly under Node: the workload of
// `flipzero bench web` (the net against itself from the start, 2000 simulations a move,
// 30 moves, seed 1), timed. Usage: node bench/web-player.js MODULE.wasm NET_DIR
// The evaluation count equals the native one: the same search, the same bits.
"use strict";
const fs = require("fs");
const path = require("path");
const { FlipzeroPlayer } = require(path.join(__dirname, "..", "web", "assets", "flipzero.js"));
globalThis.fetch = async (u) => ({ ok: true, arrayBuffer: async () => fs.readFileSync(u) });

(async () => {
  const [wasm, net] = process.argv.slice(2);
  if (!wasm || !net) throw new Error("usage: node bench/web-player.js MODULE.wasm NET_DIR");
  const p = await FlipzeroPlayer.load({
    wasm, model: path.join(net, "model.json"), weights: path.join(net, "fastnet.safetensors"),
    sims: 2000, seed: 1,
  });
  let evaluations = 0;
  const t = performance.now();
  for (let i = 0; i < 30; i++) {
    const a = p.think();
    evaluations += a.evaluations;
    if (a.view.outcome) break;
  }
  const s = (performance.now() - t) / 1000;
  console.log(`WebAssembly (${path.basename(wasm)}, Node ${process.version}): ${evaluations} evaluations in ${s.toFixed(2)} s, ${Math.round(evaluations / s)} evaluations/s`);
  console.log(`evaluations ${evaluations}`);
})().catch((e) => { console.error(e.message); process.exit(1); });
