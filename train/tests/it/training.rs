//! Training end to end on small self-play data: the loss falls, augmented batches keep
//! their targets, a killed run resumes to the same losses, bad checkpoints are named.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use engine::{Game, Side, State};
use rundir::Scratch;
use selfplay::{BuiltinEvaluator, NetEngine, Sample, SelfplayConfig, ShardStream};
use train::data::{Batch, encode_sample, make_batch};
use train::ndarray::{Axis, arr1};
use train::net::{Head, PLANES};
use train::{TrainConfig, TrainError, TrainOptions, train};

fn temp(name: &str) -> Scratch {
    Scratch::temp("train", name)
}

/// A few hundred positions of bootstrap self-play for `game`, made once per test run.
fn data(game: &str) -> PathBuf {
    // Never dropped (a static): the next run removes them, their process gone.
    static DIRS: OnceLock<std::sync::Mutex<HashMap<String, Scratch>>> = OnceLock::new();
    let dirs = DIRS.get_or_init(Default::default);
    let mut dirs = dirs.lock().unwrap();
    dirs.entry(game.to_string())
        .or_insert_with(|| {
            let out = temp(&format!("data-{}", game.replace('/', "_")));
            let cfg = SelfplayConfig {
                game: game.into(),
                games: 5,
                threads: 1,
                games_per_thread: 5,
                evaluator: BuiltinEvaluator::Bootstrap,
                simulations: 32,
                fast_simulations: 8,
                full_search_fraction: 0.5,
                ..SelfplayConfig::default()
            };
            let e = cfg.evaluator;
            selfplay::run_selfplay(
                &cfg,
                &[],
                &move || e.build(),
                &out,
                &HashMap::new(),
                &|_| {},
            )
            .unwrap();
            out
        })
        .to_path_buf()
}

fn small_config(steps: u64) -> TrainConfig {
    TrainConfig {
        steps,
        batch_size: 64,
        learning_rate: 5e-3,
        warmup_steps: 10,
        final_lr_fraction: 0.2,
        weight_decay: 0.0,
        checkpoint_every: 10,
        ..TrainConfig::default()
    }
}

fn run(
    cfg: &TrainConfig,
    data: &Path,
    out: &Path,
    resume: bool,
    stop_after: Option<u64>,
) -> Result<train::TrainReport, TrainError> {
    let opts = TrainOptions {
        data: vec![data.to_path_buf()],
        out: out.to_path_buf(),
        resume,
        init: None,
        stop_after,
        on_step: &|_| {},
        on_warning: &|_| {},
    };
    train(cfg, "ataxx".parse().unwrap(), &opts)
}

fn losses(out: &Path) -> Vec<(u64, f64)> {
    std::fs::read_to_string(out.join("metrics.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].parse().unwrap(), f[2].parse().unwrap())
        })
        .collect()
}

#[test]
fn loss_falls_when_overfitting_a_few_hundred_positions() {
    let d = data("ataxx");
    let out = temp("overfit");
    let report = run(&small_config(200), &d, &out, false, None).unwrap();
    assert!(report.finished && report.window_rows > 100, "{report:?}");
    let l = losses(&out);
    assert_eq!(l.len(), 200);
    let first: f64 = l[..5].iter().map(|x| x.1).sum::<f64>() / 5.0;
    let last: f64 = l[190..].iter().map(|x| x.1).sum::<f64>() / 10.0;
    assert!(last < 0.55 * first, "loss {first:.3} -> {last:.3}");
    let m = report.last.unwrap();
    assert!(m.value_loss < 0.4 && m.policy_accuracy > 0.4, "{m:?}");
    // The finished model loads and evaluates.
    let model = train::load_model(&out).unwrap();
    let p = train::predict(&model, &[Game::startpos("ataxx".parse().unwrap())]);
    assert!((p[0].wdl.iter().sum::<f32>() - 1.0).abs() < 1e-4);
}

#[test]
fn augmented_samples_keep_their_targets_under_every_symmetry() {
    for game in ["ataxx", "hexxagon", "othello", "annexation64"] {
        let g: Game = game.parse().unwrap();
        let rows: Vec<selfplay::Sample> = ShardStream::open(&data(game)).unwrap().collect();
        let (w, h) = g.grid();
        let p = g.policy_size();
        for row in rows.iter().step_by(7) {
            let s = g.parse_position(&row.fen).unwrap();
            let syms = s.symmetries();
            let moves = s.legal_moves();
            for (k, sym) in syms.iter().enumerate() {
                let mut b = Batch::zeros(g, 1);
                encode_sample(
                    g,
                    row,
                    |n| {
                        assert_eq!(n, syms.len());
                        k
                    },
                    &mut b,
                    0,
                )
                .unwrap();
                let image = s.transform(sym);
                // The legal mask is exactly the image's legal moves.
                let mut want: Vec<usize> = image
                    .legal_moves()
                    .iter()
                    .map(|&m| image.policy_index(m))
                    .collect();
                want.sort();
                let got: Vec<usize> = (0..p).filter(|&i| b.legal[[0, i]] == 1.0).collect();
                assert_eq!(got, want, "{game} {} symmetry {k}", row.fen);
                // Each move's probability moved to its image's index.
                for (&idx, &prob) in row.legal.iter().zip(&row.policy) {
                    let m = moves
                        .iter()
                        .copied()
                        .find(|&m| s.policy_index(m) == idx as usize)
                        .unwrap();
                    assert_eq!(b.policy[[0, image.policy_index(sym.apply(m))]], prob);
                }
                // The input is the image's encoding.
                assert_eq!(b.inputs.index_axis(Axis(0), 0), train::net::encode(&image));
                assert_eq!(b.inputs.shape(), [1, PLANES, h, w]);
            }
        }
    }
}

/// The owner map of `board` from `side`'s view, grid cell `y * width + x`.
fn owners(board: &State, side: Side) -> Vec<f32> {
    let game = board.game();
    let (w, h) = game.grid();
    let mut out = vec![0.0; w * h];
    for cell in game.cells() {
        let (x, y) = game.grid_xy(cell);
        out[y * w + x] = match board.piece_at(cell) {
            Some(p) if p == side => 1.0,
            Some(_) => -1.0,
            None => 0.0,
        };
    }
    out
}

/// Each game's rows in play order, with the game's final position (the last row's
/// move, then the forced moves after it).
fn games_with_final(g: Game, rows: &[Sample]) -> Vec<(Vec<&Sample>, State)> {
    let mut games: BTreeMap<u64, Vec<&Sample>> = BTreeMap::new();
    for r in rows {
        games.entry(r.game_id).or_default().push(r);
    }
    games
        .into_values()
        .map(|mut samples| {
            samples.sort_by_key(|s| s.ply);
            let last = samples[samples.len() - 1];
            let mut board = g.parse_position(&last.fen).unwrap();
            let played = board
                .legal_moves()
                .into_iter()
                .find(|&m| board.policy_index(m) == last.played as usize)
                .unwrap();
            board.play(played);
            while !board.is_game_over() {
                board.play(board.legal_moves()[0]);
            }
            (samples, board)
        })
        .collect()
}

#[test]
fn auxiliary_targets_follow_the_rows_symmetry() {
    for game in ["ataxx", "hexxagon", "othello", "annexation64"] {
        let g: Game = game.parse().unwrap();
        let rows: Vec<Sample> = ShardStream::open(&data(game)).unwrap().collect();
        let (mut moved, mut replies, mut none) = (0, 0, 0);
        for (samples, fin) in games_with_final(g, &rows) {
            for (k, row) in samples.iter().enumerate().step_by(3) {
                let s = g.parse_position(&row.fen).unwrap();
                let side = s.side_to_move();
                let syms = s.symmetries();
                for (j, sym) in syms.iter().enumerate() {
                    let encode = |r: &Sample| {
                        let mut b = Batch::zeros(g, 1);
                        let pick = |n| {
                            assert_eq!(n, syms.len());
                            j
                        };
                        encode_sample(g, r, pick, &mut b, 0).unwrap();
                        b
                    };
                    let b = encode(row);
                    // Ownership under the symmetry is the transformed final board's.
                    let want = owners(&fin.transform(sym), side);
                    let got = b.ownership.as_slice().unwrap();
                    assert_eq!(got, want, "{game} {} symmetry {j}", row.fen);
                    assert_eq!(b.ownership_weight, arr1(&[1.0]));
                    moved += usize::from(want != owners(&fin, side));
                    // The reply target is the next row's policy under the same symmetry.
                    match samples.get(k + 1) {
                        Some(next) if !row.reply_legal.is_empty() => {
                            let bn = encode(next);
                            assert_eq!(b.reply_policy, bn.policy, "{game} {} {j}", row.fen);
                            assert_eq!(b.reply_weight, arr1(&[1.0]));
                            replies += 1;
                        }
                        _ => {
                            assert!(b.reply_policy.iter().all(|&v| v == 0.0));
                            assert_eq!(b.reply_weight, arr1(&[0.0]));
                            none += 1;
                        }
                    }
                }
            }
        }
        // Asymmetric final boards (so an untransformed grid would fail), and both kinds
        // of reply rows.
        assert!(
            moved > 10 && replies > 10 && none > 10,
            "{game}: {moved} {replies} {none}"
        );
    }
}

#[test]
fn batches_carry_auxiliary_targets_with_their_weights() {
    let g: Game = "hexxagon".parse().unwrap();
    let rows: Vec<Sample> = ShardStream::open(&data("hexxagon")).unwrap().collect();
    let (w, h) = g.grid();
    let (cells, p, n) = (w * h, g.policy_size(), 64);
    let b = make_batch(g, &rows, n, 3, 0).unwrap();
    assert_eq!(b.ownership.shape(), [n, h, w]);
    assert_eq!(b.ownership_weight.shape(), [n]);
    assert_eq!(b.reply_policy.shape(), [n, p]);
    assert_eq!(b.reply_weight.shape(), [n]);
    // Every game of the data ended by the rules: every row owns its final board.
    assert!(b.ownership_weight.iter().all(|&v| v == 1.0));
    let not_cells: Vec<usize> = (0..cells)
        .filter(|&i| g.cell_at((i % w) as i32, (i / w) as i32).is_none())
        .collect();
    assert!(!not_cells.is_empty());
    for i in 0..n {
        let own = b.ownership.index_axis(Axis(0), i);
        let own = own.as_slice().unwrap();
        assert!(own.iter().all(|v| [-1.0, 0.0, 1.0].contains(v)));
        assert!(not_cells.iter().all(|&c| own[c] == 0.0));
        assert!(own.iter().any(|&v| v != 0.0));
        let reply = b.reply_policy.row(i);
        let total: f32 = reply.iter().sum();
        match b.reply_weight[i] {
            1.0 => assert!((total - 1.0).abs() < 1e-4, "{total}"),
            0.0 => assert_eq!(total, 0.0),
            v => panic!("reply weight {v}"),
        }
    }
    let with_reply = b.reply_weight.iter().filter(|&&v| v == 1.0).count();
    assert!(with_reply > 0 && with_reply < n, "{with_reply}");
    // A row without targets (a version-1 shard's) has zero weights and zero targets.
    let old = Sample {
        ownership: Vec::new(),
        reply_legal: Vec::new(),
        reply_policy: Vec::new(),
        ..rows[0].clone()
    };
    let mut b = Batch::zeros(g, 1);
    encode_sample(g, &old, |_| 1, &mut b, 0).unwrap();
    assert_eq!((b.ownership_weight[0], b.reply_weight[0]), (0.0, 0.0));
    assert!(b.ownership.iter().chain(&b.reply_policy).all(|&v| v == 0.0));
}

#[test]
fn metrics_rows_come_every_metrics_every_steps_at_checkpoints_and_at_the_end() {
    let d = data("ataxx");
    for (device, every, want) in [
        ("cpu", 0, (1..=23).collect::<Vec<u64>>()),
        ("cpu", 4, vec![4, 8, 10, 12, 16, 20, 23]),
        ("flex", 6, vec![6, 10, 12, 18, 20, 23]),
    ] {
        let cfg = TrainConfig {
            device: device.into(),
            metrics_every: every,
            ..small_config(23)
        };
        let out = temp(&format!("rows-{device}-{every}"));
        let r = run(&cfg, &d, &out, false, None).unwrap();
        assert!(r.finished);
        let steps: Vec<u64> = losses(&out).iter().map(|x| x.0).collect();
        assert_eq!(steps, want, "{device}, metrics_every = {every}");
        // The last row is the last step's, and the report carries it.
        assert_eq!(r.last.unwrap().step, 23);
    }
    // 0 is every step on the CPU engines, every 20th on a GPU.
    let gpu = TrainConfig {
        device: "wgpu".into(),
        ..TrainConfig::default()
    };
    assert_eq!(gpu.metrics_interval(), 20);
    assert_eq!(TrainConfig::default().metrics_interval(), 1);
}

#[test]
fn a_killed_run_resumes_to_the_same_losses() {
    let d = data("ataxx");
    let cfg = small_config(40);
    let straight = temp("straight");
    run(&cfg, &d, &straight, false, None).unwrap();
    let resumed = temp("resumed");
    // "Killed" after 25 steps: the last checkpoint is step 20; steps 21–25 were logged.
    let r = run(&cfg, &d, &resumed, false, Some(25)).unwrap();
    assert!(!r.finished && r.steps == 25);
    assert!(!resumed.join("model.bpk").exists());
    let r = run(&cfg, &d, &resumed, true, None).unwrap();
    assert!(r.finished);
    let (a, b) = (losses(&straight), losses(&resumed));
    assert_eq!(a.len(), 40);
    assert_eq!(
        b.iter().map(|x| x.0).collect::<Vec<_>>(),
        (1..=40).collect::<Vec<_>>()
    );
    // Same batches, weights (bit for bit) and optimizer state, and the CPU engine sums in
    // a fixed order: every metrics row is the same text, but the samples/s timing.
    let rows = |dir: &Path| -> Vec<String> {
        std::fs::read_to_string(dir.join("metrics.csv"))
            .unwrap()
            .lines()
            .map(|l| l.rsplit_once(',').map_or(l, |(head, _)| head).to_string())
            .collect()
    };
    assert_eq!(rows(&straight), rows(&resumed));
    assert_eq!(a.len(), b.len());
}

#[test]
fn bad_checkpoints_are_named() {
    let d = data("ataxx");
    let cfg = small_config(20);
    let out = temp("bad-ckpt");
    run(&cfg, &d, &out, false, Some(10)).unwrap();
    // Leftovers of writes that were killed are ignored, and removed by the next run.
    std::fs::write(
        out.join("checkpoints").join(".step-00000020.tmp"),
        b"partial",
    )
    .unwrap();
    std::fs::write(out.join("checkpoints").join(".latest.999999.tmp"), b"p").unwrap();
    std::fs::write(out.join(".metrics.csv.999999.tmp"), b"p").unwrap();
    // A different setting is refused, naming the key.
    let other = TrainConfig {
        learning_rate: 1e-3,
        ..cfg.clone()
    };
    let e = run(&other, &d, &out, true, None).unwrap_err().to_string();
    assert!(
        e.contains("train.learning_rate") && e.contains("state.json"),
        "{e}"
    );
    for stale in [
        "checkpoints/.step-00000020.tmp",
        "checkpoints/.latest.999999.tmp",
        ".metrics.csv.999999.tmp",
    ] {
        assert!(!out.join(stale).exists(), "{stale} left behind");
    }
    // A corrupt optimizer state is moved aside with a warning naming the file, and the
    // run resumes from the checkpoint before it (here none: from the start) and ends.
    let optim = out.join("checkpoints/step-00000010/optim.bin");
    let bytes = std::fs::read(&optim).unwrap();
    std::fs::write(&optim, &bytes[..bytes.len() / 3]).unwrap();
    let r = run(&cfg, &d, &out, true, None).unwrap();
    assert!(r.finished);
    let w = r.warnings.join("\n");
    assert!(
        w.contains("optim.bin") && w.contains("corrupt-step-00000010"),
        "{w}"
    );
    assert!(
        out.join("checkpoints/corrupt-step-00000010/optim.bin")
            .is_file()
    );
    // Corrupt weights, likewise; an intact older checkpoint is resumed from.
    let killed = temp("bad-ckpt-weights");
    assert!(
        !run(&small_config(30), &d, &killed, false, Some(20))
            .unwrap()
            .finished
    );
    std::fs::write(
        killed.join("checkpoints/step-00000020/model.bpk"),
        b"garbage",
    )
    .unwrap();
    let r = run(&small_config(30), &d, &killed, true, None).unwrap();
    assert!(r.finished);
    let w = r.warnings.join("\n");
    assert!(
        w.contains("model.bpk") && w.contains("corrupt-step-00000020"),
        "{w}"
    );
    let rows = std::fs::read_to_string(killed.join("metrics.csv")).unwrap();
    // Steps 1..=10 from the first run, 11..=30 after resuming from step 10.
    assert_eq!(rows.lines().count(), 1 + 30, "{rows}");
    // A model directory with broken metadata.
    let bad = temp("bad-meta");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(bad.join("model.json"), "{}").unwrap();
    let e = train::load_model(&bad).err().unwrap().to_string();
    assert!(e.contains("model.json"), "{e}");
}

#[test]
fn burn_flex_engine_trains_and_resumes() {
    // `device = "flex"` trains with Burn's autodiff instead of the CPU engine; it keeps
    // its own optimizer file (optim.bpk) and resumes like the CPU engine.
    let d = data("ataxx");
    let cfg = TrainConfig {
        device: "flex".into(),
        checkpoint_every: 3,
        ..small_config(6)
    };
    let straight = temp("flex-straight");
    run(&cfg, &d, &straight, false, None).unwrap();
    let resumed = temp("flex-resumed");
    run(&cfg, &d, &resumed, false, Some(4)).unwrap();
    assert!(resumed.join("checkpoints/step-00000003/optim.bpk").exists());
    assert!(run(&cfg, &d, &resumed, true, None).unwrap().finished);
    let (a, b) = (losses(&straight), losses(&resumed));
    assert_eq!(a.len(), 6);
    for ((s, x), (_, y)) in a.iter().zip(&b) {
        assert!(
            (x - y).abs() <= 1e-4 * x.abs().max(1.0),
            "step {s}: {x} vs {y}"
        );
    }
}

#[test]
fn the_window_reads_only_the_newest_shards() {
    // Forty generations of shards: the window of a late generation must decode about
    // the window's rows, not the run's, and equal the newest rows of a full read.
    let rows: Vec<selfplay::Sample> = ShardStream::open(&data("ataxx")).unwrap().collect();
    assert!(rows.len() >= 100, "{} rows", rows.len());
    let root = temp("window");
    let per_shard = 25;
    let mut dirs = vec![];
    for g in 0..40 {
        let dir = root.join(format!("gen-{g:04}"));
        std::fs::create_dir_all(&dir).unwrap();
        for k in 0..2 {
            let start = (g * 2 + k) * 7 % (rows.len() - per_shard);
            let mut shard = rows[start..start + per_shard].to_vec();
            for r in &mut shard {
                r.game_id = (g * 2 + k) as u64;
            }
            let path = dir.join(format!("shard-{k:03}.parquet"));
            selfplay::data::write_shard(&path, &shard, &HashMap::new()).unwrap();
        }
        dirs.push(dir);
    }
    // A corrupt shard older than the window is never opened.
    std::fs::write(dirs[0].join("shard-000.parquet"), b"garbage").unwrap();
    let all: Vec<selfplay::Sample> = dirs
        .iter()
        .flat_map(|d| ShardStream::open(d).unwrap())
        .collect();
    for window in [1, 60, 100, 26] {
        let w = train::data::load_window(&dirs, window).unwrap();
        assert_eq!(w.rows.len(), window);
        assert_eq!(w.rows[..], all[all.len() - window..]);
        assert_eq!(
            w.decoded,
            window.div_ceil(per_shard) * per_shard,
            "window {window}"
        );
        assert!(w.skipped.is_empty(), "{:?}", w.skipped);
    }
    // A window larger than the data reads everything, and names the corrupt shard.
    let w = train::data::load_window(&dirs, 1_000_000).unwrap();
    assert_eq!(w.rows.len(), all.len());
    assert_eq!(w.decoded, 79 * per_shard);
    assert_eq!(w.skipped.len(), 1);
    assert!(w.skipped[0].contains("gen-0000"), "{:?}", w.skipped);
}

#[test]
fn flipped_bytes_in_weights_are_refused() {
    let d = data("ataxx");
    let cfg = small_config(10);
    let out = temp("digest");
    assert!(run(&cfg, &d, &out, false, None).unwrap().finished);
    let meta = train::read_metadata(&out).unwrap();
    assert_eq!(meta.version, 2);
    let bpk = std::fs::read(out.join("model.bpk")).unwrap();
    assert_eq!(meta.weights_sha256, train::store::sha256_hex(&bpk));
    train::load_model(&out).unwrap();
    // One flipped bit in a weight (past the header) is a named error, not a silent
    // network: the published model and the checkpoint alike.
    let flip = |path: &Path| {
        let mut b = std::fs::read(path).unwrap();
        let i = b.len() - 40;
        b[i] ^= 0x10;
        std::fs::write(path, &b).unwrap();
    };
    flip(&out.join("model.bpk"));
    let e = train::load_model(&out).err().unwrap().to_string();
    assert!(e.contains("model.bpk") && e.contains("digest"), "{e}");
    let more = TrainConfig {
        steps: 20,
        ..cfg.clone()
    };
    let killed = temp("digest-killed");
    assert!(!run(&more, &d, &killed, false, Some(10)).unwrap().finished);
    let ckpt = killed.join("checkpoints/step-00000010");
    let ckpt_bpk = std::fs::read(ckpt.join("model.bpk")).unwrap();
    flip(&ckpt.join("model.bpk"));
    // A flipped checkpoint is never loaded: moved aside with a warning that names the
    // file and the digest, and training starts over.
    let r = run(&more, &d, &killed, true, None).unwrap();
    let w = r.warnings.join("\n");
    assert!(
        w.contains("step-00000010/model.bpk") && w.contains("digest"),
        "{w}"
    );
    let moved = killed.join("checkpoints/corrupt-step-00000010");
    assert_eq!(
        std::fs::read(moved.join("model.bpk")).unwrap().len(),
        ckpt_bpk.len()
    );
    // Likewise the optimizer file.
    let killed = temp("digest-killed-optim");
    assert!(!run(&more, &d, &killed, false, Some(10)).unwrap().finished);
    flip(&killed.join("checkpoints/step-00000010/optim.bin"));
    let r = run(&more, &d, &killed, true, None).unwrap();
    let w = r.warnings.join("\n");
    assert!(w.contains("optim.bin") && w.contains("digest"), "{w}");
    assert!(r.finished);
    // A model of another game is refused as a starting point, naming both games.
    let hex = temp("digest-init");
    let opts = TrainOptions {
        data: vec![data("hexxagon")],
        out: hex.clone(),
        resume: false,
        init: Some(out.clone()),
        stop_after: None,
        on_step: &|_| {},
        on_warning: &|_| {},
    };
    std::fs::write(out.join("model.bpk"), &bpk).unwrap();
    let e = train(&small_config(2), "hexxagon".parse().unwrap(), &opts)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("ataxx") && e.contains("hexxagon"), "{e}");
}

#[test]
fn a_full_disk_stops_training_and_leaves_no_temporaries() {
    // A 160 KiB file system (tmpfs, mounted as root as in CI): the first checkpoint's
    // weights do not fit. Where mounting is not allowed, the test says so and stops.
    let d = data("ataxx");
    let out = temp("full-disk");
    std::fs::create_dir_all(&out).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=160k", "tmpfs"])
        .arg(out.path())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("cannot mount a tmpfs here (not root?): full-disk test not run");
        return;
    }
    let cfg = small_config(20);
    let result = run(&cfg, &d, &out, false, None);
    let mut left = vec![];
    for dir in [out.clone(), out.join("checkpoints")] {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.ends_with(".tmp") {
                left.push(name);
            }
        }
    }
    let latest = out.join("checkpoints/latest").exists();
    let _ = std::process::Command::new("umount")
        .arg(out.path())
        .status();
    let e = result.unwrap_err().to_string();
    assert!(e.contains("No space left on device"), "{e}");
    assert!(left.is_empty(), "left behind: {left:?}");
    assert!(!latest, "no checkpoint was completed, none may be named");
}

#[test]
fn edited_metadata_and_checkpoint_pointers_are_refused() {
    let d = data("ataxx");
    let cfg = small_config(20);
    let out = temp("edited");
    assert!(!run(&cfg, &d, &out, false, Some(10)).unwrap().finished);
    // checkpoints/latest: unreadable, or naming anything but a checkpoint folder of this
    // model: passed over with a warning naming it; the checkpoint folders are resumed
    // from (step 10 here: ten more steps logged, not twenty).
    for bad in [&b"\xff\xfe"[..], b"../../..\n", b"step-\n", b"/etc\n"] {
        let dir = temp("edited-latest");
        assert!(!run(&cfg, &d, &dir, false, Some(10)).unwrap().finished);
        std::fs::write(dir.join("checkpoints/latest"), bad).unwrap();
        let r = run(&cfg, &d, &dir, true, None).unwrap();
        let w = r.warnings.join("\n");
        assert!(w.contains("checkpoints/latest"), "{bad:?}: {w}");
        let rows = std::fs::read_to_string(dir.join("metrics.csv")).unwrap();
        assert_eq!(rows.lines().count(), 1 + 20, "{bad:?}: {rows}");
    }
    assert!(run(&cfg, &d, &out, true, None).unwrap().finished);
    // model.json edited: every shape field is checked against the game and the limits.
    let json = std::fs::read_to_string(out.join("model.json")).unwrap();
    let meta: serde_json::Value = serde_json::from_str(&json).unwrap();
    let edits: [(&str, serde_json::Value, &str); 5] = [
        ("/network/blocks", 100_000_000.into(), "network.blocks"),
        ("/game", "hexxagon".into(), "a hexxagon network"),
        ("/policy_size", 7.into(), "policy_size"),
        ("/network/policy_planes", 1.into(), "network.policy_planes"),
        ("/width", 8.into(), "width"),
    ];
    for (pointer, value, expect) in edits {
        let mut m = meta.clone();
        *m.pointer_mut(pointer).unwrap() = value;
        std::fs::write(out.join("model.json"), m.to_string()).unwrap();
        let e = train::load_model(&out).err().unwrap().to_string();
        assert!(
            e.contains("model.json") && e.contains(expect),
            "{pointer}: {e}"
        );
    }
}

#[test]
fn a_net_the_cpu_engine_cannot_train_is_refused_by_name_and_burn_trains_and_plays_it() {
    let d = data("ataxx");
    let heads = vec![
        Head::Policy,
        Head::Wdl,
        Head::Score,
        Head::Ownership,
        Head::Reply,
    ];
    let cpu = TrainConfig {
        heads: heads.clone(),
        ..small_config(4)
    };
    let out = temp("reply-cpu");
    let err = run(&cpu, &d, &out, false, None).unwrap_err().to_string();
    // Refused when the config is checked, before any data is read (the engine itself
    // refuses it by tensor name too: backend::cpu's tests).
    assert!(
        err.contains("train.heads")
            && err.contains("reply")
            && err.contains("train.device = \"flex\""),
        "{err}"
    );
    assert!(!out.join("model.bpk").exists());
    // Burn's engine trains it; the model records its heads and plays with either
    // evaluator (the fast path reads only the main heads).
    let flex = TrainConfig {
        device: "flex".into(),
        ..cpu
    };
    let out = temp("reply-flex");
    assert!(run(&flex, &d, &out, false, None).unwrap().finished);
    let model = train::load_model(&out).unwrap();
    assert_eq!(model.meta.network.aux_heads, [Head::Ownership, Head::Reply]);
    for engine in [NetEngine::Burn, NetEngine::Fast] {
        let make = train::infer::evaluators(&model, "reply", engine, "cpu").unwrap();
        let cfg = SelfplayConfig {
            games: 2,
            threads: 1,
            games_per_thread: 2,
            simulations: 8,
            fast_simulations: 4,
            max_plies: 40,
            ..SelfplayConfig::default()
        };
        let shards = temp(&format!("reply-play-{engine}"));
        let report =
            selfplay::run_selfplay(&cfg, &[], &make, &shards, &HashMap::new(), &|_| {}).unwrap();
        assert_eq!(report.games, 2, "{engine}");
    }
    // A device no build has is refused with the reason and the way to a GPU, not a panic.
    let Err(e) = train::infer::evaluators(&model, "reply", NetEngine::Burn, "cuda") else {
        panic!("cuda in a build without it");
    };
    assert!(
        e.to_string().contains("CUDA backend") && e.to_string().contains("--features wgpu"),
        "{e}"
    );
}

#[test]
fn surprising_rows_are_sampled_in_proportion_to_their_weight() {
    use train::data::epoch_rows;
    // 1,000 rows of each surprise 0, 1, 2, 3 with policy targets, and 1,000 without.
    let rows: Vec<Sample> = (0..5000)
        .map(|i| Sample {
            full_search: i % 5 != 4,
            surprise: if i % 5 == 4 { 0.0 } else { (i % 5) as f32 },
            ..Sample::default()
        })
        .collect();
    let ident: Vec<u32> = (0..5000).collect();
    assert_eq!(epoch_rows(&rows, 0.0, 7), ident);
    let order = epoch_rows(&rows, 0.5, 7);
    assert_eq!(order, epoch_rows(&rows, 0.5, 7), "drawn from the seed");
    let mut counts = [0usize; 5];
    for &i in &order {
        counts[i as usize % 5] += 1;
    }
    // w = 0.5 + 0.5 · surprise / 1.5 (the mean of 0, 1, 2, 3): 0.5, 0.83, 1.17, 1.5;
    // each row's extra copy is a coin with p = w − ⌊w⌋, so the count of 1,000 rows is
    // within 4 standard deviations of 1,000 · w. Rows without a policy target once each.
    for (k, w) in [0.5, 5.0 / 6.0, 7.0 / 6.0, 1.5f64].into_iter().enumerate() {
        let p = w - w.floor();
        let sd = (1000.0 * p * (1.0 - p)).sqrt();
        let got = counts[k] as f64;
        assert!(
            (got - 1000.0 * w).abs() <= 4.0 * sd,
            "surprise {k}: {got} vs {}",
            1000.0 * w
        );
    }
    assert_eq!(counts[4], 1000);
    // Every row with weight ≥ 1 appears at least once.
    for (i, r) in rows.iter().enumerate() {
        if r.surprise >= 1.5 {
            assert!(order.contains(&(i as u32)), "row {i}");
        }
    }
}

/// Burn's wgpu backend against the CPU (in CI on Mesa's lavapipe, a software Vulkan
/// driver; `make test-wgpu`, or `make test FEATURES=wgpu` as CI runs it): from the same
/// initial weights, training on wgpu gives Flex's losses, and the trained model moved to
/// wgpu gives the fast path's outputs and plays self-play games through the evaluators a
/// worker builds with `selfplay.device`.
#[cfg(feature = "wgpu")]
#[test]
fn wgpu_trains_as_flex_does_and_plays_as_the_fast_path_does() {
    let d = data("ataxx");
    // Random weights are drawn on the device (another generator on a GPU): start both
    // from one model trained on the CPU.
    let init = temp("gpu-init");
    run(&small_config(3), &d, &init, false, None).unwrap();
    let from_init = |device: &str, out: &Path| {
        // A small step size: at 5e-3 this net's losses jump by 0.5 between steps, and
        // the float rounding of the two backends (equal to 1e-6 for three steps) grows
        // to 1e-3 by step 8; at 5e-4 they stay within 2e-6 (relative) over 8 steps (the
        // bound, 2e-5, leaves room for lavapipe's code on other CPUs).
        let cfg = TrainConfig {
            device: device.into(),
            checkpoint_every: 100,
            learning_rate: 5e-4,
            // A row every step on both devices (a GPU's default is every 20th).
            metrics_every: 1,
            ..small_config(8)
        };
        let opts = TrainOptions {
            data: vec![d.clone()],
            out: out.to_path_buf(),
            resume: false,
            init: Some(init.clone()),
            stop_after: None,
            on_step: &|_| {},
            on_warning: &|_| {},
        };
        train(&cfg, "ataxx".parse().unwrap(), &opts).unwrap();
        losses(out)
    };
    let (flex, gpu) = (temp("gpu-flex"), temp("gpu-wgpu"));
    let (a, b) = (from_init("flex", &flex), from_init("wgpu", &gpu));
    assert_eq!(a.len(), 8);
    assert_eq!(b.len(), 8);
    eprintln!("flex vs wgpu losses: {a:?} {b:?}");
    for ((s, x), (_, y)) in a.iter().zip(&b) {
        assert!(
            (x - y).abs() <= 2e-5 * x.abs().max(1.0),
            "step {s}: flex {x} vs wgpu {y}"
        );
    }
    let model = train::load_model(&gpu).unwrap();
    let device = train::training_device("wgpu").unwrap();
    let diff = train::FastNet::new(&model).difference_from_burn(&model.to_device(&device));
    eprintln!("wgpu vs the fast path: {diff:e}");
    assert!(diff < 2e-5, "wgpu differs from the fast path by {diff:e}");
    let make = train::infer::evaluators(&model, "wgpu", NetEngine::Burn, "wgpu").unwrap();
    let cfg = SelfplayConfig {
        games: 4,
        threads: 1,
        games_per_thread: 4,
        simulations: 8,
        fast_simulations: 4,
        max_plies: 40,
        net_engine: NetEngine::Burn,
        device: "wgpu".into(),
        ..SelfplayConfig::default()
    };
    let shards = temp("gpu-play");
    let report =
        selfplay::run_selfplay(&cfg, &[], &make, &shards, &HashMap::new(), &|_| {}).unwrap();
    assert_eq!(report.games, 4);
    let Err(e) = train::infer::evaluators(&model, "wgpu", NetEngine::Fast, "wgpu") else {
        panic!("the fast path on a GPU is refused");
    };
    assert!(e.to_string().contains("runs on the CPU"), "{e}");
}
