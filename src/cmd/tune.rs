//! `flipzero tune`: SPSA over an MCTS player's search settings by matches
//! (eval::tune::tune_by_matches).

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use eval::{MatchConfig, PlayerSpec, TuneParam};

/// Arguments of `flipzero tune`.
#[derive(Args)]
pub struct TuneArgs {
    /// The MCTS player to tune, e.g. mcts:data/runs/fast (its own settings are where the
    /// parameters not tuned stay).
    #[arg(long)]
    player: String,
    /// A fixed opponent that θ+ and θ− each play; without it, θ+ plays θ− (OpenBench).
    #[arg(long)]
    opponent: Option<String>,
    /// A tuned parameter, NAME=START:MIN:MAX:C_END[:R_END] (repeatable; names: cpuct,
    /// fpu, endgame; C_END the perturbation and R_END the step at the last iteration).
    #[arg(long = "param", required = true)]
    params: Vec<String>,
    /// Iterations (one opening pair each, two with --opponent).
    #[arg(long, default_value_t = 200)]
    iterations: u32,
    /// The clock of every game, e.g. tc=1+0.01 or time=100; without it, each player's
    /// own limits (e.g. sims=N).
    #[arg(long)]
    clock: Option<String>,
    #[arg(long, default_value = "ataxx", help = super::GAMES_HELP)]
    game: String,
    /// File of openings (one position per line); without it, openings are generated.
    #[arg(long)]
    openings: Option<PathBuf>,
    /// Seed of the perturbations, the openings and the players.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where the result goes (JSON: the tuned values, their spread over the last
    /// quarter of the iterations, and every iteration).
    #[arg(long)]
    out: PathBuf,
}

/// Runs the tuning, printing a line per iteration.
pub fn run(a: TuneArgs) -> anyhow::Result<()> {
    let game: engine::Game = a.game.parse()?;
    let player: PlayerSpec = a.player.parse().context("--player")?;
    let opponent: Option<PlayerSpec> = match &a.opponent {
        Some(o) => Some(o.parse().context("--opponent")?),
        None => None,
    };
    let params = a
        .params
        .iter()
        .map(|p| TuneParam::parse(p))
        .collect::<Result<Vec<_>, _>>()?;
    let mut cfg = MatchConfig::new(game, 1, a.seed);
    cfg.clock = match &a.clock {
        Some(c) => Some(c.parse().context("--clock")?),
        None => None,
    };
    if let Some(p) = &a.openings {
        cfg.openings = super::read_positions(p, game)?;
    }
    let mut inputs: Vec<&std::path::Path> = a.openings.iter().map(|p| p.as_path()).collect();
    if let PlayerSpec::Mcts {
        net: eval::NetSource::Path(dir),
        ..
    } = &player
    {
        inputs.push(dir);
    }
    super::check_output(&a.out, &inputs)?;
    let mut steps = Vec::new();
    let result = eval::tune::tune_by_matches(
        &player,
        opponent.as_ref(),
        &params,
        a.iterations,
        &cfg,
        |s| {
            let values: Vec<String> = params
                .iter()
                .zip(&s.theta)
                .map(|(p, v)| format!("{}={v:.4}", p.name))
                .collect();
            eprintln!(
                "iteration {}: result {:+}, {}",
                s.iteration,
                s.result,
                values.join(" ")
            );
            steps.push(s.clone());
        },
    )?;
    let tuned = eval::tune::with_values(&player, &params, &result.tail_mean)?;
    let text = serde_json::to_string_pretty(&serde_json::json!({
        "player": a.player,
        "opponent": a.opponent,
        "clock": a.clock,
        "seed": a.seed,
        "tuned_player": tuned.to_string(),
        "result": result,
        "steps": steps,
    }))?;
    super::write_output(&a.out, text.as_bytes())?;
    for (i, p) in result.params.iter().enumerate() {
        println!(
            "{} = {:.4} (± {:.4} over the last quarter; started at {})",
            p.name, result.tail_mean[i], result.tail_sd[i], p.start
        );
    }
    println!("tuned player: {tuned}");
    Ok(())
}
