//! The network's description (`NetConfig::tensors`) is the Burn module's own list of
//! tensors, for every shape the config can ask for.

use std::collections::BTreeMap;

use burn::prelude::*;
use burn::store::{ModuleSnapshot, SafetensorsStore};
use engine::Game;
use train::NetConfig;
use train::net::{Head, PLANES};

/// Name → shape of every tensor Burn stores for `net`, read from the safetensors header.
fn burn_tensors(cfg: &NetConfig) -> BTreeMap<String, Vec<usize>> {
    let net = cfg.init(&Device::flex());
    let mut store = SafetensorsStore::from_bytes(None);
    net.save_into(&mut store).unwrap();
    let bytes = store.get_bytes().unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: serde_json::Value = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    header
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| *k != "__metadata__")
        .map(|(k, v)| {
            let shape = v["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap() as usize)
                .collect();
            (k.clone(), shape)
        })
        .collect()
}

fn shapes(game: Game) -> Vec<NetConfig> {
    let base = NetConfig::preset("tiny", game.policy_planes()).unwrap();
    vec![
        base.clone(),
        NetConfig {
            blocks: 5,
            channels: 20,
            gpool_every: 0,
            head_channels: 12,
            value_hidden: 24,
            ..base.clone()
        },
        NetConfig {
            blocks: 2,
            gpool_every: 1,
            head_channels: 48,
            value_hidden: 8,
            ..base.clone()
        },
        NetConfig::preset("standard", game.policy_planes()).unwrap(),
        NetConfig {
            aux_heads: vec![Head::Ownership],
            ..base.clone()
        },
        NetConfig {
            aux_heads: vec![Head::Ownership, Head::Reply],
            gpool_every: 2,
            ..base.clone()
        },
    ]
}

#[test]
fn the_description_lists_the_modules_tensors() {
    for game in ["ataxx", "hexxagon", "othello"] {
        let game: Game = game.parse().unwrap();
        for cfg in shapes(game) {
            let described: BTreeMap<String, Vec<usize>> = cfg
                .tensors()
                .into_iter()
                .map(|t| (t.name, t.shape))
                .collect();
            assert_eq!(described, burn_tensors(&cfg), "{game} {cfg:?}");
            let counted: usize = cfg
                .tensors()
                .iter()
                .filter(|t| !t.name.contains("running_"))
                .map(|t| t.len())
                .sum();
            assert_eq!(cfg.parameter_count(), counted);
        }
    }
}

#[test]
fn parameter_counts_and_costs_of_the_presets() {
    // Worked by hand for tiny on Ataxx (4 blocks of 32 channels, gpool in block 2,
    // heads of 32, value hidden 64, 17 policy planes, 7x7 grid).
    let game: Game = "ataxx".parse().unwrap();
    let tiny = NetConfig::preset("tiny", game.policy_planes()).unwrap();
    assert_eq!(tiny.policy_planes, 17);
    let stem = PLANES * 32 * 9 + 2 * 32;
    let block = 2 * (32 * 32 * 9 + 2 * 32);
    let gpool = 32 * 32 + 32;
    let policy = 32 * 32 + 2 * 32 + 32 * 17 + 17 + 32 + 1;
    let value = 32 * 32 + 2 * 32 + 32 * 64 + 64 + 64 * 3 + 3 + 64 + 1;
    assert_eq!(
        tiny.parameter_count(),
        stem + 4 * block + gpool + policy + value
    );
    let cells = 49u64;
    let flops = tiny.flops_per_position(49);
    let convs = 2 * 9 * (PLANES as u64 * 32 + 8 * 32 * 32) * cells;
    assert!(
        flops > convs && flops < convs + convs / 10,
        "{flops} vs {convs}"
    );
    let text = tiny.describe(game);
    assert!(text.contains("4 residual blocks of 32 channels"), "{text}");
    assert!(text.contains("global pooling in blocks: 2"), "{text}");
    assert!(
        text.contains(&format!("parameters {}", tiny.parameter_count())),
        "{text}"
    );
}

/// Every weight of `net`, in the description's order, as bits (the safetensors data
/// without its header, which carries nothing drawn at random).
fn weight_bits(net: &train::Net) -> Vec<u32> {
    let mut store = SafetensorsStore::from_bytes(None);
    net.save_into(&mut store).unwrap();
    let bytes = store.get_bytes().unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    bytes[8 + n..]
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn a_seeded_net_is_the_same_whatever_other_threads_initialise() {
    // Burn's random state is one per process; a run's first net must not depend on what
    // another thread (another test, a bench) initialises between its seed and its draws.
    let cfg = NetConfig::preset("tiny", "ataxx".parse::<Game>().unwrap().policy_planes()).unwrap();
    let alone = weight_bits(&cfg.init_seeded(&Device::flex(), 11));
    let stop = std::sync::atomic::AtomicBool::new(false);
    let seeded: Vec<Vec<u32>> = std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let _ = cfg.init(&Device::flex());
                }
            });
        }
        let seeded = (0..20)
            .map(|_| weight_bits(&cfg.init_seeded(&Device::flex(), 11)))
            .collect();
        // Stopped before any assertion, so that a failure fails instead of hanging.
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        seeded
    });
    for (i, w) in seeded.iter().enumerate() {
        assert!(
            *w == alone,
            "initialisation {i} with seed 11 drew other weights"
        );
    }
    let other = weight_bits(&cfg.init_seeded(&Device::flex(), 12));
    assert_ne!(other, alone, "the seed must change the weights");
}
