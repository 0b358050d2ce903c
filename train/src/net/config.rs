//! A network's shape (`NetConfig`): what model.json records and `[train]` sets.

use serde::{Deserialize, Serialize};

use crate::net::PLANES;

/// Shape of a network. `Serialize`d into model.json.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetConfig {
    /// Residual blocks.
    pub blocks: usize,
    /// Channels of the tower.
    pub channels: usize,
    /// Every n-th block adds a global-pooling bias (KataGo); 0 = none.
    pub gpool_every: usize,
    /// Channels of the policy and value heads.
    pub head_channels: usize,
    /// Hidden units of the value head.
    pub value_hidden: usize,
    /// Input planes (see `encode`).
    pub in_planes: usize,
    /// Policy planes: 1 + jump offsets for the Ataxx family, 1 for outflanking games.
    pub policy_planes: usize,
}

impl NetConfig {
    /// A preset by name (`tiny` 4×32, `small` 6×64, `standard` 10×128) for a game with
    /// `policy_planes` policy planes.
    pub fn preset(name: &str, policy_planes: usize) -> Option<NetConfig> {
        let (blocks, channels) = match name {
            "tiny" => (4, 32),
            "small" => (6, 64),
            "standard" => (10, 128),
            _ => return None,
        };
        Some(NetConfig {
            blocks,
            channels,
            gpool_every: 3,
            head_channels: 32,
            value_hidden: 64,
            in_planes: PLANES,
            policy_planes,
        })
    }

    /// The first shape setting outside what this version trains and runs: its key (as
    /// `[train]` names it), its value and the allowed range, as text. `[train]` settings
    /// and model.json files are both held to these limits.
    pub fn out_of_range(&self) -> Option<(&'static str, usize, &'static str)> {
        [
            ("blocks", self.blocks, 1..=64, "1..=64"),
            ("channels", self.channels, 4..=1024, "4..=1024"),
            ("gpool_every", self.gpool_every, 0..=64, "0 (none) ..=64"),
            ("head_channels", self.head_channels, 1..=1024, "1..=1024"),
            ("value_hidden", self.value_hidden, 1..=4096, "1..=4096"),
        ]
        .into_iter()
        .find(|(_, v, range, _)| !range.contains(v))
        .map(|(key, v, _, allowed)| (key, v, allowed))
    }
}
