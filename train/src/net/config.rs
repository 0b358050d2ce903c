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
    /// Auxiliary heads beside policy, win/draw/loss and score (training targets only;
    /// play reads the three main heads). Absent from model.json when empty, so files
    /// written before heads were configurable read as they are.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aux_heads: Vec<Head>,
}

/// A head of the network. Policy, win/draw/loss and score are always there; the others
/// are auxiliary training targets (KataGo's), chosen by `[train] heads`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Head {
    /// The move probabilities (with the pass).
    Policy,
    /// Win/draw/loss logits.
    Wdl,
    /// The final score margin.
    Score,
    /// Each cell's owner at the end of the game, from the side to move's view (tanh).
    Ownership,
    /// The opponent's reply policy: the search policy of the position after the move.
    Reply,
}

impl Head {
    /// Every head, main ones first.
    pub const ALL: [Head; 5] = [
        Head::Policy,
        Head::Wdl,
        Head::Score,
        Head::Ownership,
        Head::Reply,
    ];

    /// Its name in configs and model.json.
    pub fn name(self) -> &'static str {
        match self {
            Head::Policy => "policy",
            Head::Wdl => "wdl",
            Head::Score => "score",
            Head::Ownership => "ownership",
            Head::Reply => "reply",
        }
    }

    /// Whether every network has it.
    pub fn is_main(self) -> bool {
        matches!(self, Head::Policy | Head::Wdl | Head::Score)
    }
}

impl std::fmt::Display for Head {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Head {
    type Err = String;

    fn from_str(s: &str) -> Result<Head, String> {
        Head::ALL
            .into_iter()
            .find(|h| h.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Head::ALL.iter().map(|h| h.name()).collect();
                format!("unknown head `{s}` (known: {})", names.join(", "))
            })
    }
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
            aux_heads: Vec::new(),
        })
    }

    /// Whether the network has head `h` (the main heads always).
    pub fn has_head(&self, h: Head) -> bool {
        h.is_main() || self.aux_heads.contains(&h)
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
