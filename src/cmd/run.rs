//! `flipzero run`: the pipeline's loop (`pipeline::sync`), or with `--async` its roles as
//! local processes (`pipeline::roles::run_async`).

use std::path::PathBuf;

use clap::Args;
use pipeline::{RunSummary, SyncRun};

use super::observer::{Cli, stop_flag};

/// Arguments of `flipzero run`.
#[derive(Args)]
pub struct RunArgs {
    /// Config file (TOML). Without it, the built-in configs/default.toml.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Run directory. Default: data/runs/<config file name without .toml>.
    #[arg(long)]
    run: Option<PathBuf>,
    /// Override a setting, e.g. `--set selfplay.games=200` (repeatable).
    #[arg(long = "set", value_name = "TABLE.KEY=VALUE")]
    set: Vec<String>,
    /// Resume even though the config differs from the one saved in the run directory
    /// (the new config replaces it).
    #[arg(long)]
    force: bool,
    /// No progress bars.
    #[arg(long)]
    quiet: bool,
    /// Validate the config, print the effective config and the run directory, and exit.
    #[arg(long)]
    dry_run: bool,
    /// Run the roles as separate local processes (`flipzero worker gate`, `train` and
    /// `--workers` × `selfplay`) that meet in the run directory, instead of one
    /// generation after another in this process.
    #[arg(long = "async")]
    asynchronous: bool,
    /// Self-play worker processes of `--async`.
    #[arg(long, default_value_t = 2, requires = "asynchronous")]
    workers: usize,
    /// Abort the process at this point of the pipeline (resume tests).
    #[arg(long, hide = true)]
    crash_at: Option<String>,
}

/// Runs (or resumes) the pipeline and prints its report's table.
pub fn run(a: RunArgs) -> anyhow::Result<()> {
    let cfg = pipeline::load_config(a.config.as_deref(), &a.set)?;
    let dir = a.run.clone().unwrap_or_else(|| {
        let stem = a
            .config
            .as_ref()
            .and_then(|p| p.file_stem())
            .map_or("default".into(), |s| s.to_string_lossy().to_string());
        PathBuf::from("data").join("runs").join(stem)
    });
    if a.dry_run {
        println!(
            "# run directory: {}\n{}",
            dir.display(),
            toml::to_string(&cfg)?
        );
        return Ok(());
    }
    let cli = Cli::new(a.quiet, a.crash_at.clone());
    let summary = if a.asynchronous {
        let program = std::env::current_exe()?;
        let stop = stop_flag()?;
        let options = pipeline::roles::AsyncOptions {
            program: &program,
            workers: a.workers,
            force: a.force,
            quiet: a.quiet,
            stop: &stop,
        };
        pipeline::roles::run_async(&dir, &cfg, &options, &cli)?
    } else {
        SyncRun::open(&dir, cfg, a.force, &cli)?.run()?
    };
    print_summary(&summary);
    Ok(())
}

/// The report's table and where the report is.
fn print_summary(s: &RunSummary) {
    println!("{}", s.table);
    println!("best: {}   report: {}", s.best, s.report.display());
}
