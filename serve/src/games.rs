//! Recorded games of a run: the types of a listing and of a game replayed ply by ply,
//! and the self-play games of a generation, read from its Parquet shards (one row per
//! position, grouped by game). The gating and anchoring games are in `matches`, which
//! builds on these types.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use engine::{Game, Move, Side, State};
use selfplay::Sample;
use serde::Serialize;

use crate::error::ApiError;
use crate::position::{PositionView, move_cells, view};

/// One recorded game in a listing.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GameListing {
    /// `selfplay`, `gate` or `anchor`.
    pub source: &'static str,
    /// The generation.
    pub generation: u32,
    /// The game's number: its `game_id` for self-play, its index in the match otherwise.
    pub id: u64,
    /// The players: the model for self-play, `x vs o` for matches.
    pub players: String,
    /// Plies recorded (0 when only the result is).
    pub plies: usize,
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub result: String,
    /// How it ended.
    pub reason: String,
    /// Whether its moves can be stepped through.
    pub viewable: bool,
}

/// A probability of the recorded policy on one move.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PolicyEntry {
    /// The move in notation.
    pub text: String,
    /// The source cell of a jump.
    pub from: Option<usize>,
    /// The target cell (none for the pass).
    pub to: Option<usize>,
    /// The search's probability (the training target).
    pub p: f32,
}

/// One ply of a recorded game: the position before the move, and what was played.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ply {
    /// The board before the move.
    pub view: PositionView,
    /// The move played, in notation.
    pub played: String,
    /// Its source cell, for a jump.
    pub from: Option<usize>,
    /// Its target cell.
    pub to: Option<usize>,
    /// The recorded policy over the legal moves.
    pub policy: Vec<PolicyEntry>,
    /// The search's value of the position, side-to-move view (self-play only).
    pub root_q: Option<f32>,
    /// Simulations of the search (self-play only).
    pub visits: Option<u32>,
    /// Whether the move came from a full search.
    pub full_search: bool,
}

impl Ply {
    /// `mv` played in `state`, with nothing recorded of the search (a match game); a
    /// self-play ply adds its policy and search figures.
    pub fn played(state: &State, mv: Move) -> Ply {
        let (from, to) = move_cells(mv);
        Ply {
            view: view(state),
            played: state.move_to_string(mv),
            from,
            to,
            policy: vec![],
            root_q: None,
            visits: None,
            full_search: false,
        }
    }
}

/// A recorded game, ply by ply, and the position it ended in.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GameDetail {
    /// The game name.
    pub game: String,
    /// The generation.
    pub generation: u32,
    /// The game's number (see [`GameListing::id`]).
    pub id: u64,
    /// Who played it: the network for self-play, `x vs o` for matches.
    pub players: String,
    /// `1-0`, `0-1` or `1/2-1/2`, from the record.
    pub result: String,
    /// How it ended, from the record.
    pub reason: String,
    /// The plies in order.
    pub plies: Vec<Ply>,
    /// The position after the last move.
    pub end: PositionView,
}

/// Parsed shards, keyed by file, kept while their size and time are unchanged (at most
/// a few: a listing reads every shard of one generation).
#[derive(Default)]
pub struct ShardCache {
    entries: Mutex<HashMap<PathBuf, CachedShard>>,
}

/// A shard's rows, with the modification time and size they were read at.
type CachedShard = (SystemTime, u64, Arc<Vec<Sample>>);

/// Shards cached at most.
const CACHE_SHARDS: usize = 16;

impl ShardCache {
    fn read(&self, path: &Path) -> Result<Arc<Vec<Sample>>, ApiError> {
        let meta = std::fs::metadata(path)
            .map_err(|e| ApiError::Internal(format!("cannot read a shard: {e}")))?;
        let stamp = (
            meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            meta.len(),
        );
        if let Some((t, l, rows)) = self.entries.lock().expect("cache").get(path)
            && (*t, *l) == stamp
        {
            return Ok(rows.clone());
        }
        let (rows, _) = selfplay::read_shard(path)
            .map_err(|e| ApiError::Internal(format!("cannot read a shard: {e}")))?;
        let rows = Arc::new(rows);
        let mut m = self.entries.lock().expect("cache");
        if m.len() >= CACHE_SHARDS {
            m.clear();
        }
        m.insert(path.to_path_buf(), (stamp.0, stamp.1, rows.clone()));
        Ok(rows)
    }

    /// Every self-play position of generation `gen` of `run`, grouped by game.
    pub fn games(
        &self,
        run: &Path,
        generation: u32,
    ) -> Result<BTreeMap<u64, Vec<Sample>>, ApiError> {
        let dir = rundir::RunDir::new(run).selfplay_generation(generation);
        let mut out: BTreeMap<u64, Vec<Sample>> = BTreeMap::new();
        if !dir.is_dir() {
            return Ok(out);
        }
        let files = selfplay::shard_files(&dir)
            .map_err(|e| ApiError::Internal(format!("cannot list shards: {e}")))?;
        for f in files {
            for s in self.read(&f)?.iter() {
                out.entry(s.game_id).or_default().push(s.clone());
            }
        }
        for rows in out.values_mut() {
            rows.sort_by_key(|s| s.ply);
        }
        Ok(out)
    }
}

fn result_text(x_points: f32) -> &'static str {
    if x_points > 0.0 {
        "1-0"
    } else if x_points < 0.0 {
        "0-1"
    } else {
        "1/2-1/2"
    }
}

/// The result of a self-play game from its first row (side-to-move view turned to x's).
fn selfplay_result(game: Game, first: &Sample) -> &'static str {
    let stm = game
        .parse_position(&first.fen)
        .map(|s| s.side_to_move())
        .unwrap_or(Side::X);
    let r = if stm == Side::X {
        first.result
    } else {
        -first.result
    };
    result_text(r)
}

/// The listing of one game's rows.
pub fn listing(generation: u32, id: u64, rows: &[Sample]) -> Option<GameListing> {
    let first = rows.first()?;
    let game: Game = first.variant.parse().ok()?;
    Some(GameListing {
        source: "selfplay",
        generation,
        id,
        players: first.model.clone(),
        plies: rows.len(),
        result: selfplay_result(game, first).to_string(),
        reason: first.end_reason.clone(),
        viewable: true,
    })
}

/// One self-play game, ply by ply. A row whose position, played move or policy does not
/// fit its game is an error naming the ply.
pub fn detail(generation: u32, id: u64, rows: &[Sample]) -> Result<GameDetail, ApiError> {
    let bad =
        |msg: String| ApiError::Internal(format!("game {id} of generation {generation}: {msg}"));
    let first = rows.first().ok_or_else(|| bad("no rows".into()))?;
    let game: Game = first
        .variant
        .parse()
        .map_err(|_| bad(format!("unknown game `{}`", first.variant)))?;
    let mut plies = vec![];
    let mut last: Option<State> = None;
    for r in rows {
        let state = game
            .parse_position(&r.fen)
            .map_err(|e| bad(format!("ply {}: bad position: {e}", r.ply)))?;
        // The legal moves by policy index, once per ply.
        let by_index: std::collections::HashMap<usize, Move> = state
            .legal_moves()
            .into_iter()
            .map(|m| (state.policy_index(m), m))
            .collect();
        let mv = *by_index
            .get(&(r.played as usize))
            .ok_or_else(|| bad(format!("ply {}: the played move is not legal", r.ply)))?;
        let policy = r
            .legal
            .iter()
            .zip(&r.policy)
            .filter_map(|(&i, &p)| {
                let m = *by_index.get(&(i as usize))?;
                let (from, to) = move_cells(m);
                Some(PolicyEntry {
                    text: state.move_to_string(m),
                    from,
                    to,
                    p,
                })
            })
            .collect();
        plies.push(Ply {
            policy,
            root_q: Some(r.root_q),
            visits: Some(r.visits),
            full_search: r.full_search,
            ..Ply::played(&state, mv)
        });
        last = Some(state.after(mv));
    }
    let end = last.expect("rows is not empty");
    Ok(GameDetail {
        game: game.to_string(),
        generation,
        id,
        players: first.model.clone(),
        result: selfplay_result(game, first).to_string(),
        reason: first.end_reason.clone(),
        plies,
        end: view(&end),
    })
}
