//! Training batches from Parquet shards: a window of the newest positions, a shuffled
//! order, a random board symmetry per sample, encoding on a background thread.
//!
//! Batch `k` depends only on the window, the seed and `k` (epoch permutations and
//! symmetries are drawn from them), so a run resumed at step `k` sees exactly the
//! batches an uninterrupted run would have seen.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, sync_channel};

use engine::{Game, Move, Rng, splitmix64};
use ndarray::{Array1, Array2, Array3, Array4, ArrayRef, Axis, Dimension, s};
use selfplay::Sample;

use crate::net::{PLANES, encode, encode_into};

/// A window of training rows.
pub struct Window {
    /// The rows, oldest first.
    pub rows: Vec<Sample>,
    /// Files that could not be read, with why (oldest first).
    pub skipped: Vec<String>,
    /// Rows decoded to fill the window: at most one shard's rows more than the window,
    /// however many older shards there are.
    pub decoded: usize,
}

/// The newest `max_rows` rows of the shards under `dirs` (given oldest first; files in
/// a directory are taken in name order). Shards are read newest first and reading stops
/// once the window is full, so the cost is the window's, not the run's. Unreadable
/// files are skipped and listed.
pub fn load_window(dirs: &[PathBuf], max_rows: usize) -> Result<Window, selfplay::data::DataError> {
    // Listed lazily: a folder is listed only when the window still needs its rows.
    let files = dirs
        .iter()
        .rev()
        .flat_map(|dir| match selfplay::data::shard_files(dir) {
            Ok(files) => files.into_iter().rev().map(Ok).collect::<Vec<_>>(),
            Err(e) => vec![Err(e)],
        });
    load_window_from(files, max_rows)
}

/// The newest `max_rows` rows of shard files given newest first (a listing error stops
/// the reading with that error), as [`load_window`] reads a run's folders.
pub fn load_window_from(
    newest_first: impl IntoIterator<Item = Result<PathBuf, selfplay::data::DataError>>,
    max_rows: usize,
) -> Result<Window, selfplay::data::DataError> {
    let mut chunks: Vec<Vec<Sample>> = Vec::new();
    let mut skipped = Vec::new();
    let mut decoded = 0;
    for file in newest_first {
        if decoded >= max_rows {
            break;
        }
        match selfplay::data::read_shard(&file?) {
            Ok((rows, _)) => {
                decoded += rows.len();
                chunks.push(rows);
            }
            Err(e) => skipped.push(e.to_string()),
        }
    }
    skipped.reverse();
    let mut rows: Vec<Sample> = chunks.into_iter().rev().flatten().collect();
    if rows.len() > max_rows {
        rows.drain(..rows.len() - max_rows);
    }
    Ok(Window {
        rows,
        skipped,
        decoded,
    })
}

/// One encoded batch: an array per input and target, the sample on axis 0.
///
/// Every array is in standard (row-major, contiguous) layout: [`Batch::zeros`] makes it
/// so and encoding only writes into it. The engines read the arrays as flat row-major
/// slices ([`ArrayBase::as_slice`]); an array in another layout is read in its logical
/// order, through a copy.
#[derive(Clone, Debug, PartialEq)]
pub struct Batch {
    /// Samples in the batch (the length of every array's axis 0).
    pub size: usize,
    /// `[size, PLANES, height, width]` inputs.
    pub inputs: Array4<f32>,
    /// `[size, policy_size]` target probabilities.
    pub policy: Array2<f32>,
    /// `[size, policy_size]`: 1 for legal moves, 0 otherwise.
    pub legal: Array2<f32>,
    /// `[size]`: 1 for rows that are policy targets (full searches), 0 otherwise.
    pub policy_weight: Array1<f32>,
    /// `[size, 3]` one-hot win/draw/loss targets.
    pub wdl: Array2<f32>,
    /// `[size]` final-score targets.
    pub score: Array1<f32>,
    /// `[size, height, width]` final ownership of every grid cell, from the row's side to
    /// move's view (1 its piece, −1 the opponent's, 0 empty, blocked or not a cell), cell
    /// `[y, x]` of the transformed board (the order of `inputs`' planes and of policy
    /// slot 0); all 0 for rows without the target.
    pub ownership: Array3<f32>,
    /// `[size]`: 1 for rows with an ownership target, 0 otherwise.
    pub ownership_weight: Array1<f32>,
    /// `[size, policy_size]` the opponent's reply policy: probabilities over the policy
    /// indices of the position after the played move (under the row's symmetry); all 0
    /// for rows without the target.
    pub reply_policy: Array2<f32>,
    /// `[size]`: 1 for rows with a reply-policy target, 0 otherwise.
    pub reply_weight: Array1<f32>,
}

/// The values of `a` in row-major order: borrowed when `a` is in standard layout (every
/// array of a [`Batch`] made here), else copied.
pub(crate) fn row_major<'a, D: Dimension>(a: &'a ArrayRef<f32, D>) -> Cow<'a, [f32]> {
    match a.as_slice() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(a.iter().copied().collect()),
    }
}

/// A training row that does not fit the game.
#[derive(Debug, thiserror::Error)]
#[error("row of game {game_id} ply {ply}: {message}")]
pub struct RowError {
    /// Game of the row.
    pub game_id: u64,
    /// Ply of the row.
    pub ply: u16,
    /// What is wrong.
    pub message: String,
}

/// Encodes one row under a random symmetry (of those that keep its blockers) into slot
/// `i` of `b`.
fn encode_row(
    game: Game,
    row: &Sample,
    rng: &mut Rng,
    b: &mut Batch,
    i: usize,
) -> Result<(), RowError> {
    encode_sample(game, row, |n| rng.below(n as u64) as usize, b, i)
}

/// Encodes one row into slot `i` of `b` under the symmetry `pick(count)` of the row's
/// position (an index into `State::symmetries`).
pub fn encode_sample(
    game: Game,
    row: &Sample,
    pick: impl FnOnce(usize) -> usize,
    b: &mut Batch,
    i: usize,
) -> Result<(), RowError> {
    let err = |m: String| RowError {
        game_id: row.game_id,
        ply: row.ply,
        message: m,
    };
    if row.variant != game.to_string() {
        return Err(err(format!(
            "it is a {} position, the network plays {game}",
            row.variant
        )));
    }
    let state = game
        .parse_position(&row.fen)
        .map_err(|e| err(e.to_string()))?;
    let moves = state.legal_moves();
    let by_index = |idx: u16| -> Result<Move, RowError> {
        moves
            .iter()
            .copied()
            .find(|&m| state.policy_index(m) == idx as usize)
            .ok_or_else(|| err(format!("policy index {idx} is not a legal move")))
    };
    if row.legal.len() != row.policy.len() {
        return Err(err("`legal` and `policy` differ in length".into()));
    }
    let syms = state.symmetries();
    let sym = &syms[pick(syms.len()).min(syms.len() - 1)];
    let image = state.transform(sym);
    let (w, h) = game.grid();
    let mut planes = b.inputs.index_axis_mut(Axis(0), i);
    match planes.as_slice_mut() {
        Some(out) => encode_into(&image, out),
        None => planes.assign(&encode(&image)),
    }
    let (mut target, mut legal) = (b.policy.row_mut(i), b.legal.row_mut(i));
    for (&idx, &prob) in row.legal.iter().zip(&row.policy) {
        let j = image.policy_index(sym.apply(by_index(idx)?));
        target[j] = prob;
        legal[j] = 1.0;
    }
    b.policy_weight[i] = if row.full_search { 1.0 } else { 0.0 };
    let k = if row.result > 0.5 {
        0
    } else if row.result < -0.5 {
        2
    } else {
        1
    };
    b.wdl[[i, k]] = 1.0;
    b.score[i] = row.score;
    if !row.ownership.is_empty() {
        if row.ownership.len() != w * h {
            return Err(err(format!(
                "`ownership` has {} cells, the grid {}",
                row.ownership.len(),
                w * h
            )));
        }
        let mut target = b.ownership.slice_mut(s![i, .., ..]);
        for cell in game.cells() {
            let (x, y) = game.grid_xy(cell);
            let (ix, iy) = game.grid_xy(sym.map[cell] as usize);
            let v = row.ownership[y * w + x];
            if !(-1..=1).contains(&v) {
                return Err(err(format!("ownership value {v} is not −1, 0 or 1")));
            }
            target[[iy, ix]] = f32::from(v);
        }
        b.ownership_weight[i] = 1.0;
    }
    if !row.reply_legal.is_empty() {
        if row.reply_legal.len() != row.reply_policy.len() {
            return Err(err(
                "`reply_legal` and `reply_policy` differ in length".into()
            ));
        }
        // The reply is a move of the position after the played one; its policy index is
        // geometric, so the image's index of the image move is the transformed slot.
        let reply = state.after(by_index(row.played)?);
        let replies = reply.legal_moves();
        let mut target = b.reply_policy.row_mut(i);
        for (&idx, &prob) in row.reply_legal.iter().zip(&row.reply_policy) {
            let mv = replies
                .iter()
                .copied()
                .find(|&m| reply.policy_index(m) == idx as usize)
                .ok_or_else(|| err(format!("reply index {idx} is not a legal reply")))?;
            target[image.policy_index(sym.apply(mv))] = prob;
        }
        b.reply_weight[i] = 1.0;
    }
    Ok(())
}

impl Batch {
    /// An all-zero batch of `size` samples for `game`, every array in standard layout.
    pub fn zeros(game: Game, size: usize) -> Batch {
        let (w, h) = game.grid();
        let p = game.policy_size();
        Batch {
            size,
            inputs: Array4::zeros((size, PLANES, h, w)),
            policy: Array2::zeros((size, p)),
            legal: Array2::zeros((size, p)),
            policy_weight: Array1::zeros(size),
            wdl: Array2::zeros((size, 3)),
            score: Array1::zeros(size),
            ownership: Array3::zeros((size, h, w)),
            ownership_weight: Array1::zeros(size),
            reply_policy: Array2::zeros((size, p)),
            reply_weight: Array1::zeros(size),
        }
    }
}

/// The rows an epoch runs over, by index: every row once when `surprise_weight` is 0.
/// Otherwise (KataGo's policy-surprise weighting) each row with a policy target gets the
/// weight `w = (1 − s) + s · surprise / mean surprise` (the mean over those rows, so
/// their mean weight stays 1 and the share of value-only rows is unchanged) and appears
/// `⌊w⌋` times, plus once more with probability `w − ⌊w⌋`, drawn from `seed`: the
/// positions where the search overruled the network are seen more often. Rows without
/// a policy target (fast searches) appear once.
pub fn epoch_rows(rows: &[Sample], surprise_weight: f32, seed: u64) -> Vec<u32> {
    let s = surprise_weight.clamp(0.0, 1.0);
    let targets: Vec<f32> = rows
        .iter()
        .filter(|r| r.full_search)
        .map(|r| r.surprise.max(0.0))
        .collect();
    let mean = targets.iter().map(|&v| v as f64).sum::<f64>() / targets.len().max(1) as f64;
    if s == 0.0 || mean <= 0.0 {
        return (0..rows.len() as u32).collect();
    }
    let mut rng = Rng::new(splitmix64(seed ^ 0x5C4B).1);
    let mut order = Vec::with_capacity(rows.len() * 2);
    for (i, r) in rows.iter().enumerate() {
        let w = if r.full_search {
            (1.0 - s) as f64 + s as f64 * r.surprise.max(0.0) as f64 / mean
        } else {
            1.0
        };
        let whole = w.floor();
        let copies = whole as usize + usize::from(rng.next_f64() < w - whole);
        order.extend(std::iter::repeat_n(i as u32, copies));
    }
    order
}

/// The batch of training step `step`: `size` rows of an epoch-by-epoch shuffle of the
/// window, each under a random symmetry; everything drawn from `seed` and `step`.
pub fn make_batch(
    game: Game,
    rows: &[Sample],
    size: usize,
    seed: u64,
    step: u64,
) -> Result<Batch, RowError> {
    let order: Vec<u32> = (0..rows.len() as u32).collect();
    make_batch_from(game, rows, &order, size, seed, step)
}

/// As [`make_batch`], with epochs over `order` (row indices, see [`epoch_rows`]).
pub fn make_batch_from(
    game: Game,
    rows: &[Sample],
    order: &[u32],
    size: usize,
    seed: u64,
    step: u64,
) -> Result<Batch, RowError> {
    let mut b = Batch::zeros(game, size);
    let n = order.len() as u64;
    let mut perm_epoch = u64::MAX;
    let mut perm: Vec<u32> = Vec::new();
    for i in 0..size {
        let q = step * size as u64 + i as u64;
        let epoch = q / n;
        if epoch != perm_epoch {
            perm = order.to_vec();
            let mut rng = Rng::new(splitmix64(seed ^ 0xE90C ^ epoch).1);
            for k in (1..perm.len()).rev() {
                perm.swap(k, rng.below(k as u64 + 1) as usize);
            }
            perm_epoch = epoch;
        }
        let row = &rows[perm[(q % n) as usize] as usize];
        let mut rng = Rng::new(splitmix64(seed ^ splitmix64(q).1).1);
        encode_row(game, row, &mut rng, &mut b, i)?;
    }
    Ok(b)
}

/// Batches for steps `first..last` over `order` (see [`epoch_rows`]), encoded ahead on
/// a background thread.
pub fn batch_stream(
    game: Game,
    rows: Arc<Vec<Sample>>,
    order: Arc<Vec<u32>>,
    size: usize,
    seed: u64,
    first: u64,
    last: u64,
) -> Receiver<Result<Batch, RowError>> {
    let (tx, rx) = sync_channel(4);
    std::thread::spawn(move || {
        for step in first..last {
            if tx
                .send(make_batch_from(game, &rows, &order, size, seed, step))
                .is_err()
            {
                return;
            }
        }
    });
    rx
}

/// `n` training rows of random positions of `game` (seeded): uniform policy targets over
/// the legal moves; what training benchmarks and tests run on without self-play.
pub fn random_rows(game: engine::Game, n: usize) -> Vec<selfplay::Sample> {
    let mut rng = engine::Rng::new(5);
    let mut rows = Vec::with_capacity(n);
    while rows.len() < n {
        let mut s = game.startpos();
        for _ in 0..rng.below(40) {
            let m = s.legal_moves();
            if m.len() <= 1 {
                break;
            }
            s.play(m[rng.below(m.len() as u64) as usize]);
        }
        let moves = s.legal_moves();
        if moves.len() <= 1 {
            continue;
        }
        rows.push(selfplay::Sample {
            game_id: rows.len() as u64,
            ply: 0,
            variant: game.to_string(),
            fen: s.text(),
            legal: moves.iter().map(|&m| s.policy_index(m) as u16).collect(),
            policy: vec![1.0 / moves.len() as f32; moves.len()],
            played: s.policy_index(moves[0]) as u16,
            root_q: 0.0,
            result: 0.0,
            score: 0.0,
            full_search: true,
            visits: 1,
            model: "bench".into(),
            end_reason: "bench".into(),
            ..Default::default()
        });
    }
    rows
}
