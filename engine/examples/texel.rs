//! Tunes the hand-written evaluation's weights (the `ev_*` search parameters) on games
//! of the alpha-beta search against itself, by logistic regression of each position's
//! result on the evaluation (Texel's method): the weights that best predict who won.
//!
//! ```text
//! texel games OUT GAMES NODES SEED [k=v,...]   # self-play: OUT gets "FEN;result" lines
//! texel fit FILE... [k=v,...]                 # prints the fitted ev_* weights
//! ```
//!
//! `games` plays GAMES games on two threads, each from an opening of
//! `bench/openings/ataxx-3ply.txt` followed by 2 to 9 random plies, every move a search
//! of NODES nodes (soft; four times that hard) with the given parameters over the tuned
//! ones; the result (1 a win of x, 0.5 a draw, 0 a loss) is written after each position.
//! `fit` reads those lines, starts from the given parameters, fits the scale of the
//! logistic and then every `ev_*` weight but the empty-board piece (100, the unit) by
//! gradient descent on the mean squared error, and prints the weights as `k=v,...`.
//! Every number is a function of the arguments: the same command gives the same file and
//! the same weights.

use std::io::{BufRead, Write};
use std::sync::atomic::AtomicBool;

use engine::search::{Limits, PARAMS, Params, Searcher, Weights};
use engine::{Game, Rng, State};

fn params_of(text: Option<&String>) -> Result<Params, String> {
    let mut p = Params::TUNED;
    for kv in text
        .into_iter()
        .flat_map(|t| t.split(','))
        .filter(|s| !s.is_empty())
    {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("`{kv}` is not NAME=VALUE"))?;
        p.set(k, v).map_err(|e| e.to_string())?;
    }
    Ok(p)
}

fn number(args: &[String], i: usize, what: &str) -> Result<u64, String> {
    let a = args.get(i).ok_or_else(|| format!("{what} is missing"))?;
    a.parse()
        .map_err(|_| format!("{what} must be a whole number, got `{a}`"))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let done = match args.first().map(String::as_str) {
        Some("games") => games(&args[1..]),
        Some("fit") => fit(&args[1..]),
        _ => Err(
            "usage: texel games OUT GAMES NODES SEED [k=v,...] | texel fit FILE... [k=v,...]"
                .into(),
        ),
    };
    if let Err(e) = done {
        eprintln!("texel: {e}");
        std::process::exit(2);
    }
}

fn games(args: &[String]) -> Result<(), String> {
    let out = args.first().ok_or("OUT is missing")?.clone();
    let games = number(args, 1, "GAMES")?;
    let nodes = number(args, 2, "NODES")?.max(1);
    let seed = number(args, 3, "SEED")?;
    let params = params_of(args.get(4))?;
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../bench/openings/ataxx-3ply.txt"
    );
    let game: Game = "ataxx".parse().expect("a game of the engine");
    let openings: Vec<State> = std::fs::read_to_string(path)
        .map_err(|e| format!("{path}: {e}"))?
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            game.parse_position(l)
                .map_err(|e| format!("{path}: opening {}: {e}", i + 1))
        })
        .collect::<Result<_, _>>()?;
    // The file is made before the games, so that a bad OUT is said at once.
    let file = std::fs::File::create(&out).map_err(|e| format!("{out}: {e}"))?;
    let threads = 2;
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let openings = openings.clone();
            std::thread::spawn(move || {
                let mut lines = Vec::new();
                let mut rng = Rng::new(seed.wrapping_mul(1000).wrapping_add(t));
                let mut searcher = Searcher::new(16).with_params(params);
                let stop = AtomicBool::new(false);
                for g in (t..games).step_by(threads as usize) {
                    let mut s = openings[(g as usize) % openings.len()];
                    for _ in 0..2 + rng.below(8) {
                        let m = s.legal_moves();
                        if m.is_empty() {
                            break;
                        }
                        s.play(m[rng.below(m.len() as u64) as usize]);
                    }
                    searcher.clear();
                    let mut fens = Vec::new();
                    while !s.is_game_over() {
                        fens.push(s.text());
                        let limits = Limits {
                            soft_nodes: Some(nodes),
                            nodes: Some(4 * nodes),
                            ..Limits::default()
                        };
                        let Some(r) = searcher.search(&s, limits, &stop, |_| {}) else {
                            break;
                        };
                        s.play(r.pv[0]);
                    }
                    let x = match s.result().and_then(|r| r.winner) {
                        Some(engine::Side::X) => "1",
                        Some(engine::Side::O) => "0",
                        None => "0.5",
                    };
                    for f in fens {
                        lines.push(format!("{f};{x}"));
                    }
                }
                lines
            })
        })
        .collect();
    let mut f = std::io::BufWriter::new(file);
    let mut n = 0;
    for h in handles {
        for l in h.join().map_err(|_| "a game thread failed")? {
            writeln!(f, "{l}").map_err(|e| format!("{out}: {e}"))?;
            n += 1;
        }
    }
    f.flush().map_err(|e| format!("{out}: {e}"))?;
    eprintln!("{n} positions of {games} games in {out}");
    Ok(())
}

/// One position: its evaluation's features (per weight, its coefficient) and the side to
/// move's result.
struct Sample {
    features: Vec<(u16, f32)>,
    base: f32,
    result: f32,
}

fn fit(args: &[String]) -> Result<(), String> {
    let (files, rest): (Vec<&String>, Vec<&String>) = args.iter().partition(|a| !a.contains('='));
    let mut params = params_of(rest.first().copied())?;
    // The weights fitted: every ev_* but the original evaluation's terms.
    let tuned: Vec<&'static str> = PARAMS
        .iter()
        .map(|p| p.name)
        // The centre's piece-square weights stay 0: every cell is of some class, so the
        // classes' weights and the material's are otherwise one degree of freedom too many.
        .filter(|n| {
            n.starts_with("ev_")
                && ![
                    "ev_mobility",
                    "ev_exposed_own",
                    "ev_exposed_opp",
                    "ev_pst9_mg",
                    "ev_pst9_eg",
                ]
                .contains(n)
        })
        .collect();
    for n in ["ev_mobility", "ev_exposed_own", "ev_exposed_opp"] {
        params.set(n, "0").map_err(|e| e.to_string())?;
    }
    let game: Game = "ataxx".parse().expect("a game of the engine");
    let mut states = Vec::new();
    for f in files {
        let file = std::fs::File::open(f).map_err(|e| format!("{f}: {e}"))?;
        for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
            let at = || format!("{f}:{}", i + 1);
            let line = line.map_err(|e| format!("{}: {e}", at()))?;
            let (fen, r) = line
                .rsplit_once(';')
                .ok_or_else(|| format!("{}: not POSITION;RESULT", at()))?;
            let s = game
                .parse_position(fen)
                .map_err(|e| format!("{}: {e}", at()))?;
            let r: f32 = r
                .parse()
                .ok()
                .filter(|r| [0.0, 0.5, 1.0].contains(r))
                .ok_or_else(|| format!("{}: the result must be 0, 0.5 or 1", at()))?;
            let r = if s.side_to_move() == engine::Side::X {
                r
            } else {
                1.0 - r
            };
            states.push((s, r));
        }
    }
    if states.is_empty() {
        return Err("no positions to fit".into());
    }
    eprintln!("{} positions", states.len());
    // Features by finite differences: the evaluation is linear in every weight but for the
    // integer division by the cell count, so a unit change of a weight changes it by its
    // coefficient (to within rounding); the coefficients are read at weight 0 and 1000.
    let zero = {
        let mut p = params;
        for n in &tuned {
            p.set(n, "0").ok();
        }
        p
    };
    let base_weights = Weights::of(&zero);
    let probes: Vec<(Weights, f32)> = tuned
        .iter()
        .map(|n| {
            let mut p = zero;
            let probe = engine::search::param_spec(n)
                .expect("a parameter")
                .max
                .max(1);
            p.set(n, &probe.to_string())
                .expect("its maximum is in range");
            (Weights::of(&p), probe as f32)
        })
        .collect();
    let samples: Vec<Sample> = states
        .iter()
        .map(|(s, r)| {
            let base = base_weights.evaluate(s) as f32;
            let mut features = Vec::new();
            for (j, (pw, probe)) in probes.iter().enumerate() {
                let d = (pw.evaluate(s) as f32 - base) / probe;
                if d != 0.0 {
                    features.push((j as u16, d));
                }
            }
            Sample {
                features,
                base,
                result: *r,
            }
        })
        .collect();
    let mut w: Vec<f64> = tuned
        .iter()
        .map(|n| f64::from(params.get(n).expect("a parameter")))
        .collect();
    let eval = |w: &[f64], s: &Sample| {
        s.base as f64
            + s.features
                .iter()
                .map(|&(j, c)| w[j as usize] * c as f64)
                .sum::<f64>()
    };
    let loss = |w: &[f64], k: f64| {
        samples
            .iter()
            .map(|s| {
                let p = 1.0 / (1.0 + (-eval(w, s) / k).exp());
                (s.result as f64 - p).powi(2)
            })
            .sum::<f64>()
            / samples.len() as f64
    };
    // The logistic's scale for the starting weights.
    let mut k = 200.0;
    for step in [100.0, 30.0, 10.0, 3.0, 1.0] {
        loop {
            let (a, b) = (loss(&w, k - step), loss(&w, k + step));
            let c = loss(&w, k);
            if a < c && k - step > 10.0 {
                k -= step;
            } else if b < c {
                k += step;
            } else {
                break;
            }
        }
    }
    eprintln!("scale {k}, loss {:.6}", loss(&w, k));
    let ranges: Vec<(f64, f64)> = tuned
        .iter()
        .map(|n| {
            let spec = engine::search::param_spec(n).expect("a parameter");
            (f64::from(spec.min), f64::from(spec.max))
        })
        .collect();
    // Adam on the mean squared error.
    let (mut m, mut v) = (vec![0.0; w.len()], vec![0.0; w.len()]);
    let lr = 2.0;
    for it in 1..=3000 {
        let mut g = vec![0.0; w.len()];
        for s in &samples {
            let p = 1.0 / (1.0 + (-eval(&w, s) / k).exp());
            let d = -2.0 * (s.result as f64 - p) * p * (1.0 - p) / k;
            for &(j, c) in &s.features {
                g[j as usize] += d * c as f64;
            }
        }
        for j in 0..w.len() {
            let gj = g[j] / samples.len() as f64;
            m[j] = 0.9 * m[j] + 0.1 * gj;
            v[j] = 0.999 * v[j] + 0.001 * gj * gj;
            let mh = m[j] / (1.0 - 0.9f64.powi(it));
            let vh = v[j] / (1.0 - 0.999f64.powi(it));
            w[j] -= lr * mh / (vh.sqrt() + 1e-12);
            w[j] = w[j].clamp(ranges[j].0, ranges[j].1);
        }
        if it % 500 == 0 {
            eprintln!("iteration {it}: loss {:.6}", loss(&w, k));
        }
    }
    let out: Vec<String> = tuned
        .iter()
        .zip(&w)
        .map(|(n, x)| format!("{n}={}", x.round() as i32))
        .collect();
    println!("{}", out.join(","));
    Ok(())
}
