//! `flipzero report` and `flipzero ratings`.

use std::path::PathBuf;

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
    let table = eval::report::write_report(&a.run, a.anchor.as_deref())?;
    println!("{table}");
    println!(
        "wrote {}, {} and elo.svg, elo_time.svg, loss.svg",
        a.run.join("report.md").display(),
        a.run.join("metrics.csv").display()
    );
    Ok(())
}

/// Arguments of `flipzero ratings`.
#[derive(Args)]
pub struct RatingsArgs {
    /// Run directories (repeat for several; players of different runs are prefixed
    /// with the run's folder name, baselines are shared).
    #[arg(long, required = true)]
    run: Vec<PathBuf>,
    /// The player fixed at --anchor-elo. Default: the last (strongest) baseline of the
    /// first run's ladder.
    #[arg(long)]
    anchor: Option<String>,
    /// The anchor's rating.
    #[arg(long, default_value_t = 0.0)]
    anchor_elo: f64,
}

/// Prints the rating list.
pub fn ratings(a: RatingsArgs) -> anyhow::Result<()> {
    let games = eval::report::collect_games(&a.run)?;
    if games.is_empty() {
        anyhow::bail!("no recorded games in the given runs");
    }
    let anchor = match a.anchor {
        Some(x) => x,
        None => eval::report::default_anchor(&a.run[0])?
            .ok_or_else(|| anyhow::anyhow!("no baseline games recorded: name one with --anchor"))?,
    };
    let list = eval::report::ratings(&games, &anchor, a.anchor_elo)
        .map_err(|e| anyhow::anyhow!("{e} (anchor `{anchor}`; is it a player of these runs?)"))?;
    println!(
        "{} games; maximum-likelihood Elo anchored at {} = {}; ± is the 95% interval relative to the anchor",
        games.len(),
        anchor,
        a.anchor_elo
    );
    print!("{}", eval::report::rating_table(&list, &anchor));
    Ok(())
}
