//! One interface over every game of both families: the rest of the workspace selects a
//! [`Game`] by name and works with [`State`] and [`Move`] values.
//!
//! # Network grid and policy index
//! Every game is embedded in a rectangular grid (its "board box"): square boards use
//! (file, rank); the Hexxagon board uses axial coordinates (column, row − 1 +
//! max(0, column − 4)) in a 9×9 box, in which the six neighbours of a cell are the
//! displacements (0,±1), (±1,0), (1,1), (−1,−1). Grid cell (x, y) has number
//! `y * width + x`.
//!
//! The policy index of a move ([`State::policy_index`]) is:
//! - Ataxx family: `slot * width * height + number(target)`, where slot 0 is the clone
//!   and slot `1 + j` is a jump whose source lies at displacement `jump_offsets()[j]` from
//!   its target; the pass is the last index, `(1 + J) * width * height`.
//! - Outflanking games: `number(cell)`; the pass is `width * height`.

use std::fmt;
use std::str::FromStr;

use crate::flank::{BoardId, FlankPosition, FlankRules, flank_perft};
use crate::geometry::Shape;
use crate::{GameResult, Move, MoveKind, Position, Rules, Side, Square, perft};

/// A game: a rule set of either family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Game {
    /// The Ataxx family (Ataxx, its variants, Hexxagon).
    Ataxx(Rules),
    /// The outflanking family (Othello, Reversi, Annexation).
    Flank(FlankRules),
}

/// Every game name, as accepted by [`Game::from_str`].
pub const GAME_NAMES: [&str; 24] = [
    "ataxx",
    "ataxx/misere",
    "ataxx/assimilation",
    "ataxx/assimilation/misere",
    "ataxx/thomas",
    "ataxx/thomas/misere",
    "hexxagon",
    "hexxagon/misere",
    "othello",
    "othello/misere",
    "reversi",
    "reversi/misere",
    "annexation64",
    "annexation64/misere",
    "annexation132",
    "annexation132/misere",
    "annexation76-cross",
    "annexation76-cross/misere",
    "annexation76-parallel",
    "annexation76-parallel/misere",
    "annexation32",
    "annexation32/misere",
    "annexation80",
    "annexation80/misere",
];

/// A game name that names no game.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown game `{name}`; known games: {}", GAME_NAMES.join(", "))]
pub struct UnknownGameName {
    /// The name given.
    pub name: String,
}

impl FromStr for Game {
    type Err = UnknownGameName;

    /// ```
    /// use engine::Game;
    /// let g: Game = "annexation76-parallel/misere".parse().unwrap();
    /// assert_eq!(g.to_string(), "annexation76-parallel/misere");
    /// ```
    fn from_str(s: &str) -> Result<Game, UnknownGameName> {
        if let Ok(r) = s.parse::<Rules>() {
            return Ok(Game::Ataxx(r));
        }
        let lower = s.trim().to_ascii_lowercase();
        let (base, misere) = match lower.strip_suffix("/misere") {
            Some(b) => (b, true),
            None => (lower.as_str(), false),
        };
        BoardId::ALL
            .into_iter()
            .find(|b| b.name() == base)
            .map(|board| Game::Flank(FlankRules { board, misere }))
            .ok_or_else(|| UnknownGameName {
                name: s.to_string(),
            })
    }
}

impl fmt::Display for Game {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Game::Ataxx(r) => r.fmt(f),
            Game::Flank(r) => {
                f.write_str(r.board.name())?;
                if r.misere {
                    f.write_str("/misere")?;
                }
                Ok(())
            }
        }
    }
}

/// A position text that does not parse, for either family.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    /// Ataxx family.
    #[error(transparent)]
    Ataxx(#[from] crate::FenError),
    /// Outflanking family.
    #[error(transparent)]
    Flank(#[from] crate::flank::FlankTextError),
}

/// A move text that does not parse or is illegal, for either family.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GameMoveError {
    /// Ataxx family.
    #[error(transparent)]
    Ataxx(#[from] crate::MoveError),
    /// Outflanking family.
    #[error(transparent)]
    Flank(#[from] crate::flank::FlankMoveError),
    /// A move value that is not legal here.
    #[error("move is not legal here")]
    Illegal,
}

/// A map of the board onto itself that leaves the game unchanged: a permutation of cell
/// indices (the engine's cell numbering of the game).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symmetry {
    /// Image of each cell index (entries for indices that are not cells are unused).
    pub map: Vec<u8>,
}

impl Symmetry {
    /// The image of a move.
    pub fn apply(&self, mv: Move) -> Move {
        match mv.kind() {
            MoveKind::Pass => Move::PASS,
            MoveKind::Clone { to } => Move::clone_to(Square::new(self.map[to.index()])),
            MoveKind::Jump { from, to } => Move::jump(
                Square::new(self.map[from.index()]),
                Square::new(self.map[to.index()]),
            ),
        }
    }
}

impl Game {
    /// The standard start.
    pub fn startpos(self) -> State {
        match self {
            Game::Ataxx(r) => State::Ataxx(Position::startpos(r)),
            Game::Flank(r) => State::Flank(FlankPosition::startpos(r)),
        }
    }

    /// The positions every network check runs on: the start and seven positions after
    /// 3, 6, …, 21 random legal moves from a fixed seed (fewer where a game ends first),
    /// and for the Ataxx family four more on random blocker boards (`--blockers`), so
    /// that every input a network of the game can be given is exercised: blocked cells
    /// too. Fixed, so that a check's verdict on a network never changes between runs.
    pub fn check_positions(self) -> Vec<State> {
        let mut rng = crate::Rng::new(0x5EED);
        let mut starts = vec![self.startpos(); 8];
        if let Game::Ataxx(r) = self {
            let params = crate::boards::BlockerParams::default();
            let mut boards = crate::Rng::new(0xB10C);
            starts.extend((0..4).map(|_| {
                State::Ataxx(crate::boards::random_blocker_board(r, &params, &mut boards))
            }));
        }
        starts
            .into_iter()
            .enumerate()
            .map(|(k, mut s)| {
                for _ in 0..(k % 8) * 3 {
                    let moves = s.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    s.play(moves[rng.below(moves.len() as u64) as usize]);
                }
                s
            })
            .collect()
    }

    /// Parses a position in the game's text format (or `startpos`).
    pub fn parse_position(self, text: &str) -> Result<State, PositionError> {
        Ok(match self {
            Game::Ataxx(r) => State::Ataxx(Position::from_fen(text, r)?),
            Game::Flank(r) => State::Flank(FlankPosition::from_text(text, r)?),
        })
    }

    /// Whether fewest pieces wins.
    pub fn misere(self) -> bool {
        match self {
            Game::Ataxx(r) => r.misere,
            Game::Flank(r) => r.misere,
        }
    }

    /// Width and height of the board box (see the module docs).
    pub fn grid(self) -> (usize, usize) {
        match self {
            Game::Ataxx(r) => match r.geometry().shape {
                Shape::Rect { width, height } => (width as usize, height as usize),
                Shape::Hex5 => (9, 9),
            },
            Game::Flank(r) => {
                let b = r.board.board();
                (b.width as usize, b.height as usize)
            }
        }
    }

    /// Grid coordinates of a cell index.
    pub fn grid_xy(self, cell: usize) -> (usize, usize) {
        match self {
            Game::Ataxx(r) => {
                let (x, y) = r.geometry().coords(Square::new(cell as u8));
                (x as usize, y as usize)
            }
            Game::Flank(_) => (cell % crate::flank::STRIDE, cell / crate::flank::STRIDE),
        }
    }

    /// The cell index at grid coordinates, if the board has that cell.
    pub fn cell_at(self, x: i32, y: i32) -> Option<usize> {
        match self {
            Game::Ataxx(r) => r.geometry().at_coords(x, y).map(|s| s.index()),
            Game::Flank(r) => {
                let (x, y) = (u8::try_from(x).ok()?, u8::try_from(y).ok()?);
                r.board.board().cell(x, y)
            }
        }
    }

    /// Every cell index of the board.
    pub fn cells(self) -> Vec<usize> {
        match self {
            Game::Ataxx(r) => r.geometry().cells.iter().map(|s| s.index()).collect(),
            Game::Flank(r) => r.board.board().cells.iter().collect(),
        }
    }

    /// Jump displacements (source − target, in grid coordinates) in policy-slot order;
    /// empty for outflanking games.
    pub fn jump_offsets(self) -> Vec<(i8, i8)> {
        match self {
            Game::Ataxx(r) => r.geometry().jump_reach.offsets(),
            Game::Flank(_) => Vec::new(),
        }
    }

    /// Number of policy slots per grid cell (1 + jump offsets; 1 for outflanking games).
    pub fn policy_planes(self) -> usize {
        1 + self.jump_offsets().len()
    }

    /// Size of the policy vector: `policy_planes × width × height + 1` (the pass).
    pub fn policy_size(self) -> usize {
        let (w, h) = self.grid();
        self.policy_planes() * w * h + 1
    }

    /// The symmetries of the board: maps of the grid that send the board's cells onto
    /// themselves and keep the rules (D4 for square boards, the 12 maps of the hexagon
    /// for Hexxagon). A position's blocked cells travel with it; see
    /// [`State::symmetries`] for the maps that also keep the blockers in place.
    pub fn symmetries(self) -> Vec<Symmetry> {
        let (w, h) = self.grid();
        let hex = matches!(self, Game::Ataxx(r) if r.geometry().shape == Shape::Hex5);
        let count = if hex { 12 } else { 8 };
        let side = w.max(h) as i32;
        let cells = self.cells();
        let size = cells.iter().max().map_or(0, |&m| m + 1);
        (0..count)
            .filter_map(|k| {
                let mut map = vec![0u8; size];
                for &c in &cells {
                    let (x, y) = self.grid_xy(c);
                    let (nx, ny) = map_point(hex, k, side, x as i32, y as i32);
                    map[c] = self.cell_at(nx, ny)? as u8;
                }
                Some(Symmetry { map })
            })
            .collect()
    }
}

/// The `k`-th map of the grid: on the hex board (12 maps) in axial coordinates centred
/// on e5 = (4, 4), where rotation by 60° is (a, b) → (a − b, a) and the reflection is
/// (a, b) → (b, a); on a square box of side `n` (8 maps), optional transposition then
/// optional flips of x and y.
fn map_point(hex: bool, k: usize, n: i32, x: i32, y: i32) -> (i32, i32) {
    if hex {
        let (mut a, mut b) = (x - 4, y - 4);
        if k >= 6 {
            (a, b) = (b, a);
        }
        for _ in 0..k % 6 {
            (a, b) = (a - b, a);
        }
        return (a + 4, b + 4);
    }
    let (mut x, mut y) = if k & 4 != 0 { (y, x) } else { (x, y) };
    if k & 1 != 0 {
        x = n - 1 - x;
    }
    if k & 2 != 0 {
        y = n - 1 - y;
    }
    (x, y)
}

/// A position of any game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// Ataxx family.
    Ataxx(Position),
    /// Outflanking family.
    Flank(FlankPosition),
}

/// What [`State::unmake`] needs to take a move back (see [`State::make`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StateUndo {
    /// Ataxx family.
    Ataxx(crate::Undo),
    /// Outflanking family.
    Flank(crate::flank::FlankUndo),
}

impl StateUndo {
    /// What the move changed on the board, in the game's cell numbering.
    #[inline]
    pub fn change(&self) -> Change {
        match self {
            StateUndo::Ataxx(u) => {
                let d = u.delta();
                Change {
                    mover: d.mover,
                    placed: d.placed.map(|s| s.index()),
                    vacated: d.vacated.map(|s| s.index()),
                    flipped: CellSet(Cells::Word(d.flipped.0)),
                }
            }
            StateUndo::Flank(u) => {
                let d = u.delta();
                Change {
                    mover: d.mover,
                    placed: d.placed,
                    vacated: None,
                    flipped: CellSet(Cells::Wide(d.flipped)),
                }
            }
        }
    }
}

/// What a move changed on the board, in the game's cell numbering ([`Game::cells`]): a
/// piece of `mover` appeared on `placed` (a clone, a jump's target, a placement), a jump
/// emptied `vacated`, and every cell of `flipped` turned from the opponent's piece to the
/// mover's. A pass changes no cell. An evaluator that keeps an accumulator over
/// piece-on-cell features adds `placed` and the flipped cells for the mover, removes
/// `vacated` for the mover and the flipped cells for the opponent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Change {
    /// The side that moved.
    pub mover: Side,
    /// The cell that received a new piece of the mover; `None` for the pass.
    pub placed: Option<usize>,
    /// The cell a jump left (Ataxx family); `None` otherwise.
    pub vacated: Option<usize>,
    /// The pieces that flipped to the mover.
    pub flipped: CellSet,
}

/// A set of cells in the game's numbering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CellSet(Cells);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Cells {
    Word(u64),
    Wide(crate::flank::Bits),
}

impl CellSet {
    /// Number of cells.
    #[inline]
    pub fn len(&self) -> u32 {
        match self.0 {
            Cells::Word(w) => w.count_ones(),
            Cells::Wide(b) => b.len(),
        }
    }

    /// Whether the set is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `cell` is in the set.
    #[inline]
    pub fn contains(&self, cell: usize) -> bool {
        match self.0 {
            Cells::Word(w) => cell < 64 && w >> cell & 1 != 0,
            Cells::Wide(b) => b.has(cell),
        }
    }

    /// The cells, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        let (word, wide) = match self.0 {
            Cells::Word(w) => (Some(crate::Bitboard(w).iter().map(|s| s.index())), None),
            Cells::Wide(b) => (None, Some(b.iter())),
        };
        word.into_iter().flatten().chain(wide.into_iter().flatten())
    }
}

fn flank_move(mv: Move) -> Option<usize> {
    mv.to().map(|s| s.index())
}

fn from_flank(mv: Option<usize>) -> Move {
    mv.map_or(Move::PASS, |i| Move::clone_to(Square::new(i as u8)))
}

impl State {
    /// The game.
    pub fn game(&self) -> Game {
        match self {
            State::Ataxx(p) => Game::Ataxx(p.rules()),
            State::Flank(p) => Game::Flank(p.rules()),
        }
    }

    /// The side to move.
    pub fn side_to_move(&self) -> Side {
        match self {
            State::Ataxx(p) => p.side_to_move(),
            State::Flank(p) => p.side_to_move(),
        }
    }

    /// The legal moves (empty when the game is over; only the pass when forced). Moves of
    /// outflanking games are placements, written as clones onto the cell.
    pub fn legal_moves(&self) -> Vec<Move> {
        let mut v = Vec::new();
        self.for_each_legal(|m| v.push(m));
        v
    }

    /// The legal moves, written into `out` (cleared first) to reuse its allocation.
    #[inline]
    pub fn legal_moves_into(&self, out: &mut Vec<Move>) {
        out.clear();
        self.for_each_legal(|m| out.push(m));
    }

    /// Calls `f` for every legal move, in the order of [`State::legal_moves`]; no list
    /// is built.
    #[inline(always)]
    pub fn for_each_legal(&self, mut f: impl FnMut(Move)) {
        match self {
            State::Ataxx(p) => p.for_each_legal(f),
            State::Flank(p) => p.for_each_legal(|m| f(from_flank(m))),
        }
    }

    /// Enemy pieces that `mv` flips.
    #[inline]
    pub fn flips(&self, mv: Move) -> u32 {
        match (self, mv.to()) {
            (_, None) => 0,
            (State::Ataxx(p), _) => p.flips(mv),
            (State::Flank(p), Some(to)) => match p.phase() {
                crate::flank::Phase::Play => p.flip_count(to.index()),
                crate::flank::Phase::Place => 0,
            },
        }
    }

    /// Pieces the mover gains with `mv`: flips, plus one for a new piece (a clone or a
    /// placement).
    #[inline]
    pub fn gain(&self, mv: Move) -> u32 {
        let new_piece = matches!(mv.kind(), MoveKind::Clone { .. });
        self.flips(mv) + u32::from(new_piece)
    }

    /// Number of legal moves.
    pub fn count_moves(&self) -> u64 {
        match self {
            State::Ataxx(p) => p.count_moves(),
            State::Flank(p) => p.count_moves(),
        }
    }

    /// Whether `mv` is legal.
    pub fn is_legal(&self, mv: Move) -> bool {
        match self {
            State::Ataxx(p) => p.is_legal(mv),
            State::Flank(p) => {
                matches!(mv.kind(), MoveKind::Pass | MoveKind::Clone { .. })
                    && p.is_legal(flank_move(mv))
            }
        }
    }

    /// Plays a legal move.
    #[inline]
    pub fn play(&mut self, mv: Move) {
        match self {
            State::Ataxx(p) => p.play(mv),
            State::Flank(p) => p.play(flank_move(mv)),
        }
    }

    /// Plays a legal move and returns what [`State::unmake`] needs to take it back, with
    /// what changed on the board ([`StateUndo::change`]): the hook of evaluators that
    /// follow the board incrementally (NNUE-style accumulators over piece-on-cell
    /// features).
    ///
    /// ```
    /// use engine::{Game, Side};
    /// let game: Game = "ataxx".parse().unwrap();
    /// let mut s = game.parse_position("x5o/7/7/7/7/5o1/o5x x 0 1").unwrap();
    /// let before = s;
    /// let undo = s.make(s.parse_move("g1e3").unwrap());
    /// let c = undo.change();
    /// assert_eq!(c.mover, Side::X);
    /// assert_eq!(c.placed.map(|i| s.cell_name(i)), Some("e3".into()));
    /// assert_eq!(c.vacated.map(|i| s.cell_name(i)), Some("g1".into()));
    /// assert_eq!(c.flipped.iter().map(|i| s.cell_name(i)).collect::<Vec<_>>(), ["f2"]);
    /// s.unmake(&undo);
    /// assert_eq!(s, before);
    /// ```
    #[inline]
    pub fn make(&mut self, mv: Move) -> StateUndo {
        match self {
            State::Ataxx(p) => StateUndo::Ataxx(p.make(mv)),
            State::Flank(p) => StateUndo::Flank(p.make(flank_move(mv))),
        }
    }

    /// Takes back the move that [`State::make`] played and returned `undo` for.
    #[inline]
    pub fn unmake(&mut self, undo: &StateUndo) {
        match (self, undo) {
            (State::Ataxx(p), StateUndo::Ataxx(u)) => p.unmake(u),
            (State::Flank(p), StateUndo::Flank(u)) => p.unmake(u),
            _ => panic!("an undo of one family applied to a state of the other"),
        }
    }

    /// The name of a cell (`e5`).
    pub fn cell_name(&self, cell: usize) -> String {
        match self {
            State::Ataxx(p) => p.geometry().square_name(Square::new(cell as u8)),
            State::Flank(p) => p.board().square_name(cell),
        }
    }

    /// Plays `mv` if legal, else leaves the state unchanged.
    pub fn try_play(&mut self, mv: Move) -> Result<(), GameMoveError> {
        if !self.is_legal(mv) {
            return Err(GameMoveError::Illegal);
        }
        self.play(mv);
        Ok(())
    }

    /// The state after `mv`.
    #[inline]
    pub fn after(&self, mv: Move) -> State {
        let mut s = *self;
        s.play(mv);
        s
    }

    /// The result, if the game is over.
    pub fn result(&self) -> Option<GameResult> {
        match self {
            State::Ataxx(p) => p.result(),
            State::Flank(p) => p.result(),
        }
    }

    /// Whether the game is over.
    pub fn is_game_over(&self) -> bool {
        match self {
            State::Ataxx(p) => p.is_game_over(),
            State::Flank(p) => p.is_game_over(),
        }
    }

    /// The Zobrist hash.
    pub fn hash(&self) -> u64 {
        match self {
            State::Ataxx(p) => p.hash(),
            State::Flank(p) => p.hash(),
        }
    }

    /// Pieces of each side: `[x, o]`.
    pub fn counts(&self) -> [u32; 2] {
        match self {
            State::Ataxx(p) => [p.pieces(Side::X).len(), p.pieces(Side::O).len()],
            State::Flank(p) => [p.count(Side::X), p.count(Side::O)],
        }
    }

    /// Cells that can hold a piece (blocked cells excluded).
    pub fn playable_cells(&self) -> u32 {
        match self {
            State::Ataxx(p) => p.playable().len(),
            State::Flank(p) => p.board().num_cells(),
        }
    }

    /// Cells that can hold a piece and hold none.
    pub fn empty_cells(&self) -> u32 {
        let [x, o] = self.counts();
        self.playable_cells().saturating_sub(x + o)
    }

    /// Cells the game can still fill: the empty cells, or fewer where the players' piece
    /// supplies run out first (Annexation: 32 pieces a side on the 80-cell board leave
    /// at least 16 cells empty at the end). Every move of an outflanking game fills one
    /// cell, so there this bounds the moves left; an Ataxx jump fills none.
    pub fn cells_to_fill(&self) -> u32 {
        let empty = self.empty_cells();
        match self {
            State::Ataxx(_) => empty,
            State::Flank(p) => match (p.supply(Side::X), p.supply(Side::O)) {
                (Some(x), Some(o)) => empty.min(u32::from(x) + u32::from(o)),
                _ => empty,
            },
        }
    }

    /// What stands on a cell: `Some(side)`, or `None` for an empty or blocked cell.
    pub fn piece_at(&self, cell: usize) -> Option<Side> {
        match self {
            State::Ataxx(p) => Side::BOTH
                .into_iter()
                .find(|&s| p.pieces(s).has(Square::new(cell as u8))),
            State::Flank(p) => p.piece_at(cell),
        }
    }

    /// Whether a cell is blocked (Ataxx family only).
    pub fn is_blocked(&self, cell: usize) -> bool {
        match self {
            State::Ataxx(p) => p.blocked().has(Square::new(cell as u8)),
            State::Flank(_) => false,
        }
    }

    /// The position text (FEN for the Ataxx family).
    pub fn text(&self) -> String {
        match self {
            State::Ataxx(p) => p.fen(),
            State::Flank(p) => p.text(),
        }
    }

    /// Parses and checks a move in notation.
    pub fn parse_move(&self, text: &str) -> Result<Move, GameMoveError> {
        Ok(match self {
            State::Ataxx(p) => p.parse_move(text)?,
            State::Flank(p) => from_flank(p.parse_move(text)?),
        })
    }

    /// A move in notation.
    pub fn move_to_string(&self, mv: Move) -> String {
        match self {
            State::Ataxx(p) => p.move_to_string(mv),
            State::Flank(p) => p.move_to_string(flank_move(mv)),
        }
    }

    /// Perft from this state (see [`crate::perft`]).
    pub fn perft(&self, depth: u32) -> u64 {
        match self {
            State::Ataxx(p) => perft(p, depth),
            State::Flank(p) => flank_perft(p, depth),
        }
    }

    /// [`State::perft`] that gives up (`None`) soon after `stop` is set: the flag is
    /// read at every node more than three plies above the leaves, so a stop takes at
    /// most one three-ply perft (milliseconds). What a protocol loop runs on a thread
    /// of its own.
    pub fn perft_stoppable(&self, depth: u32, stop: &std::sync::atomic::AtomicBool) -> Option<u64> {
        if depth <= 3 {
            return Some(self.perft(depth));
        }
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        let mut total = 0;
        for mv in self.legal_moves() {
            total += self.after(mv).perft_stoppable(depth - 1, stop)?;
        }
        Some(total)
    }

    /// The policy index of a move (see the module docs).
    pub fn policy_index(&self, mv: Move) -> usize {
        let game = self.game();
        let (w, h) = game.grid();
        let number = |cell: usize| {
            let (x, y) = game.grid_xy(cell);
            y * w + x
        };
        match mv.kind() {
            MoveKind::Pass => game.policy_size() - 1,
            MoveKind::Clone { to } => number(to.index()),
            MoveKind::Jump { from, to } => {
                let (fx, fy) = game.grid_xy(from.index());
                let (tx, ty) = game.grid_xy(to.index());
                let d = ((fx as i32 - tx as i32) as i8, (fy as i32 - ty as i32) as i8);
                let j = game
                    .jump_offsets()
                    .iter()
                    .position(|&o| o == d)
                    .expect("a jump offset");
                (1 + j) * w * h + number(to.index())
            }
        }
    }

    /// The symmetries of the board that also keep this position's blocked cells in
    /// place (all of [`Game::symmetries`] for boards without blockers).
    pub fn symmetries(&self) -> Vec<Symmetry> {
        let cells = self.game().cells();
        self.game()
            .symmetries()
            .into_iter()
            .filter(|s| {
                cells
                    .iter()
                    .all(|&c| self.is_blocked(c) == self.is_blocked(s.map[c] as usize))
            })
            .collect()
    }

    /// The image of the position under a board symmetry (pieces and blocked cells move;
    /// side to move, clocks, phase and supplies stay).
    pub fn transform(&self, sym: &Symmetry) -> State {
        match self {
            State::Ataxx(p) => {
                let m = |b: crate::Bitboard| {
                    b.iter().fold(crate::Bitboard::EMPTY, |acc, s| {
                        acc.with(Square::new(sym.map[s.index()]))
                    })
                };
                State::Ataxx(
                    Position::from_parts(
                        p.rules(),
                        m(p.pieces(Side::X)),
                        m(p.pieces(Side::O)),
                        m(p.blocked()),
                        p.side_to_move(),
                        p.halfmove_clock(),
                        p.fullmove_number(),
                    )
                    .expect("a symmetry maps cells to distinct cells"),
                )
            }
            State::Flank(p) => State::Flank(p.transformed(&sym.map)),
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}
