//! Positions of the Ataxx family: move generation, make-move, game end and result.

use std::fmt;

use arrayvec::ArrayVec;

use crate::geometry::{Geometry, MAX_CELLS};
use crate::movegen::Kernel;
use crate::movegen::with_kernel;
use crate::zobrist::ZOBRIST;
use crate::{Bitboard, EndReason, GameResult, Rules, Side, Square};

/// A move: a clone onto a cell, a jump from one cell to another, or a pass.
///
/// Printed in the engine community's notation through [`Move::display`]: a clone is its
/// target (`g2`), a jump is source then target (`g1e3`), a pass is `0000`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Move {
    from: u8,
    to: u8,
}

/// What a [`Move`] does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MoveKind {
    /// A new piece appears on `to`; the source stays.
    Clone {
        /// Target cell.
        to: Square,
    },
    /// The piece on `from` moves to `to`.
    Jump {
        /// Source cell.
        from: Square,
        /// Target cell.
        to: Square,
    },
    /// The side to move has no legal move and passes.
    Pass,
}

impl Move {
    /// The pass.
    pub const PASS: Move = Move {
        from: 0xFF,
        to: 0xFF,
    };

    /// A clone onto `to`.
    #[inline]
    pub const fn clone_to(to: Square) -> Move {
        Move {
            from: to.index() as u8,
            to: to.index() as u8,
        }
    }

    /// A jump from `from` to `to` (`from` ≠ `to`).
    #[inline]
    pub const fn jump(from: Square, to: Square) -> Move {
        debug_assert!(from.index() != to.index());
        Move {
            from: from.index() as u8,
            to: to.index() as u8,
        }
    }

    /// What the move does.
    #[inline]
    pub const fn kind(self) -> MoveKind {
        if self.from == 0xFF {
            MoveKind::Pass
        } else if self.from == self.to {
            MoveKind::Clone {
                to: Square::new(self.to),
            }
        } else {
            MoveKind::Jump {
                from: Square::new(self.from),
                to: Square::new(self.to),
            }
        }
    }

    /// Whether the move is the pass.
    #[inline]
    pub const fn is_pass(self) -> bool {
        self.from == 0xFF
    }

    /// The target cell (`None` for the pass).
    #[inline]
    pub const fn to(self) -> Option<Square> {
        if self.from == 0xFF {
            None
        } else {
            Some(Square::new(self.to))
        }
    }

    /// The move as 16 bits (source cell high, target low), for tables that store moves
    /// compactly; [`Move::from_bits`] reads it back.
    #[inline]
    pub const fn to_bits(self) -> u16 {
        (self.from as u16) << 8 | self.to as u16
    }

    /// The move whose [`Move::to_bits`] is `bits` (any 16 bits make some move; whether it
    /// is legal is the position's business).
    #[inline]
    pub const fn from_bits(bits: u16) -> Move {
        Move {
            from: (bits >> 8) as u8,
            to: bits as u8,
        }
    }

    /// The move in notation on `geometry`'s board.
    pub fn display(self, geometry: &Geometry) -> MoveDisplay<'_> {
        MoveDisplay { mv: self, geometry }
    }
}

/// A [`Move`] printed in notation for a given board (see [`Move::display`]).
pub struct MoveDisplay<'a> {
    mv: Move,
    geometry: &'a Geometry,
}

impl fmt::Display for MoveDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.mv.kind() {
            MoveKind::Pass => f.write_str("0000"),
            MoveKind::Clone { to } => f.write_str(&self.geometry.square_name(to)),
            MoveKind::Jump { from, to } => {
                write!(
                    f,
                    "{}{}",
                    self.geometry.square_name(from),
                    self.geometry.square_name(to)
                )
            }
        }
    }
}

/// Capacity of a [`MoveList`]: at most one clone per cell plus one jump per (cell, jump
/// target) pair; a test checks that every board stays below it.
pub const MAX_MOVES: usize = 832;

/// The legal moves of a position, without heap allocation.
pub type MoveList = ArrayVec<Move, MAX_MOVES>;

/// What a move changed on the board: the hook that an evaluator updating incrementally
/// (an NNUE-style accumulator over piece-on-cell features) follows. A clone or jump puts a
/// piece of `mover` on `placed`; a jump empties `vacated`; every cell of `flipped` turns
/// from the opponent's piece to the mover's. A pass changes no cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MoveDelta {
    /// The side that moved.
    pub mover: Side,
    /// The cell that received a new piece of the mover; `None` for the pass.
    pub placed: Option<Square>,
    /// The cell a jump left, now empty; `None` for clones and the pass.
    pub vacated: Option<Square>,
    /// The enemy pieces that flipped to the mover.
    pub flipped: Bitboard,
}

/// What [`Position::unmake`] needs to take a move back: the move's [`MoveDelta`] and the
/// hash and clocks before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Undo {
    delta: MoveDelta,
    hash: u64,
    halfmove: u16,
    fullmove: u16,
}

impl Undo {
    /// What the move changed on the board.
    #[inline]
    pub fn delta(&self) -> &MoveDelta {
        &self.delta
    }
}

/// XOR of the keys of every cell of `b` in table `keys`.
#[inline]
fn keys_of(keys: &[u64; MAX_CELLS], b: Bitboard) -> u64 {
    b.iter().fold(0, |h, s| h ^ keys[s.index()])
}

/// A position of an Ataxx-family game: pieces, blocked cells, side to move, clocks and the
/// rule set. Small and `Copy`: [`Position::after`] returns the position after a move,
/// [`Position::play`] updates it in place, and [`Position::make`] / [`Position::unmake`]
/// play a move and take it back, reporting what changed ([`MoveDelta`]) for evaluators
/// that follow the board incrementally.
///
/// ```
/// use engine::{Position, Rules};
/// let mut pos = Position::startpos(Rules::ATAXX);
/// assert_eq!(pos.legal_moves().len(), 16);
/// let mv = pos.parse_move("g2").unwrap();
/// pos.play(mv);
/// assert_eq!(pos.fen(), "x5o/7/7/7/7/6x/o5x o 0 1");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Position {
    pub(crate) pieces: [Bitboard; 2],
    pub(crate) blocked: Bitboard,
    pub(crate) hash: u64,
    pub(crate) halfmove: u16,
    pub(crate) fullmove: u16,
    pub(crate) side: Side,
    pub(crate) rules: Rules,
}

impl Position {
    /// Builds a position from its parts, computing the hash; `None` if a piece lies on a
    /// blocked cell, both sides share a cell, or a set holds a cell the board lacks.
    pub fn from_parts(
        rules: Rules,
        x: Bitboard,
        o: Bitboard,
        blocked: Bitboard,
        side: Side,
        halfmove: u16,
        fullmove: u16,
    ) -> Option<Position> {
        let cells = rules.geometry().cells;
        let all = x | o | blocked;
        if !(x & o).is_empty() || !((x | o) & blocked).is_empty() || !(all & !cells).is_empty() {
            return None;
        }
        let mut p = Position {
            pieces: [x, o],
            blocked,
            hash: 0,
            halfmove,
            fullmove,
            side,
            rules,
        };
        p.hash = p.compute_hash();
        Some(p)
    }

    /// The standard starting position of the rule set.
    pub fn startpos(rules: Rules) -> Position {
        Position::from_fen(rules.variant.start_fen(), rules)
            .expect("built-in start positions parse")
    }

    /// The rule set.
    #[inline]
    pub fn rules(&self) -> Rules {
        self.rules
    }

    /// The board and neighbourhood tables.
    #[inline]
    pub fn geometry(&self) -> &'static Geometry {
        self.rules.geometry()
    }

    /// The side to move.
    #[inline]
    pub fn side_to_move(&self) -> Side {
        self.side
    }

    /// The pieces of `side`.
    #[inline]
    pub fn pieces(&self, side: Side) -> Bitboard {
        self.pieces[side.index()]
    }

    /// The blocked cells.
    #[inline]
    pub fn blocked(&self) -> Bitboard {
        self.blocked
    }

    /// The empty playable cells.
    #[inline]
    pub fn empty(&self) -> Bitboard {
        self.geometry().cells & !(self.pieces[0] | self.pieces[1] | self.blocked)
    }

    /// Playable (not blocked) cells.
    #[inline]
    pub fn playable(&self) -> Bitboard {
        self.geometry().cells & !self.blocked
    }

    /// Half-move clock: moves since the last clone (jumps and passes count).
    #[inline]
    pub fn halfmove_clock(&self) -> u16 {
        self.halfmove
    }

    /// Full-move number, starting at 1 and incremented after `o` moves.
    #[inline]
    pub fn fullmove_number(&self) -> u16 {
        self.fullmove
    }

    /// The Zobrist hash, kept up to date incrementally.
    #[inline]
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// The Zobrist hash computed from scratch (equals [`Position::hash`]).
    pub fn compute_hash(&self) -> u64 {
        let z = &ZOBRIST;
        let mut h = keys_of(&z.pieces[0], self.pieces[0])
            ^ keys_of(&z.pieces[1], self.pieces[1])
            ^ keys_of(&z.blocked, self.blocked);
        if self.side == Side::O {
            h ^= z.side;
        }
        h
    }

    /// Whether `side` has a move other than the pass.
    #[inline]
    pub fn can_move(&self, side: Side) -> bool {
        let (own, empty) = (self.pieces[side.index()].0, self.empty().0);
        with_kernel!(self.rules.variant, K => K::can_move(own, empty))
    }

    #[inline(always)]
    pub(crate) fn can_move_k<K: Kernel>(&self, side: Side) -> bool {
        K::can_move(self.pieces[side.index()].0, self.empty().0)
    }

    /// Whether the game is over (see [`Position::result`] for the conditions).
    #[inline]
    pub fn is_game_over(&self) -> bool {
        self.end_reason().is_some()
    }

    fn end_reason(&self) -> Option<EndReason> {
        let [x, o] = self.pieces;
        let empty = self.empty();
        if x.is_empty() || o.is_empty() {
            if x.is_empty() && o.is_empty() {
                return Some(EndReason::NoMoves);
            }
            return Some(EndReason::WipeOut);
        }
        if empty.is_empty() {
            return Some(EndReason::FullBoard);
        }
        let stuck = with_kernel!(self.rules.variant, K => {
            !K::can_move(x.0, empty.0) && !K::can_move(o.0, empty.0)
        });
        if stuck {
            return Some(EndReason::NoMoves);
        }
        let limit = self.rules.halfmove_limit;
        if limit > 0 && self.halfmove >= limit {
            return Some(EndReason::HalfmoveCap);
        }
        None
    }

    /// The result if the game is over, else `None`.
    ///
    /// The game ends when a side has no pieces (wipe-out), no empty playable cell is left
    /// (full board), neither side can move, or — with adjudication on — the half-move
    /// clock reaches the limit (a draw, unless one of the other endings also holds).
    pub fn result(&self) -> Option<GameResult> {
        let reason = self.end_reason()?;
        let counts = [self.pieces[0].len(), self.pieces[1].len()];
        if reason == EndReason::HalfmoveCap {
            return Some(GameResult {
                winner: None,
                counts,
                score: 0,
                reason,
            });
        }
        Some(GameResult::scored(
            counts,
            reason,
            self.playable().len(),
            self.rules.misere,
        ))
    }

    /// Calls `f` for every legal move other than the pass: clones by target cell, then
    /// jumps by source and target cell.
    #[inline(always)]
    pub(crate) fn for_each_nonpass_k<K: Kernel>(&self, mut f: impl FnMut(Move)) {
        let own = self.pieces[self.side.index()].0;
        let empty = self.empty().0;
        let mut clones = K::clone_targets(own) & empty;
        while clones != 0 {
            f(Move::clone_to(Square::new(clones.trailing_zeros() as u8)));
            clones &= clones - 1;
        }
        let mut from = own;
        while from != 0 {
            let s = from.trailing_zeros() as usize;
            let mut to = K::GEOMETRY.jump[s].0 & empty;
            while to != 0 {
                f(Move {
                    from: s as u8,
                    to: to.trailing_zeros() as u8,
                });
                to &= to - 1;
            }
            from &= from - 1;
        }
    }

    /// Calls `f` for every legal move, in the order of [`Position::legal_moves`]: nothing
    /// when the game is over, only the pass when the side to move has no other move. No
    /// list is built.
    #[inline(always)]
    pub fn for_each_legal(&self, mut f: impl FnMut(Move)) {
        with_kernel!(self.rules.variant, K => self.for_each_legal_k::<K>(&mut f))
    }

    #[inline(always)]
    pub(crate) fn for_each_legal_k<K: Kernel>(&self, mut f: impl FnMut(Move)) {
        if self.is_trivially_over() {
            return;
        }
        let mut any = false;
        self.for_each_nonpass_k::<K>(|m| {
            any = true;
            f(m)
        });
        if !any && K::can_move(self.pieces[self.side.other().index()].0, self.empty().0) {
            f(Move::PASS);
        }
    }

    /// The legal moves: empty when the game is over, only the pass when the side to move
    /// has no other move.
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        self.legal_moves_into(&mut list);
        list
    }

    /// [`Position::legal_moves`] written into `out` (cleared first), a list the caller
    /// keeps (on its stack, or from node to node), so nothing is copied or allocated.
    #[inline]
    pub fn legal_moves_into(&self, out: &mut MoveList) {
        out.clear();
        // Every board has fewer moves than the list holds (a test checks it).
        self.for_each_legal(|m| out.push(m));
    }

    /// The number of legal moves, counted without generating them (bulk counting).
    /// Equal to `legal_moves().len()`.
    #[inline]
    pub fn count_moves(&self) -> u64 {
        with_kernel!(self.rules.variant, K => self.count_moves_k::<K>())
    }

    #[inline(always)]
    pub(crate) fn count_moves_k<K: Kernel>(&self) -> u64 {
        if self.is_trivially_over() {
            return 0;
        }
        let own = self.pieces[self.side.index()].0;
        let opp = self.pieces[self.side.other().index()].0;
        let empty = self.empty().0;
        let n = K::count(own, empty);
        if n > 0 {
            u64::from(n)
        } else {
            u64::from(K::can_move(opp, empty))
        }
    }

    /// Whether the game is over for a reason that needs no move generation: a side
    /// without pieces, a full board, or the half-move limit.
    #[inline]
    pub(crate) fn is_trivially_over(&self) -> bool {
        let limit = self.rules.halfmove_limit;
        self.pieces[0].is_empty()
            || self.pieces[1].is_empty()
            || self.empty().is_empty()
            || (limit > 0 && self.halfmove >= limit)
    }

    /// Whether `mv` is legal here.
    pub fn is_legal(&self, mv: Move) -> bool {
        self.check_legal(mv).is_ok()
    }

    /// Why `mv` is illegal here, or `Ok`.
    pub fn check_legal(&self, mv: Move) -> Result<(), IllegalMove> {
        if let Some(r) = self.end_reason() {
            return Err(IllegalMove::GameOver(r));
        }
        let g = self.geometry();
        let own = self.pieces[self.side.index()];
        let empty = self.empty();
        match mv.kind() {
            MoveKind::Pass => {
                if self.can_move(self.side) {
                    Err(IllegalMove::PassWithMoves)
                } else {
                    Ok(())
                }
            }
            MoveKind::Clone { to } | MoveKind::Jump { to, .. }
                if to.index() >= g.num_cells as usize || !empty.has(to) =>
            {
                Err(IllegalMove::TargetNotEmpty)
            }
            MoveKind::Clone { to } => {
                if own.iter().any(|s| g.clone[s.index()].has(to)) {
                    Ok(())
                } else {
                    Err(IllegalMove::NoCloneSource)
                }
            }
            MoveKind::Jump { from, to } => {
                if from.index() >= g.num_cells as usize || !own.has(from) {
                    Err(IllegalMove::NotOwnPiece)
                } else if !g.jump[from.index()].has(to) {
                    Err(IllegalMove::NotAJump)
                } else {
                    Ok(())
                }
            }
        }
    }

    /// Plays `mv`, which must be legal (checked only in debug builds; see
    /// [`Position::try_play`]).
    #[inline]
    pub fn play(&mut self, mv: Move) {
        debug_assert!(self.is_legal(mv), "illegal move {mv:?} in {}", self.fen());
        with_kernel!(self.rules.variant, K => { self.play_k::<true, K>(mv); })
    }

    /// Passes the turn whether or not the side to move has a move: a null move, which
    /// searches play to learn what the opponent would do with two moves in a row. The
    /// half-move clock and the hash change as for a pass.
    #[inline]
    pub fn null_move(&mut self) {
        with_kernel!(self.rules.variant, K => { self.play_k::<true, K>(Move::PASS); })
    }

    /// Plays `mv` if it is legal; otherwise leaves the position unchanged and says why.
    pub fn try_play(&mut self, mv: Move) -> Result<(), IllegalMove> {
        self.check_legal(mv)?;
        with_kernel!(self.rules.variant, K => { self.play_k::<true, K>(mv); });
        Ok(())
    }

    /// The position after `mv` (which must be legal).
    #[inline]
    pub fn after(&self, mv: Move) -> Position {
        let mut p = *self;
        p.play(mv);
        p
    }

    /// Plays `mv` (which must be legal, checked only in debug builds) and returns what
    /// [`Position::unmake`] needs to take it back, with what changed on the board
    /// ([`Undo::delta`]).
    ///
    /// ```
    /// use engine::{Position, Rules, Side};
    /// let mut pos = Position::from_fen("x5o/7/7/7/7/5o1/o5x x 0 1", Rules::ATAXX).unwrap();
    /// let before = pos;
    /// let undo = pos.make(pos.parse_move("g2").unwrap());
    /// let d = undo.delta();
    /// assert_eq!(d.mover, Side::X);
    /// assert_eq!(d.placed.map(|s| pos.geometry().square_name(s)), Some("g2".into()));
    /// assert_eq!(d.vacated, None);
    /// assert_eq!(d.flipped.len(), 1); // f2
    /// pos.unmake(&undo);
    /// assert_eq!(pos, before);
    /// ```
    #[inline]
    pub fn make(&mut self, mv: Move) -> Undo {
        debug_assert!(self.is_legal(mv), "illegal move {mv:?} in {}", self.fen());
        let (hash, halfmove, fullmove) = (self.hash, self.halfmove, self.fullmove);
        let delta = with_kernel!(self.rules.variant, K => self.play_k::<true, K>(mv));
        Undo {
            delta,
            hash,
            halfmove,
            fullmove,
        }
    }

    /// Takes back the move that [`Position::make`] played and returned `undo` for.
    #[inline]
    pub fn unmake(&mut self, undo: &Undo) {
        let d = &undo.delta;
        let us = d.mover.index();
        let mut own = d.flipped;
        if let Some(s) = d.placed {
            own = own.with(s);
        }
        if let Some(s) = d.vacated {
            own = own.with(s);
        }
        self.pieces[us] ^= own;
        self.pieces[us ^ 1] ^= d.flipped;
        self.side = d.mover;
        self.hash = undo.hash;
        self.halfmove = undo.halfmove;
        self.fullmove = undo.fullmove;
    }

    /// What `mv` would change on the board, without playing it.
    #[inline]
    pub fn delta(&self, mv: Move) -> MoveDelta {
        let mut p = *self;
        with_kernel!(self.rules.variant, K => p.play_k::<false, K>(mv))
    }

    /// Make-move in kernel `K`; `HASH = false` skips the hash update (perft only, where
    /// the hash is never read). Returns what changed.
    #[inline(always)]
    pub(crate) fn play_k<const HASH: bool, K: Kernel>(&mut self, mv: Move) -> MoveDelta {
        let us = self.side.index();
        let them = us ^ 1;
        let z = &ZOBRIST;
        let mut delta = MoveDelta {
            mover: self.side,
            placed: None,
            vacated: None,
            flipped: Bitboard::EMPTY,
        };
        if !mv.is_pass() {
            // Cells of a legal move are below 64: the masks only drop bounds checks.
            let to = mv.to as usize & 63;
            let from = mv.from as usize & 63;
            let to_bb = 1u64 << to;
            let flips = K::flip_mask(to) & self.pieces[them].0;
            let mut h = 0;
            if from == to {
                self.halfmove = 0;
            } else {
                self.pieces[us].0 ^= 1u64 << from;
                self.halfmove = self.halfmove.saturating_add(1);
                h = z.pieces[us][from];
                delta.vacated = Some(Square::new(mv.from));
            }
            self.pieces[us].0 |= to_bb | flips;
            self.pieces[them].0 ^= flips;
            if HASH {
                self.hash ^= h ^ z.pieces[us][to] ^ K::flip_hash(to, flips);
            }
            delta.placed = Some(Square::new(mv.to));
            delta.flipped = Bitboard(flips);
        } else {
            self.halfmove = self.halfmove.saturating_add(1);
        }
        self.fullmove = self.fullmove.saturating_add(self.side as u16);
        self.side = self.side.other();
        if HASH {
            self.hash ^= z.side;
        }
        delta
    }

    /// The number of enemy pieces `mv` would flip.
    #[inline]
    pub fn flips(&self, mv: Move) -> u32 {
        match mv.to() {
            Some(to) => {
                (self.geometry().flip[to.index()] & self.pieces[self.side.other().index()]).len()
            }
            None => 0,
        }
    }
}

/// Why a move cannot be played in a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IllegalMove {
    /// The game is already over.
    #[error("the game is over ({})", .0.name())]
    GameOver(EndReason),
    /// A pass was given while the side to move has a move.
    #[error("passing is only allowed when no other move exists")]
    PassWithMoves,
    /// The target cell is occupied, blocked or off the board.
    #[error("the target cell is not empty")]
    TargetNotEmpty,
    /// No piece of the side to move is a clone neighbour of the target.
    #[error("no piece of the side to move can clone to the target")]
    NoCloneSource,
    /// The jump source is not a piece of the side to move.
    #[error("the source cell does not hold a piece of the side to move")]
    NotOwnPiece,
    /// The target is not a jump target of the source under these rules.
    #[error("the target is not a jump (or clone) target of the source under these rules")]
    NotAJump,
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({} [{}])", self.fen(), self.rules)
    }
}

impl fmt::Display for Position {
    /// The position in FEN (the Hexxagon text format on the hex board).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.fen())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Variant;

    #[test]
    fn move_list_capacity_covers_every_board() {
        for v in Variant::ALL {
            let g = v.geometry();
            let jumps: u32 = g.cells.iter().map(|s| g.jump[s.index()].len()).sum();
            assert!(
                (g.num_cells as usize) + jumps as usize <= MAX_MOVES,
                "{v:?}"
            );
        }
    }

    #[test]
    fn position_is_small() {
        assert!(std::mem::size_of::<Position>() <= 48);
    }
}
