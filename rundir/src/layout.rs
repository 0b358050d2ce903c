//! Where everything of a run lives: the one place that builds run-directory paths.
//!
//! ```text
//! RUN/config.toml                    the effective config
//! RUN/run.lock                       who runs it (an operating-system file lock)
//! RUN/run.log                        every stage line and warning, with Unix times
//! RUN/selfplay/gen-NNNN/             a generation's shards and summary.json
//! RUN/selfplay/w-HOST-PID-nK-SEQ/    a separate worker's batch
//! RUN/models/gen-NNNN/               a generation's network (.partial while written;
//!                                    records only, with removed.json, once retired)
//! RUN/models/best                    the best model's name
//! RUN/eval/gen-NNNN.json             its gating verdict and anchoring
//! RUN/eval/gen-NNNN-gate.pgn         the games of its gate (and -anchor.pgn)
//! RUN/counters/NAME                  run-wide counters (game ids, worker numbers)
//! RUN/leases/ROLE                    the trainer's and gatekeeper's leases
//! RUN/leases/roles/HOST-PID          the separate roles holding the run
//! RUN/slurm/                         batch scripts, logs and jobs.json
//! RUN/metrics.csv, report.md, *.svg  the report
//! ```

use std::path::{Path, PathBuf};

/// The name of generation `g`'s folders and records: `gen-0003`.
pub fn generation_name(g: u32) -> String {
    format!("gen-{g:04}")
}

/// The generation a name such as `gen-0003` stands for.
pub fn parse_generation(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("gen-")?;
    (digits.len() >= 4 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// The lock file of a run directory (see [`crate::RunLock`]).
pub const LOCK_FILE: &str = "run.lock";

/// The summary of a self-play folder (a generation's or a batch's).
pub const SUMMARY: &str = "summary.json";
/// The training record of a model folder (its presence means the network is whole).
pub const TRAIN_RECORD: &str = "train.json";
/// What the asynchronous trainer saw when it trained a candidate (in its model folder).
pub const CANDIDATE_RECORD: &str = "candidate.json";
/// What the run's retention removed from a model folder, and why (its presence means the
/// folder holds a generation's records but no longer its network).
pub const REMOVED_RECORD: &str = "removed.json";

/// Whether model folder `dir` is one whose network the run's retention removed: its
/// [`REMOVED_RECORD`] there and no `model.json` (which, present, makes it a model
/// whatever else the folder holds).
pub fn network_removed(dir: &Path) -> bool {
    dir.join(REMOVED_RECORD).is_file() && std::fs::symlink_metadata(dir.join("model.json")).is_err()
}

/// A run directory: typed paths to everything in it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RunDir {
    root: PathBuf,
}

impl RunDir {
    /// The run directory at `root` (nothing is created).
    pub fn new(root: impl Into<PathBuf>) -> RunDir {
        RunDir { root: root.into() }
    }

    /// The folder itself.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// Why a new run must not start in this folder, if it must not: the folder exists,
    /// holds files, and is not a run (no `config.toml`, and no `run.lock` of a run killed
    /// before it saved its config). A run never scatters its files among someone
    /// else's.
    pub fn foreign(&self) -> Option<String> {
        let mut entries = std::fs::read_dir(&self.root).ok()?;
        if self.config().exists() || self.lock_file().exists() {
            return None;
        }
        let first = entries.next()?.ok()?;
        let more = if entries.next().is_some() {
            ", …"
        } else {
            ""
        };
        Some(format!(
            "{} is not a run directory (no config.toml) and is not empty (it holds {}{more}): \
             give a new or empty folder for a new run",
            self.root.display(),
            first.file_name().to_string_lossy()
        ))
    }

    /// `config.toml`: the run's effective config.
    pub fn config(&self) -> PathBuf {
        self.root.join("config.toml")
    }

    /// `run.lock`.
    pub fn lock_file(&self) -> PathBuf {
        self.root.join(LOCK_FILE)
    }

    /// `run.log`.
    pub fn log_file(&self) -> PathBuf {
        self.root.join("run.log")
    }

    /// `metrics.csv`: one row per generation.
    pub fn metrics(&self) -> PathBuf {
        self.root.join("metrics.csv")
    }

    /// `report.md`.
    pub fn report(&self) -> PathBuf {
        self.root.join("report.md")
    }

    /// A plot of the report (`name` is its file name, e.g. `elo.svg`).
    pub fn plot(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// `selfplay/`: the generations' shards and the workers' batches.
    pub fn selfplay(&self) -> PathBuf {
        self.root.join("selfplay")
    }

    /// `selfplay/gen-NNNN`: generation `g`'s shards (synchronous loop).
    pub fn selfplay_generation(&self, g: u32) -> PathBuf {
        self.selfplay().join(generation_name(g))
    }

    /// `selfplay/gen-NNNN.partial`: generation `g`'s shards while they are played.
    pub fn selfplay_partial(&self, g: u32) -> PathBuf {
        self.selfplay()
            .join(format!("{}.partial", generation_name(g)))
    }

    /// `selfplay/gen-NNNN/summary.json`: what generation `g`'s self-play did.
    pub fn selfplay_summary(&self, g: u32) -> PathBuf {
        self.selfplay_generation(g).join(SUMMARY)
    }

    /// `selfplay/NAME`: a published worker batch.
    pub fn batch(&self, name: &str) -> PathBuf {
        self.selfplay().join(name)
    }

    /// `selfplay/.NAME.SUFFIX`: a worker batch being played (`games`) or merged
    /// (`partial`).
    pub fn batch_hidden(&self, name: &str, suffix: &str) -> PathBuf {
        self.selfplay().join(format!(".{name}.{suffix}"))
    }

    /// `models/`.
    pub fn models(&self) -> PathBuf {
        self.root.join("models")
    }

    /// `models/NAME`: a model folder (a generation's network).
    pub fn model(&self, name: &str) -> PathBuf {
        self.models().join(name)
    }

    /// `models/gen-NNNN`: generation `g`'s network.
    pub fn generation_model(&self, g: u32) -> PathBuf {
        self.model(&generation_name(g))
    }

    /// `models/gen-NNNN/train.json`: generation `g`'s training record, written last.
    pub fn train_record(&self, g: u32) -> PathBuf {
        self.generation_model(g).join(TRAIN_RECORD)
    }

    /// `models/gen-NNNN/candidate.json`: what the asynchronous trainer saw.
    pub fn candidate_record(&self, g: u32) -> PathBuf {
        self.generation_model(g).join(CANDIDATE_RECORD)
    }

    /// `models/gen-NNNN.partial`: generation `g`'s network while it is trained.
    pub fn model_partial(&self, g: u32) -> PathBuf {
        self.models()
            .join(format!("{}.partial", generation_name(g)))
    }

    /// `models/best`: the name of the best model.
    pub fn best_pointer(&self) -> PathBuf {
        self.models().join("best")
    }

    /// `eval/`.
    pub fn eval(&self) -> PathBuf {
        self.root.join("eval")
    }

    /// `eval/gen-NNNN.json`: generation `g`'s verdict.
    pub fn eval_record(&self, g: u32) -> PathBuf {
        self.eval().join(format!("{}.json", generation_name(g)))
    }

    /// `eval/gen-NNNN-SOURCE.pgn`: the games of generation `g`'s `gate` or `anchor`
    /// match.
    pub fn match_pgn(&self, g: u32, source: &str) -> PathBuf {
        self.eval()
            .join(format!("{}-{source}.pgn", generation_name(g)))
    }

    /// `counters/`: the run-wide counters.
    pub fn counters(&self) -> PathBuf {
        self.root.join("counters")
    }

    /// `counters/NAME`: a run-wide counter.
    pub fn counter(&self, name: &str) -> PathBuf {
        self.counters().join(name)
    }

    /// `counters/NAME.lock`: the lock of a counter.
    pub fn counter_lock(&self, name: &str) -> PathBuf {
        self.counters().join(format!("{name}.lock"))
    }

    /// `leases/`.
    pub fn leases(&self) -> PathBuf {
        self.root.join("leases")
    }

    /// `leases/setup.lock`: held while a role sets the run up.
    pub fn setup_lock(&self) -> PathBuf {
        self.leases().join("setup.lock")
    }

    /// `leases/roles/`: the registrations of the roles that hold the run.
    pub fn roles(&self) -> PathBuf {
        self.leases().join("roles")
    }

    /// `slurm/`: batch scripts, their logs, and the submitted jobs.
    pub fn slurm(&self) -> PathBuf {
        self.root.join("slurm")
    }

    /// `slurm/ROLE.sbatch`: a role's batch script.
    pub fn slurm_script(&self, role: &str) -> PathBuf {
        self.slurm().join(format!("{role}.sbatch"))
    }

    /// `slurm/logs/`: the jobs' output.
    pub fn slurm_logs(&self) -> PathBuf {
        self.slurm().join("logs")
    }

    /// `slurm/jobs.json`: the submitted jobs.
    pub fn slurm_jobs(&self) -> PathBuf {
        self.slurm().join("jobs.json")
    }

    /// Appends `line` to `run.log` with the Unix time (best effort: a log that cannot be
    /// written, or is not a regular file of the run, stops nothing and is not written).
    pub fn append_log(&self, line: &str) {
        use std::io::Write as _;
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut options = std::fs::OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            // The log is the run's own file: a link there is not followed out of the
            // run, and a FIFO there is not waited on.
            options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
        }
        if let Ok(mut f) = options.open(self.log_file())
            && f.metadata().is_ok_and(|m| m.is_file())
        {
            let _ = writeln!(f, "{stamp} {line}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_names_round_trip() {
        assert_eq!(generation_name(3), "gen-0003");
        assert_eq!(generation_name(12345), "gen-12345");
        assert_eq!(parse_generation("gen-0003"), Some(3));
        assert_eq!(parse_generation("gen-12345"), Some(12345));
        for bad in ["gen-3", "gen-00a3", "gen-0003.partial", "best", "gen-"] {
            assert_eq!(parse_generation(bad), None, "{bad}");
        }
        let run = RunDir::new("/r");
        assert_eq!(
            run.match_pgn(2, "gate"),
            Path::new("/r/eval/gen-0002-gate.pgn")
        );
        assert_eq!(
            run.model_partial(1),
            Path::new("/r/models/gen-0001.partial")
        );
    }
}
