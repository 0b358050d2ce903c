//! Property fuzzing of the position and move parsers: a million random and mutated
//! strings (in optimized builds) never panic, and whatever parses round-trips.

use engine::boards::TOURNAMENT_BOARDS;
use engine::{Position, Rng, Rules, Variant};

/// Strings per parser: a million in optimized builds, fewer in debug builds.
fn budget() -> usize {
    if cfg!(debug_assertions) {
        50_000
    } else {
        1_000_000
    }
}

const ALPHABET: &[u8] = b"xo-0123456789/ XOabcdefghijz\t#+.";

fn random_string(rng: &mut Rng, max_len: u64) -> String {
    let len = rng.below(max_len + 1) as usize;
    (0..len)
        .map(|_| ALPHABET[rng.below(ALPHABET.len() as u64) as usize] as char)
        .collect()
}

/// A valid text with a few random edits: deleted, inserted, replaced or swapped bytes,
/// occasionally an arbitrary (possibly multi-byte) character.
fn mutate(rng: &mut Rng, seed: &str) -> String {
    let mut chars: Vec<char> = seed.chars().collect();
    for _ in 0..=rng.below(3) {
        let pos = rng.below(chars.len() as u64 + 1) as usize;
        let c = if rng.below(20) == 0 {
            char::from_u32(rng.below(0x11_0000) as u32).unwrap_or('\u{fffd}')
        } else {
            ALPHABET[rng.below(ALPHABET.len() as u64) as usize] as char
        };
        match rng.below(4) {
            0 if pos < chars.len() => {
                chars.remove(pos);
            }
            1 => chars.insert(pos, c),
            2 if pos < chars.len() => chars[pos] = c,
            _ if pos + 1 < chars.len() => chars.swap(pos, pos + 1),
            _ => chars.push(c),
        }
    }
    chars.into_iter().collect()
}

#[test]
fn position_parser_never_panics_and_round_trips() {
    let mut rng = Rng::new(1);
    let rules = [Rules::ATAXX, Rules::new(Variant::Hexxagon)];
    let mut seeds: Vec<String> = TOURNAMENT_BOARDS.iter().map(|s| s.to_string()).collect();
    seeds.push(
        Rules::new(Variant::Hexxagon)
            .variant
            .start_fen()
            .to_string(),
    );
    seeds.push("7/7/7/7/ooooooo/ooooooo/xxxxxxx o 99 12".into());
    let mut parsed = 0;
    for i in 0..budget() {
        let text = if i % 2 == 0 {
            random_string(&mut rng, 48)
        } else {
            let seed = &seeds[rng.below(seeds.len() as u64) as usize];
            mutate(&mut rng, seed)
        };
        for &r in &rules {
            if let Ok(pos) = Position::from_fen(&text, r) {
                parsed += 1;
                assert_eq!(Position::from_fen(&pos.fen(), r), Ok(pos), "{text:?}");
            } else {
                let msg = Position::from_fen(&text, r).unwrap_err().to_string();
                assert!(!msg.is_empty());
            }
        }
    }
    // The mutations must leave a fair share valid, or the round-trip check is idle.
    assert!(parsed > budget() / 50, "{parsed}");
}

#[test]
fn move_parser_never_panics_and_round_trips() {
    let mut rng = Rng::new(2);
    let positions: Vec<Position> = [
        ("x5o/7/2-1-2/7/2-1-2/7/o5x x 0 1", Rules::ATAXX),
        ("x2o3/1xo4/7/3x3/2o4/7/o5x o 3 9", Rules::ATAXX),
        ("7/7/7/7/ooooooo/ooooooo/xxxxxxx x 0 1", Rules::ATAXX),
        (
            "x2o3/1xo4/7/3x3/2o4/7/o5x o 3 9",
            "ataxx/thomas".parse().unwrap(),
        ),
        ("startpos", Rules::new(Variant::Hexxagon)),
    ]
    .into_iter()
    .map(|(f, r)| Position::from_fen(f, r).unwrap())
    .collect();
    let seeds = ["g2", "g1e3", "a1-a3", "0000", "e5", "b2c4", "i5g4", "d4"];
    let mut legal = 0;
    for i in 0..budget() {
        let text = if i % 2 == 0 {
            random_string(&mut rng, 7)
        } else {
            let seed = seeds[rng.below(seeds.len() as u64) as usize];
            mutate(&mut rng, seed)
        };
        let pos = &positions[i % positions.len()];
        if let Ok(mv) = pos.parse_move(&text) {
            legal += 1;
            assert!(pos.is_legal(mv), "{text:?}");
            assert_eq!(pos.parse_move(&pos.move_to_string(mv)), Ok(mv));
        }
    }
    assert!(legal > 1000, "{legal}");
}
