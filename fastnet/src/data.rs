//! Training examples from the pipeline's Parquet shards: the side to move's active
//! features, the legal moves' policy slots with the search's visit distribution (rows
//! played with a full search only), and a value target mixing the game's result with
//! the search's root value.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use engine::{Game, Move};

use crate::Error;
use crate::features::Layout;
use crate::net::move_slots;

/// Examples in flat arrays (one entry per position, moves in ranges).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Examples {
    /// Tuples per position.
    pub tuples: usize,
    /// `tuples` feature ids per position.
    pub features: Vec<u32>,
    /// Value target per position, in [−1, 1].
    pub value: Vec<f32>,
    /// Per position, the range of its moves in `slots`/`target` (empty: no policy target).
    pub moves: Vec<(u32, u32)>,
    /// (from, to) subnet of each move.
    pub slots: Vec<(u16, u16)>,
    /// Target probability of each move.
    pub target: Vec<f32>,
    /// The game id of each position (held-out splits go by game).
    pub game_id: Vec<u64>,
}

impl Examples {
    /// Number of positions.
    pub fn len(&self) -> usize {
        self.value.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.value.is_empty()
    }

    /// The features of position `i`.
    pub fn features_of(&self, i: usize) -> &[u32] {
        &self.features[i * self.tuples..(i + 1) * self.tuples]
    }
}

/// Every Parquet shard under `root` (recursively), skipping hidden entries (batches
/// being written, set-aside files), in name order.
pub fn shard_paths(root: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))?;
        for e in entries {
            let e = e.map_err(|e| Error::io(&dir, e))?;
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with('.') {
                continue;
            }
            let ty = e.file_type().map_err(|er| Error::io(&e.path(), er))?;
            if ty.is_dir() {
                stack.push(e.path());
            } else if ty.is_file() && name.ends_with(".parquet") {
                out.push(e.path());
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Decoded shards kept between trainings of one process (the loop trains a net every
/// generation on a window that mostly holds the same shards): each shard's examples,
/// keyed by its path and checked against its length and modification time, so a
/// replaced file is read again. Each read keeps only the shards it used, so the cache
/// holds at most one window. Decoding is most of a fast net's training time: in the
/// 2-hour run (docs/strength.md) 32 of the 38 s of a generation's training, at 1.5 M
/// positions.
#[derive(Debug, Default)]
pub struct ShardCache {
    shards: std::sync::Mutex<HashMap<PathBuf, CachedShard>>,
}

#[derive(Debug)]
struct CachedShard {
    /// What the file and the decoding were: (length, modified, game, result weight).
    key: (u64, Option<SystemTime>, String, u32),
    examples: Arc<Examples>,
}

/// Reads `paths` (oldest first) into examples of `game`: all their rows, or with
/// `newest = Some(n)` the newest `n` (the training window: shards read newest first, the
/// oldest one read cut to what is left). `result_weight` is the share of the game's
/// result in the value target (the rest the search's root value). Rows of another game
/// are an error naming the file; a shard that cannot be read is skipped with `warn`.
/// With a `cache`, shards decoded before are taken from it (and the ones read kept in
/// it); the examples are the same either way.
pub fn read_examples(
    paths: &[PathBuf],
    game: Game,
    result_weight: f32,
    newest: Option<usize>,
    cache: Option<&ShardCache>,
    mut warn: impl FnMut(&str),
) -> Result<Examples, Error> {
    let layout = Layout::new(game);
    let decoding = (&layout, game, result_weight);
    let mut ex = Examples {
        tuples: layout.tuples(),
        ..Examples::default()
    };
    let mut left = newest.unwrap_or(usize::MAX);
    let order: Vec<&PathBuf> = match newest {
        Some(_) => paths.iter().rev().collect(),
        None => paths.iter().collect(),
    };
    let mut used = HashMap::new();
    for path in order {
        if left == 0 {
            break;
        }
        let chunk = match cache {
            Some(cache) => cache.chunk(path, left, decoding, &mut warn, &mut used)?,
            None => read_shard(path, left, decoding, &mut warn)?.map(Arc::new),
        };
        let Some(chunk) = chunk else { continue };
        let take = chunk.len().min(left);
        left -= take;
        append_tail(&mut ex, &chunk, take);
    }
    if let Some(cache) = cache {
        *cache.shards.lock().expect("shard cache lock") = used;
    }
    Ok(ex)
}

impl ShardCache {
    /// Shards held.
    pub fn len(&self) -> usize {
        self.shards.lock().expect("shard cache lock").len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Shard `path`'s examples: the held ones when the file is unchanged, else decoded
    /// whole (and recorded in `used`, the next cache). A shard whose whole decoding
    /// fails gives what an uncached read of its newest `left` rows gives (a bad row may
    /// lie outside the window) and is not kept; `None`: it cannot be read, warned.
    fn chunk(
        &self,
        path: &Path,
        left: usize,
        decoding: (&Layout, Game, f32),
        warn: &mut dyn FnMut(&str),
        used: &mut HashMap<PathBuf, CachedShard>,
    ) -> Result<Option<Arc<Examples>>, Error> {
        let (_, game, result_weight) = decoding;
        let key = match std::fs::metadata(path) {
            Ok(m) => (
                m.len(),
                m.modified().ok(),
                game.to_string(),
                result_weight.to_bits(),
            ),
            Err(e) => {
                warn(&format!("{}: skipped: {e}", path.display()));
                return Ok(None);
            }
        };
        let held = self
            .shards
            .lock()
            .expect("shard cache lock")
            .get(path)
            .filter(|c| c.key == key)
            .map(|c| c.examples.clone());
        let examples = match held {
            Some(e) => e,
            None => match read_shard(path, usize::MAX, decoding, warn) {
                Ok(Some(e)) => Arc::new(e),
                Ok(None) => return Ok(None),
                Err(_) => return Ok(read_shard(path, left, decoding, warn)?.map(Arc::new)),
            },
        };
        used.insert(
            path.to_path_buf(),
            CachedShard {
                key,
                examples: examples.clone(),
            },
        );
        Ok(Some(examples))
    }
}

/// Appends the last `take` positions of `chunk` to `ex`.
fn append_tail(ex: &mut Examples, chunk: &Examples, take: usize) {
    let first = chunk.len() - take;
    if take == 0 {
        return;
    }
    let slots_from = chunk.moves[first].0;
    let base = ex.slots.len() as u32;
    ex.features
        .extend_from_slice(&chunk.features[first * chunk.tuples..]);
    ex.value.extend_from_slice(&chunk.value[first..]);
    ex.game_id.extend_from_slice(&chunk.game_id[first..]);
    ex.slots
        .extend_from_slice(&chunk.slots[slots_from as usize..]);
    ex.target
        .extend_from_slice(&chunk.target[slots_from as usize..]);
    ex.moves.extend(
        chunk.moves[first..]
            .iter()
            .map(|&(a, b)| (a - slots_from + base, b - slots_from + base)),
    );
}

/// Decodes the last `newest` rows of shard `path` (`None`: it cannot be read, said to
/// `warn`).
fn read_shard(
    path: &Path,
    newest: usize,
    (layout, game, result_weight): (&Layout, Game, f32),
    warn: &mut dyn FnMut(&str),
) -> Result<Option<Examples>, Error> {
    let cells = layout.cells();
    let mut ex = Examples {
        tuples: layout.tuples(),
        ..Examples::default()
    };
    let mut states = vec![0; cells];
    let mut feats = Vec::new();
    let mut legal: Vec<Move> = Vec::new();
    let mut rows = match selfplay::read_shard(path) {
        Ok((rows, _)) => rows,
        Err(e) => {
            warn(&format!("{}: skipped: {e}", path.display()));
            return Ok(None);
        }
    };
    if rows.len() > newest {
        rows.drain(..rows.len() - newest);
    }
    let name = game.to_string();
    for r in rows {
        if r.variant != name {
            return Err(Error::Format(format!(
                "{}: a row of game {}, training a net for {game}",
                path.display(),
                r.variant
            )));
        }
        let s = game.parse_position(&r.fen).map_err(|e| {
            Error::Format(format!(
                "{}: game {} ply {}: {e}",
                path.display(),
                r.game_id,
                r.ply
            ))
        })?;
        layout.cell_states_into(&s, &mut states);
        layout.active(&states, s.side_to_move(), &mut feats);
        let start = ex.slots.len() as u32;
        if r.full_search && r.legal.len() == r.policy.len() && r.legal.len() > 1 {
            s.legal_moves_into(&mut legal);
            for (&idx, &p) in r.legal.iter().zip(&r.policy) {
                let Some(&m) = legal
                    .iter()
                    .find(|&&m| s.policy_index(m) == usize::from(idx))
                else {
                    return Err(Error::Format(format!(
                        "{}: game {} ply {}: policy index {idx} is no legal move",
                        path.display(),
                        r.game_id,
                        r.ply
                    )));
                };
                if let Some((f, t)) = move_slots(m, cells) {
                    ex.slots.push((f as u16, t as u16));
                    ex.target.push(p);
                }
            }
        }
        ex.moves.push((start, ex.slots.len() as u32));
        ex.features.extend_from_slice(&feats);
        let v = result_weight * r.result + (1.0 - result_weight) * r.root_q;
        ex.value.push(v.clamp(-1.0, 1.0));
        ex.game_id.push(r.game_id);
    }
    Ok(Some(ex))
}
