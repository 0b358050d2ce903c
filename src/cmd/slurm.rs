//! `flipzero slurm`: the roles of `flipzero worker` as Slurm jobs on one run directory
//! (see `pipeline::slurm`): `submit` writes the batch scripts and submits them, `status`
//! shows the jobs and the run's progress, `stop` cancels them.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};

use super::observer::Cli;

/// Arguments of `flipzero slurm`.
#[derive(Args)]
pub struct SlurmArgs {
    #[command(subcommand)]
    action: Action,
}

#[derive(Subcommand)]
enum Action {
    /// Write the run's batch scripts into RUN/slurm/ and submit them with sbatch.
    Submit(SubmitArgs),
    /// Show the run's jobs (squeue) and its progress.
    Status(RunArg),
    /// Cancel the run's jobs (scancel); published work stays, and a new submit resumes it.
    Stop(RunArg),
}

/// Arguments of `flipzero slurm submit`.
#[derive(Args)]
struct SubmitArgs {
    /// The run directory, on a filesystem every node of the cluster mounts.
    #[arg(long)]
    run: PathBuf,
    /// The run's config: it starts the run when the folder has none yet, and must
    /// otherwise agree with the run's saved config. Without it the saved config is used.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Override a setting of the config, e.g. `--set selfplay.games_per_worker_batch=8`.
    #[arg(long = "set", value_name = "TABLE.KEY=VALUE")]
    set: Vec<String>,
    /// Self-play workers: the tasks of the job array.
    #[arg(long, default_value_t = 1)]
    workers: usize,
    /// The partition of every job (default: the cluster's default partition).
    #[arg(long)]
    partition: Option<String>,
    /// Ask for one GPU for the trainer (`--gres=gpu:1`); the config's `train.device`
    /// must then be `cuda`, `cuda:N` or `wgpu`.
    #[arg(long)]
    gpu_trainer: bool,
    /// Wall-clock limit of every job (Slurm's formats: MM, HH:MM:SS, D-HH:MM, …; HH:MM
    /// is read as Slurm reads it, minutes:seconds, so write 02:00:00 for two hours).
    #[arg(long)]
    time: Option<String>,
    /// The flipzero binary the jobs run (default: this one); every node must reach it.
    #[arg(long)]
    binary: Option<PathBuf>,
    /// Write the scripts and print the sbatch commands, but submit nothing.
    #[arg(long)]
    write_only: bool,
}

/// The run directory of `status` and `stop`.
#[derive(Args)]
struct RunArg {
    /// The run directory given to `flipzero slurm submit`.
    #[arg(long)]
    run: PathBuf,
}

/// Runs the subcommand and prints what it did.
pub fn run(a: SlurmArgs) -> anyhow::Result<()> {
    let text = match a.action {
        Action::Submit(s) => {
            let binary = match s.binary {
                Some(b) => b,
                None => std::env::current_exe().context("cannot find this program's path")?,
            };
            let options = pipeline::slurm::SubmitOptions {
                run: s.run,
                config: s.config,
                sets: s.set,
                workers: s.workers,
                partition: s.partition,
                gpu_trainer: s.gpu_trainer,
                time: s.time,
                binary,
                write_only: s.write_only,
            };
            pipeline::slurm::submit(&options, &Cli::new(false, None))?
        }
        Action::Status(r) => pipeline::slurm::status(&r.run)?,
        Action::Stop(r) => pipeline::slurm::stop(&r.run)?,
    };
    println!("{text}");
    Ok(())
}
