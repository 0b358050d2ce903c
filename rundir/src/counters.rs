//! Run-wide counters (`counters/NAME`): numbers handed out once in a whole run (game
//! ids, worker numbers), read and advanced under the counter's lock.

use crate::{Limit, RunDir};

/// What reading or advancing a counter found.
#[derive(Debug)]
pub enum CounterError {
    /// The counter's file or lock could not be read or written.
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Advancing it would overflow.
    Exhausted(std::path::PathBuf),
}

impl std::fmt::Display for CounterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CounterError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            CounterError::Exhausted(path) => {
                write!(f, "{}: the counter is exhausted", path.display())
            }
        }
    }
}

impl std::error::Error for CounterError {}

/// A counter whose file held no number (a corrupt or edited file), and what it was
/// continued from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovered {
    /// What the file held (its first 40 characters).
    pub found: String,
    /// The value the counter continued from.
    pub from: u64,
}

impl RunDir {
    /// Advances counter `name` by `n` and returns its old value: the first of the `n`
    /// numbers reserved, never below `recover()`, which gives a value past every number
    /// the run has used. A counter with no file yet starts at `recover()`, as does one
    /// whose file holds no number (then also returned as [`Recovered`], for a warning).
    pub fn reserve(
        &self,
        name: &str,
        n: u64,
        recover: impl FnOnce() -> u64,
    ) -> Result<(u64, Option<Recovered>), CounterError> {
        let path = self.counter(name);
        let lock = self.counter_lock(name);
        let io = |p: &std::path::Path| {
            let p = p.to_path_buf();
            move |source| CounterError::Io { path: p, source }
        };
        let _held = crate::lock_file(&lock).map_err(io(&lock))?;
        let (first, recovered) = match crate::read_regular_text(&path, Limit::SMALL) {
            Ok(t) => match t.trim().parse::<u64>() {
                // Never below what the run has used: a counter set back (an edit, a
                // restored backup) would hand out numbers twice.
                Ok(v) => (v.max(recover()), None),
                Err(_) => {
                    let from = recover();
                    let found = t.trim().chars().take(40).collect();
                    (from, Some(Recovered { found, from }))
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (recover(), None),
            Err(e) => return Err(io(&path)(e)),
        };
        let next = first
            .checked_add(n)
            .ok_or_else(|| CounterError::Exhausted(path.clone()))?;
        crate::write_atomic(&path, format!("{next}\n").as_bytes()).map_err(io(&path))?;
        Ok((first, recovered))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_hand_out_each_number_once_and_recover_from_garbage() {
        let root = std::env::temp_dir().join(format!("rundir-counter-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let run = RunDir::new(&root);
        assert_eq!(run.reserve("c", 5, || 0).unwrap(), (0, None));
        assert_eq!(run.reserve("c", 2, || 0).unwrap(), (5, None));
        std::fs::write(run.counter("c"), "garbage").unwrap();
        let (first, rec) = run.reserve("c", 1, || 40).unwrap();
        assert_eq!(first, 40);
        assert_eq!(rec.unwrap().found, "garbage");
        assert_eq!(run.reserve("c", 1, || 0).unwrap().0, 41);
        // A counter set back below what the run used continues past it.
        std::fs::write(run.counter("c"), "3").unwrap();
        assert_eq!(run.reserve("c", 1, || 50).unwrap(), (50, None));
        std::fs::write(run.counter("c"), format!("{}", u64::MAX)).unwrap();
        assert!(matches!(
            run.reserve("c", 1, || 0),
            Err(CounterError::Exhausted(_))
        ));
        let _ = std::fs::remove_dir_all(&root);
    }
}
