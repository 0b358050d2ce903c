//! `flipzero worker`: the pipeline's roles as separate processes that meet only in one
//! run directory (see `pipeline::roles`). SIGTERM and SIGINT set the role's stop flag.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::observer::{Cli, stop_flag};

/// Arguments of `flipzero worker`.
#[derive(Args)]
pub struct WorkerArgs {
    #[command(subcommand)]
    role: Role,
}

#[derive(Subcommand)]
enum Role {
    /// Play self-play games with the run's best network and publish them in batches
    /// (any number of these, on any machines sharing the run directory).
    Selfplay(SelfplayArgs),
    /// Train the next candidate whenever enough new positions have arrived (one per run).
    Train(RoleArgs),
    /// Gate each new candidate, promote, anchor, rewrite the report (one per run).
    Gate(RoleArgs),
}

/// What every role is told.
#[derive(Args, Clone)]
pub struct RoleArgs {
    /// The run directory shared by the roles.
    #[arg(long)]
    run: PathBuf,
    /// A config file: it starts the run when the folder has no config yet, and must
    /// otherwise agree with the run's saved config (the differing keys are listed).
    /// Without it (and without --set) the run's saved config is used.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Override a setting of the config (of the run's saved config when no --config is
    /// given). The per-process settings (selfplay.threads, selfplay.games_per_thread,
    /// selfplay.net_engine, selfplay.device, gate.threads, train.device) apply to this
    /// role alone, e.g. `--set selfplay.device=cuda --set selfplay.net_engine=burn` for a
    /// GPU worker; any other must agree with the run's.
    #[arg(long = "set", value_name = "TABLE.KEY=VALUE")]
    set: Vec<String>,
    /// No progress bars.
    #[arg(long)]
    quiet: bool,
    /// The PID of the `flipzero run --async` that started this role: the role stops when
    /// that process is gone.
    #[arg(long, hide = true)]
    supervisor_pid: Option<u32>,
    /// Abort the process at this point of the pipeline (resume tests).
    #[arg(long, hide = true)]
    crash_at: Option<String>,
}

/// Arguments of `flipzero worker selfplay`.
#[derive(Args)]
struct SelfplayArgs {
    #[command(flatten)]
    common: RoleArgs,
    /// Stop after publishing this many batches (default: until the run is finished or
    /// the process is told to stop).
    #[arg(long)]
    batches: Option<u64>,
}

impl RoleArgs {
    fn options(&self) -> anyhow::Result<pipeline::roles::RoleOptions> {
        Ok(pipeline::roles::RoleOptions {
            run: self.run.clone(),
            config: self.config.clone(),
            sets: self.set.clone(),
            stop: stop_flag()?,
            supervisor: self.supervisor_pid,
        })
    }
}

/// Runs a role.
pub fn run(a: WorkerArgs) -> anyhow::Result<()> {
    match a.role {
        Role::Selfplay(s) => {
            let o = s.common.options()?;
            let cli = Cli::new(s.common.quiet, s.common.crash_at.clone());
            pipeline::roles::selfplay_worker(&o, s.batches, &cli)?;
        }
        Role::Train(r) => {
            let cli = Cli::new(r.quiet, r.crash_at.clone());
            pipeline::roles::trainer(&r.options()?, &cli)?;
        }
        Role::Gate(r) => {
            let cli = Cli::new(r.quiet, r.crash_at.clone());
            pipeline::roles::gatekeeper(&r.options()?, &cli)?;
        }
    }
    Ok(())
}
