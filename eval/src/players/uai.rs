//! External engines as players, spoken to over UAI: commands are formatted and replies
//! parsed by the protocol module, `engine::uai`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use engine::uai::{Command, Go, GoParam, Reply, ReplyError, Start};
use engine::{Game, Move, State};
use selfplay::ClockState;

use super::process::EngineProcess;
use super::{Player, PlayerError, Timeouts};

/// An external engine spoken to over UAI; killed when dropped.
pub struct UaiPlayer {
    process: EngineProcess,
    go: Go,
    move_budget: Duration,
    timeouts: Timeouts,
}

impl UaiPlayer {
    /// Starts the engine and completes the `uai` / `isready` handshake for `game`: an
    /// engine with a `Game` option is set to it (one whose option does not list it is
    /// refused), an engine without one must be playing standard `ataxx`, and an engine
    /// that answers an option with `info string error` is refused. The `go` parameters
    /// among the options (`movetime`, `depth`, `nodes`) must be numbers.
    pub fn start(
        path: PathBuf,
        options: Vec<(String, String)>,
        game: Game,
        timeouts: Timeouts,
    ) -> Result<UaiPlayer, PlayerError> {
        let refuse = |why: String| PlayerError::Refused {
            engine: path.display().to_string(),
            why,
        };
        let mut go = Go::default();
        let mut set: Vec<(String, String)> = vec![];
        let mut move_budget = Duration::from_millis(100);
        for (k, v) in options {
            match k.as_str() {
                "movetime" | "depth" | "nodes" => {
                    let given = Go::parse(&format!("{k} {v}"));
                    if let Some(e) = given.problems().next() {
                        return Err(refuse(format!("its option {k}={v}: {e}")));
                    }
                    if let Some(ms) = given.movetime() {
                        move_budget = Duration::from_millis(ms);
                    }
                    go.params.extend(given.params);
                }
                _ => set.push((k, v)),
            }
        }
        if go.params.is_empty() {
            go.params.push(GoParam::MoveTime(100));
        }
        let mut p = UaiPlayer {
            process: EngineProcess::spawn(&path)?,
            go,
            move_budget,
            timeouts,
        };
        p.send(&Command::Uai)?;
        let hello = p.wait_for("uaiok", timeouts.startup)?;
        let game_name = game.to_string();
        // The match's game is the engine's: a Game option among the player's options
        // must name it too, and is then the one sent.
        if let Some((_, v)) = set.iter().find(|(k, _)| k.eq_ignore_ascii_case("game"))
            && v.parse::<Game>().ok() != Some(game)
        {
            return Err(refuse(format!(
                "its options set Game={v}, but the match plays {game_name}"
            )));
        }
        set.retain(|(k, _)| !k.eq_ignore_ascii_case("game"));
        match game_option(&hello) {
            Some(games) => {
                if !games.contains(&game_name) {
                    return Err(refuse(format!(
                        "its Game option offers {}, not {game_name}",
                        games.join(", ")
                    )));
                }
                set.insert(0, ("Game".into(), game_name));
            }
            None if game_name != "ataxx" => {
                return Err(refuse(format!(
                    "it has no Game option, so it plays standard ataxx, not {game_name}"
                )));
            }
            None => {}
        }
        for (name, value) in set {
            p.send(&Command::SetOption {
                name,
                value: Some(value),
            })?;
        }
        p.send(&Command::IsReady)?;
        let answer = p.wait_for("readyok", timeouts.startup)?;
        let error = |(_, r): &&Read| matches!(r, Ok(Reply::Info(i)) if i.string.as_ref().is_some_and(|s| s.starts_with("error")));
        if let Some((line, _)) = answer.iter().find(error) {
            return Err(refuse(format!(
                "it answered its options with `{}`",
                line.trim()
            )));
        }
        Ok(p)
    }

    fn send(&mut self, command: &Command) -> Result<(), PlayerError> {
        self.process.send(&command.to_string())
    }

    /// Waits for the reply `keyword` (`uaiok`, `readyok`, `bestmove`; a malformed one
    /// too); returns every line read with its reply, that one last.
    fn wait_for(
        &mut self,
        keyword: &'static str,
        within: Duration,
    ) -> Result<Vec<Read>, PlayerError> {
        let deadline = Instant::now() + within;
        let mut read = Vec::new();
        loop {
            let line = self.process.next_line(deadline, within, keyword)?;
            let reply = Reply::parse(&line);
            let done = match &reply {
                Ok(r) => r.keyword() == keyword,
                Err(e) => e.reply() == Some(keyword),
            };
            read.push((line, reply));
            if done {
                return Ok(read);
            }
        }
    }
}

/// A line read from the engine, and its reply.
type Read = (String, Result<Reply, ReplyError>);

impl Player for UaiPlayer {
    fn new_game(&mut self) -> Result<(), PlayerError> {
        self.send(&Command::UaiNewGame)?;
        self.send(&Command::IsReady)?;
        self.wait_for("readyok", self.timeouts.startup).map(|_| ())
    }

    fn choose(&mut self, state: &State) -> Result<Move, PlayerError> {
        let go = self.go.clone();
        let within = self.move_budget + self.timeouts.per_move;
        self.go_and_read(state, &go, within)
    }

    /// On a clock: `go` with the mover's clock (`btime`/`binc` for x, the first player,
    /// as libataxx and cuteataxx have it; the opponent's clock is sent as the same), and
    /// `movestogo 1` for a fixed time per move; the engine's own `go` limits are dropped.
    fn choose_timed(&mut self, state: &State, clock: &ClockState) -> Result<Move, PlayerError> {
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let (t, inc) = (ms(clock.remaining), ms(clock.increment));
        let mut go = Go {
            params: vec![
                GoParam::WTime(t),
                GoParam::BTime(t),
                GoParam::WInc(inc),
                GoParam::BInc(inc),
            ],
        };
        if let Some(m) = clock.moves_to_go {
            go.params.push(GoParam::MovesToGo(m.into()));
        }
        let within = clock.remaining + self.timeouts.per_move;
        self.go_and_read(state, &go, within)
    }
}

impl UaiPlayer {
    /// Sends the position and `go`, and reads the `bestmove` within `within`. A
    /// malformed `bestmove` line (no move, words after it) is still the answer: its
    /// second word, if any, is taken as the move.
    fn go_and_read(
        &mut self,
        state: &State,
        go: &Go,
        within: Duration,
    ) -> Result<Move, PlayerError> {
        self.send(&Command::Position {
            start: Start::Fen(state.text()),
            moves: vec![],
        })?;
        self.send(&Command::Go(go.clone()))?;
        let lines = self.wait_for("bestmove", within)?;
        let text = match lines.last() {
            Some((_, Ok(Reply::BestMove { mv, .. }))) => mv.clone(),
            Some((line, _)) => line.split_whitespace().nth(1).unwrap_or("").to_string(),
            None => String::new(),
        };
        state
            .parse_move(&text)
            .map_err(|_| PlayerError::IllegalMove(text))
    }
}

/// The games an engine's `option name Game type combo default … var …` line offers (its
/// default and every `var`), if it has such an option.
fn game_option(hello: &[Read]) -> Option<Vec<String>> {
    hello.iter().find_map(|(_, reply)| match reply {
        Ok(Reply::Option(o)) if o.name.eq_ignore_ascii_case("game") => {
            Some(o.default.iter().chain(&o.vars).cloned().collect())
        }
        _ => None,
    })
}
