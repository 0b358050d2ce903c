//! Runs every perft table under `tests/data/*.perft` (format: see the files' headers).

use std::path::Path;

use engine::Game;

/// Above this many leaves a count runs only in optimized builds.
const SLOW: u64 = 200_000_000;

#[test]
fn perft_tables() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "perft"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let mut checked = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut game: Game = "ataxx".parse().unwrap();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            let at = || format!("{}:{}", file.display(), n + 1);
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(name) = line.strip_prefix("game ") {
                game = name.parse().unwrap_or_else(|e| panic!("{}: {e}", at()));
                continue;
            }
            let (fen, counts) = line
                .split_once(':')
                .unwrap_or_else(|| panic!("{}: no `:`", at()));
            let pos = game
                .parse_position(fen)
                .unwrap_or_else(|e| panic!("{}: {e}", at()));
            for (depth, want) in counts.split_whitespace().enumerate() {
                let want: u64 = want.parse().unwrap();
                if want > SLOW && cfg!(debug_assertions) {
                    continue;
                }
                assert_eq!(pos.perft(depth as u32), want, "{}: depth {depth}", at());
                checked += 1;
            }
        }
    }
    assert!(checked > 50);
}

#[test]
fn stoppable_perft_counts_the_same_and_stops() {
    use std::sync::atomic::AtomicBool;
    for (game, text) in [
        ("ataxx", "x5o/7/2-1-2/7/2-1-2/7/o5x x 0 1"),
        (
            "ataxx",
            "x1o1x1o/1x1o1x1/o1x1o1x/7/x1o1x1o/1x1o1x1/o1x1o1x x 0 1",
        ),
        ("othello", "startpos"),
    ] {
        let game: Game = game.parse().unwrap();
        let pos = if text == "startpos" {
            game.startpos()
        } else {
            game.parse_position(text).unwrap()
        };
        let go = AtomicBool::new(false);
        for d in 0..=5 {
            assert_eq!(
                pos.perft_stoppable(d, &go),
                Some(pos.perft(d)),
                "{text} {d}"
            );
        }
        // A dense position at depth 12 would take days; with the flag set it gives up.
        let stop = AtomicBool::new(true);
        assert_eq!(pos.perft_stoppable(12, &stop), None, "{text}");
    }
}
