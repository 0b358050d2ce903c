//! How a pipeline reports what it does: log lines, warnings and the progress of its
//! long tasks go to an [`Observer`] (the command line draws bars; a notebook or a test
//! may count, print or ignore them), and tests inject crashes through it. Every line and
//! warning also goes to the run's `run.log`, whatever the observer does.

/// The long tasks of a pipeline, each with its own progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Task {
    /// Self-play games of a generation or of a worker's batch (unit: games).
    Selfplay,
    /// Training steps of a network (unit: steps; the message holds the losses).
    Train,
    /// Gating games (unit: games, at most; the message holds the candidate's score).
    Gate,
    /// Anchoring games against the ladder (unit: games).
    Anchor,
}

/// The progress of one task, advanced from any thread.
pub trait Progress: Sync {
    /// Sets the units done.
    fn set(&self, done: u64);
    /// Adds `n` units done.
    fn advance(&self, n: u64);
    /// Sets the line shown beside the count (a rate, a loss, a score).
    fn message(&self, text: String);
    /// The task is over.
    fn finish(&self);
}

/// What receives a pipeline's lines, warnings and progress. Every method has a default
/// that does nothing, so an observer implements what it shows.
pub trait Observer: Sync {
    /// A stage line (`[  12s] gen-0003: trained on …`).
    fn line(&self, _line: &str) {}

    /// A warning: something went wrong but the run goes on (a corrupt checkpoint moved
    /// aside, a batch left out).
    fn warning(&self, _text: &str) {}

    /// A task starts, with `total` units to do.
    fn task(&self, _task: Task, _total: u64) -> Box<dyn Progress + '_> {
        Box::new(NoProgress)
    }

    /// The run reached the named point (`selfplay`, `train`, `promote`, …): a test may
    /// end the process here to check that the run resumes from any point.
    fn checkpoint(&self, _point: &str) {}
}

/// Progress that is not shown.
pub struct NoProgress;

impl Progress for NoProgress {
    fn set(&self, _done: u64) {}
    fn advance(&self, _n: u64) {}
    fn message(&self, _text: String) {}
    fn finish(&self) {}
}

/// An observer that shows nothing (lines and warnings still reach `run.log`).
pub struct Silent;

impl Observer for Silent {}

/// An observer that prints lines and warnings on standard error, without progress.
pub struct Stderr;

impl Observer for Stderr {
    fn line(&self, line: &str) {
        eprintln!("{line}");
    }

    fn warning(&self, text: &str) {
        eprintln!("warning: {text}");
    }
}
