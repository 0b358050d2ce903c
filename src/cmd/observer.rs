//! The command line's [`pipeline::Observer`]: stage lines and warnings on standard
//! error, indicatif bars for the long tasks, and the crash points of the resume tests.

use indicatif::{ProgressBar, ProgressStyle};
use pipeline::{Observer, Progress, Task};

/// What the command line shows of a pipeline.
pub struct Cli {
    /// No lines and no bars (warnings still show).
    pub quiet: bool,
    /// The point where the process aborts (`--crash-at`, hidden: the resume tests end
    /// the process there, like `kill -9`, and check that the run resumes).
    pub crash_at: Option<String>,
}

impl Cli {
    /// An observer for `--quiet` and `--crash-at`.
    pub fn new(quiet: bool, crash_at: Option<String>) -> Cli {
        Cli { quiet, crash_at }
    }
}

struct Bar(ProgressBar);

impl Progress for Bar {
    fn set(&self, done: u64) {
        self.0.set_position(done);
    }

    fn advance(&self, n: u64) {
        self.0.inc(n);
    }

    fn message(&self, text: String) {
        self.0.set_message(text);
    }

    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

impl Observer for Cli {
    fn line(&self, line: &str) {
        if !self.quiet {
            eprintln!("{line}");
        }
    }

    fn warning(&self, text: &str) {
        eprintln!("warning: {text}");
    }

    fn task(&self, task: Task, total: u64) -> Box<dyn Progress + '_> {
        let template = match task {
            Task::Selfplay => "  self-play [{bar:30}] {pos}/{len} games  {msg}  ETA {eta}",
            Task::Train => "  train [{bar:30}] {pos}/{len} steps  {msg}  ETA {eta}",
            Task::Gate => "  gate [{bar:30}] {pos}/{len} games (at most)  {msg}",
            Task::Anchor => "  anchor [{bar:30}] {pos}/{len} games  {msg}",
        };
        let b = if self.quiet {
            ProgressBar::hidden()
        } else {
            ProgressBar::new(total)
        };
        b.set_style(
            ProgressStyle::with_template(template)
                .expect("valid template")
                .progress_chars("=> "),
        );
        Box::new(Bar(b))
    }

    fn checkpoint(&self, point: &str) {
        if self.crash_at.as_deref() == Some(point) {
            eprintln!("--crash-at {point}: aborting");
            std::process::abort();
        }
    }
}

/// A flag set by SIGTERM or SIGINT: how the command line tells a role to stop.
pub fn stop_flag() -> anyhow::Result<std::sync::Arc<std::sync::atomic::AtomicBool>> {
    use anyhow::Context;
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(sig, flag.clone())
            .context("cannot install the signal handler")?;
    }
    Ok(flag)
}
