//! `flipzero gate`: one gating match (SPRT or fixed) between two players, on its own.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use eval::PlayerSpec;

/// Arguments of `flipzero gate`.
#[derive(Args)]
pub struct GateArgs {
    /// The candidate (any player name; usually mcts:<model dir>).
    #[arg(long)]
    candidate: String,
    /// The incumbent (usually mcts:<run dir>, meaning that run's best).
    #[arg(long)]
    incumbent: String,
    #[arg(long, default_value = "ataxx", help = super::GAMES_HELP)]
    game: String,
    /// A flipzero config file whose `[gate]` table to use (default: built-in defaults).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Override a `[gate]` setting, e.g. `--set gate.max_pairs=100` (repeatable).
    #[arg(long = "set", value_name = "gate.KEY=VALUE")]
    set: Vec<String>,
    /// Seed of the openings and the players.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write the verdict (with every game) as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// Plays the match and prints the verdict; exit status 0 either way.
pub fn run(a: GateArgs) -> anyhow::Result<()> {
    let cfg = super::config::load_config(a.config.as_ref(), &a.set)?.gate;
    let game: engine::Game = a.game.parse()?;
    let cand: PlayerSpec = a.candidate.parse()?;
    let inc: PlayerSpec = a.incumbent.parse()?;
    let v = eval::gate(
        game,
        (&a.candidate, &cand),
        (&a.incumbent, &inc),
        &cfg,
        a.seed,
        &|_| {},
    )?;
    let m = &v.matched;
    println!(
        "games {}  W/D/L {}/{}/{}  pairs {:?}  score {:.3}  Elo {:+.1} ± {}",
        m.games,
        m.wdl[0],
        m.wdl[1],
        m.wdl[2],
        m.pentanomial,
        m.score,
        m.elo,
        m.elo_ci95.map_or("inf".into(), |c| format!("{c:.1}"))
    );
    println!(
        "LLR {:.2} in [{:.2}, {:.2}] for H0 elo {} / H1 elo {} (alpha {}, beta {})",
        v.llr, v.bounds.0, v.bounds.1, cfg.elo0, cfg.elo1, cfg.alpha, cfg.beta
    );
    println!(
        "verdict: {} ({})",
        if v.promote { "promote" } else { "reject" },
        v.reason
    );
    if let Some(p) = &a.json {
        eval::report::write_record(p, &v).with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}
