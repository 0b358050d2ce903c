//! Move-generation throughput of the engine, one thread, in the format of the reference
//! drivers that `bench/engine-vs-reference.sh` runs beside it:
//!
//! ```text
//! cargo run --release -p engine --example movegen -- ataxx-bulk 7
//! cargo run --release -p engine --example movegen -- ataxx-make 6
//! cargo run --release -p engine --example movegen -- perft othello 10
//! ```
//!
//! `ataxx-bulk D`: perft with bulk counting at the last ply, standard Ataxx start.
//! `ataxx-make D`: perft with every leaf made, hash updated (make-move throughput).
//! `perft GAME D [POSITION]`: perft of any game (bulk counting).
//! `isa`: the instruction-set levels this CPU runs, one a line (the engine runs the
//! best one, capped by `FLIPZERO_ISA=portable|avx2|avx512`; every line above reports it).
//! `search`: the positions of `flipzero bench search` (alpha-beta to fixed depths, 16 MiB
//! table): total nodes (deterministic for a build) and nodes/s.

use std::time::Instant;

use engine::{Game, Position, Rules};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage =
        "usage: movegen ataxx-bulk D | ataxx-make D | perft GAME D [POSITION] | search | isa";
    let depth = |i: usize| -> u32 {
        args.get(i)
            .and_then(|d| d.parse().ok())
            .unwrap_or_else(|| panic!("{usage}"))
    };
    let (label, d, run): (String, u32, Box<dyn Fn() -> u64>) =
        match args.first().map(String::as_str) {
            Some("ataxx-bulk") => {
                let d = depth(1);
                let p = Position::startpos(Rules::ATAXX);
                ("bulk".into(), d, Box::new(move || engine::perft(&p, d)))
            }
            Some("ataxx-make") => {
                let d = depth(1);
                let p = Position::startpos(Rules::ATAXX);
                (
                    "make".into(),
                    d,
                    Box::new(move || engine::perft_make_all(&p, d)),
                )
            }
            Some("perft") => {
                let game: Game = args.get(1).expect(usage).parse().expect("a game name");
                let d = depth(2);
                let s = match args.get(3) {
                    Some(text) => game.parse_position(text).expect("a position"),
                    None => game.startpos(),
                };
                (format!("{game} perft"), d, Box::new(move || s.perft(d)))
            }
            Some("search") => ("search".into(), 0, Box::new(search)),
            Some("isa") => {
                for isa in engine::Isa::available() {
                    println!("{isa}");
                }
                return;
            }
            _ => panic!("{usage}"),
        };
    let t = Instant::now();
    let n = run();
    let s = t.elapsed().as_secs_f64();
    println!(
        "{label} depth {d} nodes {n} time {s:.4} s {:.1} M nodes/s isa {}",
        n as f64 / s / 1e6,
        engine::Isa::current()
    );
}

fn search() -> u64 {
    let stop = std::sync::atomic::AtomicBool::new(false);
    let mut nodes = 0;
    for &(game, text, depth) in engine::bench::SEARCH_BENCH {
        let game: Game = game.parse().expect("a game");
        let state = game.parse_position(text).expect("a position");
        let mut searcher = engine::search::Searcher::new(16);
        let limits = engine::search::Limits {
            depth: Some(depth),
            ..Default::default()
        };
        let report = searcher
            .search(&state, limits, &stop, |_| {})
            .expect("not finished");
        eprintln!(
            "{game:<20} depth {depth} nodes {:>10} score {:>6}",
            report.nodes, report.score
        );
        nodes += report.nodes;
    }
    nodes
}
