//! Every instruction-set level (portable, AVX2, AVX-512, those this CPU runs) counts the
//! same perft and makes the same leaves as the portable code, over positions of random
//! games of every game.

use engine::boards::{BlockerParams, random_blocker_board};
use engine::flank::flank_perft_with;
use engine::{GAME_NAMES, Game, Isa, Position, Rng, Rules, State, perft_make_all_with, perft_with};

/// Positions along random games of `game` (on random blocker boards for every other
/// Ataxx-family game).
fn positions(game: Game, games: usize, rng: &mut Rng) -> Vec<State> {
    let mut out = Vec::new();
    for g in 0..games {
        let mut s = match game {
            Game::Ataxx(r) if g % 2 == 1 => {
                State::Ataxx(random_blocker_board(r, &BlockerParams::default(), rng))
            }
            _ => game.startpos(),
        };
        loop {
            out.push(s);
            let moves = s.legal_moves();
            if moves.is_empty() {
                break;
            }
            s.play(moves[rng.below(moves.len() as u64) as usize]);
        }
    }
    out
}

#[test]
fn every_level_counts_the_same_perft_as_the_portable_code() {
    let levels = Isa::available();
    let mut rng = Rng::new(21);
    let mut checked = 0;
    for name in GAME_NAMES {
        let game: Game = name.parse().unwrap();
        for (i, s) in positions(game, 3, &mut rng).into_iter().enumerate() {
            // Every third position, to depth 3 (bulk) and 2 (every leaf made).
            if i % 3 != 0 {
                continue;
            }
            match s {
                State::Ataxx(p) => {
                    let want = perft_with(&p, 3, Isa::Portable);
                    let made = perft_make_all_with(&p, 2, Isa::Portable);
                    assert_eq!(want, s.perft(3));
                    for &isa in &levels {
                        assert_eq!(perft_with(&p, 3, isa), want, "{isa} {}", p.fen());
                        assert_eq!(perft_make_all_with(&p, 2, isa), made, "{isa} {}", p.fen());
                    }
                }
                State::Flank(p) => {
                    let want = flank_perft_with(&p, 3, Isa::Portable);
                    assert_eq!(want, s.perft(3));
                    for &isa in &levels {
                        assert_eq!(flank_perft_with(&p, 3, isa), want, "{isa} {}", p.text());
                    }
                }
            }
            checked += 1;
        }
    }
    assert!(checked > 1000, "{checked}");
}

#[test]
fn every_level_makes_the_same_leaves_from_the_start() {
    for rules in Rules::NAMES.map(|n| n.parse::<Rules>().unwrap()) {
        let p = Position::startpos(rules);
        let want = perft_make_all_with(&p, 4, Isa::Portable);
        assert_eq!(want.0, perft_with(&p, 4, Isa::Portable), "{rules}");
        for isa in Isa::available() {
            assert_eq!(perft_make_all_with(&p, 4, isa), want, "{rules} {isa}");
        }
    }
}
