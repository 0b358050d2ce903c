//! The tunable settings of the play-time MCTS (`mcts:…:cpuct=1.3,fpu=0.25,endgame=3,lazy=1`,
//! the UAI options `CPuct`, `FpuReduction`, `EndgameEmpties`, and `flipzero tune`).

use std::fmt;

use selfplay::MctsConfig;

/// Settings of a player's search; the defaults are the play-time search's
/// ([`MctsConfig::for_play`]: named `mcts:` players, `flipzero uai`, the browser),
/// tuned by matches; [`SearchParams::self_play`] are the self-play search's.
#[derive(Clone, Copy, Debug)]
pub struct SearchParams {
    /// PUCT's exploration constant.
    pub c_puct: f32,
    /// First-play urgency reduction.
    pub fpu_reduction: f32,
    /// Leaves with at most this many cells left to fill go to the endgame solver (0: off).
    pub endgame_empties: u32,
    /// Leaves expanded on their second visit ([`MctsConfig::lazy_expansion`]).
    pub lazy_expansion: bool,
}

impl Default for SearchParams {
    fn default() -> Self {
        SearchParams::of(&MctsConfig::for_play())
    }
}

// Compared by value, bit for bit (the values are parsed finite numbers).
impl PartialEq for SearchParams {
    fn eq(&self, o: &Self) -> bool {
        self.c_puct.to_bits() == o.c_puct.to_bits()
            && self.fpu_reduction.to_bits() == o.fpu_reduction.to_bits()
            && self.endgame_empties == o.endgame_empties
            && self.lazy_expansion == o.lazy_expansion
    }
}

impl Eq for SearchParams {}

/// The keys [`SearchParams::set`] knows, with their ranges.
pub const PARAM_KEYS: &str =
    "cpuct (0.01..=20), fpu (0..=2), endgame (0..=8 cells left to fill), lazy (0 or 1)";

impl SearchParams {
    /// The self-play search's settings ([`MctsConfig`]'s defaults): the loop's gating
    /// and anchor matches play these, so that a recorded run replays as it was run.
    pub fn self_play() -> SearchParams {
        SearchParams::of(&MctsConfig::default())
    }

    /// The settings of `cfg`.
    fn of(cfg: &MctsConfig) -> SearchParams {
        SearchParams {
            c_puct: cfg.c_puct,
            fpu_reduction: cfg.fpu_reduction,
            endgame_empties: cfg.endgame_empties,
            lazy_expansion: cfg.lazy_expansion,
        }
    }

    /// Sets `key` to `value`; `Err` names the key's range when either is wrong,
    /// `Ok(false)` when `key` is no search setting.
    pub fn set(&mut self, key: &str, value: &str) -> Result<bool, String> {
        let bad = || format!("`{key}={value}`: expected {PARAM_KEYS}");
        let float = |lo: f32, hi: f32| {
            value
                .parse::<f32>()
                .ok()
                .filter(|x| x.is_finite() && (lo..=hi).contains(x))
                .ok_or_else(bad)
        };
        match key {
            "cpuct" => self.c_puct = float(0.01, 20.0)?,
            "fpu" => self.fpu_reduction = float(0.0, 2.0)?,
            "endgame" => {
                self.endgame_empties = value.parse().ok().filter(|n| *n <= 8).ok_or_else(bad)?;
            }
            "lazy" => {
                self.lazy_expansion = match value {
                    "0" => false,
                    "1" => true,
                    _ => return Err(bad()),
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// These settings in `cfg`.
    pub fn apply(&self, cfg: &mut MctsConfig) {
        cfg.c_puct = self.c_puct;
        cfg.fpu_reduction = self.fpu_reduction;
        cfg.endgame_empties = self.endgame_empties;
        cfg.lazy_expansion = self.lazy_expansion;
    }

    /// The settings that differ from the defaults, as `key=value` (the spec's order).
    pub fn parts(&self) -> Vec<String> {
        let d = SearchParams::default();
        let mut out = Vec::new();
        if self.c_puct.to_bits() != d.c_puct.to_bits() {
            out.push(format!("cpuct={}", self.c_puct));
        }
        if self.fpu_reduction.to_bits() != d.fpu_reduction.to_bits() {
            out.push(format!("fpu={}", self.fpu_reduction));
        }
        if self.endgame_empties != d.endgame_empties {
            out.push(format!("endgame={}", self.endgame_empties));
        }
        if self.lazy_expansion != d.lazy_expansion {
            out.push(format!("lazy={}", u8::from(self.lazy_expansion)));
        }
        out
    }
}

impl fmt::Display for SearchParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cpuct={},fpu={},endgame={},lazy={}",
            self.c_puct,
            self.fpu_reduction,
            self.endgame_empties,
            u8::from(self.lazy_expansion)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_set_their_field_within_range_and_print_back() {
        let mut p = SearchParams::default();
        assert_eq!(p.set("cpuct", "1.25"), Ok(true));
        assert_eq!(p.set("endgame", "3"), Ok(true));
        assert_eq!(p.set("sims", "3"), Ok(false));
        assert!(p.set("cpuct", "nan").unwrap_err().contains("cpuct"));
        assert!(p.set("fpu", "-1").is_err());
        assert!(p.set("endgame", "9").is_err());
        assert_eq!(p.parts(), ["cpuct=1.25", "endgame=3"]);
        let mut cfg = MctsConfig::default();
        p.apply(&mut cfg);
        assert_eq!((cfg.c_puct, cfg.endgame_empties), (1.25, 3));
    }
}
