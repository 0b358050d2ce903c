//! Weights from elsewhere: an export's safetensors files (Burn's names and PyTorch's)
//! read back as model directories hold every tensor to the bit, and every malformed
//! file is refused with the file and the problem.

use std::path::Path;

use safetensors::{Dtype, tensor::TensorView};
use train::net::{Head, NamedTensors};
use train::{Naming, TrainConfig, import_weights, load_model};

use crate::export::{architectures, model_of, positions, temp};

fn tensors_of(dir: &Path) -> NamedTensors {
    NamedTensors::of(&load_model(dir).unwrap().net)
}

#[test]
fn exported_weights_import_to_the_bit_under_either_naming() {
    let short = |tc: TrainConfig| TrainConfig {
        steps: 3,
        warmup_steps: 1,
        ..tc
    };
    let arch = architectures();
    // Every head and pooling pattern, on each board family.
    let cases = [
        ("ataxx", short(arch[4].clone())),
        ("othello", short(arch[0].clone())),
        ("hexxagon", short(arch[1].clone())),
        ("annexation64", short(arch[3].clone())),
    ];
    for (game, tc) in cases {
        let dir = model_of(game, "import", tc);
        let exported = temp(&format!("import-export-{}", game));
        train::export(&dir, &exported).unwrap();
        let original = load_model(&dir).unwrap();
        let states = positions(original.game, 6);
        let want = train::predict(&original, &states);
        for (file, naming) in [
            ("model.safetensors", Naming::Burn),
            ("model.pytorch.safetensors", Naming::PyTorch),
        ] {
            let out = temp(&format!("import-{game}-{file}"));
            let imported = import_weights(&exported.join(file), original.game, &out).unwrap();
            assert_eq!(imported.naming, naming, "{game} {file}");
            assert_eq!(imported.network, original.meta.network, "{game} {file}");
            assert_eq!(tensors_of(&out), tensors_of(&dir), "{game} {file}");
            let got = train::predict(&load_model(&out).unwrap(), &states);
            for (g, w) in got.iter().zip(&want) {
                assert_eq!(g.policy_logits, w.policy_logits, "{game} {file}");
                assert_eq!((g.wdl, g.score), (w.wdl, w.score), "{game} {file}");
            }
            let _ = std::fs::remove_dir_all(&out);
        }
        let _ = std::fs::remove_dir_all(&exported);
    }
}

/// A tensor as a file holds it: name, dtype, shape, little-endian bytes.
type Raw = (String, Dtype, Vec<usize>, Vec<u8>);

/// A safetensors file of `tensors`.
fn safetensors_file(path: &Path, tensors: &[Raw]) {
    let views: Vec<(String, TensorView<'_>)> = tensors
        .iter()
        .map(|(n, d, s, b)| (n.clone(), TensorView::new(*d, s.clone(), b).unwrap()))
        .collect();
    safetensors::serialize_to_file(views, None, path).unwrap();
}

#[test]
fn malformed_weights_are_refused_naming_the_file_and_the_tensor() {
    let tc = TrainConfig {
        steps: 1,
        warmup_steps: 1,
        blocks: Some(2),
        channels: Some(8),
        gpool_every: Some(1),
        heads: vec![Head::Policy, Head::Wdl, Head::Score, Head::Ownership],
        ..TrainConfig::default()
    };
    let dir = model_of("ataxx", "import-refusals", tc);
    let good: Vec<Raw> = tensors_of(&dir)
        .iter()
        .map(|(n, s, v)| {
            let bytes = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            (n.to_string(), Dtype::F32, s.to_vec(), bytes)
        })
        .collect();
    let work = temp("import-refusals-work");
    std::fs::create_dir_all(&work).unwrap();
    let ataxx: engine::Game = "ataxx".parse().unwrap();
    let refused = |name: &str, tensors: &[Raw], game| {
        let file = work.join(format!("{name}.safetensors"));
        safetensors_file(&file, tensors);
        let out = work.join(format!("out-{name}"));
        let e = import_weights(&file, game, &out).unwrap_err().to_string();
        assert!(e.contains(&file.display().to_string()), "{name}: {e}");
        assert!(
            !out.join("model.bpk").exists(),
            "{name}: a model was written"
        );
        e
    };
    let edited = |f: &dyn Fn(&mut Vec<Raw>)| {
        let mut t = good.clone();
        f(&mut t);
        t
    };
    let e = refused("other-game", &good, "othello".parse().unwrap());
    assert!(e.contains("17 policy planes; othello has 1"), "{e}");
    let e = refused(
        "missing",
        &edited(&|t| t.retain(|x| x.0 != "value_fc.bias")),
        ataxx,
    );
    assert!(e.contains("no tensor `value_fc.bias`"), "{e}");
    let e = refused(
        "extra",
        &edited(&|t| t.push(("head.extra".into(), Dtype::F32, vec![1], vec![0; 4]))),
        ataxx,
    );
    assert!(e.contains("not part of the network: head.extra"), "{e}");
    let e = refused(
        "nan",
        &edited(&|t| {
            let w = t.iter_mut().find(|x| x.0 == "wdl_out.bias").unwrap();
            w.3[4..8].copy_from_slice(&f32::NAN.to_le_bytes());
        }),
        ataxx,
    );
    assert!(
        e.contains("`wdl_out.bias` holds a value that is not finite (at 1)"),
        "{e}"
    );
    let e = refused(
        "variance",
        &edited(&|t| {
            let w = t.iter_mut().find(|x| x.0 == "stem.bn.running_var").unwrap();
            w.3[0..4].copy_from_slice(&(-1.0f32).to_le_bytes());
        }),
        ataxx,
    );
    assert!(
        e.contains("`stem.bn.running_var` holds a negative variance (at 0)"),
        "{e}"
    );
    // Finite weights whose outputs are not usable: a stem of 3e38 (NaN and infinite
    // outputs at every position), and a WDL bias of 1e6 (finite, far out of range).
    let e = refused(
        "huge",
        &edited(&|t| {
            let w = t.iter_mut().find(|x| x.0 == "stem.conv.weight").unwrap();
            for c in w.3.chunks_exact_mut(4) {
                c.copy_from_slice(&3e38f32.to_le_bytes());
            }
        }),
        ataxx,
    );
    assert!(
        e.contains("a network whose outputs cannot be used: its policy logit")
            && e.contains("on check position 0"),
        "{e}"
    );
    // Huge weights on the blocked-cell plane alone: no start position has a blocked cell,
    // the check's blocker boards do.
    let e = refused(
        "blocked-plane",
        &edited(&|t| {
            let w = t.iter_mut().find(|x| x.0 == "stem.conv.weight").unwrap();
            let (planes, taps) = (w.2[1], w.2[2] * w.2[3]);
            for o in 0..w.2[0] {
                for k in 0..taps {
                    let at = ((o * planes + 2) * taps + k) * 4;
                    let v: f32 = if k % 2 == 0 { 3e38 } else { -3e38 };
                    w.3[at..at + 4].copy_from_slice(&v.to_le_bytes());
                }
            }
        }),
        ataxx,
    );
    assert!(e.contains("a network whose outputs cannot be used"), "{e}");
    assert!(
        (8..12).any(|i| e.contains(&format!("check position {i} ("))),
        "a blocker board's position: {e}"
    );
    let e = refused(
        "wdl-range",
        &edited(&|t| {
            let w = t.iter_mut().find(|x| x.0 == "wdl_out.bias").unwrap();
            w.3[0..4].copy_from_slice(&1e6f32.to_le_bytes());
        }),
        ataxx,
    );
    assert!(
        e.contains("its win/draw/loss logit is 10000") && e.contains("outside ±1e4"),
        "{e}"
    );
    let e = refused(
        "int",
        &edited(&|t| t.iter_mut().find(|x| x.0 == "stem.bn.beta").unwrap().1 = Dtype::I32),
        ataxx,
    );
    assert!(e.contains("`stem.bn.beta`: dtype I32"), "{e}");
    let e = refused(
        "shape",
        &edited(&|t| {
            let w = t.iter_mut().find(|x| x.0 == "wdl_out.weight").unwrap();
            w.2 = vec![w.2[1], w.2[0]];
        }),
        ataxx,
    );
    assert!(e.contains("`wdl_out.weight` has shape [3, 64]"), "{e}");
    let e = refused(
        "gpool",
        &edited(&|t| t.retain(|x| !x.0.starts_with("blocks.1.gpool"))),
        ataxx,
    );
    assert!(e.contains("block 1 needs one"), "{e}");
    let e = refused(
        "names",
        &edited(&|t| {
            for x in t.iter_mut() {
                x.0 = format!("net.{}", x.0);
            }
        }),
        ataxx,
    );
    assert!(e.contains("neither Burn's names nor PyTorch's"), "{e}");
    // Not safetensors at all, and a FIFO where the file belongs.
    let junk = work.join("junk.safetensors");
    std::fs::write(&junk, b"\xff\xff\xff\xff\xff\xff\xff\x7fnot a header").unwrap();
    let e = import_weights(&junk, ataxx, &work.join("out-junk"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a safetensors file"), "{e}");
    let fifo = work.join("fifo.safetensors");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let e = import_weights(&fifo, ataxx, &work.join("out-fifo"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("fifo.safetensors") && e.contains("not a regular file"),
        "{e}"
    );
    // A model already there is never overwritten: the good file into a model folder.
    let file = work.join("good.safetensors");
    safetensors_file(&file, &good);
    let before = std::fs::read(dir.join("model.bpk")).unwrap();
    let e = import_weights(&file, ataxx, &dir).unwrap_err().to_string();
    assert!(e.contains("model.json: already exists"), "{e}");
    assert_eq!(std::fs::read(dir.join("model.bpk")).unwrap(), before);
    // And the good file imports.
    let out = work.join("out-good");
    import_weights(&file, ataxx, &out).unwrap();
    assert_eq!(tensors_of(&out), tensors_of(&dir));
}

/// A model folder written by other means (not through `import`) whose weights are finite
/// but whose outputs are not usable is refused by every loader, naming its weights file:
/// `load_model` (infer, the players, export, Python), `load_init` (a run's `init`) and
/// `Network::load`.
#[test]
fn a_model_whose_outputs_cannot_be_used_is_refused_at_load() {
    let tc = TrainConfig {
        steps: 1,
        warmup_steps: 1,
        blocks: Some(1),
        channels: Some(8),
        ..TrainConfig::default()
    };
    let dir = model_of("ataxx", "load-check", tc);
    let model = load_model(&dir).unwrap();
    let mut named = NamedTensors::default();
    for (name, shape, values) in tensors_of(&dir).iter() {
        let values = if name == "policy_out.bias" {
            vec![2e4; values.len()]
        } else {
            values.to_vec()
        };
        named.insert(name.to_string(), shape.to_vec(), values);
    }
    let device = burn::prelude::Device::flex();
    let net = named.into_net(&model.meta.network, &device).unwrap();
    let bad = temp("load-check-bad");
    std::fs::create_dir_all(&bad).unwrap();
    let digest = train::store::save_net(&net, &bad.join("model.bpk")).unwrap();
    train::store::write_metadata(&bad, model.game, &model.meta.network, 0, 0, &digest).unwrap();
    let bpk = bad.join("model.bpk").display().to_string();
    let check = |e: String| {
        assert!(
            e.starts_with(&bpk)
                && e.contains("a network whose outputs cannot be used: the policy logit of")
                && e.contains("is 20000"),
            "{e}"
        );
    };
    check(load_model(&bad).err().unwrap().to_string());
    check(train::Network::load(&bad).err().unwrap().to_string());
    check(
        train::store::load_init(&bad, model.game, &model.meta.network)
            .err()
            .unwrap()
            .to_string(),
    );
}
