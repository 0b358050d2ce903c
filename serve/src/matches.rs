//! Gating and anchoring games as the pipeline writes them (`eval/gen-NNNN-gate.pgn`,
//! `eval/gen-NNNN-anchor.pgn`, see `eval::to_pgn`): read back and replayed through the
//! engine, ply by ply; from the evaluation record alone (results only) for runs that
//! wrote no PGN files.

use std::path::Path;

use engine::Game;
pub use eval::pgn::{PgnGame, parse};

use crate::error::ApiError;
use crate::games::{GameDetail, GameListing, Ply};
use crate::position::{parse_legal_move, view};

/// The listing of game `id` of a match file.
pub fn listing(source: &'static str, generation: u32, id: u64, g: &PgnGame) -> GameListing {
    GameListing {
        source,
        generation,
        id,
        players: format!("{} vs {}", g.tag("Black"), g.tag("White")),
        plies: g.moves.len(),
        result: g.tag("Result").to_string(),
        reason: g.tag("Termination").to_string(),
        viewable: true,
    }
}

/// A match game replayed from its opening; a move the engine refuses is an error.
pub fn detail(generation: u32, id: u64, g: &PgnGame) -> Result<GameDetail, ApiError> {
    let bad =
        |m: String| ApiError::Internal(format!("match game {id} of generation {generation}: {m}"));
    let game: Game = g
        .tag("Variant")
        .parse()
        .map_err(|_| bad(format!("unknown game `{}`", g.tag("Variant"))))?;
    let mut state = game
        .parse_position(g.tag("FEN"))
        .map_err(|e| bad(format!("bad opening: {e}")))?;
    let mut plies = vec![];
    for (k, m) in g.moves.iter().enumerate() {
        let mv = parse_legal_move(&state, m).map_err(|e| bad(format!("ply {k}: {e}")))?;
        plies.push(Ply::played(&state, mv));
        state.play(mv);
    }
    Ok(GameDetail {
        game: game.to_string(),
        generation,
        id,
        players: format!("{} (x) vs {} (o)", g.tag("Black"), g.tag("White")),
        result: g.tag("Result").to_string(),
        reason: g.tag("Termination").to_string(),
        plies,
        end: view(&state),
    })
}

/// The games of a generation's gating or anchoring match (`source`), read from its PGN
/// (`None` when the run wrote none: runs before the PGN files were written).
pub fn match_games(
    run: &Path,
    generation: u32,
    source: &str,
) -> Result<Option<Vec<PgnGame>>, ApiError> {
    match rundir::read_regular_text(
        &rundir::RunDir::new(run).match_pgn(generation, source),
        rundir::Limit::TEXT,
    ) {
        Ok(text) => Ok(Some(parse(&text))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ApiError::Internal(format!(
            "cannot read the {source} games: {e}"
        ))),
    }
}

/// The gating and anchoring games of one evaluation record: from their PGN files when
/// the run wrote them (viewable), else from the record (results only).
pub fn match_listings(
    run: &Path,
    record: &pipeline::report::EvalRecord,
) -> Result<Vec<GameListing>, ApiError> {
    let mut out = vec![];
    for source in ["gate", "anchor"] {
        if let Some(games) = match_games(run, record.generation, source)? {
            out.extend(
                games
                    .iter()
                    .enumerate()
                    .map(|(i, g)| listing(source, record.generation, i as u64, g)),
            );
        } else {
            out.extend(result_listings(record, source));
        }
    }
    Ok(out)
}

/// A record's games of one match, results only.
fn result_listings(
    record: &pipeline::report::EvalRecord,
    source: &'static str,
) -> Vec<GameListing> {
    let matches: Vec<&eval::MatchSummary> = if source == "gate" {
        record.gate.iter().map(|v| &v.matched).collect()
    } else {
        record.anchor.iter().collect()
    };
    let mut out = vec![];
    for m in matches {
        for r in &m.results {
            out.push(GameListing {
                source,
                generation: record.generation,
                id: out.len() as u64,
                players: format!("{} vs {}", r.x, r.o),
                plies: 0,
                result: r.result.clone(),
                reason: r.reason.clone(),
                viewable: false,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::Side;

    #[test]
    fn a_written_match_reads_back_and_replays() {
        let game: Game = "ataxx".parse().unwrap();
        let start = game.startpos();
        let moves = ["f1", "a2", "g1e3"];
        let mut s = start;
        for m in moves {
            s.play(s.parse_move(m).unwrap());
        }
        let rec = |pair, a_is_x| eval::GameRecord {
            pair,
            a_is_x,
            x_name: "gen-0001".into(),
            o_name: "random".into(),
            opening: start,
            moves: moves.iter().map(|m| m.to_string()).collect(),
            winner: Some(Side::X),
            reason: "move-cap".into(),
        };
        let text = eval::to_pgn(&[rec(0, true), rec(1, false)], game, None);
        let games = parse(&text);
        assert_eq!(games.len(), 2);
        assert_eq!(games[1].moves, moves);
        let l = listing("gate", 3, 1, &games[1]);
        assert_eq!(
            (l.players.as_str(), l.result.as_str(), l.plies),
            ("gen-0001 vs random", "1-0", 3)
        );
        let d = detail(3, 1, &games[0]).unwrap();
        assert_eq!(d.plies.len(), 3);
        assert_eq!(d.plies[2].view.position, {
            let mut t = start;
            t.play(t.parse_move("f1").unwrap());
            t.play(t.parse_move("a2").unwrap());
            t.text()
        });
        assert_eq!(d.end.position, s.text());
        // A move the engine refuses is an error, not a panic.
        let mut broken = games[0].clone();
        broken.moves.push("a1a1".into());
        assert!(detail(3, 0, &broken).is_err());
    }
}
