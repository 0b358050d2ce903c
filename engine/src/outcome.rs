//! What both families of games share about players and outcomes: the two sides, why a
//! game ended, and its result.

/// One of the two players.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Side {
    /// The first player (`x`; Black in Italian sources, Red on Youzai).
    X = 0,
    /// The second player (`o`; White / Blue).
    O = 1,
}

impl Side {
    /// Both sides, first player first.
    pub const BOTH: [Side; 2] = [Side::X, Side::O];

    /// The opponent.
    #[inline]
    pub const fn other(self) -> Side {
        match self {
            Side::X => Side::O,
            Side::O => Side::X,
        }
    }

    /// 0 for `x`, 1 for `o`.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The side's letter in FEN and notation.
    pub const fn char(self) -> char {
        match self {
            Side::X => 'x',
            Side::O => 'o',
        }
    }
}

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EndReason {
    /// No empty playable cell is left.
    FullBoard,
    /// One side has no pieces left.
    WipeOut,
    /// Neither side can move, with empty cells left (walled-off regions), or both sides
    /// have no pieces.
    NoMoves,
    /// The half-move clock reached the rule set's limit: adjudicated a draw.
    HalfmoveCap,
}

impl EndReason {
    /// A short lowercase name (`full-board`, `wipe-out`, `no-moves`, `halfmove-cap`).
    pub const fn name(self) -> &'static str {
        match self {
            EndReason::FullBoard => "full-board",
            EndReason::WipeOut => "wipe-out",
            EndReason::NoMoves => "no-moves",
            EndReason::HalfmoveCap => "halfmove-cap",
        }
    }
}

/// The result of a finished game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GameResult {
    /// The winner, or `None` for a draw.
    pub winner: Option<Side>,
    /// Pieces on the board at the end: `[x, o]`.
    pub counts: [u32; 2],
    /// The margin from the first player's (`x`) view: positive when `x` won. It is the
    /// piece difference (in misère, `o`'s count minus `x`'s); a wipe-out scores as if
    /// the winner held every playable cell (±49 on the plain board); adjudicated draws
    /// score 0.
    pub score: i32,
    /// Why the game ended.
    pub reason: EndReason,
}

impl GameResult {
    /// The result of a game that ended for `reason` (not the half-move cap) with
    /// `counts = [x, o]` on a board of `playable` cells: more pieces wins (fewer in
    /// misère), and a wipe-out scores as if the winner held every playable cell.
    pub fn scored(counts: [u32; 2], reason: EndReason, playable: u32, misere: bool) -> GameResult {
        let mut margin = counts[0] as i32 - counts[1] as i32;
        if reason == EndReason::WipeOut {
            margin = margin.signum() * playable as i32;
        }
        if misere {
            margin = -margin;
        }
        let winner = match margin.signum() {
            1 => Some(Side::X),
            -1 => Some(Side::O),
            _ => None,
        };
        GameResult {
            winner,
            counts,
            score: margin,
            reason,
        }
    }
}
