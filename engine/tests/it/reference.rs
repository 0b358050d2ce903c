//! A deliberately simple reference move generator (plain arrays, distances computed from
//! coordinates, no bitboards, no precomputed masks) checked against the engine on perft
//! and on legal-move sets, for every rule set, over positions of random games on random
//! blocker boards.

use std::collections::BTreeSet;

use engine::boards::{BlockerParams, BlockerSymmetry, random_blocker_board};
use engine::{Position, Rng, Rules, Side, Variant, perft};

#[derive(Clone, Copy, PartialEq)]
enum Cell {
    Empty,
    X,
    O,
    Blocked,
}

/// One cell: its name and its coordinates. Square boards use (file, rank); the hex board
/// uses doubled-height coordinates (column, 2·row + |column − 4|), in which the six
/// neighbours are (0, ±2) and (±1, ±1).
struct RefCell {
    name: String,
    x: i32,
    y: i32,
}

struct RefGame {
    variant: Variant,
    cells: Vec<RefCell>,
}

impl RefGame {
    fn new(variant: Variant) -> RefGame {
        let mut cells = Vec::new();
        if variant == Variant::Hexxagon {
            for c in 0..9i32 {
                let len = 9 - (c - 4).abs();
                for k in 0..len {
                    cells.push(RefCell {
                        name: format!("{}{}", (b'a' + c as u8) as char, k + 1),
                        x: c,
                        y: 2 * k + (c - 4).abs(),
                    });
                }
            }
        } else {
            for r in 0..7 {
                for f in 0..7 {
                    cells.push(RefCell {
                        name: format!("{}{}", (b'a' + f as u8) as char, r + 1),
                        x: f,
                        y: r,
                    });
                }
            }
        }
        RefGame { variant, cells }
    }

    fn distance_class(&self, a: usize, b: usize) -> (i32, i32) {
        (
            self.cells[b].x - self.cells[a].x,
            self.cells[b].y - self.cells[a].y,
        )
    }

    fn is_clone(&self, a: usize, b: usize) -> bool {
        let (dx, dy) = self.distance_class(a, b);
        match self.variant {
            Variant::Ataxx | Variant::Assimilation => dx.abs().max(dy.abs()) == 1,
            Variant::Thomas => dx.abs() + dy.abs() == 1,
            Variant::Hexxagon => hex_distance(dx, dy) == 1,
        }
    }

    fn is_jump(&self, a: usize, b: usize) -> bool {
        let (dx, dy) = self.distance_class(a, b);
        let (ax, ay) = (dx.abs(), dy.abs());
        match self.variant {
            Variant::Ataxx => ax.max(ay) == 2,
            Variant::Assimilation => ax.max(ay) == 2 && (ax == 0 || ay == 0 || ax == ay),
            Variant::Thomas => (ax == 2 && ay == 0) || (ax == 0 && ay == 2),
            Variant::Hexxagon => hex_distance(dx, dy) == 2,
        }
    }
}

/// Distance on doubled-height hex coordinates.
fn hex_distance(dx: i32, dy: i32) -> i32 {
    let (ax, ay) = (dx.abs(), dy.abs());
    ax + ((ay - ax).max(0)) / 2
}

#[derive(Clone)]
struct RefPos {
    board: Vec<Cell>,
    side: Cell,
    halfmove: u32,
}

/// (from, to); `from == None` for a clone; the pass is `(None, None)`.
type RefMove = (Option<usize>, Option<usize>);

fn ref_from_engine(game: &RefGame, pos: &Position) -> RefPos {
    let g = pos.geometry();
    let board = game
        .cells
        .iter()
        .map(|c| {
            let sq = g.parse_square(&c.name).unwrap();
            if pos.pieces(Side::X).has(sq) {
                Cell::X
            } else if pos.pieces(Side::O).has(sq) {
                Cell::O
            } else if pos.blocked().has(sq) {
                Cell::Blocked
            } else {
                Cell::Empty
            }
        })
        .collect();
    let side = if pos.side_to_move() == Side::X {
        Cell::X
    } else {
        Cell::O
    };
    RefPos {
        board,
        side,
        halfmove: pos.halfmove_clock() as u32,
    }
}

fn other(c: Cell) -> Cell {
    if c == Cell::X { Cell::O } else { Cell::X }
}

fn non_pass_moves(game: &RefGame, p: &RefPos, side: Cell) -> Vec<RefMove> {
    let n = p.board.len();
    let mut moves = Vec::new();
    for to in 0..n {
        if p.board[to] != Cell::Empty {
            continue;
        }
        if (0..n).any(|a| p.board[a] == side && game.is_clone(a, to)) {
            moves.push((None, Some(to)));
        }
        for from in 0..n {
            if p.board[from] == side && game.is_jump(from, to) {
                moves.push((Some(from), Some(to)));
            }
        }
    }
    moves
}

fn game_over(game: &RefGame, p: &RefPos) -> bool {
    let count = |c| p.board.iter().filter(|&&b| b == c).count();
    count(Cell::X) == 0
        || count(Cell::O) == 0
        || count(Cell::Empty) == 0
        || p.halfmove >= 100
        || (non_pass_moves(game, p, Cell::X).is_empty()
            && non_pass_moves(game, p, Cell::O).is_empty())
}

fn legal(game: &RefGame, p: &RefPos) -> Vec<RefMove> {
    if game_over(game, p) {
        return vec![];
    }
    let m = non_pass_moves(game, p, p.side);
    if m.is_empty() { vec![(None, None)] } else { m }
}

fn make(game: &RefGame, p: &RefPos, (from, to): RefMove) -> RefPos {
    let mut q = p.clone();
    q.halfmove += 1;
    if let Some(to) = to {
        match from {
            Some(f) => q.board[f] = Cell::Empty,
            None => q.halfmove = 0,
        }
        q.board[to] = p.side;
        for c in 0..q.board.len() {
            if q.board[c] == other(p.side) && game.is_clone(to, c) {
                q.board[c] = p.side;
            }
        }
    }
    q.side = other(p.side);
    q
}

fn ref_perft(game: &RefGame, p: &RefPos, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    legal(game, p)
        .into_iter()
        .map(|m| ref_perft(game, &make(game, p, m), depth - 1))
        .sum()
}

fn move_name(game: &RefGame, (from, to): RefMove) -> String {
    match (from, to) {
        (_, None) => "0000".into(),
        (None, Some(t)) => game.cells[t].name.clone(),
        (Some(f), Some(t)) => format!("{}{}", game.cells[f].name, game.cells[t].name),
    }
}

fn all_rules() -> Vec<Rules> {
    Rules::NAMES.iter().map(|n| n.parse().unwrap()).collect()
}

#[test]
fn legal_move_sets_agree_over_random_games() {
    let mut rng = Rng::new(2024);
    let mut positions = 0;
    for rules in all_rules() {
        let game = RefGame::new(rules.variant);
        for g in 0..30 {
            let params = BlockerParams {
                min: 0,
                max: 14,
                symmetry: BlockerSymmetry::Point,
            };
            let mut pos = if g % 3 == 0 {
                Position::startpos(rules)
            } else {
                random_blocker_board(rules, &params, &mut rng)
            };
            loop {
                let r = ref_from_engine(&game, &pos);
                let want: BTreeSet<String> = legal(&game, &r)
                    .into_iter()
                    .map(|m| move_name(&game, m))
                    .collect();
                let moves = pos.legal_moves();
                let got: BTreeSet<String> = moves.iter().map(|&m| pos.move_to_string(m)).collect();
                assert_eq!(got, want, "{rules} {}", pos.fen());
                assert_eq!(got.len(), moves.len(), "duplicate moves in {}", pos.fen());
                assert_eq!(pos.count_moves(), moves.len() as u64, "{}", pos.fen());
                assert_eq!(pos.is_game_over(), game_over(&game, &r), "{}", pos.fen());
                positions += 1;
                if moves.is_empty() {
                    break;
                }
                let mv = moves[rng.below(moves.len() as u64) as usize];
                let name = pos.move_to_string(mv);
                let ref_mv = legal(&game, &r)
                    .into_iter()
                    .find(|&m| move_name(&game, m) == name);
                let want = make(&game, &r, ref_mv.unwrap());
                pos.play(mv);
                let got = ref_from_engine(&game, &pos);
                assert!(
                    got.board == want.board,
                    "{rules}: {name} gave {}",
                    pos.fen()
                );
                assert_eq!(
                    (got.halfmove, got.side == Cell::X),
                    (want.halfmove, want.side == Cell::X)
                );
            }
        }
    }
    assert!(positions > 5000, "{positions}");
}

#[test]
fn start_position_perft_agrees_with_reference() {
    for rules in all_rules() {
        let game = RefGame::new(rules.variant);
        let pos = Position::startpos(rules);
        let r = ref_from_engine(&game, &pos);
        let depth = if cfg!(debug_assertions) { 2 } else { 3 };
        for d in 0..=depth {
            assert_eq!(perft(&pos, d), ref_perft(&game, &r, d), "{rules} depth {d}");
        }
    }
}

#[test]
fn perft_agrees_with_reference() {
    let mut rng = Rng::new(77);
    for rules in all_rules() {
        let game = RefGame::new(rules.variant);
        for g in 0..12 {
            let params = BlockerParams {
                min: 0,
                max: 10,
                symmetry: BlockerSymmetry::Mirror,
            };
            let mut pos = random_blocker_board(rules, &params, &mut rng);
            // Walk a random distance into the game, then compare perft there.
            for _ in 0..(g * 7) {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                pos.play(moves[rng.below(moves.len() as u64) as usize]);
            }
            let depth = if cfg!(debug_assertions) { 2 } else { 3 };
            let r = ref_from_engine(&game, &pos);
            for d in 0..=depth {
                assert_eq!(
                    perft(&pos, d),
                    ref_perft(&game, &r, d),
                    "{rules} {} d{d}",
                    pos.fen()
                );
            }
        }
    }
}
