//! The serverless player: a game, its moves, and the search of a fast net, driven by
//! JSON commands (see [`WebPlayer::call`]): the tree search (MCTS) with a net's value and
//! policy, or for a value net of the alpha-beta family (`"search": "alphabeta"` in its
//! `model.json`) the alpha-beta searcher with the net at its leaves, as `abnet:DIR`.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use engine::search::{Limits, Searcher, value_of_score};
use engine::{Game, Move, State};
use selfplay::{Evaluator, MctsConfig, PlayLimits, SearchKind, TreePlayer, batch_for};
use serde::{Deserialize, Serialize};

use crate::position::{PositionView, move_cells, parse_legal_move, parse_position, view};

/// The most simulations a move a page may ask for: about 4 s and 400 MB of tree in
/// WebAssembly (whose memory ends at 4 GiB), on the page's thread.
pub const MAX_SIMS: u32 = 100_000;

/// Nodes the alpha-beta searcher searches for each simulation of the page's effort
/// setting: about the time of one (natively, flipzero's MCTS with a 256-hidden net
/// searches some 160,000 simulations a second, its alpha-beta with that net 1.5 M nodes).
pub const AB_NODES_PER_SIM: u64 = 10;

/// Transposition table of the browser's alpha-beta searcher, MiB.
const AB_HASH_MB: usize = 16;

/// A game against a fast net.
pub struct WebPlayer {
    game: Game,
    start: State,
    moves: Vec<Move>,
    state: State,
    evaluators: Vec<Box<dyn Evaluator>>,
    tree: TreePlayer,
    /// The alpha-beta searcher of a value net (`None`: the tree search plays).
    alpha_beta: Option<Box<Searcher>>,
    sims: u32,
    seed: u64,
    net: String,
}

/// A command from the page (`{"op": "...", ...}`).
#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Command {
    /// The current game.
    State,
    /// A new game from `position` (position text; empty or none: the start).
    NewGame {
        /// The start position's text.
        #[serde(default)]
        position: Option<String>,
    },
    /// Plays a move given in notation.
    Play {
        /// The move (`0000` passes).
        #[serde(rename = "move")]
        mv: String,
    },
    /// The net searches the position and plays its move.
    Think,
    /// Takes back the last `plies` moves (1 if not given).
    Undo {
        /// Moves to take back.
        #[serde(default)]
        plies: Option<usize>,
    },
    /// Sets the simulations a move and the seed (the search restarts its tree).
    Configure {
        /// Simulations a move (1 to [`MAX_SIMS`]).
        #[serde(default)]
        sims: Option<u32>,
        /// The seed of the search's random choices.
        #[serde(default)]
        seed: Option<u64>,
    },
}

/// One root move of the last search.
#[derive(Debug, Serialize)]
pub struct Line {
    /// The move.
    #[serde(rename = "move")]
    pub mv: String,
    /// Simulations through it.
    pub visits: u32,
    /// Its mean value for the side that plays it, -1 to 1.
    pub q: Option<f32>,
    /// The net's prior.
    pub prior: f32,
}

/// The answer to every command: the game as it stands.
#[derive(Debug, Serialize)]
pub struct Answer {
    /// The game's name.
    pub game: String,
    /// The net's name (its `model.json` summary).
    pub net: String,
    /// The search that plays: `mcts`, or `alphabeta` (a value net).
    pub search: SearchKind,
    /// Simulations a move (alpha-beta: [`AB_NODES_PER_SIM`] nodes for each).
    pub sims: u32,
    /// The search's effort a move in words (`400 simulations`, `alpha-beta, 4000 nodes`).
    pub effort: String,
    /// The search's seed.
    pub seed: u64,
    /// The start position's text.
    pub start: String,
    /// The moves played since the start.
    pub moves: Vec<String>,
    /// The position now.
    pub view: PositionView,
    /// The cells of the last move (its source and target; none for a pass or at the
    /// start).
    pub last_cells: Vec<usize>,
    /// The net's move, when the command was `think`.
    pub played: Option<String>,
    /// The searched root's value for the side that moved (after `think`; none for a
    /// forced move).
    pub value: Option<f32>,
    /// The root moves of that search, most visited first (at most 8).
    pub lines: Vec<Line>,
    /// Positions that search evaluated with the net (the rest came from its cache or
    /// from the tree kept from the last move).
    pub evaluations: u64,
}

impl WebPlayer {
    /// A player of the fast net in `meta` (`model.json`) and `weights` (its float file
    /// `fastnet.safetensors`, its quantised file, or that packed as
    /// [`crate::packed`]), searching `sims` simulations a move with `seed`, from the
    /// game's start.
    pub fn load(meta: &[u8], weights: &[u8], sims: u32, seed: u64) -> Result<WebPlayer, String> {
        check_sims(sims)?;
        let unpacked;
        let (weights, name) = if crate::packed::is_packed(weights) {
            unpacked = crate::packed::unpack(weights)
                .map_err(|e| format!("{}: {e}", crate::packed::FILE))?;
            (&unpacked[..], crate::packed::FILE)
        } else {
            (weights, fastnet::io::WEIGHTS)
        };
        let (net, meta) =
            fastnet::io::parse(meta, weights, "model.json", name).map_err(|e| e.to_string())?;
        let game = meta.network.check().map_err(|e| e.to_string())?;
        let quant = Arc::new(fastnet::QuantNet::new(&net).map_err(|e| e.to_string())?);
        let name = format!(
            "{} fast net, hidden {}{}",
            meta.network.game,
            meta.network.hidden,
            match meta.search {
                SearchKind::Mcts => "",
                SearchKind::AlphaBeta => ", alpha-beta",
            }
        );
        let alpha_beta = (meta.search == SearchKind::AlphaBeta).then(|| {
            Box::new(
                Searcher::new(AB_HASH_MB)
                    .with_eval(Box::new(fastnet::FastValue::new(quant.clone()))),
            )
        });
        let evaluator: Box<dyn Evaluator> = Box::new(fastnet::FastEvaluator::new(quant, &name));
        let tree = tree_player(sims, seed, evaluator.preferred_batch());
        Ok(WebPlayer {
            game,
            start: game.startpos(),
            moves: Vec::new(),
            state: game.startpos(),
            evaluators: vec![evaluator],
            tree,
            alpha_beta,
            sims,
            seed,
            net: name,
        })
    }

    /// Runs `command` (JSON, see [`Command`]); the answer is the game as it stands, or
    /// why the command was refused (nothing changes then).
    pub fn call(&mut self, command: &str) -> Result<Answer, String> {
        let command: Command =
            serde_json::from_str(command).map_err(|e| format!("bad command: {e}"))?;
        let mut played = None;
        match command {
            Command::State => {}
            Command::NewGame { position } => {
                self.start = parse_position(self.game, position.as_deref())?;
                self.state = self.start;
                self.moves.clear();
                self.tree.new_game();
                if let Some(ab) = &mut self.alpha_beta {
                    ab.clear();
                }
            }
            Command::Play { mv } => {
                let m = parse_legal_move(&self.state, &mv)?;
                self.push(m);
            }
            Command::Think => {
                if let Some(r) = self.state.result() {
                    return Err(format!(
                        "the game is over ({}): no move to think about",
                        r.reason.name()
                    ));
                }
                if let Some(ab) = &mut self.alpha_beta {
                    let limits = Limits {
                        nodes: Some(u64::from(self.sims) * AB_NODES_PER_SIM),
                        ..Limits::default()
                    };
                    let r = ab
                        .search(&self.state, limits, &AtomicBool::new(false), |_| {})
                        .ok_or("no legal move")?;
                    let m = r.pv[0];
                    played = Some(self.state.move_to_string(m));
                    let line = Line {
                        mv: self.state.move_to_string(m),
                        visits: u32::try_from(r.nodes).unwrap_or(u32::MAX),
                        q: Some(value_of_score(r.score)),
                        prior: 1.0,
                    };
                    self.push(m);
                    let mut a = self.answer(played);
                    (a.value, a.lines, a.evaluations) = (line.q, vec![line], r.nodes);
                    return Ok(a);
                }
                let limits = PlayLimits {
                    sims: Some(self.sims),
                    time: None,
                };
                let m = self
                    .tree
                    .choose(
                        &mut self.evaluators,
                        &self.state,
                        limits,
                        &AtomicBool::new(false),
                    )
                    .map_err(|e| e.to_string())?;
                played = Some(self.state.move_to_string(m));
                let answer_lines = self.lines();
                self.push(m);
                let mut a = self.answer(played);
                (a.value, a.lines) = answer_lines;
                a.evaluations = self.tree.last_stats().map_or(0, |s| s.evaluations);
                return Ok(a);
            }
            Command::Undo { plies } => {
                let n = plies.unwrap_or(1).min(self.moves.len());
                self.moves.truncate(self.moves.len() - n);
                self.state = self.start;
                for &m in &self.moves {
                    self.state.play(m);
                }
            }
            Command::Configure { sims, seed } => {
                let sims = sims.unwrap_or(self.sims);
                check_sims(sims)?;
                self.sims = sims;
                self.seed = seed.unwrap_or(self.seed);
                self.tree = tree_player(sims, self.seed, self.evaluators[0].preferred_batch());
            }
        }
        Ok(self.answer(played))
    }

    fn push(&mut self, m: Move) {
        self.state.play(m);
        self.moves.push(m);
    }

    /// The last search's root value and moves (none after a forced move).
    fn lines(&self) -> (Option<f32>, Vec<Line>) {
        let Some(tree) = self.tree.last_tree() else {
            return (None, Vec::new());
        };
        let mut lines = tree.root_lines(0);
        lines.sort_by_key(|l| std::cmp::Reverse(l.visits));
        let lines = lines
            .into_iter()
            .take(8)
            .map(|l| Line {
                mv: self.state.move_to_string(l.mv),
                visits: l.visits,
                q: l.q,
                prior: l.prior,
            })
            .collect();
        (Some(tree.root_value()), lines)
    }

    fn answer(&self, played: Option<String>) -> Answer {
        let mut s = self.start;
        let moves = self
            .moves
            .iter()
            .map(|&m| {
                let t = s.move_to_string(m);
                s.play(m);
                t
            })
            .collect();
        Answer {
            game: self.game.to_string(),
            net: self.net.clone(),
            search: if self.alpha_beta.is_some() {
                SearchKind::AlphaBeta
            } else {
                SearchKind::Mcts
            },
            sims: self.sims,
            effort: match self.alpha_beta {
                Some(_) => format!(
                    "alpha-beta, {} nodes",
                    u64::from(self.sims) * AB_NODES_PER_SIM
                ),
                None => format!("{} simulations", self.sims),
            },
            seed: self.seed,
            start: self.start.text(),
            moves,
            view: view(&self.state),
            last_cells: self.moves.last().map_or(Vec::new(), |&m| {
                let (from, to) = move_cells(m);
                from.into_iter().chain(to).collect()
            }),
            played,
            value: None,
            lines: Vec::new(),
            evaluations: 0,
        }
    }
}

/// The play-time search of `sims` simulations a move, as the native `mcts:DIR:sims=N`
/// builds it (`eval::PlayerSpec`): the batch for that count, tree reuse, the defaults.
fn tree_player(sims: u32, seed: u64, preferred_batch: usize) -> TreePlayer {
    TreePlayer::new(
        MctsConfig::for_play(),
        batch_for(Some(sims), preferred_batch),
        seed,
    )
}

fn check_sims(sims: u32) -> Result<(), String> {
    if (1..=MAX_SIMS).contains(&sims) {
        Ok(())
    } else {
        Err(format!("sims {sims}: expected 1 to {MAX_SIMS}"))
    }
}
