//! The gate's operating characteristic, for the configs that ship and against the real
//! gate loop fed with simulated games.

use std::path::Path;

use eval::{
    GateConfig, PairModel, SprtVerdict, gate_loop, operating_characteristic, operating_point,
    score_from_elo,
};

/// The `[gate]` table of a shipped config file, keys left out taking their built-in
/// defaults (as `flipzero run` reads it).
fn shipped_gate(file: &str) -> GateConfig {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../configs")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let table: toml::Table = toml::from_str(&text).unwrap();
    let gate: GateConfig = table["gate"].clone().try_into().unwrap();
    gate.validate().unwrap();
    gate
}

const PRESETS: [&str; 6] = [
    "default.toml",
    "strength.toml",
    "standard.toml",
    "othello.toml",
    "hexxagon.toml",
    "annexation64.toml",
];

#[test]
fn shipped_gates_keep_weaker_nets_out_and_let_stronger_ones_in() {
    let mut gates: Vec<(String, GateConfig)> = PRESETS
        .iter()
        .map(|f| (f.to_string(), shipped_gate(f)))
        .collect();
    gates.push(("built-in default".into(), GateConfig::default()));
    for (name, cfg) in &gates {
        for draw in [0.0, 0.1, 0.2, 0.3] {
            let oc = operating_characteristic(cfg, draw, &[-30.0, 0.0, 40.0]).unwrap();
            let (weaker, equal, stronger) = (oc[0].1, oc[1].1, oc[2].1);
            assert!(
                weaker.promote <= 0.10,
                "{name} at draw rate {draw}: {weaker:?}"
            );
            assert!(
                stronger.promote >= 0.80,
                "{name} at draw rate {draw}: {stronger:?}"
            );
            // The cost stays bounded: an even match takes at most 100 pairs on average.
            assert!(equal.expected_pairs <= 100.0, "{name}: {equal:?}");
            // standard.toml states tighter rates in its comments.
            if name == "standard.toml" {
                assert!(weaker.promote <= 0.05 && stronger.promote >= 0.90, "{draw}");
            }
        }
    }
    // The presets that copy the default gate have its table, and the built-in default
    // decides as configs/default.toml does.
    let default = shipped_gate("default.toml");
    for f in [
        "othello.toml",
        "hexxagon.toml",
        "annexation64.toml",
        "strength.toml",
    ] {
        assert_eq!(shipped_gate(f).sprt(), default.sprt(), "{f}");
    }
    let builtin = GateConfig::default();
    assert_eq!(
        (
            builtin.sprt(),
            builtin.max_pairs,
            builtin.batch_pairs,
            builtin.cap_rule
        ),
        (
            default.sprt(),
            default.max_pairs,
            default.batch_pairs,
            default.cap_rule
        )
    );
}

/// One simulated game: the candidate wins, draws or loses (2, 1 or 0 half points) with
/// the probabilities of `PairModel::independent_games`.
fn game(rng: &mut engine::Rng, elo: f64, draw: f64) -> usize {
    let w = score_from_elo(elo) - draw / 2.0;
    let u = rng.next_f64();
    if u < w {
        2
    } else if u < w + draw {
        1
    } else {
        0
    }
}

#[test]
fn real_gate_loop_promotes_as_often_as_computed() {
    // The default gate, run 20,000 times with simulated players of known strength, at
    // a draw rate of 0.1: the share of promotions is within 4 standard errors of the
    // computed probability (one such deviation in about 16,000 tests of a correct
    // computation), and so is the mean number of pairs.
    let cfg = shipped_gate("default.toml");
    let draw = 0.1;
    let runs = 20_000;
    let mut rng = engine::Rng::new(11);
    for elo in [-30.0, 0.0, 40.0] {
        let oc = operating_point(&cfg, &PairModel::independent_games(elo, draw).unwrap()).unwrap();
        let (mut promoted, mut pairs, mut pairs_sq, mut by_sprt) = (0u32, 0.0, 0.0, 0u32);
        for _ in 0..runs {
            let out = gate_loop(&cfg, |_, n| {
                let mut c = [0u32; 5];
                for _ in 0..n {
                    c[game(&mut rng, elo, draw) + game(&mut rng, elo, draw)] += 1;
                }
                Ok::<_, std::convert::Infallible>(c)
            })
            .unwrap_or_else(|e| match e {});
            promoted += u32::from(out.promote);
            by_sprt += u32::from(out.sprt != SprtVerdict::Continue);
            let n = out.totals.pairs() as f64;
            pairs += n;
            pairs_sq += n * n;
        }
        let n = f64::from(runs);
        let rate = f64::from(promoted) / n;
        let se = (oc.promote * (1.0 - oc.promote) / n).sqrt();
        assert!(
            (rate - oc.promote).abs() <= 4.0 * se,
            "elo {elo}: promoted {rate} of {runs}, computed {oc:?} (se {se:.4})"
        );
        let mean = pairs / n;
        let sd = (pairs_sq / n - mean * mean).sqrt();
        assert!(
            (mean - oc.expected_pairs).abs() <= 4.0 * sd / n.sqrt(),
            "elo {elo}: {mean} pairs on average, computed {oc:?}"
        );
        let cap = 1.0 - f64::from(by_sprt) / n;
        let se_cap = (oc.cap_decides * (1.0 - oc.cap_decides) / n).sqrt();
        assert!(
            (cap - oc.cap_decides).abs() <= 4.0 * se_cap,
            "elo {elo}: {cap} vs {oc:?}"
        );
    }
}
