//! Match games as PGN: written by `flipzero match` and by gating and anchoring
//! ([`to_pgn`]), read back by the game viewer and by `flipzero ratings --pgn`
//! ([`parse`], [`rated_games`]).
//!
//! As Ataxx tools write it, `Black` is the first player (`x`) and `1-0` means `x` won.
//! A match on a clock carries a `TimeControl` tag: `BASE+INC` in seconds for
//! `tc=BASE+INC` (the PGN standard's incremental form, as cutechess writes it) and
//! `1/SECONDS` (one move per period) for `time=MS`.

use std::fmt::Write as _;

use engine::{Game, Side};

use crate::matches::{GameRecord, MatchClock};

/// The games in PGN, with a `TimeControl` tag when they were played on `clock`.
pub fn to_pgn(records: &[GameRecord], game: Game, clock: Option<MatchClock>) -> String {
    let time_control = clock.map_or(String::new(), |c| {
        format!("[TimeControl \"{}\"]\n", time_control(c))
    });
    let mut s = String::new();
    for r in records {
        let result = match r.winner {
            Some(Side::X) => "1-0",
            Some(Side::O) => "0-1",
            None => "1/2-1/2",
        };
        let _ = write!(
            s,
            "[Event \"flipzero match\"]\n[Round \"{}.{}\"]\n[Black {}]\n[White {}]\n\
             [Variant \"{game}\"]\n[FEN \"{}\"]\n{time_control}[Result \"{result}\"]\n\
             [Termination \"{}\"]\n\n",
            r.pair + 1,
            if r.a_is_x { 1 } else { 2 },
            quote(&r.x_name),
            quote(&r.o_name),
            r.opening.text(),
            r.reason,
        );
        let first_is_x = r.opening.side_to_move() == Side::X;
        for (i, m) in r.moves.iter().enumerate() {
            let ply = i + usize::from(!first_is_x);
            if ply % 2 == 0 {
                let _ = write!(s, "{}. ", ply / 2 + 1);
            } else if i == 0 {
                let _ = write!(s, "{}... ", ply / 2 + 1);
            }
            let _ = write!(s, "{m} ");
        }
        let _ = writeln!(s, "{result}\n");
    }
    s
}

/// The PGN `TimeControl` value of a match clock.
fn time_control(c: MatchClock) -> String {
    match c {
        MatchClock::PerMove(t) => format!("1/{}", t.as_secs_f64()),
        MatchClock::Fischer { base, increment } => {
            format!("{}+{}", base.as_secs_f64(), increment.as_secs_f64())
        }
    }
}

/// The match clock of a PGN `TimeControl` value ([`to_pgn`]'s two forms); `None` for
/// anything else (`-`, `?`, moves-per-period controls of other tools).
pub fn clock_of_time_control(v: &str) -> Option<MatchClock> {
    // Rewritten as the clock's own text and parsed by `MatchClock`, so that only clocks
    // a match accepts come back.
    let text = match v.strip_prefix("1/") {
        Some(per_move) => {
            let secs: f64 = per_move.parse().ok()?;
            // NaN and negatives become 0, which `time=` refuses.
            format!("time={}", (secs * 1000.0).round() as u64)
        }
        None => format!("tc={v}"),
    };
    text.parse().ok()
}

/// One game of a PGN file: its tags and its moves in notation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PgnGame {
    /// `(name, value)` in file order.
    pub tags: Vec<(String, String)>,
    /// The moves.
    pub moves: Vec<String>,
}

impl PgnGame {
    /// The value of tag `name`; empty when the game has no such tag.
    pub fn tag(&self, name: &str) -> &str {
        self.tags
            .iter()
            .find(|(k, _)| k == name)
            .map_or("", |(_, v)| v.as_str())
    }
}

/// Splits a PGN text into games. A game starts at an `[Event` tag, or at any tag line
/// after move text or repeating a tag of the game before (files of other tools that
/// leave `Event` out). Tag values are read as PGN quotes them (`\"` and `\\` inside).
pub fn parse(text: &str) -> Vec<PgnGame> {
    let mut out: Vec<PgnGame> = vec![];
    for line in text.lines().map(str::trim) {
        let tag = line
            .strip_prefix('[')
            .and_then(|l| l.strip_suffix(']'))
            .and_then(|t| t.split_once(' '))
            .map(|(k, v)| (k.to_string(), unquote(v.trim())));
        if let Some((k, _)) = &tag {
            let starts = match out.last() {
                None => true,
                Some(g) => {
                    k == "Event" || !g.moves.is_empty() || g.tags.iter().any(|(t, _)| t == k)
                }
            };
            if starts {
                out.push(PgnGame::default());
            }
        }
        let Some(g) = out.last_mut() else { continue };
        if let Some(tag) = tag {
            g.tags.push(tag);
            continue;
        }
        if line.starts_with('[') {
            continue;
        }
        for tok in line.split_whitespace() {
            if tok.ends_with('.') || ["1-0", "0-1", "1/2-1/2", "*"].contains(&tok) {
                continue;
            }
            g.moves.push(tok.to_string());
        }
    }
    out
}

/// A tag value as PGN writes it: in quotes, with `\` before `"` and `\` inside.
fn quote(v: &str) -> String {
    format!("\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The text of a quoted tag value ([`quote`]); an unquoted value is taken as it is.
fn unquote(v: &str) -> String {
    let Some(inner) = v.strip_prefix('"') else {
        return v.to_string();
    };
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            '"' => break,
            c => out.push(c),
        }
    }
    out
}

/// A PGN game that cannot be rated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("game {game} (counting from 1): {problem}")]
pub struct BadPgnGame {
    /// Which game of the file.
    pub game: usize,
    /// What is wrong with it.
    pub problem: String,
}

/// The finished games of a PGN text as `(x player, o player, x's points)`, for the
/// rating list. A player is named by its `Black`/`White` tag, followed by its clock
/// (`ab [time=100]`) when the game has a `TimeControl` tag of [`to_pgn`]'s forms: the
/// same engine at another time control is another player. Unfinished games (`*`) are
/// left out; a game without both names or with a result that is not `1-0`, `0-1`,
/// `1/2-1/2` or `*` is an error.
pub fn rated_games(text: &str) -> Result<Vec<(String, String, f64)>, BadPgnGame> {
    let mut out = vec![];
    for (i, g) in parse(text).iter().enumerate() {
        let bad = |problem: String| BadPgnGame {
            game: i + 1,
            problem,
        };
        let points = match g.tag("Result") {
            "1-0" => 1.0,
            "0-1" => 0.0,
            "1/2-1/2" => 0.5,
            "*" => continue,
            "" => return Err(bad("no Result tag".into())),
            r => return Err(bad(format!("unknown result `{r}`"))),
        };
        let suffix = match g.tag("TimeControl") {
            "" | "-" | "?" => String::new(),
            tc => match clock_of_time_control(tc) {
                Some(c) => format!(" [{c}]"),
                None => format!(" [TimeControl {tc}]"),
            },
        };
        let name = |tag: &str| match g.tag(tag) {
            "" => Err(bad(format!("no player in its {tag} tag"))),
            n => Ok(format!("{n}{suffix}")),
        };
        out.push((name("Black")?, name("White")?, points));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(pair: usize, a_is_x: bool, winner: Option<Side>) -> GameRecord {
        let game: Game = "ataxx".parse().unwrap();
        let (a, b) = ("mcts:m".to_string(), "ab".to_string());
        let (x_name, o_name) = if a_is_x { (a, b) } else { (b, a) };
        GameRecord {
            pair,
            a_is_x,
            x_name,
            o_name,
            opening: game.startpos(),
            moves: vec!["f1".into(), "a2".into()],
            winner,
            reason: "test".into(),
        }
    }

    #[test]
    fn clocked_games_read_back_as_players_at_that_clock() {
        let game: Game = "ataxx".parse().unwrap();
        let games = [
            record(0, true, Some(Side::X)),
            record(0, false, Some(Side::X)),
            record(1, true, None),
            record(1, false, Some(Side::O)),
        ];
        for clock in ["time=100", "time=1500", "tc=1+0.01", "tc=60"] {
            let c: MatchClock = clock.parse().unwrap();
            let text = to_pgn(&games, game, Some(c));
            assert_eq!(
                clock_of_time_control(parse(&text)[0].tag("TimeControl")),
                Some(c)
            );
            let a = format!("mcts:m [{c}]");
            let b = format!("ab [{c}]");
            assert_eq!(
                rated_games(&text).unwrap(),
                vec![
                    (a.clone(), b.clone(), 1.0),
                    (b.clone(), a.clone(), 1.0),
                    (a.clone(), b.clone(), 0.5),
                    (b, a, 0.0),
                ],
                "{clock}"
            );
        }
        // Without a clock the names are the tags themselves, and no TimeControl is written.
        let text = to_pgn(&games[..1], game, None);
        assert!(!text.contains("TimeControl"));
        assert_eq!(
            rated_games(&text).unwrap(),
            vec![("mcts:m".into(), "ab".into(), 1.0)]
        );
    }

    #[test]
    fn names_with_quotes_and_files_without_event_tags_read_back() {
        let game: Game = "ataxx".parse().unwrap();
        let mut r = record(0, true, Some(Side::O));
        r.x_name = r#"uai:C:\engines\"my" engine"#.into();
        let text = to_pgn(&[r.clone(), r.clone()], game, None);
        let games = parse(&text);
        assert_eq!(games.len(), 2);
        assert_eq!(games[1].tag("Black"), r.x_name);
        assert_eq!(games[1].moves, r.moves);
        // Another tool's file: no Event tags, one game after another.
        let bare = text.replace("[Event \"flipzero match\"]\n", "");
        let games = parse(&bare);
        assert_eq!(games.len(), 2);
        assert_eq!(rated_games(&bare).unwrap()[1], (r.x_name, "ab".into(), 0.0));
        // A game with no moves before the next one's tags is still two games.
        let no_moves = "[Black \"a\"]\n[White \"b\"]\n[Result \"1-0\"]\n\n\
                        [Black \"b\"]\n[White \"a\"]\n[Result \"0-1\"]\n";
        assert_eq!(
            rated_games(no_moves).unwrap(),
            vec![("a".into(), "b".into(), 1.0), ("b".into(), "a".into(), 0.0)]
        );
    }

    #[test]
    fn unratable_games_are_named() {
        let game: Game = "ataxx".parse().unwrap();
        let good = to_pgn(&[record(0, true, None)], game, None);
        let unfinished = good.replace("1/2-1/2", "*");
        assert_eq!(
            rated_games(&format!("{good}{unfinished}")).unwrap().len(),
            1
        );
        let odd = format!("{good}{}", good.replace("1/2-1/2", "2-0"));
        let e = rated_games(&odd).unwrap_err();
        assert_eq!(e.game, 2);
        assert!(e.to_string().contains("unknown result `2-0`"), "{e}");
        let nameless = good.replace("[White \"ab\"]\n", "");
        assert!(
            rated_games(&nameless)
                .unwrap_err()
                .to_string()
                .contains("no player in its White tag")
        );
        // A time control of another tool keeps its text.
        let other = good.replace("[Result", "[TimeControl \"40/9000\"]\n[Result");
        assert_eq!(
            rated_games(&other).unwrap()[0].0,
            "mcts:m [TimeControl 40/9000]"
        );
    }
}
