//! `flipzero uai`: a UAI engine for Ataxx GUIs and tournament managers (cuteataxx).

use std::io::BufRead;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use clap::Args;
use engine::search::{Limits, MATE, SearchReport, Searcher};
use engine::{Game, Move, State};
use eval::{PlayerSpec, Timeouts};

/// Arguments of `flipzero uai`.
#[derive(Args)]
pub struct UaiArgs {
    /// The player to use at start (the `Player` option changes it): `ab` (alpha-beta on the
    /// GUI's clock), any ladder name (random, greedy, ab1..ab64, ab:nodes=N, ab:time=MS), or
    /// an MCTS player (mcts:bootstrap, mcts:<model or run dir>).
    #[arg(long, default_value = "ab")]
    player: String,
    /// A trained model (or run) directory to play with: MCTS with the network, on the
    /// GUI's clock (the `Model` option changes it).
    #[arg(long)]
    model: Option<std::path::PathBuf>,
    /// MCTS simulations per move; 0 = as many as the clock allows (option `Simulations`).
    #[arg(long, default_value_t = 0)]
    simulations: u32,
}

const DEFAULT_HASH_MB: usize = 16;

/// What plays: the clock-driven alpha-beta search, or a fixed ladder player.
#[derive(Clone)]
enum Choice {
    Search,
    Ladder(PlayerSpec),
}

fn parse_player(name: &str) -> Result<Choice, String> {
    if name == "ab" {
        return Ok(Choice::Search);
    }
    match name.parse::<PlayerSpec>() {
        Ok(PlayerSpec::Uai { .. }) => Err("an external engine cannot be the player here".into()),
        Ok(spec) => Ok(Choice::Ladder(spec)),
        Err(e) => Err(e.to_string()),
    }
}

struct Engine {
    game: Game,
    position: State,
    player: Choice,
    /// Simulations per move of an MCTS player; 0 = by the clock.
    simulations: u32,
    hash_mb: usize,
    searcher: Option<Searcher>,
    /// The running search: its thread, its stop flag, and whether it is `go infinite`.
    search: Option<(JoinHandle<Searcher>, Arc<AtomicBool>, bool)>,
}

fn say(line: &str) {
    println!("{line}");
}

fn error(msg: impl std::fmt::Display) {
    say(&format!("info string error: {msg}"));
}

/// Runs the UAI loop on standard input until `quit` or end of input.
pub fn run(a: UaiArgs) -> anyhow::Result<()> {
    let mut player = parse_player(&a.player).map_err(anyhow::Error::msg)?;
    let game: Game = "ataxx".parse()?;
    if let Some(dir) = &a.model {
        player = model_player(dir, game).map_err(anyhow::Error::msg)?;
    }
    let mut e = Engine {
        game,
        position: game.startpos(),
        player,
        simulations: a.simulations,
        hash_mb: DEFAULT_HASH_MB,
        searcher: Some(Searcher::new(DEFAULT_HASH_MB)),
        search: None,
    };
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let line = line.trim();
        let (cmd, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        match cmd {
            "" => {}
            "uai" => {
                say(concat!("id name flipzero ", env!("CARGO_PKG_VERSION")));
                say("id author the flipzero developers");
                say("option name Hash type spin default 16 min 1 max 4096");
                say("option name Threads type spin default 1 min 1 max 1");
                say("option name Player type string default ab");
                say("option name Model type string default <empty>");
                say("option name Simulations type spin default 0 min 0 max 1000000");
                let games: Vec<String> = engine::GAME_NAMES
                    .iter()
                    .filter(|n| matches!(n.parse::<Game>(), Ok(Game::Ataxx(_))))
                    .map(|n| format!("var {n}"))
                    .collect();
                say(&format!(
                    "option name Game type combo default ataxx {}",
                    games.join(" ")
                ));
                say("uaiok");
            }
            "isready" => say("readyok"),
            "setoption" => {
                e.finish();
                e.setoption(rest)
            }
            "uainewgame" => {
                e.finish();
                if let Some(s) = e.searcher.as_mut() {
                    s.clear();
                }
                e.position = e.game.startpos();
            }
            "position" => {
                e.finish();
                e.set_position(rest)
            }
            "go" => {
                e.finish();
                e.go(rest)
            }
            "stop" => e.stop(),
            "perft" => {
                e.finish();
                match rest.trim().parse::<u32>() {
                    Ok(d) => say(&format!("nodes {}", e.position.perft(d))),
                    Err(_) => error(format!("`perft {rest}`: expected a depth")),
                }
            }
            "quit" => {
                e.stop();
                return Ok(());
            }
            other => error(format!("unknown command `{other}`")),
        }
    }
    e.stop();
    Ok(())
}

impl Engine {
    /// Stops the running search (it still answers `bestmove`) and takes its tables back.
    fn stop(&mut self) {
        if let Some((handle, stop, _)) = self.search.take() {
            stop.store(true, Ordering::Relaxed);
            self.searcher = Some(handle.join().expect("search thread panicked"));
        }
    }

    /// Before a command that changes the engine's state: lets a running limited search
    /// finish (a GUI waits for `bestmove` anyway), and stops a `go infinite` one.
    fn finish(&mut self) {
        if let Some((handle, stop, infinite)) = self.search.take() {
            if infinite {
                stop.store(true, Ordering::Relaxed);
            }
            self.searcher = Some(handle.join().expect("search thread panicked"));
        }
    }

    fn setoption(&mut self, rest: &str) {
        let Some(after_name) = rest.strip_prefix("name ") else {
            return error("expected `setoption name <name> value <value>`");
        };
        let (name, value) = match after_name.split_once(" value ") {
            Some((n, v)) => (n.trim(), v.trim()),
            None => (after_name.trim(), ""),
        };
        match name.to_ascii_lowercase().as_str() {
            "hash" => match value.parse::<usize>() {
                Ok(mb) if (1..=4096).contains(&mb) => {
                    self.hash_mb = mb;
                    self.searcher = Some(Searcher::new(mb));
                }
                _ => error(format!(
                    "Hash must be a number of MiB in 1..=4096, got `{value}`"
                )),
            },
            "threads" => {
                if value != "1" {
                    error(format!("Threads must be 1, got `{value}`"));
                }
            }
            "model" if value.is_empty() || value == "<empty>" => self.player = Choice::Search,
            "model" => match model_player(std::path::Path::new(value), self.game) {
                Ok(p) => self.player = p,
                Err(msg) => error(msg),
            },
            "simulations" => match value.parse::<u32>() {
                Ok(n) if n <= 1_000_000 => self.simulations = n,
                _ => error(format!(
                    "Simulations must be a number in 0..=1000000, got `{value}`"
                )),
            },
            "player" => match parse_player(value) {
                Ok(p) => self.player = p,
                Err(msg) => error(msg),
            },
            "game" => match value.parse::<Game>() {
                Ok(g @ Game::Ataxx(_)) => {
                    self.game = g;
                    self.position = g.startpos();
                }
                Ok(_) => error(format!("`{value}` is not an Ataxx-family game")),
                Err(err) => error(err),
            },
            // Tournament managers send their usual options (debug, ownbook) to every
            // engine; an option this engine lacks is not an error.
            _ => say(&format!("info string ignoring unknown option `{name}`")),
        }
    }

    fn set_position(&mut self, rest: &str) {
        let (base, moves) = match rest.split_once(" moves") {
            Some((b, m)) => (b.trim(), m.split_whitespace().collect::<Vec<_>>()),
            None => (rest.trim(), vec![]),
        };
        let start = if base == "startpos" {
            Ok(self.game.startpos())
        } else if let Some(fen) = base.strip_prefix("fen ") {
            self.game
                .parse_position(fen)
                .map_err(|err| format!("bad FEN `{fen}`: {err}"))
        } else {
            Err(format!(
                "expected `position startpos|fen <FEN> [moves ...]`, got `{rest}`"
            ))
        };
        let mut pos = match start {
            Ok(p) => p,
            Err(msg) => return error(msg),
        };
        for m in moves {
            match pos.parse_move(m) {
                Ok(mv) => pos.play(mv),
                Err(err) => return error(format!("move `{m}`: {err}; position unchanged")),
            }
        }
        self.position = pos;
    }

    fn go(&mut self, rest: &str) {
        let params = match GoParams::parse(rest) {
            Ok(p) => p,
            Err(msg) => return error(msg),
        };
        let pos = self.position;
        let moves = pos.legal_moves();
        if moves.is_empty() {
            error("the game is over");
            return say("bestmove 0000");
        }
        let limits = params.limits(&pos);
        let stop = Arc::new(AtomicBool::new(false));
        let mut searcher = self
            .searcher
            .take()
            .unwrap_or_else(|| Searcher::new(self.hash_mb));
        let player = self.player.clone();
        let simulations = self.simulations;
        let infinite = params.infinite;
        let flag = stop.clone();
        let forced = (moves.len() == 1).then(|| moves[0]);
        let handle = std::thread::spawn(move || {
            let mv = match player {
                _ if forced.is_some() => forced.expect("checked"),
                Choice::Ladder(spec @ (PlayerSpec::Random | PlayerSpec::Greedy)) => {
                    let seed = pos.hash();
                    let mut p = spec
                        .build(pos.game(), seed, Timeouts::default())
                        .expect("built-in player");
                    p.choose(&pos).expect("built-in players always move")
                }
                Choice::Ladder(PlayerSpec::Mcts { net, sims, time }) => {
                    // The GUI's node limit is a simulation count; otherwise the
                    // Simulations option, the clock, or the player's own setting.
                    let (sims, time) = match (limits.nodes, simulations, limits.time) {
                        (Some(n), _, _) => (n.min(1_000_000) as u32, None),
                        (None, 0, Some(t)) if time.is_none() => (sims, Some(t)),
                        (None, 0, _) => (sims, time),
                        (None, n, _) => (n, None),
                    };
                    let spec = PlayerSpec::Mcts { net, sims, time };
                    match spec.build(pos.game(), pos.hash(), Timeouts::default()) {
                        Ok(mut p) => p.choose(&pos).expect("MCTS players always move"),
                        Err(e) => {
                            error(e);
                            search(&mut searcher, &pos, limits, &flag)
                        }
                    }
                }
                Choice::Ladder(PlayerSpec::AlphaBeta(own)) => {
                    let l = merge(own, limits);
                    search(&mut searcher, &pos, l, &flag)
                }
                _ => search(&mut searcher, &pos, limits, &flag),
            };
            // With `go infinite`, the answer waits for `stop`.
            while infinite && !flag.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
            }
            say(&format!("bestmove {}", pos.move_to_string(mv)));
            searcher
        });
        self.search = Some((handle, stop, infinite));
    }
}

/// MCTS with the network of a model or run directory, checked to load and to play `game`.
fn model_player(dir: &std::path::Path, game: Game) -> Result<Choice, String> {
    let model_dir = match eval::resolve_net(dir).map_err(|e| e.to_string())? {
        eval::ResolvedNet::Bootstrap => None,
        eval::ResolvedNet::Model(d) => Some(d),
    };
    if let Some(d) = &model_dir {
        let meta = train::read_metadata(d).map_err(|e| e.to_string())?;
        if meta.game != game.to_string() {
            return Err(format!(
                "{} plays {}, not {game} (set the Game option first)",
                d.display(),
                meta.game
            ));
        }
    }
    eval::build_evaluator(&eval::NetSource::Path(dir.to_path_buf()), game)
        .map_err(|e| e.to_string())?;
    Ok(Choice::Ladder(PlayerSpec::Mcts {
        net: eval::NetSource::Path(dir.to_path_buf()),
        sims: eval::DEFAULT_MCTS_SIMS,
        time: None,
    }))
}

/// The tighter of a ladder player's own limits and the GUI's.
fn merge(own: Limits, gui: Limits) -> Limits {
    fn min<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
        match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        }
    }
    Limits {
        depth: min(own.depth, gui.depth),
        nodes: min(own.nodes, gui.nodes),
        time: min(own.time, gui.time),
    }
}

fn search(searcher: &mut Searcher, pos: &State, limits: Limits, stop: &AtomicBool) -> Move {
    let report = searcher.search(pos, limits, stop, |r| say(&info_line(r, pos)));
    report.expect("the position has legal moves").pv[0]
}

fn info_line(r: &SearchReport, pos: &State) -> String {
    let score = if r.score.abs() > MATE - 200 {
        let plies = MATE - r.score.abs();
        let moves = (plies + 1) / 2;
        format!("mate {}", if r.score > 0 { moves } else { -moves })
    } else {
        format!("cp {}", r.score)
    };
    let ms = r.time.as_millis().max(1);
    let mut p = *pos;
    let mut pv = vec![];
    for &m in &r.pv {
        pv.push(p.move_to_string(m));
        p.play(m);
    }
    format!(
        "info depth {} score {score} nodes {} nps {} time {} pv {}",
        r.depth,
        r.nodes,
        r.nodes as u128 * 1000 / ms,
        ms,
        pv.join(" ")
    )
}

/// The parameters of a `go` command.
#[derive(Default, Debug)]
struct GoParams {
    wtime: Option<u64>,
    btime: Option<u64>,
    winc: u64,
    binc: u64,
    movestogo: Option<u64>,
    movetime: Option<u64>,
    depth: Option<u32>,
    nodes: Option<u64>,
    infinite: bool,
}

impl GoParams {
    fn parse(rest: &str) -> Result<GoParams, String> {
        let mut p = GoParams::default();
        let mut it = rest.split_whitespace();
        while let Some(k) = it.next() {
            if k == "infinite" {
                p.infinite = true;
                continue;
            }
            let v = it.next().ok_or_else(|| format!("`go {k}` needs a value"))?;
            // Some GUIs send negative remaining time when a flag falls; treat it as zero.
            let n: i64 = v
                .parse()
                .map_err(|_| format!("`go {k} {v}`: not a number"))?;
            let n = n.max(0) as u64;
            match k {
                "wtime" => p.wtime = Some(n),
                "btime" => p.btime = Some(n),
                "winc" => p.winc = n,
                "binc" => p.binc = n,
                "movestogo" => p.movestogo = Some(n.max(1)),
                "movetime" => p.movetime = Some(n),
                "depth" => p.depth = Some(n.clamp(1, 64) as u32),
                "nodes" => p.nodes = Some(n.max(1)),
                _ => return Err(format!("unknown `go` parameter `{k}`")),
            }
        }
        Ok(p)
    }

    /// Search limits. In UAI for Ataxx (libataxx, cuteataxx) the first player `x` is
    /// "black": `btime`/`binc` are x's clock, `wtime`/`winc` o's.
    fn limits(&self, pos: &State) -> Limits {
        let x_to_move = pos.side_to_move() == engine::Side::X;
        let (left, inc) = if x_to_move {
            (self.btime, self.binc)
        } else {
            (self.wtime, self.winc)
        };
        let clock = left.map(|left| {
            // Keep a safety margin for process and pipe latency; spend a share of what is
            // left plus most of the increment, never more than half of the clock.
            let overhead = 30;
            let usable = left.saturating_sub(overhead);
            let share = usable / self.movestogo.unwrap_or(30) + inc * 3 / 4;
            Duration::from_millis(share.min(usable / 2 + inc / 2).min(usable).max(1))
        });
        let movetime = self
            .movetime
            .map(|t| Duration::from_millis(t.saturating_sub(10).max(1)));
        let time = if self.infinite {
            None
        } else {
            movetime.or(clock)
        };
        Limits {
            depth: self.depth,
            nodes: self.nodes,
            time,
        }
    }
}
