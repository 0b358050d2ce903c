//! The outflanking games against a plain-array reference, and the game interface
//! (symmetries, policy index, text round-trips) for every game of both families.

use std::collections::BTreeSet;

use engine::flank::{BoardId, FlankPosition, Phase};
use engine::{GAME_NAMES, Game, Rng, Side, State};

/// Row widths (from rank 1 up) and first file of each rank, as RULES.md describes them.
fn described_rows(id: BoardId) -> Vec<(u8, u8)> {
    let cross = |n: u8, w: u8, l: u8| -> Vec<(u8, u8)> {
        (0..n)
            .map(|r| {
                if r < l || r >= n - l {
                    ((n - w) / 2, w)
                } else {
                    (0, n)
                }
            })
            .collect()
    };
    match id {
        BoardId::Othello | BoardId::Reversi => vec![(0, 8); 8],
        // Ranks 1–3 and 8–10 hold files d–g; ranks 4–7 hold a–j.
        BoardId::Annexation64 => cross(10, 4, 3),
        // Ranks 1–4 and 11–14 hold e–j; ranks 5–10 hold a–n.
        BoardId::Annexation132 => cross(14, 6, 4),
        // Row widths 4, 6, 8, 10, 10, 10, 10, 8, 6, 4.
        BoardId::Annexation76Cross | BoardId::Annexation76Parallel => {
            [4u8, 6, 8, 10, 10, 10, 10, 8, 6, 4]
                .iter()
                .map(|&w| ((10 - w) / 2, w))
                .collect()
        }
        BoardId::Annexation32 => vec![(1, 4), (0, 6), (0, 6), (0, 6), (0, 6), (1, 4)],
        // Cross in 12×12, arms 4 wide and 4 long.
        BoardId::Annexation80 => cross(12, 4, 4),
    }
}

#[test]
fn board_shapes_are_as_described() {
    for id in BoardId::ALL {
        let b = id.board();
        let rows = described_rows(id);
        for (r, &(first, width)) in rows.iter().enumerate() {
            for f in 0..b.width {
                let want = f >= first && f < first + width;
                assert_eq!(
                    b.cell(f, r as u8).is_some(),
                    want,
                    "{id:?} file {f} rank {r}"
                );
            }
        }
    }
    let names = |id: BoardId, side: Side| {
        let p = FlankPosition::startpos(engine::flank::FlankRules {
            board: id,
            misere: false,
        });
        p.pieces(side)
            .iter()
            .map(|i| id.board().square_name(i))
            .collect::<Vec<_>>()
    };
    assert_eq!(names(BoardId::Othello, Side::X), ["d4", "e5"]);
    assert_eq!(names(BoardId::Othello, Side::O), ["e4", "d5"]);
    assert_eq!(names(BoardId::Annexation76Cross, Side::X), ["e5", "f6"]);
    assert_eq!(names(BoardId::Annexation76Cross, Side::O), ["f5", "e6"]);
    assert_eq!(names(BoardId::Annexation76Parallel, Side::X), ["e5", "e6"]);
    assert_eq!(names(BoardId::Annexation76Parallel, Side::O), ["f5", "f6"]);
}

/// A plain reference: cells in a 2-D array, lines walked one step at a time.
#[derive(Clone, PartialEq, Debug)]
struct Ref {
    grid: Vec<Vec<Option<u8>>>, // None: no cell; Some(0) empty; Some(1) x; Some(2) o
    side: u8,
    place: bool,
    supply: [Option<u16>; 2],
}

const DIRS: [(i32, i32); 8] = [
    (1, 0),
    (-1, 0),
    (0, 1),
    (0, -1),
    (1, 1),
    (-1, 1),
    (1, -1),
    (-1, -1),
];

impl Ref {
    fn from_engine(p: &FlankPosition) -> Ref {
        let b = p.board();
        let grid = (0..b.height)
            .map(|r| {
                (0..b.width)
                    .map(|f| {
                        b.cell(f, r).map(|i| {
                            if p.pieces(Side::X).has(i) {
                                1
                            } else if p.pieces(Side::O).has(i) {
                                2
                            } else {
                                0
                            }
                        })
                    })
                    .collect()
            })
            .collect();
        Ref {
            grid,
            side: if p.side_to_move() == Side::X { 1 } else { 2 },
            place: p.phase() == Phase::Place,
            supply: [p.supply(Side::X), p.supply(Side::O)],
        }
    }

    fn at(&self, f: i32, r: i32) -> Option<u8> {
        if f < 0 || r < 0 {
            return None;
        }
        *self.grid.get(r as usize)?.get(f as usize)?
    }

    fn centre(&self) -> Vec<(i32, i32)> {
        let n = self.grid.len() as i32;
        let c = n / 2 - 1;
        vec![(c, c), (c + 1, c), (c, c + 1), (c + 1, c + 1)]
    }

    fn line(&self, f: i32, r: i32, (df, dr): (i32, i32), side: u8) -> Vec<(i32, i32)> {
        let opp = 3 - side;
        let mut run = vec![];
        let (mut x, mut y) = (f + df, r + dr);
        while self.at(x, y) == Some(opp) {
            run.push((x, y));
            x += df;
            y += dr;
        }
        if !run.is_empty() && self.at(x, y) == Some(side) {
            run
        } else {
            vec![]
        }
    }

    fn placements(&self, side: u8) -> Vec<(i32, i32)> {
        if self.supply[side as usize - 1] == Some(0) {
            return vec![];
        }
        if self.place {
            return self
                .centre()
                .into_iter()
                .filter(|&(f, r)| self.at(f, r) == Some(0))
                .collect();
        }
        let mut v = vec![];
        for r in 0..self.grid.len() as i32 {
            for f in 0..self.grid.len() as i32 {
                if self.at(f, r) == Some(0)
                    && DIRS.iter().any(|&d| !self.line(f, r, d, side).is_empty())
                {
                    v.push((f, r));
                }
            }
        }
        v
    }

    fn any_empty(&self) -> bool {
        self.grid.iter().flatten().any(|&c| c == Some(0))
    }

    /// Legal moves as names, `0000` for the pass.
    fn legal(&self) -> BTreeSet<String> {
        let own = self.placements(self.side);
        let name = |(f, r): (i32, i32)| format!("{}{}", (b'a' + f as u8) as char, r + 1);
        if !own.is_empty() {
            return own.into_iter().map(name).collect();
        }
        if self.any_empty() && !self.placements(3 - self.side).is_empty() {
            BTreeSet::from(["0000".to_string()])
        } else {
            BTreeSet::new()
        }
    }

    fn play(&mut self, mv: &str) {
        if mv != "0000" {
            let f = (mv.as_bytes()[0] - b'a') as i32;
            let r: i32 = mv[1..].parse::<i32>().unwrap() - 1;
            if !self.place {
                for d in DIRS {
                    for (x, y) in self.line(f, r, d, self.side) {
                        self.grid[y as usize][x as usize] = Some(self.side);
                    }
                }
            }
            self.grid[r as usize][f as usize] = Some(self.side);
            if let Some(s) = &mut self.supply[self.side as usize - 1] {
                *s -= 1;
            }
            if self.place && self.centre().iter().all(|&(f, r)| self.at(f, r) != Some(0)) {
                self.place = false;
            }
        }
        self.side = 3 - self.side;
    }
}

fn flank_games() -> Vec<Game> {
    GAME_NAMES
        .iter()
        .map(|n| n.parse::<Game>().unwrap())
        .filter(|g| matches!(g, Game::Flank(_)))
        .collect()
}

#[test]
fn outflanking_engine_agrees_with_reference_over_random_games() {
    let mut rng = Rng::new(5);
    let mut positions = 0;
    let mut supply_outs = 0;
    for game in flank_games() {
        for _ in 0..12 {
            let mut state = game.startpos();
            loop {
                let State::Flank(p) = state else {
                    unreachable!()
                };
                let mut r = Ref::from_engine(&p);
                let moves = state.legal_moves();
                let got: BTreeSet<String> =
                    moves.iter().map(|&m| state.move_to_string(m)).collect();
                assert_eq!(got, r.legal(), "{}", state.text());
                assert_eq!(state.count_moves(), moves.len() as u64);
                assert_eq!(state.hash(), p.compute_hash());
                assert_eq!(game.parse_position(&state.text()), Ok(state));
                positions += 1;
                if p.supply(Side::X) == Some(0) || p.supply(Side::O) == Some(0) {
                    supply_outs += 1;
                }
                if moves.is_empty() {
                    let res = state.result().expect("no moves means the game is over");
                    assert_eq!(res.counts, state.counts());
                    break;
                }
                let mv = moves[rng.below(moves.len() as u64) as usize];
                let name = state.move_to_string(mv);
                assert_eq!(state.parse_move(&name), Ok(mv));
                state.play(mv);
                r.play(&name);
                let State::Flank(q) = state else {
                    unreachable!()
                };
                assert_eq!(Ref::from_engine(&q), r, "after {name}: {}", state.text());
            }
        }
    }
    assert!(positions > 5000, "{positions}");
    assert!(
        supply_outs > 100,
        "positions with a spent supply: {supply_outs}"
    );
}

#[test]
fn symmetries_commute_with_move_generation() {
    let mut rng = Rng::new(11);
    let want_sizes = |g: Game| match g.to_string().split('/').next().unwrap() {
        "hexxagon" => 12,
        _ => 8,
    };
    for name in GAME_NAMES {
        let game: Game = name.parse().unwrap();
        let syms = game.symmetries();
        assert_eq!(syms.len(), want_sizes(game), "{name}");
        let mut state = game.startpos();
        for ply in 0..60 {
            let moves = state.legal_moves();
            if moves.is_empty() {
                break;
            }
            if ply % 5 == 0 {
                for s in &syms {
                    let image = state.transform(s);
                    let mapped: BTreeSet<_> = moves.iter().map(|&m| s.apply(m)).collect();
                    let direct: BTreeSet<_> = image.legal_moves().into_iter().collect();
                    assert_eq!(mapped, direct, "{name}: {}", state.text());
                    assert_eq!(image.counts(), state.counts());
                }
            }
            state.play(moves[rng.below(moves.len() as u64) as usize]);
        }
    }
}

#[test]
fn hexxagon_start_keeps_six_symmetries() {
    // The three blocked cells leave the six maps of a triangle (ARCHITECTURE.md).
    let s = "hexxagon".parse::<Game>().unwrap().startpos();
    assert_eq!(s.symmetries().len(), 6);
    let t = "ataxx"
        .parse::<Game>()
        .unwrap()
        .parse_position("x5o/7/2-4/7/7/7/o5x x 0 1")
        .unwrap();
    assert!(t.symmetries().len() < 8);
}

#[test]
fn policy_indices_are_distinct_and_in_range() {
    let mut rng = Rng::new(3);
    for name in GAME_NAMES {
        let game: Game = name.parse().unwrap();
        let size = game.policy_size();
        let mut state = game.startpos();
        loop {
            let moves = state.legal_moves();
            if moves.is_empty() {
                break;
            }
            let idx: BTreeSet<usize> = moves.iter().map(|&m| state.policy_index(m)).collect();
            assert_eq!(idx.len(), moves.len(), "{name}: {}", state.text());
            assert!(idx.iter().all(|&i| i < size));
            state.play(moves[rng.below(moves.len() as u64) as usize]);
        }
    }
    // The documented sizes: 7×7 Ataxx has 17 planes of 49 plus the pass.
    assert_eq!("ataxx".parse::<Game>().unwrap().policy_size(), 17 * 49 + 1);
    assert_eq!(
        "ataxx/assimilation".parse::<Game>().unwrap().policy_size(),
        9 * 49 + 1
    );
    assert_eq!(
        "ataxx/thomas".parse::<Game>().unwrap().policy_size(),
        5 * 49 + 1
    );
    assert_eq!(
        "hexxagon".parse::<Game>().unwrap().policy_size(),
        13 * 81 + 1
    );
    assert_eq!("othello".parse::<Game>().unwrap().policy_size(), 65);
    assert_eq!("annexation132".parse::<Game>().unwrap().policy_size(), 197);
}

#[test]
fn unknown_game_lists_the_names() {
    let e = "go".parse::<Game>().unwrap_err().to_string();
    assert!(
        e.contains("unknown game `go`") && e.contains("annexation76-parallel/misere"),
        "{e}"
    );
}

#[test]
fn outflanking_text_errors_name_the_problem() {
    let g: Game = "annexation64".parse().unwrap();
    let err = |t: &str| g.parse_position(t).unwrap_err().to_string();
    assert!(err("othello 8/8/8/3ox3/3xo3/8/8/8 x play - -").contains("board `othello`"));
    assert!(err("4/4/4/10/10/10/10/4/4/4 x place 32 32 7").contains("pass count `7`"));
    assert!(err("4/4/4/10/10/10/10/4/4/4 x place 32").contains("found 4"));
    assert!(err("4/4/4/10/10/10/10/4/4/5 x place 32 32").contains("rank 1 describes 5 cells"));
    assert!(err("4/4/4/10/10/10/10/4/4/4 x place 33 32").contains("0..=32"));
    assert!(err("4/4/4/10/10/10/10/4/4/4 x place - 32").contains("supply `-`"));
    assert!(err("4/4/4/10/10/10/10/4/4/x3 x place 31 32").contains("central cells"));
    assert!(err("4/4/4/10/10/10/10/4/4/4 z place 32 32").contains("side to move `z`"));
    assert!(err("4/4/4/10/10/10/10/4/4/4 x plax 32 32").contains("phase `plax`"));
    assert!(err("4/4/4/10/10/10/10/4/4/q3 x play 32 32").contains("character `q`"));
    let o: Game = "othello".parse().unwrap();
    assert!(
        o.parse_position("8/8/8/3ox3/3xo3/8/8/8 x place - -")
            .unwrap_err()
            .to_string()
            .contains("phase")
    );
    assert!(o.startpos().parse_move("a1").is_err());
    assert!(o.startpos().parse_move("z9").is_err());
    // RULES.md's orientation: x on d4 and e5, so x opens with e3, f4, c5 or d6.
    let first: BTreeSet<String> = o
        .startpos()
        .legal_moves()
        .iter()
        .map(|&m| o.startpos().move_to_string(m))
        .collect();
    assert_eq!(
        first,
        BTreeSet::from(["e3", "f4", "c5", "d6"].map(String::from))
    );
    assert!(o.startpos().parse_move("d3").is_err());
}

#[test]
fn outflanking_parser_never_panics() {
    let mut rng = Rng::new(8);
    let alphabet = b"xo0123456789/ -placeX#";
    let seeds: Vec<String> = flank_games().iter().map(|g| g.startpos().text()).collect();
    let games = flank_games();
    let n = if cfg!(debug_assertions) {
        20_000
    } else {
        300_000
    };
    let mut ok = 0;
    for i in 0..n {
        let mut t: Vec<u8> = seeds[i % seeds.len()].bytes().collect();
        for _ in 0..=rng.below(3) {
            let p = rng.below(t.len() as u64) as usize;
            let c = alphabet[rng.below(alphabet.len() as u64) as usize];
            match rng.below(3) {
                0 => {
                    t.remove(p);
                }
                1 => t.insert(p, c),
                _ => t[p] = c,
            }
        }
        let text = String::from_utf8_lossy(&t);
        let g = games[i % games.len()];
        if let Ok(s) = g.parse_position(&text) {
            ok += 1;
            assert_eq!(g.parse_position(&s.text()), Ok(s));
        }
    }
    assert!(ok > 100, "{ok}");
}

fn ref_perft(r: &Ref, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    r.legal()
        .into_iter()
        .map(|m| {
            let mut c = r.clone();
            c.play(&m);
            ref_perft(&c, depth - 1)
        })
        .sum()
}

#[test]
fn outflanking_perft_agrees_with_reference() {
    let mut rng = Rng::new(21);
    for game in flank_games() {
        let mut state = game.startpos();
        for step in 0..4 {
            let State::Flank(p) = state else {
                unreachable!()
            };
            let depth = if cfg!(debug_assertions) { 3 } else { 4 };
            assert_eq!(
                state.perft(depth),
                ref_perft(&Ref::from_engine(&p), depth),
                "{}",
                state.text()
            );
            for _ in 0..(6 + step * 7) {
                let moves = state.legal_moves();
                if moves.is_empty() {
                    break;
                }
                state.play(moves[rng.below(moves.len() as u64) as usize]);
            }
        }
    }
}

/// Perft in the convention of published Othello tables: a game that ends before the last
/// ply counts as one leaf (flipzero's own perft gives a finished game no children).
fn perft_finished_as_leaf(s: &State, depth: u32) -> u64 {
    let moves = s.legal_moves();
    match (depth, moves.len()) {
        (0, _) | (_, 0) => 1,
        (1, n) => n as u64,
        _ => moves
            .into_iter()
            .map(|m| perft_finished_as_leaf(&s.after(m), depth - 1))
            .sum(),
    }
}

#[test]
fn othello_matches_published_perft_past_the_first_finished_games() {
    // The shortest Othello games end after 9 plies; from depth 10 on the two conventions
    // differ. Published: 3005288 (9), 24571284 (10).
    let s = "othello".parse::<Game>().unwrap().startpos();
    assert_eq!(perft_finished_as_leaf(&s, 9), 3_005_288);
    assert_eq!(s.perft(9), 3_005_288);
    if !cfg!(debug_assertions) {
        assert_eq!(perft_finished_as_leaf(&s, 10), 24_571_284);
        assert_eq!(s.perft(10), 24_571_056);
    }
}

#[test]
fn cells_to_fill_counts_the_moves_an_outflanking_game_has_left() {
    let mut rng = Rng::new(11);
    let mut ended_on_supplies = 0;
    for game in flank_games() {
        for _ in 0..6 {
            let mut state = game.startpos();
            let start = state.cells_to_fill();
            let mut filled = 0;
            while !state.is_game_over() {
                let before = state.cells_to_fill();
                assert!(before <= state.empty_cells(), "{}", state.text());
                let moves = state.legal_moves();
                let mv = moves[rng.below(moves.len() as u64) as usize];
                state.play(mv);
                // Every move but a pass fills one cell and spends one piece.
                let want = if mv.is_pass() { before } else { before - 1 };
                assert_eq!(state.cells_to_fill(), want, "{game:?} after {mv:?}");
                filled += u32::from(!mv.is_pass());
            }
            assert_eq!(start - filled, state.cells_to_fill(), "{game:?}");
            if state.cells_to_fill() == 0 && state.empty_cells() > 0 {
                ended_on_supplies += 1;
            }
        }
    }
    // Annexation 80's 32 pieces a side cannot fill its 80 cells: its games end with
    // nothing left to fill and at least 16 cells empty.
    assert!(ended_on_supplies >= 6, "{ended_on_supplies}");
    let ataxx = "ataxx".parse::<Game>().unwrap().startpos();
    assert_eq!(ataxx.cells_to_fill(), ataxx.empty_cells());
}
