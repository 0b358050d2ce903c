//! `flipzero report` and `flipzero ratings`.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;

/// Arguments of `flipzero report`.
#[derive(Args)]
pub struct ReportArgs {
    /// Run directory.
    #[arg(long)]
    run: PathBuf,
    /// Baseline that the rating list is anchored to (Elo 0). Default: the last (strongest)
    /// baseline of the ladder.
    #[arg(long)]
    anchor: Option<String>,
}

/// Rewrites report.md, metrics.csv and the plots, and prints the summary table.
pub fn report(a: ReportArgs) -> anyhow::Result<()> {
    let table = pipeline::report::write_report(&a.run, a.anchor.as_deref())?;
    println!("{table}");
    println!(
        "wrote {}, {} and elo.svg, elo_time.svg, loss.svg",
        a.run.join("report.md").display(),
        rundir::RunDir::new(&a.run).metrics().display()
    );
    Ok(())
}

/// Arguments of `flipzero ratings`.
#[derive(Args)]
pub struct RatingsArgs {
    /// Run directories (repeat for several; players of different runs are prefixed
    /// with the run's folder name, baselines are shared).
    #[arg(long)]
    run: Vec<PathBuf>,
    /// Match PGN files to rate with the runs' games (repeat for several), as `flipzero
    /// match` writes them: players are named by their Black/White tags, with the clock
    /// of a timed match appended (`ab [time=100]`); a run's networks are `gen-NNNN`.
    #[arg(long)]
    pgn: Vec<PathBuf>,
    /// The player fixed at --anchor-elo. Default: the last (strongest) baseline of the
    /// first run's ladder (required without --run).
    #[arg(long)]
    anchor: Option<String>,
    /// The anchor's rating (a finite number).
    #[arg(long, default_value_t = 0.0, value_parser = finite_elo, allow_hyphen_values = true)]
    anchor_elo: f64,
}

/// A rating given on the command line: a number, not NaN or infinite (which would make
/// every rating NaN).
fn finite_elo(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err("not a finite number".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// Prints the rating list.
pub fn ratings(a: RatingsArgs) -> anyhow::Result<()> {
    if a.run.is_empty() && a.pgn.is_empty() {
        anyhow::bail!("nothing to rate: name run directories (--run) or match PGNs (--pgn)");
    }
    let mut games = pipeline::report::collect_games(&a.run)?;
    for p in &a.pgn {
        let text = rundir::read_regular_text(p, rundir::Limit::TEXT)
            .with_context(|| format!("cannot read {}", p.display()))?;
        let rated = eval::pgn::rated_games(&text).with_context(|| format!("{}", p.display()))?;
        if rated.is_empty() {
            anyhow::bail!("{}: no finished games", p.display());
        }
        games.extend(rated);
    }
    if games.is_empty() {
        anyhow::bail!("no recorded games in the given runs");
    }
    let anchor = match (a.anchor, a.run.first()) {
        (Some(x), _) => x,
        (None, Some(run)) => pipeline::report::default_anchor(run)?
            .ok_or_else(|| anyhow::anyhow!("no baseline games recorded: name one with --anchor"))?,
        (None, None) => anyhow::bail!("name the player to anchor the ratings with --anchor"),
    };
    let list = pipeline::report::ratings(&games, &anchor, a.anchor_elo).map_err(|e| match e {
        pipeline::report::ReportError::Rating(eval::RatingError::BadAnchor) => {
            anyhow::anyhow!("the anchor `{anchor}` is not a player of these games")
        }
        e => anyhow::anyhow!("{e} (anchor `{anchor}`)"),
    })?;
    println!(
        "{} games; maximum-likelihood Elo anchored at {} = {}; ± is the 95% interval relative to the anchor",
        games.len(),
        anchor,
        a.anchor_elo
    );
    print!("{}", pipeline::report::rating_table(&list, &anchor));
    Ok(())
}
