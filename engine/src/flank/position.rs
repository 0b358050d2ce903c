//! Positions of the outflanking games: rules, Zobrist keys, move generation, make-move
//! and the result.

use super::bits::{Bits, DIRECTIONS, fill, fill128, to_u128};
use super::boards::{BoardId, FlankBoard};
use crate::rng::splitmix64;
use crate::{EndReason, GameResult, Side};

/// The opening phase of the game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Free placements on the four central cells, no flips.
    Place,
    /// Outflanking play.
    Play,
}

/// Rules of an outflanking game: the board and whether fewest pieces wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlankRules {
    /// The board (shape, setup, supplies).
    pub board: BoardId,
    /// Misère: fewest pieces wins.
    pub misere: bool,
}

/// Supply value meaning "no limit".
pub(crate) const UNLIMITED: u16 = u16::MAX;

const fn flank_keys() -> ([[u64; 256]; 2], u64, u64) {
    let mut k = [[0u64; 256]; 2];
    let mut st = 0xF1A2_C0DE_0BAD_5EEDu64;
    let mut i = 0;
    while i < 256 {
        let (s, a) = splitmix64(st);
        let (s, b) = splitmix64(s);
        k[0][i] = a;
        k[1][i] = b;
        st = s;
        i += 1;
    }
    let (s, side) = splitmix64(st);
    let (_, phase) = splitmix64(s);
    (k, side, phase)
}

static KEYS: ([[u64; 256]; 2], u64, u64) = flank_keys();

#[inline]
fn supply_key(side: usize, supply: u16) -> u64 {
    splitmix64(0x5u64 << 60 ^ (side as u64) << 32 ^ supply as u64).1
}

/// A position of an outflanking game.
///
/// ```
/// use engine::flank::{BoardId, FlankPosition, FlankRules};
/// let rules = FlankRules { board: BoardId::Othello, misere: false };
/// let p = FlankPosition::startpos(rules);
/// assert_eq!(p.legal_moves().len(), 4);
/// assert_eq!(p.text(), "othello 8/8/8/3ox3/3xo3/8/8/8 x play - - 0");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlankPosition {
    pieces: [Bits; 2],
    hash: u64,
    supply: [u16; 2],
    side: Side,
    phase: Phase,
    passes: u8,
    rules: FlankRules,
}

/// A move of an outflanking game: a cell index, or the pass.
pub type FlankMove = Option<usize>;

impl FlankPosition {
    /// The standard start of the board.
    pub fn startpos(rules: FlankRules) -> FlankPosition {
        let b = rules.board.board();
        let s = b.supply.unwrap_or(UNLIMITED);
        let phase = if b.placement_phase {
            Phase::Place
        } else {
            Phase::Play
        };
        Self::from_parts(rules, b.setup, Side::X, phase, [s, s], 0)
    }

    pub(crate) fn from_parts(
        rules: FlankRules,
        pieces: [Bits; 2],
        side: Side,
        phase: Phase,
        supply: [u16; 2],
        passes: u8,
    ) -> FlankPosition {
        let mut p = FlankPosition {
            pieces,
            hash: 0,
            supply,
            side,
            phase,
            passes,
            rules,
        };
        p.hash = p.compute_hash();
        p
    }

    /// The rules.
    #[inline]
    pub fn rules(&self) -> FlankRules {
        self.rules
    }

    /// The board data.
    #[inline]
    pub fn board(&self) -> &'static FlankBoard {
        self.rules.board.board()
    }

    /// Pieces of `side`.
    #[inline]
    pub fn pieces(&self, side: Side) -> Bits {
        self.pieces[side.index()]
    }

    /// Side to move.
    #[inline]
    pub fn side_to_move(&self) -> Side {
        self.side
    }

    /// The phase.
    #[inline]
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Pieces `side` may still place (`None`: no limit).
    #[inline]
    pub fn supply(&self, side: Side) -> Option<u16> {
        let s = self.supply[side.index()];
        (s != UNLIMITED).then_some(s)
    }

    /// Consecutive passes just played.
    #[inline]
    pub fn passes(&self) -> u8 {
        self.passes
    }

    /// Empty cells.
    #[inline]
    pub fn empty(&self) -> Bits {
        self.board().cells & !(self.pieces[0] | self.pieces[1])
    }

    /// The Zobrist hash (incremental; equals [`FlankPosition::compute_hash`]).
    #[inline]
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// The hash from scratch: pieces, side, phase and supplies.
    pub fn compute_hash(&self) -> u64 {
        let mut h = 0;
        for s in 0..2 {
            for i in self.pieces[s].iter() {
                h ^= KEYS.0[s][i];
            }
            h ^= supply_key(s, self.supply[s]);
        }
        if self.side == Side::O {
            h ^= KEYS.1;
        }
        if self.phase == Phase::Place {
            h ^= KEYS.2;
        }
        h
    }

    /// The cells where `side` may place now (the pass aside).
    #[inline]
    pub fn placements(&self, side: Side) -> Bits {
        if self.supply[side.index()] == 0 {
            return Bits::EMPTY;
        }
        let empty = self.empty();
        if self.phase == Phase::Place {
            return self.board().centre & empty;
        }
        let own = self.pieces[side.index()];
        let opp = self.pieces[side.other().index()];
        if self.board().fits_u128 {
            let (o, p, e) = (to_u128(own), to_u128(opp), to_u128(empty));
            let m = fill128::<1>(o, p, e)
                | fill128::<-1>(o, p, e)
                | fill128::<16>(o, p, e)
                | fill128::<-16>(o, p, e)
                | fill128::<17>(o, p, e)
                | fill128::<15>(o, p, e)
                | fill128::<-15>(o, p, e)
                | fill128::<-17>(o, p, e);
            return Bits([m as u64, (m >> 64) as u64, 0, 0]);
        }
        fill::<1>(own, opp, empty)
            | fill::<-1>(own, opp, empty)
            | fill::<16>(own, opp, empty)
            | fill::<-16>(own, opp, empty)
            | fill::<17>(own, opp, empty)
            | fill::<15>(own, opp, empty)
            | fill::<-15>(own, opp, empty)
            | fill::<-17>(own, opp, empty)
    }

    /// Whether the game is over: the board is full, or neither side can place.
    #[inline]
    pub fn is_game_over(&self) -> bool {
        self.empty().is_empty()
            || (self.placements(self.side).is_empty()
                && self.placements(self.side.other()).is_empty())
    }

    /// Legal moves: empty when the game is over; `[None]` (the pass) when the side to
    /// move cannot place; otherwise the placement cells in increasing index order.
    pub fn legal_moves(&self) -> Vec<FlankMove> {
        let own = self.placements(self.side);
        if !own.is_empty() {
            return own.iter().map(Some).collect();
        }
        if self.empty().is_empty() || self.placements(self.side.other()).is_empty() {
            Vec::new()
        } else {
            vec![None]
        }
    }

    /// Number of legal moves (bulk counting; equals `legal_moves().len()`).
    #[inline]
    pub fn count_moves(&self) -> u64 {
        let n = self.placements(self.side).len() as u64;
        if n > 0 {
            n
        } else {
            u64::from(!self.empty().is_empty() && !self.placements(self.side.other()).is_empty())
        }
    }

    /// Whether `mv` is legal.
    pub fn is_legal(&self, mv: FlankMove) -> bool {
        match mv {
            Some(i) => self.placements(self.side).has(i),
            None => self.legal_moves() == [None],
        }
    }

    /// Plays `mv` (which must be legal).
    pub fn play(&mut self, mv: FlankMove) {
        debug_assert!(self.is_legal(mv), "illegal {mv:?} in {}", self.text());
        let us = self.side.index();
        match mv {
            None => self.passes = self.passes.saturating_add(1),
            Some(i) => {
                self.passes = 0;
                let flips = if self.phase == Phase::Play {
                    self.flips(i)
                } else {
                    Bits::EMPTY
                };
                self.pieces[us] |= Bits::single(i) | flips;
                self.pieces[us ^ 1] ^= flips;
                self.hash ^= KEYS.0[us][i];
                for f in flips.iter() {
                    self.hash ^= KEYS.0[0][f] ^ KEYS.0[1][f];
                }
                let s = self.supply[us];
                if s != UNLIMITED {
                    self.hash ^= supply_key(us, s) ^ supply_key(us, s - 1);
                    self.supply[us] = s - 1;
                }
                if self.phase == Phase::Place && (self.board().centre & self.empty()).is_empty() {
                    self.phase = Phase::Play;
                    self.hash ^= KEYS.2;
                }
            }
        }
        self.side = self.side.other();
        self.hash ^= KEYS.1;
    }

    /// The image of the position under a permutation of cell indices (a board symmetry).
    pub fn transformed(&self, map: &[u8]) -> FlankPosition {
        let m = |b: Bits| {
            b.iter()
                .fold(Bits::EMPTY, |acc, i| acc | Bits::single(map[i] as usize))
        };
        let pieces = [m(self.pieces[0]), m(self.pieces[1])];
        Self::from_parts(
            self.rules,
            pieces,
            self.side,
            self.phase,
            self.supply,
            self.passes,
        )
    }

    /// The enemy pieces a placement on `i` flips (play phase).
    pub fn flips(&self, i: usize) -> Bits {
        let own = self.pieces[self.side.index()];
        let opp = self.pieces[self.side.other().index()];
        if self.board().fits_u128 {
            let (own, opp) = (to_u128(own), to_u128(opp));
            let mut flips = 0u128;
            for d in DIRECTIONS {
                let step = |x: u128| if d > 0 { x << d } else { x >> -d };
                let mut run = 0u128;
                let mut x = step(1u128 << i);
                while x & opp != 0 {
                    run |= x;
                    x = step(x);
                }
                if x & own != 0 {
                    flips |= run;
                }
            }
            return Bits([flips as u64, (flips >> 64) as u64, 0, 0]);
        }
        let mut flips = Bits::EMPTY;
        for d in DIRECTIONS {
            let mut run = Bits::EMPTY;
            let mut x = Bits::single(i).step(d);
            while !(x & opp).is_empty() {
                run |= x;
                x = x.step(d);
            }
            if !(x & own).is_empty() {
                flips |= run;
            }
        }
        flips
    }

    /// The result if the game is over.
    pub fn result(&self) -> Option<GameResult> {
        if !self.is_game_over() {
            return None;
        }
        let counts = [self.pieces[0].len(), self.pieces[1].len()];
        let reason = if (counts[0] == 0) != (counts[1] == 0) {
            EndReason::WipeOut
        } else if self.empty().is_empty() {
            EndReason::FullBoard
        } else {
            EndReason::NoMoves
        };
        Some(GameResult::scored(
            counts,
            reason,
            self.board().num_cells(),
            self.rules.misere,
        ))
    }
}
