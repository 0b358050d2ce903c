//! Exported models run the same in an independent runtime (ONNX Runtime, from Python:
//! `pip install -r bench/requirements.txt`), for every game family.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use engine::{Game, Rng, State};
use rundir::Scratch;
use selfplay::{BuiltinEvaluator, SelfplayConfig};
use train::ndarray::{Array1, Array2, Axis};
use train::net::{Head, encode_batch};
use train::store::save_npy;
use train::{TrainConfig, TrainOptions};

pub(crate) fn temp(name: &str) -> Scratch {
    Scratch::temp("export", name)
}

/// A briefly trained tiny model (so BatchNorm statistics are not the defaults), in
/// folders named after `test` so that tests running in parallel do not share them.
fn model(game: &str, test: &str) -> Scratch {
    model_of(
        game,
        test,
        TrainConfig {
            steps: 3,
            batch_size: 16,
            warmup_steps: 1,
            ..TrainConfig::default()
        },
    )
}

/// The architectures beyond the presets that every engine must run: no global pooling,
/// pooling in every block with narrow heads, wide heads.
pub(crate) fn architectures() -> Vec<TrainConfig> {
    let arch = |blocks, gpool_every, head_channels, value_hidden| TrainConfig {
        blocks: Some(blocks),
        channels: Some(24),
        gpool_every: Some(gpool_every),
        head_channels: Some(head_channels),
        value_hidden: Some(value_hidden),
        // Trained, not three steps: 60 steps at a high rate move the BatchNorm statistics
        // and scales well away from their initial 0, 1.
        steps: 60,
        batch_size: 16,
        warmup_steps: 5,
        learning_rate: 1e-2,
        ..TrainConfig::default()
    };
    vec![
        arch(2, 0, 16, 32),
        arch(3, 1, 6, 8),
        arch(1, 2, 48, 96),
        // An auxiliary head the CPU engine trains.
        TrainConfig {
            heads: vec![Head::Policy, Head::Wdl, Head::Score, Head::Ownership],
            ..arch(2, 1, 12, 16)
        },
        // One it does not: Burn's engine trains it.
        TrainConfig {
            heads: vec![
                Head::Policy,
                Head::Wdl,
                Head::Score,
                Head::Ownership,
                Head::Reply,
            ],
            device: "flex".into(),
            steps: 30,
            ..arch(1, 1, 8, 8)
        },
    ]
}

/// A model of `game` trained with `tc` on a little uniform self-play.
pub(crate) fn model_of(game: &str, test: &str, tc: TrainConfig) -> Scratch {
    let tag = format!("{test}-{}", game.replace('/', "_"));
    let data = temp(&format!("data-{tag}"));
    let cfg = SelfplayConfig {
        game: game.into(),
        games: 2,
        threads: 1,
        evaluator: BuiltinEvaluator::Uniform,
        simulations: 8,
        fast_simulations: 4,
        ..SelfplayConfig::default()
    };
    selfplay::run_selfplay(
        &cfg,
        &[],
        &|| BuiltinEvaluator::Uniform.build(),
        &data,
        &HashMap::new(),
        &|_| {},
    )
    .unwrap();
    let out = temp(&format!("model-{tag}"));
    let opts = TrainOptions {
        data: vec![data.to_path_buf()],
        out: out.to_path_buf(),
        resume: false,
        init: None,
        stop_after: None,
        on_step: &|_| {},
        on_warning: &|_| {},
    };
    train::train(&tc, game.parse().unwrap(), &opts).unwrap();
    out
}

pub(crate) fn positions(game: Game, n: usize) -> Vec<State> {
    let mut rng = Rng::new(17);
    let mut out = vec![];
    while out.len() < n {
        let mut s = game.startpos();
        for _ in 0..rng.below(30) {
            let m = s.legal_moves();
            if m.is_empty() {
                break;
            }
            s.play(m[rng.below(m.len() as u64) as usize]);
        }
        out.push(s);
    }
    out
}

fn check(model_dir: &Path, case: &Path) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/onnx_check.py");
    // `make test` points FLIPZERO_PYTHON at the project's venv (.venv/, bench/requirements.txt).
    let python = std::env::var("FLIPZERO_PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(&python)
        .arg(&script)
        .arg(model_dir)
        .arg(case)
        .output()
        .unwrap_or_else(|e| {
            panic!("{python} does not run ({e}): the export check needs `make venv` (bench/requirements.txt)")
        });
    assert!(
        out.status.success(),
        "ONNX check failed for {}:\n{}{}",
        model_dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn onnx_export_matches_burn_for_every_family() {
    let mut cases: Vec<(&str, Scratch)> = ["ataxx", "hexxagon", "othello", "annexation64"]
        .into_iter()
        .map(|g| (g, model(g, "onnx")))
        .collect();
    for (k, tc) in architectures().into_iter().enumerate() {
        let game = ["othello", "hexxagon", "ataxx", "hexxagon", "ataxx"][k];
        cases.push((game, model_of(game, &format!("onnx-arch{k}"), tc)));
    }
    for (k, (game, trained)) in cases.into_iter().enumerate() {
        let g: Game = game.parse().unwrap();
        let exported = temp(&format!("exported-{k}"));
        let files = train::export(&trained, &exported).unwrap();
        assert!(files.iter().any(|f| f.ends_with("model.onnx")));
        // Every file of an export gets the same permissions (the umask's for a new file):
        // the safetensors store's private temporary file does not leak its 0600.
        use std::os::unix::fs::PermissionsExt as _;
        let modes: Vec<(String, u32)> = files
            .iter()
            .map(|f| {
                let m = std::fs::metadata(f).unwrap().permissions().mode() & 0o777;
                (f.display().to_string(), m)
            })
            .collect();
        assert!(modes.iter().all(|(_, m)| *m == modes[0].1), "{modes:?}");
        let model = train::load_model(&exported).unwrap();
        let states = positions(g, 12);
        let inputs = encode_batch(&states);
        let reads = train::host_reads();
        let preds = train::predict(&model, &states);
        // Policy, win/draw/loss and score come back in one read of the device.
        assert_eq!(
            train::host_reads() - reads,
            1,
            "host reads an inference batch"
        );
        let case = temp(&format!("case-{k}"));
        std::fs::create_dir_all(&case).unwrap();
        let n = states.len();
        save_npy(&case.join("inputs.npy"), &inputs).unwrap();
        let p = g.policy_size();
        let cat = |f: &dyn Fn(&train::Prediction) -> Vec<f32>| {
            preds.iter().flat_map(f).collect::<Vec<f32>>()
        };
        let logits = Array2::from_shape_vec((n, p), cat(&|x| x.policy_logits.clone())).unwrap();
        save_npy(&case.join("policy_logits.npy"), &logits).unwrap();
        let wdl = Array2::from_shape_vec((n, 3), cat(&|x| x.wdl.to_vec())).unwrap();
        save_npy(&case.join("wdl.npy"), &wdl).unwrap();
        let score = Array1::from_vec(cat(&|x| vec![x.score])).insert_axis(Axis(1));
        save_npy(&case.join("score.npy"), &score).unwrap();
        check(&exported, &case);
    }
}

#[test]
fn fast_path_matches_burn_for_every_family() {
    let mut cases: Vec<(&str, Scratch)> = ["ataxx", "hexxagon", "othello", "annexation64"]
        .into_iter()
        .map(|g| (g, model(g, "fast")))
        .collect();
    for (k, tc) in architectures().into_iter().enumerate() {
        let game = ["ataxx", "othello", "hexxagon", "ataxx", "othello"][k];
        cases.push((game, model_of(game, &format!("fast-arch{k}"), tc)));
    }
    for (game, dir) in cases {
        let g: Game = game.parse().unwrap();
        let model = train::load_model(&dir).unwrap();
        // 40 positions: more than one chunk of the fast path.
        let states = positions(g, 40);
        for kernel in train::kernels::Kernel::available() {
            let mut fast = train::FastNet::with_kernel(&model, kernel);
            for batch in [&states[..1], &states[..]] {
                let want = train::predict(&model, batch);
                let got = fast.predict(batch);
                for (a, b) in got.iter().zip(&want) {
                    let diff = a
                        .policy_logits
                        .iter()
                        .zip(&b.policy_logits)
                        .chain(a.wdl.iter().zip(&b.wdl))
                        .map(|(x, y)| (x - y).abs())
                        .fold((a.score - b.score).abs(), f32::max);
                    assert!(
                        diff <= 1e-4,
                        "{game}: fast path ({kernel:?}) differs from Burn by {diff}"
                    );
                }
            }
        }
    }
}

#[test]
fn export_replaces_the_temporary_files_of_a_killed_export() {
    let dir = model("ataxx", "stale-temps");
    let stale = [
        "model.safetensors.tmp",
        "model.safetensors.tmp.4242-0.tmp",
        ".model.onnx.4242.tmp",
    ];
    for name in stale {
        std::fs::write(dir.join(name), b"half written").unwrap();
    }
    std::fs::write(dir.join("notes.tmp"), b"not ours").unwrap();
    train::export(&dir, &dir).unwrap();
    for name in stale {
        assert!(!dir.join(name).exists(), "{name} left behind");
    }
    assert!(
        dir.join("notes.tmp").exists(),
        "a file that is not the export's was removed"
    );
    assert!(dir.join("model.safetensors").is_file());
}
