//! Named rule sets of the Ataxx family.

use std::fmt;
use std::str::FromStr;

use crate::geometry::{ASSIMILATION_7X7, ATAXX_7X7, Geometry, HEXXAGON, THOMAS_7X7};

/// Movement rules and board of an Ataxx-family game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Variant {
    /// Standard Ataxx, 7×7: clone to the 8 neighbours, jump to the 16 cells at distance 2.
    Ataxx,
    /// Assimilation / Infection, 7×7: jumps only in straight lines (8 targets).
    Assimilation,
    /// Thomas / Nutsy Ataxx, 7×7 (reconstructed rules): orthogonal clones (4), orthogonal
    /// jumps (4), and only the 4 orthogonal neighbours of the target flip.
    Thomas,
    /// Hexxagon: hexagonal board of side 5 with d4, e6, f4 blocked at the start.
    Hexxagon,
}

impl Variant {
    /// Every variant.
    pub const ALL: [Variant; 4] = [
        Variant::Ataxx,
        Variant::Assimilation,
        Variant::Thomas,
        Variant::Hexxagon,
    ];

    /// The precomputed board and neighbourhoods of the variant.
    #[inline]
    pub fn geometry(self) -> &'static Geometry {
        match self {
            Variant::Ataxx => &ATAXX_7X7,
            Variant::Assimilation => &ASSIMILATION_7X7,
            Variant::Thomas => &THOMAS_7X7,
            Variant::Hexxagon => &HEXXAGON,
        }
    }

    /// The variant's part of a game name (`ataxx`, `ataxx/assimilation`, …).
    pub const fn name(self) -> &'static str {
        match self {
            Variant::Ataxx => "ataxx",
            Variant::Assimilation => "ataxx/assimilation",
            Variant::Thomas => "ataxx/thomas",
            Variant::Hexxagon => "hexxagon",
        }
    }

    /// The standard starting position in the variant's text format.
    pub const fn start_fen(self) -> &'static str {
        match self {
            Variant::Ataxx | Variant::Assimilation | Variant::Thomas => "x5o/7/7/7/7/7/o5x x 0 1",
            Variant::Hexxagon => "o3x/6/7/3-4/x4-2o/3-4/7/6/o3x x 0 1",
        }
    }
}

/// Default half-move clock value at which a game is adjudicated, as in the engine community.
pub const DEFAULT_HALFMOVE_LIMIT: u16 = 100;

/// A complete rule set: movement rules and board, win condition, adjudication.
///
/// Selected by one name, the same in every command and config:
///
/// ```
/// use engine::Rules;
/// let r: Rules = "ataxx/misere".parse().unwrap();
/// assert!(r.misere);
/// assert_eq!(r.to_string(), "ataxx/misere");
/// assert!("chess".parse::<Rules>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rules {
    /// Board and movement rules.
    pub variant: Variant,
    /// Misère ("a perdere"): fewest pieces wins; a side wiped out holds 0 pieces and so wins
    /// (reconstructed rule, see RULES.md).
    pub misere: bool,
    /// The game ends as a draw when the half-move clock reaches this value (unless another
    /// ending holds at the same time, when the piece count decides); 0 turns it off.
    pub halfmove_limit: u16,
}

impl Rules {
    /// Standard Ataxx with adjudication at 100 half-moves.
    pub const ATAXX: Rules = Rules::new(Variant::Ataxx);

    /// The non-misère rule set of `variant`, with the default half-move limit.
    pub const fn new(variant: Variant) -> Rules {
        Rules {
            variant,
            misere: false,
            halfmove_limit: DEFAULT_HALFMOVE_LIMIT,
        }
    }

    /// Every game name accepted by [`Rules::from_str`].
    pub const NAMES: [&'static str; 8] = [
        "ataxx",
        "ataxx/misere",
        "ataxx/assimilation",
        "ataxx/assimilation/misere",
        "ataxx/thomas",
        "ataxx/thomas/misere",
        "hexxagon",
        "hexxagon/misere",
    ];

    /// The precomputed board and neighbourhoods.
    #[inline]
    pub fn geometry(self) -> &'static Geometry {
        self.variant.geometry()
    }
}

impl fmt::Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.variant.name())?;
        if self.misere {
            f.write_str("/misere")?;
        }
        Ok(())
    }
}

/// A game name that names no rule set.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown game `{name}`; known games: {}", Rules::NAMES.join(", "))]
pub struct UnknownGame {
    /// The name given.
    pub name: String,
}

impl FromStr for Rules {
    type Err = UnknownGame;

    fn from_str(s: &str) -> Result<Rules, UnknownGame> {
        let lower = s.trim().to_ascii_lowercase();
        let (base, misere) = match lower.strip_suffix("/misere") {
            Some(b) => (b, true),
            None => (lower.as_str(), false),
        };
        let variant = Variant::ALL
            .into_iter()
            .find(|v| v.name() == base)
            .ok_or_else(|| UnknownGame {
                name: s.to_string(),
            })?;
        Ok(Rules {
            misere,
            ..Rules::new(variant)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_and_prints_back() {
        for n in Rules::NAMES {
            assert_eq!(n.parse::<Rules>().unwrap().to_string(), n);
        }
        let err = "ataxx/foo".parse::<Rules>().unwrap_err().to_string();
        assert!(
            err.contains("ataxx/foo") && err.contains("hexxagon/misere"),
            "{err}"
        );
    }
}
