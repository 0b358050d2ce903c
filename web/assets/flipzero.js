// flipzero's serverless player: the engine, the tree search and a fast net, compiled to
// WebAssembly. Load it, then call its methods; each returns the game as it stands
// (web::player::Answer: the moves, the position view, the net's move and its search)
// or throws an Error that says what was refused. No network access after loading.
//
//   const p = await FlipzeroPlayer.load({ wasm: "flipzero.wasm",
//     model: "net/model.json", weights: "net/fastnet-quant.packed", sims: 400, seed: 1 });
//   p.play("f2"); const a = p.think(); // a.played, a.view, a.moves, a.lines
"use strict";

class FlipzeroPlayer {
  // Fetches the module and the net (URLs relative to the page) and starts a game.
  static async load(opts) {
    const bytes = async (url) => {
      const r = await fetch(url);
      if (!r.ok) throw new Error(url + ": " + r.status + " " + r.statusText);
      return new Uint8Array(await r.arrayBuffer());
    };
    const [wasm, model, weights] = await Promise.all(
      [opts.wasm || "flipzero.wasm", opts.model, opts.weights].map(bytes));
    // instantiate from bytes, not a stream: any static server will do, whatever media
    // type it gives .wasm files.
    const { instance } = await WebAssembly.instantiate(wasm, {});
    const p = new FlipzeroPlayer(instance.exports);
    const input = new Uint8Array(model.length + weights.length);
    input.set(model, 0);
    input.set(weights, model.length);
    p.write(input);
    const sims = opts.sims ?? 400, seed = opts.seed ?? 0;
    // Refused here rather than wrapped: a number the module's u32/u64 cannot take as given.
    if (!Number.isSafeInteger(sims) || sims < 0 || sims > 0xffffffff) throw new Error(`sims ${sims}: expected a whole number`);
    if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`seed ${seed}: expected a whole number from 0 to 2^53 - 1`);
    const s = BigInt(seed);
    p.answer(p.x.fz_load(model.length, sims, Number(s >> 32n), Number(s & 0xffffffffn)));
    return p;
  }

  constructor(exports) { this.x = exports; }

  // Copies `bytes` into the module's input buffer.
  write(bytes) {
    const at = this.x.fz_input(bytes.length);
    if (at === 0) throw new Error(`an input of ${bytes.length} bytes does not fit in the module's memory`);
    new Uint8Array(this.x.memory.buffer, at, bytes.length).set(bytes);
  }

  // The answer of the last call, or its refusal as an Error.
  answer(code) {
    const out = new Uint8Array(this.x.memory.buffer, this.x.fz_output(), this.x.fz_output_len());
    const a = JSON.parse(new TextDecoder().decode(out));
    if (code !== 0) throw new Error(a.error);
    this.last = a;
    return a;
  }

  // Runs a command (web::player::Command) and returns the game.
  call(command) {
    this.write(new TextEncoder().encode(JSON.stringify(command)));
    return this.answer(this.x.fz_call());
  }

  state() { return this.call({ op: "state" }); }
  // A new game from position text (empty: the game's start).
  newGame(position) { return this.call({ op: "new_game", position: position || null }); }
  // Plays a move in the game's notation ("f2", "a1c3", "0000" passes).
  play(move) { return this.call({ op: "play", move }); }
  // The net searches and plays its move: `played`, `value`, `lines` (visits, q, prior).
  think() { return this.call({ op: "think" }); }
  undo(plies) { return this.call({ op: "undo", plies: plies ?? 1 }); }
  // Simulations a move and the search's seed.
  configure(opts) {
    return this.call({ op: "configure", sims: opts.sims ?? null, seed: opts.seed ?? null });
  }
}

if (typeof module !== "undefined") module.exports = { FlipzeroPlayer };
