//! The sparse input: every 2×2 window of the board's grid is a "tuple" of four cells, and
//! each tuple contributes one active feature, the index of its four cells' states (empty,
//! own piece, opponent's piece, blocked or off the board) in base 4. A position has one
//! active feature per tuple, for each perspective (whose pieces count as "own"):
//! 36 of 9,216 features on the 7×7 Ataxx board, 49 of 12,544 on 8×8.
//!
//! The tuples see the shapes that matter in these games (a piece's neighbours, holes,
//! edges) and, unlike single piece-on-cell features, pairs and quads of cells, which is
//! what lets one hidden layer judge them; the design is that of the Monty and Zataxx
//! Ataxx networks (3 states there, with blockers a fourth state here).

use engine::{Game, Side, State};

/// States of one cell, the digits of a tuple's index.
pub const CELL_STATES: usize = 4;
/// Features of one tuple: 4 cells of [`CELL_STATES`] states.
pub const PER_TUPLE: usize = CELL_STATES.pow(4);

/// The state of a cell from white-is-"x" view: 0 empty, 1 x, 2 o, 3 blocked or off the
/// board. The other perspective swaps 1 and 2.
pub type CellState = u8;
const EMPTY: CellState = 0;
const X: CellState = 1;
const O: CellState = 2;
const WALL: CellState = 3;

/// Each byte's bits spread to the bytes of a word (bit i to byte i, as 0 or 1).
const SPREAD: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut i = 0;
        while i < 8 {
            t[b] |= ((b as u64 >> i) & 1) << (8 * i);
            i += 1;
        }
        b += 1;
    }
    t
};

/// The tuples of a game's board: which cells each holds, and which tuples each cell is in.
#[derive(Clone, Debug)]
pub struct Layout {
    game: Game,
    /// The four cells of each tuple (grid order: (x,y), (x+1,y), (x,y+1), (x+1,y+1));
    /// `None` off the board.
    tuples: Vec<[Option<u16>; 4]>,
    /// For each cell index, the tuples it is in and its digit's place value there.
    of_cell: Vec<Vec<(u16, u16)>>,
    /// Number of cell indices of the game.
    cells: usize,
    /// The cells of each tuple as indices into a list of cell states one longer than
    /// `cells`, whose last entry is a wall: the off-board cells of `tuples` point there.
    tuple_cells: Vec<[u16; 4]>,
    /// The cells of the board as a bit mask (cells below 64; the Ataxx boards).
    cells_mask: u64,
}

impl Layout {
    /// The layout of `game`'s board.
    pub fn new(game: Game) -> Layout {
        let (w, h) = game.grid();
        let cells = game.cells().into_iter().max().map_or(0, |c| c + 1);
        let mut tuples = Vec::new();
        let mut of_cell = vec![Vec::new(); cells];
        for y in 0..h.saturating_sub(1) {
            for x in 0..w.saturating_sub(1) {
                let mut t = [None; 4];
                for (k, (dx, dy)) in [(0, 0), (1, 0), (0, 1), (1, 1)].into_iter().enumerate() {
                    t[k] = game
                        .cell_at((x + dx) as i32, (y + dy) as i32)
                        .map(|c| c as u16);
                }
                if t.iter().all(Option::is_none) {
                    continue;
                }
                let id = tuples.len() as u16;
                for (k, c) in t.iter().enumerate() {
                    if let Some(c) = c {
                        of_cell[*c as usize].push((id, CELL_STATES.pow(k as u32) as u16));
                    }
                }
                tuples.push(t);
            }
        }
        let tuple_cells = tuples
            .iter()
            .map(|t| t.map(|c| c.unwrap_or(cells as u16)))
            .collect();
        let cells_mask = of_cell
            .iter()
            .enumerate()
            .filter(|(c, t)| !t.is_empty() && *c < 64)
            .fold(0u64, |m, (c, _)| m | 1 << c);
        Layout {
            game,
            tuples,
            of_cell,
            cells,
            tuple_cells,
            cells_mask,
        }
    }

    /// The game.
    pub fn game(&self) -> Game {
        self.game
    }

    /// Number of tuples (active features per perspective).
    pub fn tuples(&self) -> usize {
        self.tuples.len()
    }

    /// Number of input features.
    pub fn inputs(&self) -> usize {
        self.tuples.len() * PER_TUPLE
    }

    /// Number of cell indices (the largest cell index + 1).
    pub fn cells(&self) -> usize {
        self.cells
    }

    /// The cell states of a position (x's view).
    pub fn cell_states(&self, s: &State) -> Vec<CellState> {
        let mut out = vec![WALL; self.cells];
        self.cell_states_into(s, &mut out);
        out
    }

    /// [`Layout::cell_states`] into `out` (of [`Layout::cells`] length).
    pub fn cell_states_into(&self, s: &State, out: &mut [CellState]) {
        match s {
            State::Ataxx(p) => {
                out.fill(WALL);
                let blocked = p.blocked().0;
                let x = p.pieces(Side::X).0;
                let o = p.pieces(Side::O).0;
                let mut cells = self.cells_mask;
                while cells != 0 {
                    let c = cells.trailing_zeros() as usize;
                    cells &= cells - 1;
                    let bit = 1u64 << c;
                    out[c] = if x & bit != 0 {
                        X
                    } else if o & bit != 0 {
                        O
                    } else if blocked & bit != 0 {
                        WALL
                    } else {
                        EMPTY
                    };
                }
            }
            State::Flank(_) => {
                out.fill(WALL);
                for c in self.game.cells() {
                    out[c] = match s.piece_at(c) {
                        Some(Side::X) => X,
                        Some(Side::O) => O,
                        None if s.is_blocked(c) => WALL,
                        None => EMPTY,
                    };
                }
            }
        }
    }

    /// The index (within its tuple) of tuple `t` from `persp`'s view.
    #[inline]
    pub fn tuple_index(&self, t: usize, states: &[CellState], persp: Side) -> u16 {
        let mut idx = 0u16;
        for (k, c) in self.tuples[t].iter().enumerate() {
            let st = match c {
                Some(c) => view(states[*c as usize], persp),
                None => WALL,
            };
            idx += u16::from(st) * CELL_STATES.pow(k as u32) as u16;
        }
        idx
    }

    /// The active features of a position from `persp`'s view, one per tuple, into `out`.
    pub fn active(&self, states: &[CellState], persp: Side, out: &mut Vec<u32>) {
        out.clear();
        for t in 0..self.tuples.len() {
            out.push((t * PER_TUPLE) as u32 + u32::from(self.tuple_index(t, states, persp)));
        }
    }

    /// [`Layout::active`] of position `s` from `persp`'s view, straight from the
    /// position: the leaf evaluation's path (no branch on the cells' contents; `states`
    /// is scratch). The same features as `cell_states_into` then `active`.
    pub fn active_of(
        &self,
        s: &State,
        persp: Side,
        states: &mut Vec<CellState>,
        out: &mut Vec<u32>,
    ) {
        self.relative_states(s, persp, states);
        out.clear();
        out.extend(self.tuple_cells.iter().enumerate().map(|(t, cs)| {
            let d = |k: usize| u32::from(states[usize::from(cs[k])]);
            (t * PER_TUPLE) as u32 + d(0) + 4 * d(1) + 16 * d(2) + 64 * d(3)
        }));
    }

    /// Whether cell index `c` is on the board (in a tuple).
    #[inline]
    pub fn on_board(&self, c: usize) -> bool {
        self.of_cell.get(c).is_some_and(|t| !t.is_empty())
    }

    /// The cells of Ataxx position `p` on the board that hold `persp`'s pieces, the
    /// opponent's, and blockers.
    fn ataxx_cells(&self, p: &engine::Position, persp: Side) -> (u64, u64, u64) {
        let mask = self.cells_mask;
        (
            p.pieces(persp).0 & mask,
            p.pieces(persp.other()).0 & mask,
            p.blocked().0 & mask,
        )
    }

    /// The board features of Ataxx position `p` from `persp`'s view (own, the
    /// opponent's, blocked: `(state − 1) · cells + c`, in cell order, as
    /// [`crate::net::board_features_of`] lists them), straight from its bitboards: only
    /// the occupied cells are visited.
    pub fn ataxx_board_features(&self, p: &engine::Position, persp: Side, out: &mut Vec<u16>) {
        let (own, opp, blocked) = self.ataxx_cells(p, persp);
        out.clear();
        let mut occupied = own | opp | blocked;
        while occupied != 0 {
            let c = occupied.trailing_zeros() as usize;
            occupied &= occupied - 1;
            let bit = |b: u64| (b >> c & 1) as usize;
            let state = bit(own) + 2 * bit(opp) + 3 * bit(blocked);
            out.push(((state - 1) * self.cells + c) as u16);
        }
    }

    /// The cells of position `s` from `persp`'s view (own 1, the opponent's 2, blocked or
    /// off the board 3) into `states`, [`Layout::cells`] + 1 long (the last a wall, where
    /// the tuples' off-board cells point).
    pub fn relative_states(&self, s: &State, persp: Side, states: &mut Vec<CellState>) {
        states.resize(self.cells + 1, WALL);
        match s {
            State::Ataxx(p) => {
                // Own 1, the opponent's 2, blocked 3 (the three never share a cell), a
                // cell off the board a wall: eight cells at a time, each bit spread to a
                // byte (no byte's sum passes 6: no carry into the next).
                let (own, opp, blocked) = self.ataxx_cells(p, persp);
                let off_board = !self.cells_mask;
                for (k, chunk) in states[..self.cells].chunks_mut(8).enumerate() {
                    let byte = |b: u64| SPREAD[(b >> (8 * k)) as u8 as usize];
                    let word = byte(own)
                        + 2 * byte(opp)
                        + u64::from(WALL) * (byte(blocked) + byte(off_board));
                    chunk.copy_from_slice(&word.to_le_bytes()[..chunk.len()]);
                }
            }
            State::Flank(_) => {
                self.cell_states_into(s, &mut states[..self.cells]);
                for st in &mut states[..self.cells] {
                    *st = view(*st, persp);
                }
            }
        }
        states[self.cells] = WALL;
    }

    /// The state of cell `c` in a position whose active features (one per tuple, in
    /// tuple order, as [`Layout::active`] gives them) are `active`, from their
    /// perspective; `None` for a cell index that is not on the board.
    #[inline]
    pub fn cell_state_in(&self, active: &[u32], c: usize) -> Option<CellState> {
        let &(t, place) = self.of_cell.get(c)?.first()?;
        let t = usize::from(t);
        let idx = active[t] as usize - t * PER_TUPLE;
        Some((idx / usize::from(place) % CELL_STATES) as CellState)
    }

    /// The tuples cell `c` is in.
    #[inline]
    pub fn tuples_of(&self, c: usize) -> impl Iterator<Item = usize> + '_ {
        self.of_cell[c].iter().map(|&(t, _)| t as usize)
    }
}

/// A cell's state from `persp`'s view (own pieces are 1).
#[inline]
pub fn view(st: CellState, persp: Side) -> CellState {
    match (persp, st) {
        (Side::O, X) => O,
        (Side::O, O) => X,
        _ => st,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuples_cover_every_cell_and_the_counts_are_as_documented() {
        for (name, tuples) in [("ataxx", 36), ("othello", 49), ("hexxagon", 58)] {
            let game: Game = name.parse().unwrap();
            let l = Layout::new(game);
            assert_eq!(l.tuples(), tuples, "{name}");
            for c in game.cells() {
                assert!(l.tuples_of(c).count() >= 1, "{name}: cell {c} in no tuple");
                assert!(l.tuples_of(c).count() <= 4);
            }
        }
    }

    #[test]
    fn ataxx_cell_states_and_board_features_match_a_cell_by_cell_reading() {
        let game: Game = "ataxx".parse().unwrap();
        let l = Layout::new(game);
        let mut rng = engine::Rng::new(11);
        let (mut states, mut got) = (Vec::new(), Vec::new());
        let mut checked = 0;
        for board in engine::boards::TOURNAMENT_BOARDS {
            let mut s = game.parse_position(board).unwrap();
            for _ in 0..60 {
                let State::Ataxx(p) = &s else { unreachable!() };
                for persp in [Side::X, Side::O] {
                    l.relative_states(&s, persp, &mut states);
                    let mut want = vec![WALL; l.cells + 1];
                    for (c, w) in want.iter_mut().enumerate().take(l.cells) {
                        if l.cells_mask >> c & 1 == 1 {
                            let bit = |b: engine::Bitboard| (b.0 >> c & 1) as u8;
                            *w = bit(p.pieces(persp))
                                + 2 * bit(p.pieces(persp.other()))
                                + 3 * bit(p.blocked());
                        }
                    }
                    assert_eq!(states, want, "{s}");
                    // The board features, blocked cells among them, in cell order.
                    let features: Vec<u16> = (0..l.cells)
                        .filter(|&c| l.cells_mask >> c & 1 == 1 && want[c] != 0)
                        .map(|c| ((usize::from(want[c]) - 1) * l.cells + c) as u16)
                        .collect();
                    l.ataxx_board_features(p, persp, &mut got);
                    assert_eq!(got, features, "{s}");
                    checked += 1;
                }
                let moves = s.legal_moves();
                if s.is_game_over() || moves.is_empty() {
                    break;
                }
                s.play(moves[rng.below(moves.len() as u64) as usize]);
            }
        }
        assert!(checked > 800, "{checked} positions");
    }

    #[test]
    fn the_start_position_reads_as_its_text_says() {
        let game: Game = "ataxx".parse().unwrap();
        let l = Layout::new(game);
        let s = game.startpos();
        let st = l.cell_states(&s);
        let counts = |v: CellState| game.cells().iter().filter(|&&c| st[c] == v).count();
        assert_eq!((counts(X), counts(O), counts(EMPTY)), (2, 2, 45));
        // From o's view the pieces swap, and every feature stays in its tuple's range.
        let mut a = vec![];
        let mut b = vec![];
        l.active(&st, Side::X, &mut a);
        l.active(&st, Side::O, &mut b);
        assert_ne!(a, b);
        for (t, f) in a.iter().enumerate() {
            assert_eq!(*f as usize / PER_TUPLE, t);
        }
    }

    #[test]
    fn features_from_the_position_equal_those_from_its_cells() {
        // Random games of a board with holes, an outflanking one, and Ataxx with
        // blockers: every position from both views.
        for name in ["hexxagon", "othello", "ataxx"] {
            let game: Game = name.parse().unwrap();
            let l = Layout::new(game);
            let mut rng = engine::Rng::new(7);
            for g in 0..6 {
                let mut s = if name == "ataxx" && g % 2 == 1 {
                    game.parse_position("x5o/7/2-1-2/7/2-1-2/7/o5x x 0 1")
                        .unwrap()
                } else {
                    game.startpos()
                };
                while s.result().is_none() {
                    let st = l.cell_states(&s);
                    for persp in Side::BOTH {
                        let (mut want, mut got, mut scratch) = (vec![], vec![], vec![]);
                        l.active(&st, persp, &mut want);
                        l.active_of(&s, persp, &mut scratch, &mut got);
                        assert_eq!(got, want, "{name} {persp:?} {s}");
                    }
                    let moves = s.legal_moves();
                    s = s.after(moves[rng.below(moves.len() as u64) as usize]);
                }
            }
        }
    }
}
