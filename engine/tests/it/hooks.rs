//! The make/unmake hooks: over random games of every game, what `State::make` reports
//! as changed is exactly what changed on the board, and `State::unmake` restores the
//! position (hash included).

use engine::{GAME_NAMES, Game, Rng, State};

fn board(s: &State) -> Vec<Option<engine::Side>> {
    s.game()
        .cells()
        .into_iter()
        .map(|c| s.piece_at(c))
        .collect()
}

#[test]
fn make_reports_every_changed_cell_and_unmake_restores() {
    let mut rng = Rng::new(31);
    let mut plies = 0;
    for name in GAME_NAMES {
        let game: Game = name.parse().unwrap();
        let cells = game.cells();
        for _ in 0..8 {
            let mut s = game.startpos();
            loop {
                let moves = s.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let mv = moves[rng.below(moves.len() as u64) as usize];
                let before = s;
                let cells_before = board(&s);
                let undo = s.make(mv);
                let c = undo.change();
                assert_eq!(s, before.after(mv), "{name}: make plays the move");
                assert_eq!(s.hash(), before.after(mv).hash());
                assert_eq!(c.mover, before.side_to_move());
                assert_eq!(c.flipped.len(), before.flips(mv));
                let after = board(&s);
                for (k, &cell) in cells.iter().enumerate() {
                    let want = if c.placed == Some(cell) || c.flipped.contains(cell) {
                        Some(c.mover)
                    } else if c.vacated == Some(cell) {
                        None
                    } else {
                        cells_before[k]
                    };
                    assert_eq!(after[k], want, "{name} {}: cell {cell}", before.text());
                    if c.flipped.contains(cell) {
                        assert_eq!(cells_before[k], Some(c.mover.other()));
                    }
                }
                assert_eq!(c.flipped.iter().count() as u32, c.flipped.len());
                assert!(c.flipped.iter().all(|i| c.flipped.contains(i)));
                s.unmake(&undo);
                assert_eq!(s, before, "{name}: unmake restores {}", before.text());
                s.play(mv);
                plies += 1;
            }
        }
    }
    assert!(plies > 5000, "{plies}");
}
