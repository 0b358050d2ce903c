//! `flipzero match`: a paired match between any two players.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use eval::{MatchConfig, PlayerSpec, Timeouts};
use indicatif::{ProgressBar, ProgressStyle};

/// Arguments of `flipzero match`.
#[derive(Args)]
pub struct MatchArgs {
    #[arg(long, help = format!("Player A: {}. An NBoard engine has no clock: it may take --move-timeout-ms", eval::PLAYER_NAMES))]
    a: String,
    /// Player B (same names as A).
    #[arg(long)]
    b: String,
    /// Games to play (even: each opening is played twice, colours swapped).
    #[arg(long, default_value_t = 100)]
    games: usize,
    #[arg(long, default_value = "ataxx", help = super::GAMES_HELP)]
    game: String,
    /// File of openings, one position per line (the game's text format; `#` comments).
    /// Without it, openings are generated.
    #[arg(long)]
    openings: Option<PathBuf>,
    /// Random plies from the start in generated openings.
    #[arg(long, default_value_t = 2)]
    random_plies: u32,
    /// Generated openings use random blocker boards (Ataxx family).
    #[arg(long)]
    blockers: bool,
    /// Seed for openings and players' random choices; the same seed replays the same games.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Games played at once.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// The same clock for both players: time=MS (milliseconds a move) or tc=BASE+INC
    /// (seconds, e.g. tc=1+0.01). Every player then thinks on its clock (an MCTS
    /// player's sims/time and alpha-beta's time are replaced; depth and node limits
    /// stay), and a move that takes longer than the clock holds loses on time. Timed
    /// games are best played one at a time (--threads 1) on an otherwise idle machine.
    #[arg(long)]
    clock: Option<String>,
    /// Search threads of each MCTS player in each game.
    #[arg(long, default_value_t = 1)]
    search_threads: usize,
    /// Where to write every game (PGN). Default: data/matches/<a>-vs-<b>-seed<seed>.pgn.
    #[arg(long)]
    pgn: Option<PathBuf>,
    /// Milliseconds an external engine may take to start (up to `uaiok`/`readyok`).
    #[arg(long, default_value_t = 10_000)]
    startup_timeout_ms: u64,
    /// Milliseconds an external engine may take beyond its move time before it forfeits.
    #[arg(long, default_value_t = 5_000)]
    move_timeout_ms: u64,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '=' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Runs the match; the last line is `score <fraction> elo <diff> +- <ci95> games <n>`.
pub fn run(a: MatchArgs) -> anyhow::Result<()> {
    let game: engine::Game = a.game.parse()?;
    let pa: PlayerSpec = a.a.parse().context("--a")?;
    let pb: PlayerSpec = a.b.parse().context("--b")?;
    if a.games == 0 || !a.games.is_multiple_of(2) {
        bail!(
            "--games must be a positive even number (each opening is played twice), got {}",
            a.games
        );
    }
    if a.blockers && !matches!(game, engine::Game::Ataxx(_)) {
        bail!("--blockers: random blocker boards are an Ataxx-family opening; {game} has none");
    }
    let mut cfg = MatchConfig::new(game, a.games / 2, a.seed);
    cfg.random_plies = a.random_plies;
    cfg.blockers = a.blockers;
    cfg.threads = a.threads.max(1);
    cfg.search_threads = a.search_threads.max(1);
    cfg.clock = match &a.clock {
        Some(c) => Some(c.parse::<eval::MatchClock>().context("--clock")?),
        None => None,
    };
    cfg.timeouts = Timeouts {
        startup: Duration::from_millis(a.startup_timeout_ms),
        per_move: Duration::from_millis(a.move_timeout_ms),
    };
    if let Some(p) = &a.openings {
        cfg.openings = super::read_positions(p, game)?;
    }
    let bar = if a.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(a.games as u64)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{msg} [{bar:30}] {pos}/{len} games, {elapsed} elapsed, ETA {eta}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar.set_message(format!("{pa} vs {pb}"));
    let pgn = a.pgn.clone().unwrap_or_else(|| {
        PathBuf::from("data/matches").join(format!(
            "{}-vs-{}-seed{}.pgn",
            file_safe(&a.a),
            file_safe(&a.b),
            a.seed
        ))
    });
    // The PGN's path is checked before any game: a path that cannot be written, or one
    // that would overwrite what the match reads, is refused now, not after the match.
    let mut inputs: Vec<&std::path::Path> = a.openings.iter().map(|p| p.as_path()).collect();
    inputs.extend(player_paths(&pa));
    inputs.extend(player_paths(&pb));
    super::check_output(&pgn, &inputs)?;
    // Ctrl-C (or SIGTERM) keeps the games finished so far: they are reported and written,
    // and the process ends with the shell's code for SIGINT. A second signal, or one
    // that comes once the match is over (while the games are written, to a FIFO nobody
    // reads, say), ends the process at once, as it would end `cat`.
    let finished = std::sync::Mutex::new(Vec::new());
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let at_once = std::sync::Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_default(sig, at_once.clone())
            .context("cannot install the signal handler")?;
        signal_hook::flag::register(sig, stop.clone())
            .context("cannot install the signal handler")?;
        signal_hook::flag::register(sig, at_once.clone())
            .context("cannot install the signal handler")?;
    }
    let done = AtomicBool::new(false);
    let outcome = std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                if stop.load(Ordering::Relaxed) {
                    bar.finish_and_clear();
                    let records = finished.lock().expect("games").clone();
                    eprintln!(
                        "interrupted: {} finished games kept, the games in play dropped",
                        records.len()
                    );
                    let code = match report(&cfg, &pa, &pb, &pgn, records) {
                        Ok(()) => 130,
                        Err(e) => {
                            eprintln!("error: {e:#}");
                            1
                        }
                    };
                    std::process::exit(code);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let r = eval::run_match(&pa, &pb, &cfg, &|g| {
            finished.lock().expect("games").push(g.clone());
            bar.inc(1);
        });
        done.store(true, Ordering::Relaxed);
        r
    });
    at_once.store(true, Ordering::Relaxed);
    let (records, _) = outcome?;
    bar.finish_and_clear();
    report(&cfg, &pa, &pb, &pgn, records)
}

/// The files and folders a player reads (a network's folder, an engine's program).
fn player_paths(p: &PlayerSpec) -> Vec<&std::path::Path> {
    match p {
        PlayerSpec::Mcts {
            net: eval::NetSource::Path(dir),
            ..
        } => vec![dir.as_path()],
        other => other.external_program().into_iter().collect(),
    }
}

/// Prints the summary, writes the match's games (in pair order) to `pgn` (unless there
/// is none: then the file is left as it was), and prints the last line, `score
/// <fraction> elo <diff> +- <ci95> games <n>`.
fn report(
    cfg: &MatchConfig,
    pa: &PlayerSpec,
    pb: &PlayerSpec,
    pgn: &std::path::Path,
    mut records: Vec<eval::GameRecord>,
) -> anyhow::Result<()> {
    records.sort_by_key(|r| (r.pair, !r.a_is_x));
    let game = cfg.game;
    let stats = eval::match_stats(&records);
    // Games forfeited (an error, a timeout, an illegal move) and lost on time, by A and
    // by B (the reasons name the side: `forfeit by x: …`).
    let (mut forfeits, mut time_losses) = ([0usize; 2], [0usize; 2]);
    for r in &records {
        for (prefix, count) in [
            ("forfeit", &mut forfeits),
            (eval::TIME_LOSS, &mut time_losses),
        ] {
            if let Some(rest) = r.reason.strip_prefix(prefix) {
                let x_lost = rest.starts_with(" by x");
                count[usize::from(x_lost != r.a_is_x)] += 1;
            }
        }
    }
    let e = stats.elo();
    let [w, d, l] = stats.wdl;
    let p = stats.pentanomial;
    let clock = cfg
        .clock
        .map_or(String::new(), |c| format!("   clock: {c}"));
    println!(
        "A: {pa}   B: {pb}   game: {game}   games: {}{clock}",
        stats.games()
    );
    println!("W/D/L (A): {w}/{d}/{l}   score {:.3}", e.score);
    println!("pentanomial (pairs scoring 0, 1/2, 1, 3/2, 2 for A): {p:?}");
    if forfeits.iter().sum::<usize>() > 0 {
        println!(
            "forfeits: {} (A {}, B {}; see Termination tags in the PGN)",
            forfeits[0] + forfeits[1],
            forfeits[0],
            forfeits[1]
        );
    }
    if cfg.clock.is_some() {
        println!("time losses: A {}   B {}", time_losses[0], time_losses[1]);
    }
    println!(
        "Elo difference (A - B): {:.1} +- {:.1} (95%)",
        e.elo, e.ci95
    );
    if records.is_empty() {
        println!("no game finished: {} left as it was", pgn.display());
    } else {
        super::write_output(pgn, eval::to_pgn(&records, game, cfg.clock).as_bytes())?;
        println!("games written to {}", pgn.display());
    }
    println!(
        "score {:.3} elo {:.1} +- {:.1} games {}",
        e.score,
        e.elo,
        e.ci95,
        stats.games()
    );
    Ok(())
}
