//! `flipzero gate`: one gating match (SPRT or fixed) between two players, on its own;
//! or, with `--operating-characteristic`, what the configured gate does against
//! candidates of known strength, computed without playing.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use eval::PlayerSpec;

/// Arguments of `flipzero gate`.
#[derive(Args)]
pub struct GateArgs {
    /// The candidate (any player name; usually mcts:<model dir>).
    #[arg(long, required_unless_present = "operating_characteristic")]
    candidate: Option<String>,
    /// The incumbent (usually mcts:<run dir>, meaning that run's best).
    #[arg(long, required_unless_present = "operating_characteristic")]
    incumbent: Option<String>,
    /// Play nothing: print the configured gate's operating characteristic, one line per
    /// Elo difference (candidate minus incumbent) from −60 to +80 in steps of 10:
    /// `elo D promote P pairs N`, P the probability that such a candidate is promoted and
    /// N the expected number of game pairs played. Exact for independent games with the
    /// draw rate of `--draw-rate` (see the README, "Reading an SPRT verdict").
    #[arg(long, conflicts_with_all = ["candidate", "incumbent", "json"])]
    operating_characteristic: bool,
    /// With --operating-characteristic: the probability that a game is drawn (default 0:
    /// Ataxx gating matches draw almost never).
    #[arg(long)]
    draw_rate: Option<f64>,
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

/// The draw rate `--operating-characteristic` assumes unless told: Ataxx gating matches
/// on the standard board draw almost never (none in 320 games measured, see the README),
/// and 0 is also where the default gate is closest to its targets at −30 Elo.
pub const DEFAULT_DRAW_RATE: f64 = 0.0;

/// Plays the match and prints the verdict (exit status 0 either way), or prints the
/// operating characteristic.
pub fn run(a: GateArgs) -> anyhow::Result<()> {
    let cfg = pipeline::load_table(a.config.as_deref(), &a.set, "gate")?.gate;
    if a.operating_characteristic {
        return operating_characteristic(&cfg, a.draw_rate.unwrap_or(DEFAULT_DRAW_RATE));
    }
    if a.draw_rate.is_some() {
        anyhow::bail!("--draw-rate goes with --operating-characteristic (a match plays its draws)");
    }
    let game: engine::Game = a.game.parse()?;
    let (Some(cand_name), Some(inc_name)) = (&a.candidate, &a.incumbent) else {
        anyhow::bail!("--candidate and --incumbent are required to play a gating match");
    };
    let cand: PlayerSpec = cand_name.parse()?;
    let inc: PlayerSpec = inc_name.parse()?;
    if let Some(p) = &a.json {
        let mut inputs: Vec<&std::path::Path> = a.config.iter().map(|c| c.as_path()).collect();
        for spec in [&cand, &inc] {
            if let PlayerSpec::Mcts {
                net: eval::NetSource::Path(dir),
                ..
            } = spec
            {
                inputs.push(dir);
            }
        }
        super::check_output(p, &inputs)?;
    }
    let v = eval::gate(
        game,
        (cand_name, &cand),
        (inc_name, &inc),
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
        let text = serde_json::to_string_pretty(&v).context("the verdict as JSON")?;
        super::write_output(p, text.as_bytes())?;
    }
    Ok(())
}

/// Prints `elo D promote P pairs N` for each Elo difference of [`eval::standard_elos`],
/// after a description of the gate on stderr.
fn operating_characteristic(cfg: &eval::GateConfig, draw_rate: f64) -> anyhow::Result<()> {
    let rule = match (cfg.mode, cfg.cap_rule) {
        (eval::GateMode::Fixed, _) => format!(
            "fixed: {} pairs, promote when the score is at least {}",
            cfg.max_pairs, cfg.min_score
        ),
        (eval::GateMode::Sprt, r) => format!(
            "SPRT [{}, {}] Elo, alpha {}, beta {}, checked every {} pairs, at most {} pairs, \
             then {}",
            cfg.elo0,
            cfg.elo1,
            cfg.alpha,
            cfg.beta,
            cfg.batch_pairs,
            cfg.max_pairs,
            match r {
                eval::CapRule::Score =>
                    format!("promote when the score is at least {}", cfg.min_score),
                eval::CapRule::Llr => "promote when the LLR is above 0".into(),
                eval::CapRule::Reject => "reject".into(),
            }
        ),
    };
    eprintln!("# gate: {rule}; independent games, draw rate {draw_rate}");
    let oc = eval::operating_characteristic(cfg, draw_rate, &eval::standard_elos())?;
    for (elo, p) in oc {
        println!(
            "elo {elo} promote {:.4} pairs {:.1}",
            p.promote, p.expected_pairs
        );
    }
    Ok(())
}
