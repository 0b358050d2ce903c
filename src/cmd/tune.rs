//! `flipzero tune`: SPSA over a player's search settings (an MCTS or alpha-beta player) by matches
//! (eval::tune::tune_by_matches).

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use eval::{MatchConfig, PlayerSpec, TuneParam, TuneRecord};

/// Arguments of `flipzero tune`.
#[derive(Args)]
pub struct TuneArgs {
    /// The player to tune, e.g. mcts:data/runs/fast or ab (its own settings are where the
    /// parameters not tuned stay).
    #[arg(long)]
    player: String,
    /// A fixed opponent that θ+ and θ− each play; without it, θ+ plays θ− (OpenBench).
    #[arg(long)]
    opponent: Option<String>,
    /// A tuned parameter, NAME=START:MIN:MAX:C_END[:R_END] (repeatable; names: an MCTS
    /// player's cpuct, fpu, endgame; an alpha-beta player's search parameters, listed by
    /// `flipzero uai` as options; C_END the perturbation and R_END the step at the last
    /// iteration).
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
    /// Games played at once: an iteration's two games (four with --opponent) on as many
    /// cores. Games on a clock want a core each.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Where the result goes (JSON: the tuned values, their spread over the last
    /// quarter of the iterations, and every iteration).
    #[arg(long)]
    out: PathBuf,
}

/// Runs the tuning, printing a line per iteration and writing the record to `--out`
/// after every one (when `--out` is a regular file), so that the same command continues
/// a tuning that stopped.
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
    anyhow::ensure!(a.iterations >= 1, "--iterations must be at least 1, got 0");
    anyhow::ensure!(
        (1..=64).contains(&a.threads),
        "--threads must be in 1..=64, got {}",
        a.threads
    );
    let mut cfg = MatchConfig::new(game, a.threads, a.seed);
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
    // The model a network path resolves to (a run directory names its current best).
    let model_of = |dir: &std::path::Path| -> anyhow::Result<Option<PathBuf>> {
        Ok(match eval::resolve_net(dir)? {
            eval::ResolvedNet::Model(d) => Some(d),
            eval::ResolvedNet::Bootstrap => None,
        })
    };
    let (search, model) = match &player {
        PlayerSpec::Mcts { params, net, .. } => (
            params.to_string(),
            match net {
                eval::NetSource::Path(dir) => model_of(dir)?,
                _ => None,
            },
        ),
        PlayerSpec::AlphaBeta { search, .. } => (search.all().join(","), None),
        PlayerSpec::NetAlphaBeta { search, net, .. } => (search.all().join(","), model_of(net)?),
        _ => (String::new(), None),
    };
    let net = model.as_ref().map(|d| d.display().to_string());
    let net_digest = match &model {
        Some(dir) => Some(eval::tune::net_digest(dir)?),
        None => None,
    };
    let fens: Vec<String> = cfg.openings.iter().map(|s| s.text()).collect();
    let mut record = TuneRecord {
        schema_version: eval::tune::TUNE_RECORD_VERSION,
        player: a.player.clone(),
        search,
        net,
        net_digest,
        opponent: a.opponent.clone(),
        clock: cfg.clock.map(|c| c.to_string()),
        game: game.to_string(),
        openings: a.openings.as_ref().map(|p| p.display().to_string()),
        openings_hash: eval::tune::openings_hash(fens.iter().map(String::as_str)),
        seed: a.seed,
        iterations: a.iterations,
        params: params.clone(),
        steps: Vec::new(),
        result: None,
        tuned_player: None,
    };
    // Progress goes to a file only: a stream (/dev/stdout) gets the end alone.
    let progress = rundir::output_is_file(&a.out)
        .with_context(|| format!("cannot write {}", a.out.display()))?;
    // A player with nothing to tune is refused before any record is read.
    let starts: Vec<f64> = params.iter().map(|p| p.start).collect();
    eval::tune::with_values(&player, &params, &starts)?;
    let done = match recorded(&a.out, progress)? {
        Some(old) => {
            record
                .check_resumes(&old)
                .with_context(|| format!("{} holds a tuning", a.out.display()))?;
            eprintln!(
                "resuming {} after iteration {}",
                a.out.display(),
                old.steps.len()
            );
            old.steps
        }
        None => Vec::new(),
    };
    let mut write_failed = None;
    let outcome = eval::tune::tune_by_matches(
        &player,
        opponent.as_ref(),
        &params,
        a.iterations,
        &cfg,
        &done,
        |s| {
            record.steps.push(s.clone());
            if s.iteration as usize <= done.len() {
                return true;
            }
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
            // A record that cannot be written stops the tuning: its games would be lost.
            if progress && let Err(e) = write_record(&a.out, &record) {
                write_failed = Some(e);
                return false;
            }
            true
        },
    );
    if let Some(e) = write_failed {
        return Err(e.context(format!(
            "the tuning stopped after iteration {}",
            record.steps.len()
        )));
    }
    let result = outcome.with_context(|| format!("the tuning recorded in {}", a.out.display()))?;
    let tuned = eval::tune::with_values(&player, &params, &result.tail_mean)?;
    record.tuned_player = Some(tuned.to_string());
    record.result = Some(result.clone());
    write_record(&a.out, &record)?;
    for (i, p) in result.params.iter().enumerate() {
        println!(
            "{} = {:.4} (± {:.4} over the last quarter; started at {})",
            p.name, result.tail_mean[i], result.tail_sd[i], p.start
        );
    }
    println!("tuned player: {tuned}");
    Ok(())
}

/// The tuning recorded at `out`; `None` when `out` holds none (it is missing or a
/// stream). A file that is no tuning record is refused, not replaced (it may be a config
/// or a PGN named by mistake), and so is one that looks like a record but does not read
/// as one: it may be hours of games.
fn recorded(out: &std::path::Path, is_file: bool) -> anyhow::Result<Option<TuneRecord>> {
    if !is_file || !out.exists() {
        return Ok(None);
    }
    let bytes = rundir::read_regular(out, rundir::Limit::TEXT)
        .with_context(|| format!("cannot read {}", out.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    if !text.contains("\"steps\"") && !text.contains("\"schema_version\"") {
        anyhow::bail!(
            "{} exists and is not a tuning record: name another --out (a tuning replaces only its own record)",
            out.display()
        );
    }
    serde_json::from_str(&text).map(Some).with_context(|| {
        format!(
            "{} looks like a tuning record but does not read as one (damaged, or of another version): name another --out, or mend it",
            out.display()
        )
    })
}

fn write_record(out: &std::path::Path, record: &TuneRecord) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(record)?;
    super::write_output(out, text.as_bytes())
}
