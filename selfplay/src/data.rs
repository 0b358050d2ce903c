//! Training positions as Parquet shards (schema documented in docs/data.md).
//!
//! Shards are written to a hidden temporary name, synced, and renamed when complete, so a
//! file under a final name is always whole. The reader skips, and reports, any file that
//! does not read back completely.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BooleanArray, Float32Array, Float32Builder, Int8Builder, Int32Array,
    ListArray, ListBuilder, PrimitiveArray, RecordBatch, StringArray, StringDictionaryBuilder,
    UInt16Array, UInt16Builder, UInt32Array, UInt64Array,
};
use arrow::datatypes::{
    ArrowPrimitiveType, DataType, Field, Float32Type, Int8Type, Int32Type, Schema, UInt16Type,
};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

/// Version of the row schema, written into every file's metadata. Version 2 added the
/// auxiliary targets (`ownership`, `reply_legal`, `reply_policy`) and `surprise`;
/// version 3 the alpha-beta search's score (`search_cp`).
pub const SCHEMA_VERSION: &str = "3";
/// Older schema versions this build still reads: their rows come back without the
/// columns added since (empty targets, no search score).
pub const READABLE_VERSIONS: [&str; 2] = ["1", "2"];
/// Metadata key of the schema version.
pub const KEY_SCHEMA_VERSION: &str = "flipzero.schema_version";
/// Metadata key of the generating configuration (TOML).
pub const KEY_CONFIG: &str = "flipzero.config";

/// One recorded position (one row).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sample {
    /// Game number within the run.
    pub game_id: u64,
    /// Ply of the position in its game, from 0 at the opening.
    pub ply: u16,
    /// The game name (`ataxx`, `othello`, …).
    pub variant: String,
    /// The position before the move, in the game's text format.
    pub fen: String,
    /// Policy indices of the legal moves.
    pub legal: Vec<u16>,
    /// Target probabilities, in the order of `legal`.
    pub policy: Vec<f32>,
    /// Policy index of the move played.
    pub played: u16,
    /// The search's value of the position, side-to-move view.
    pub root_q: f32,
    /// Final outcome from the side to move's view: 1, 0 or −1.
    pub result: f32,
    /// Final piece margin from the side to move's view, scaled to [−1, 1].
    pub score: f32,
    /// Whether the move came from a full search (only these are policy targets).
    pub full_search: bool,
    /// Simulations of the search.
    pub visits: u32,
    /// The evaluator (network) that played.
    pub model: String,
    /// How the game ended (`full-board`, `wipe-out`, …, `resigned`).
    pub end_reason: String,
    /// Who holds each grid cell in the game's final position, from this row's side to
    /// move's view: 1 its piece, −1 the opponent's, 0 empty, blocked or not a cell.
    /// `width × height` entries (`Game::grid`), cell `y * width + x` as in policy slot 0;
    /// empty when the game did not end by the rules (resigned, move cap).
    pub ownership: Vec<i8>,
    /// Policy indices of the legal moves of the opponent's reply (the next row's
    /// `legal`); empty when there is no reply target.
    pub reply_legal: Vec<u16>,
    /// The reply's search policy (the next row's `policy`), in the order of
    /// `reply_legal`; empty when there is no reply target.
    pub reply_policy: Vec<f32>,
    /// How much the search changed the network's mind: the KL divergence of the policy
    /// target from the network's prior over the legal moves, in nats (KataGo's policy
    /// surprise). 0 for fast searches (no policy target) and in version-1 files.
    pub surprise: f32,
    /// The alpha-beta search's score of the position (alpha-beta self-play), side to
    /// move's view, in the search's units (`engine::search::VALUE_SCALE` per unit of a
    /// net's value before tanh; `MATE - n` for a win in `n` plies); `root_q` is its
    /// tanh. `None` for MCTS rows and in files before version 3.
    pub search_cp: Option<i32>,
}

/// Failures reading or writing shards.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// File system error, with the file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Parquet or Arrow error, with the file.
    #[error("{path}: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> DataError + '_ {
    move |source| DataError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn fmt_err(path: &Path) -> impl FnOnce(String) -> DataError + '_ {
    move |message| DataError::Format {
        path: path.to_path_buf(),
        message,
    }
}

fn schema(metadata: &HashMap<String, String>) -> Schema {
    let dict = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
    let list = |t: DataType| DataType::List(Arc::new(Field::new("item", t, true)));
    Schema::new(vec![
        Field::new("game_id", DataType::UInt64, false),
        Field::new("ply", DataType::UInt16, false),
        Field::new("variant", dict.clone(), false),
        Field::new("fen", DataType::Utf8, false),
        Field::new("legal", list(DataType::UInt16), false),
        Field::new("policy", list(DataType::Float32), false),
        Field::new("played", DataType::UInt16, false),
        Field::new("root_q", DataType::Float32, false),
        Field::new("result", DataType::Float32, false),
        Field::new("score", DataType::Float32, false),
        Field::new("full_search", DataType::Boolean, false),
        Field::new("visits", DataType::UInt32, false),
        Field::new("model", DataType::Utf8, false),
        Field::new("end_reason", dict, false),
        Field::new("ownership", list(DataType::Int8), false),
        Field::new("reply_legal", list(DataType::UInt16), false),
        Field::new("reply_policy", list(DataType::Float32), false),
        Field::new("surprise", DataType::Float32, false),
        Field::new("search_cp", DataType::Int32, true),
    ])
    .with_metadata(metadata.clone())
}

fn to_batch(rows: &[Sample], schema: Arc<Schema>) -> Result<RecordBatch, String> {
    let mut variant = StringDictionaryBuilder::<Int32Type>::new();
    let mut reason = StringDictionaryBuilder::<Int32Type>::new();
    let mut legal = ListBuilder::new(UInt16Builder::new());
    let mut policy = ListBuilder::new(Float32Builder::new());
    let mut ownership = ListBuilder::new(Int8Builder::new());
    let mut reply_legal = ListBuilder::new(UInt16Builder::new());
    let mut reply_policy = ListBuilder::new(Float32Builder::new());
    for r in rows {
        variant.append_value(&r.variant);
        reason.append_value(&r.end_reason);
        legal.values().append_slice(&r.legal);
        legal.append(true);
        policy.values().append_slice(&r.policy);
        policy.append(true);
        ownership.values().append_slice(&r.ownership);
        ownership.append(true);
        reply_legal.values().append_slice(&r.reply_legal);
        reply_legal.append(true);
        reply_policy.values().append_slice(&r.reply_policy);
        reply_policy.append(true);
    }
    let col = |f: &dyn Fn(&Sample) -> f32| -> ArrayRef {
        Arc::new(rows.iter().map(f).collect::<Float32Array>())
    };
    let columns: Vec<ArrayRef> = vec![
        Arc::new(rows.iter().map(|r| r.game_id).collect::<UInt64Array>()),
        Arc::new(rows.iter().map(|r| r.ply).collect::<UInt16Array>()),
        Arc::new(variant.finish()),
        Arc::new(
            rows.iter()
                .map(|r| Some(r.fen.as_str()))
                .collect::<StringArray>(),
        ),
        Arc::new(legal.finish()),
        Arc::new(policy.finish()),
        Arc::new(rows.iter().map(|r| r.played).collect::<UInt16Array>()),
        col(&|r| r.root_q),
        col(&|r| r.result),
        col(&|r| r.score),
        Arc::new(
            rows.iter()
                .map(|r| Some(r.full_search))
                .collect::<BooleanArray>(),
        ),
        Arc::new(rows.iter().map(|r| r.visits).collect::<UInt32Array>()),
        Arc::new(
            rows.iter()
                .map(|r| Some(r.model.as_str()))
                .collect::<StringArray>(),
        ),
        Arc::new(reason.finish()),
        Arc::new(ownership.finish()),
        Arc::new(reply_legal.finish()),
        Arc::new(reply_policy.finish()),
        col(&|r| r.surprise),
        Arc::new(rows.iter().map(|r| r.search_cp).collect::<Int32Array>()),
    ];
    RecordBatch::try_new(schema, columns).map_err(|e| e.to_string())
}

/// Writes `rows` as one Parquet file at `path`, atomically (temporary name, fsync,
/// rename), with the schema version and `metadata` in the file's key-value metadata.
pub fn write_shard(
    path: &Path,
    rows: &[Sample],
    metadata: &HashMap<String, String>,
) -> Result<(), DataError> {
    let mut meta = metadata.clone();
    meta.insert(KEY_SCHEMA_VERSION.into(), SCHEMA_VERSION.into());
    let schema = Arc::new(schema(&meta));
    let batch = to_batch(rows, schema.clone()).map_err(fmt_err(path))?;
    let tmp = temp_path(path);
    let written = write_parquet(&tmp, path, &meta, schema, &batch);
    if written.is_err() {
        // A failed write (a full disk) leaves nothing behind.
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Writes `batch` to `tmp` and commits it as `path`.
fn write_parquet(
    tmp: &Path,
    path: &Path,
    meta: &HashMap<String, String>,
    schema: Arc<Schema>,
    batch: &RecordBatch,
) -> Result<(), DataError> {
    let file = File::create(tmp).map_err(io_err(tmp))?;
    // The metadata goes into the Parquet footer's key-value list (DuckDB, parquet-tools)
    // as well as into the embedded Arrow schema (pyarrow, polars).
    let mut kv: Vec<KeyValue> = meta
        .iter()
        .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
        .collect();
    kv.sort_by(|a, b| a.key.cmp(&b.key));
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(
            ZstdLevel::try_new(3).expect("valid level"),
        ))
        .set_key_value_metadata(Some(kv))
        .build();
    let mut writer = ArrowWriter::try_new(file, schema, Some(props))
        .map_err(|e| fmt_err(path)(e.to_string()))?;
    writer
        .write(batch)
        .map_err(|e| fmt_err(path)(e.to_string()))?;
    let file = writer
        .into_inner()
        .map_err(|e| fmt_err(path)(e.to_string()))?;
    commit(file, tmp, path).map_err(io_err(path))
}

pub use rundir::{commit, host_name, temp_path, write_atomic};

/// The number of rows of a shard, from its footer alone (nothing else is read).
pub fn shard_rows(path: &Path) -> Result<u64, DataError> {
    let file = rundir::open_regular(path).map_err(io_err(path))?;
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| DataError::Format {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
    Ok(u64::try_from(builder.metadata().file_metadata().num_rows()).unwrap_or(0))
}

/// Reads a whole shard: its rows and its key-value metadata.
pub fn read_shard(path: &Path) -> Result<(Vec<Sample>, HashMap<String, String>), DataError> {
    let err = |m: String| DataError::Format {
        path: path.to_path_buf(),
        message: m,
    };
    let file = rundir::open_regular(path).map_err(io_err(path))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| err(e.to_string()))?;
    let mut metadata: HashMap<String, String> = builder
        .schema()
        .metadata()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(kv) = builder.metadata().file_metadata().key_value_metadata() {
        for k in kv {
            if let Some(v) = &k.value
                && k.key.starts_with("flipzero.")
            {
                metadata.insert(k.key.clone(), v.clone());
            }
        }
    }
    let version = match metadata.get(KEY_SCHEMA_VERSION) {
        Some(v) if v == SCHEMA_VERSION || READABLE_VERSIONS.contains(&v.as_str()) => {
            v.parse::<u32>().expect("the versions are numbers")
        }
        Some(v) => {
            return Err(err(format!(
                "schema version {v}, this build reads {} and {SCHEMA_VERSION}",
                READABLE_VERSIONS.join(", ")
            )));
        }
        None => return Err(err("not a flipzero shard (no schema version)".into())),
    };
    let reader = builder.build().map_err(|e| err(e.to_string()))?;
    let mut rows = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| err(e.to_string()))?;
        rows.extend(from_batch(&batch, version).map_err(err)?);
    }
    Ok((rows, metadata))
}

/// The rows of a record batch of a file of schema `version` (an older file's rows get
/// empty auxiliary targets and no search score).
fn from_batch(b: &RecordBatch, version: u32) -> Result<Vec<Sample>, String> {
    let current = version >= 2;
    fn col<'a, T: 'static>(b: &'a RecordBatch, name: &str) -> Result<&'a T, String> {
        b.column_by_name(name)
            .ok_or_else(|| format!("missing column `{name}`"))?
            .as_any()
            .downcast_ref::<T>()
            .ok_or_else(|| format!("column `{name}` has an unexpected type"))
    }
    fn dict_strings(b: &RecordBatch, name: &str) -> Result<Vec<String>, String> {
        let a = b
            .column_by_name(name)
            .ok_or_else(|| format!("missing column `{name}`"))?;
        let cast = arrow::compute::cast(a, &DataType::Utf8).map_err(|e| e.to_string())?;
        let s = cast
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or("bad dictionary")?;
        Ok((0..s.len()).map(|i| s.value(i).to_string()).collect())
    }
    let game_id = col::<UInt64Array>(b, "game_id")?;
    let ply = col::<UInt16Array>(b, "ply")?;
    let fen = col::<StringArray>(b, "fen")?;
    let legal = col::<ListArray>(b, "legal")?;
    let policy = col::<ListArray>(b, "policy")?;
    let played = col::<UInt16Array>(b, "played")?;
    let root_q = col::<Float32Array>(b, "root_q")?;
    let result = col::<Float32Array>(b, "result")?;
    let score = col::<Float32Array>(b, "score")?;
    let full = col::<BooleanArray>(b, "full_search")?;
    let visits = col::<UInt32Array>(b, "visits")?;
    let model = col::<StringArray>(b, "model")?;
    let variant = dict_strings(b, "variant")?;
    let reason = dict_strings(b, "end_reason")?;
    /// Entry `i` of a list column of `T` values.
    fn list<T: ArrowPrimitiveType>(
        l: &ListArray,
        i: usize,
        name: &str,
    ) -> Result<Vec<T::Native>, String> {
        let v = l.value(i);
        let a = v
            .as_any()
            .downcast_ref::<PrimitiveArray<T>>()
            .ok_or_else(|| format!("column `{name}` has an unexpected item type"))?;
        Ok(a.values().to_vec())
    }
    // The auxiliary targets of version 2; an older file has none.
    let aux = |name: &str| -> Result<Option<&ListArray>, String> {
        if current {
            col::<ListArray>(b, name).map(Some)
        } else {
            Ok(None)
        }
    };
    let ownership = aux("ownership")?;
    let reply_legal = aux("reply_legal")?;
    let reply_policy = aux("reply_policy")?;
    let surprise = if current {
        Some(col::<Float32Array>(b, "surprise")?)
    } else {
        None
    };
    let search_cp = if version >= 3 {
        Some(col::<Int32Array>(b, "search_cp")?)
    } else {
        None
    };
    (0..b.num_rows())
        .map(|i| {
            Ok(Sample {
                game_id: game_id.value(i),
                ply: ply.value(i),
                variant: variant[i].clone(),
                fen: fen.value(i).to_string(),
                legal: list::<UInt16Type>(legal, i, "legal")?,
                policy: list::<Float32Type>(policy, i, "policy")?,
                played: played.value(i),
                root_q: root_q.value(i),
                result: result.value(i),
                score: score.value(i),
                full_search: full.value(i),
                visits: visits.value(i),
                model: model.value(i).to_string(),
                end_reason: reason[i].clone(),
                ownership: match ownership {
                    Some(l) => list::<Int8Type>(l, i, "ownership")?,
                    None => Vec::new(),
                },
                reply_legal: match reply_legal {
                    Some(l) => list::<UInt16Type>(l, i, "reply_legal")?,
                    None => Vec::new(),
                },
                reply_policy: match reply_policy {
                    Some(l) => list::<Float32Type>(l, i, "reply_policy")?,
                    None => Vec::new(),
                },
                surprise: surprise.map_or(0.0, |s| s.value(i)),
                search_cp: search_cp.and_then(|c| c.is_valid(i).then(|| c.value(i))),
            })
        })
        .collect()
}

/// The shard files of a directory (`*.parquet`, not hidden temporaries), sorted by name.
pub fn shard_files(dir: &Path) -> Result<Vec<PathBuf>, DataError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io_err(dir))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|e| e == "parquet")
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    files.sort();
    Ok(files)
}

/// Streams the rows of every shard under `dir` (sorted by file name), one file at a time.
/// A file that cannot be read completely is skipped and listed in
/// [`ShardStream::skipped`]; it never stops the stream.
pub struct ShardStream {
    files: std::vec::IntoIter<PathBuf>,
    current: std::vec::IntoIter<Sample>,
    skipped: Vec<DataError>,
}

impl ShardStream {
    /// A stream over the shards of `dir`.
    pub fn open(dir: &Path) -> Result<ShardStream, DataError> {
        Ok(ShardStream {
            files: shard_files(dir)?.into_iter(),
            current: Vec::new().into_iter(),
            skipped: Vec::new(),
        })
    }

    /// Files skipped so far, with why.
    pub fn skipped(&self) -> &[DataError] {
        &self.skipped
    }
}

impl Iterator for ShardStream {
    type Item = Sample;

    fn next(&mut self) -> Option<Sample> {
        loop {
            if let Some(s) = self.current.next() {
                return Some(s);
            }
            let file = self.files.next()?;
            match read_shard(&file) {
                Ok((rows, _)) => self.current = rows.into_iter(),
                Err(e) => self.skipped.push(e),
            }
        }
    }
}
