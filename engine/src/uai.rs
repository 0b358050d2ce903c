//! The UAI protocol (UCI for Ataxx, as libataxx and cuteataxx speak it), both ways, in
//! one place: the commands a GUI sends ([`Command`]) and the replies an engine gives
//! ([`Reply`]), each parsed from a line and formatted back into one (`Display`). The
//! engine side (`flipzero uai`) parses commands and formats replies; the client that
//! drives external engines (`uai:<path>` players) formats commands and parses replies.
//!
//! What each side does with a message is not here: positions and moves stay text (their
//! game parses them), and the limits of `go` stay as given (clamping them is the
//! engine's business). Malformed input is a typed error whose text names the problem,
//! repeating at most a bounded excerpt of the input ([`excerpt`]). A `go` is never
//! refused as a whole, since a GUI waits for its `bestmove`: a parameter that cannot be
//! read is kept in its place as [`GoParam::Malformed`], for the engine to report.
//!
//! ```
//! use engine::uai::{Command, Go, GoParam, Reply, Start};
//! let c: Command = "position startpos moves g2 a1b1".parse().unwrap();
//! assert_eq!(
//!     c,
//!     Command::Position { start: Start::StartPos, moves: vec!["g2".into(), "a1b1".into()] }
//! );
//! let go = Command::Go(Go { params: vec![GoParam::BTime(1000), GoParam::BInc(10)] });
//! assert_eq!(go.to_string(), "go btime 1000 binc 10");
//! let r: Reply = "bestmove g1e3".parse().unwrap();
//! assert_eq!(r, Reply::BestMove { mv: "g1e3".into(), ponder: None });
//! assert!("position sideways".parse::<Command>().is_err());
//! ```

use std::fmt;
use std::str::FromStr;

/// The most characters of a malformed input that an error message repeats.
pub const SHOWN_CHARS: usize = 80;

/// `text` as an error message repeats it: at most [`SHOWN_CHARS`] characters, the rest
/// counted (a 10 MB line is not echoed back).
pub fn excerpt(text: &str) -> String {
    let n = text.chars().count();
    if n <= SHOWN_CHARS {
        text.to_string()
    } else {
        let head: String = text.chars().take(SHOWN_CHARS).collect();
        format!("{head}… ({} more characters)", n - SHOWN_CHARS)
    }
}

// ---------------------------------------------------------------------------------------
// Commands: GUI → engine.

/// A command to the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `uai`: identify yourself and list your options.
    Uai,
    /// `isready`: answer `readyok` (at once, also during a search).
    IsReady,
    /// `uainewgame`: the next position is of a new game.
    UaiNewGame,
    /// `setoption name <name> [value <value>]`: the name may hold spaces; the value is the
    /// rest of the line (`None`: no `value` word).
    SetOption {
        /// The option's name.
        name: String,
        /// Its value.
        value: Option<String>,
    },
    /// `position startpos|fen <FEN> [moves <move>...]`.
    Position {
        /// The position the moves start from.
        start: Start,
        /// The moves played from it, in notation.
        moves: Vec<String>,
    },
    /// `go [<param>...]`: search the position and answer `bestmove`.
    Go(Go),
    /// `stop`: end the search now (it still answers `bestmove`).
    Stop,
    /// `quit`.
    Quit,
    /// `perft <depth>` (an extension): count the leaves, answer `nodes <count>`.
    Perft(u32),
}

/// The start of a `position` command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Start {
    /// `startpos`: the game's start position.
    StartPos,
    /// `fen <text>`: a position in the game's text format.
    Fen(String),
}

/// A command that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// An empty line.
    #[error("empty command")]
    Empty,
    /// Not a command of the protocol.
    #[error("unknown command `{}`", excerpt(.0))]
    Unknown(String),
    /// `setoption` without `name <name>`.
    #[error("expected `setoption name <name> [value <value>]`")]
    SetOption,
    /// `position` without `startpos` or `fen <FEN>` (what followed `position`).
    #[error("expected `position startpos|fen <FEN> [moves ...]`, got `{}`", excerpt(.0))]
    Position(String),
    /// `perft` without a depth (what followed `perft`).
    #[error("`perft {}`: expected a depth", excerpt(.0))]
    Perft(String),
}

impl CommandError {
    /// The command whose arguments were malformed (`None`: no command, or an unknown
    /// one).
    pub fn command(&self) -> Option<&'static str> {
        match self {
            CommandError::Empty | CommandError::Unknown(_) => None,
            CommandError::SetOption => Some("setoption"),
            CommandError::Position(_) => Some("position"),
            CommandError::Perft(_) => Some("perft"),
        }
    }
}

impl Command {
    /// Parses one input line (surrounding whitespace ignored). Words after a command
    /// that takes no arguments are ignored, as GUIs expect.
    pub fn parse(line: &str) -> Result<Command, CommandError> {
        let line = line.trim();
        let (cmd, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        Ok(match cmd {
            "" => return Err(CommandError::Empty),
            "uai" => Command::Uai,
            "isready" => Command::IsReady,
            "uainewgame" => Command::UaiNewGame,
            "stop" => Command::Stop,
            "quit" => Command::Quit,
            "setoption" => {
                let (name, value) = split_setoption(rest).ok_or(CommandError::SetOption)?;
                Command::SetOption {
                    name: name.to_string(),
                    value: value.map(str::to_string),
                }
            }
            "position" => parse_position(rest)?,
            "go" => Command::Go(Go::parse(rest)),
            "perft" => Command::Perft(
                rest.trim()
                    .parse()
                    .map_err(|_| CommandError::Perft(rest.to_string()))?,
            ),
            other => return Err(CommandError::Unknown(other.to_string())),
        })
    }
}

impl FromStr for Command {
    type Err = CommandError;

    fn from_str(s: &str) -> Result<Command, CommandError> {
        Command::parse(s)
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Command::Uai => f.write_str("uai"),
            Command::IsReady => f.write_str("isready"),
            Command::UaiNewGame => f.write_str("uainewgame"),
            Command::Stop => f.write_str("stop"),
            Command::Quit => f.write_str("quit"),
            Command::SetOption { name, value } => {
                write!(f, "setoption name {name}")?;
                match value {
                    Some(v) => write!(f, " value {v}"),
                    None => Ok(()),
                }
            }
            Command::Position { start, moves } => {
                match start {
                    Start::StartPos => f.write_str("position startpos")?,
                    Start::Fen(fen) => write!(f, "position fen {fen}")?,
                }
                if !moves.is_empty() {
                    write!(f, " moves {}", moves.join(" "))?;
                }
                Ok(())
            }
            Command::Go(go) => go.fmt(f),
            Command::Perft(depth) => write!(f, "perft {depth}"),
        }
    }
}

/// Splits the arguments of `setoption` (`name <name> [value <value>]`) into the name and
/// the value. The name runs up to the word `value`; the value is the rest of the line,
/// inner spaces kept (empty when `value` has nothing after it; `None` without `value`).
fn split_setoption(rest: &str) -> Option<(&str, Option<&str>)> {
    let after = rest
        .trim_start()
        .strip_prefix("name")
        .filter(|a| a.is_empty() || a.starts_with(char::is_whitespace))?;
    let (name, value) = match split_at_word(after, "value") {
        Some((name, value)) => (name, Some(value.trim())),
        None => (after, None),
    };
    let name = name.trim();
    (!name.is_empty()).then_some((name, value))
}

/// The text before and after the first whitespace-delimited occurrence of `word`.
fn split_at_word<'a>(s: &'a str, word: &str) -> Option<(&'a str, &'a str)> {
    let mut start = None;
    for (i, c) in s.char_indices().chain(std::iter::once((s.len(), ' '))) {
        if !c.is_whitespace() {
            start.get_or_insert(i);
        } else if let Some(st) = start.take()
            && &s[st..i] == word
        {
            return Some((&s[..st], &s[i..]));
        }
    }
    None
}

/// The arguments of `position`: `startpos` or `fen <FEN>`, then ` moves` and the moves.
fn parse_position(rest: &str) -> Result<Command, CommandError> {
    let (base, moves) = match rest.split_once(" moves") {
        Some((b, m)) => (b.trim(), m.split_whitespace().map(str::to_string).collect()),
        None => (rest.trim(), vec![]),
    };
    let start = if base == "startpos" {
        Start::StartPos
    } else if let Some(fen) = base.strip_prefix("fen ") {
        Start::Fen(fen.to_string())
    } else {
        return Err(CommandError::Position(rest.to_string()));
    };
    Ok(Command::Position { start, moves })
}

/// The parameters of a `go` command, in the order given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Go {
    /// The parameters.
    pub params: Vec<GoParam>,
}

/// One parameter of `go`. Times are in milliseconds; x, the first player, is "black"
/// (`btime`, `binc`), as libataxx and cuteataxx have it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GoParam {
    /// `wtime <ms>`: o's clock.
    WTime(u64),
    /// `btime <ms>`: x's clock.
    BTime(u64),
    /// `winc <ms>`: o's increment.
    WInc(u64),
    /// `binc <ms>`: x's increment.
    BInc(u64),
    /// `movestogo <n>`: moves to the next time control.
    MovesToGo(u64),
    /// `movetime <ms>`: think this long.
    MoveTime(u64),
    /// `depth <plies>`.
    Depth(u64),
    /// `nodes <n>`.
    Nodes(u64),
    /// `mate <moves>`: search for a mate in this many moves.
    Mate(u64),
    /// `infinite`: search until `stop`.
    Infinite,
    /// `ponder`: search in the opponent's time.
    Ponder,
    /// `searchmoves <move>...`: only these moves.
    SearchMoves(Vec<String>),
    /// A parameter that could not be read, in its place (never formatted).
    Malformed(GoError),
}

/// A `go` parameter that cannot be read; it is left out.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GoError {
    /// A parameter at the end of the line without its value.
    #[error("`go {0}` needs a value: ignored")]
    MissingValue(&'static str),
    /// A value that is not a number (a negative number counts as 0).
    #[error("`go {key} {}`: not a number, ignored", crate::shown(.value))]
    NotANumber {
        /// The parameter.
        key: &'static str,
        /// What followed it.
        value: String,
    },
    /// A word that is no parameter of `go`.
    #[error("unknown `go` parameter `{}`: ignored", crate::shown(.0))]
    Unknown(String),
}

impl GoError {
    /// The parameter whose value was malformed (`None`: an unknown word).
    pub fn key(&self) -> Option<&'static str> {
        match self {
            GoError::MissingValue(k) | GoError::NotANumber { key: k, .. } => Some(k),
            GoError::Unknown(_) => None,
        }
    }
}

/// The keywords of `go`; the arguments of `searchmoves` and `mate` run up to the next.
const GO_KEYS: [&str; 12] = [
    "wtime",
    "btime",
    "winc",
    "binc",
    "movestogo",
    "movetime",
    "depth",
    "nodes",
    "mate",
    "infinite",
    "ponder",
    "searchmoves",
];

/// A `go` value: digits, with a `-` that counts as 0 (some GUIs send a negative time when
/// a flag falls) and anything beyond `u64` saturating.
fn number(v: &str) -> Option<u64> {
    let digits = v.strip_prefix('-').unwrap_or(v);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(if v.starts_with('-') {
        0
    } else {
        digits.parse().unwrap_or(u64::MAX)
    })
}

/// Accessors of `go` values: each the last one given of its parameter.
macro_rules! go_values {
    ($($(#[$doc:meta])* $name:ident: $variant:ident,)*) => {
        $(
            $(#[$doc])*
            pub fn $name(&self) -> Option<u64> {
                self.params.iter().rev().find_map(|p| match p {
                    GoParam::$variant(n) => Some(*n),
                    _ => None,
                })
            }
        )*
    };
}

impl Go {
    /// Parses the arguments of `go`. A parameter that cannot be read (no value, a value
    /// that is not a number, an unknown word) is kept as [`GoParam::Malformed`] in its
    /// place; the rest is read on.
    pub fn parse(rest: &str) -> Go {
        let words: Vec<&str> = rest.split_whitespace().collect();
        let mut params = Vec::new();
        let mut i = 0;
        while i < words.len() {
            let word = words[i];
            i += 1;
            let Some(&key) = GO_KEYS.iter().find(|&&k| k == word) else {
                params.push(GoParam::Malformed(GoError::Unknown(word.to_string())));
                continue;
            };
            let param = match key {
                "infinite" => GoParam::Infinite,
                "ponder" => GoParam::Ponder,
                "searchmoves" | "mate" => {
                    // The arguments run up to the next keyword.
                    let from = i;
                    while i < words.len() && !GO_KEYS.contains(&words[i]) {
                        i += 1;
                    }
                    let args = &words[from..i];
                    match (key, args) {
                        ("searchmoves", _) => {
                            GoParam::SearchMoves(args.iter().map(|m| m.to_string()).collect())
                        }
                        (_, []) => GoParam::Malformed(GoError::MissingValue(key)),
                        (_, [n]) if number(n).is_some() => GoParam::Mate(number(n).unwrap()),
                        _ => GoParam::Malformed(GoError::NotANumber {
                            key,
                            value: args.join(" "),
                        }),
                    }
                }
                _ => {
                    let Some(v) = words.get(i) else {
                        params.push(GoParam::Malformed(GoError::MissingValue(key)));
                        continue;
                    };
                    i += 1;
                    let Some(n) = number(v) else {
                        params.push(GoParam::Malformed(GoError::NotANumber {
                            key,
                            value: v.to_string(),
                        }));
                        continue;
                    };
                    match key {
                        "wtime" => GoParam::WTime(n),
                        "btime" => GoParam::BTime(n),
                        "winc" => GoParam::WInc(n),
                        "binc" => GoParam::BInc(n),
                        "movestogo" => GoParam::MovesToGo(n),
                        "movetime" => GoParam::MoveTime(n),
                        "depth" => GoParam::Depth(n),
                        _ => GoParam::Nodes(n),
                    }
                }
            };
            params.push(param);
        }
        Go { params }
    }

    go_values! {
        /// `wtime`: o's clock (the last one given, as for each of these).
        wtime: WTime,
        /// `btime`: x's clock.
        btime: BTime,
        /// `winc`: o's increment.
        winc: WInc,
        /// `binc`: x's increment.
        binc: BInc,
        /// `movestogo`.
        movestogo: MovesToGo,
        /// `movetime`.
        movetime: MoveTime,
        /// `depth`.
        depth: Depth,
        /// `nodes`.
        nodes: Nodes,
        /// `mate`.
        mate: Mate,
    }

    /// Whether `infinite` was given.
    pub fn infinite(&self) -> bool {
        self.params.contains(&GoParam::Infinite)
    }

    /// Whether `ponder` was given.
    pub fn ponder(&self) -> bool {
        self.params.contains(&GoParam::Ponder)
    }

    /// The moves of `searchmoves` (the last one given), if any.
    pub fn searchmoves(&self) -> Option<&[String]> {
        self.params.iter().rev().find_map(|p| match p {
            GoParam::SearchMoves(m) => Some(m.as_slice()),
            _ => None,
        })
    }

    /// The parameters that could not be read, in order.
    pub fn problems(&self) -> impl Iterator<Item = &GoError> {
        self.params.iter().filter_map(|p| match p {
            GoParam::Malformed(e) => Some(e),
            _ => None,
        })
    }
}

impl fmt::Display for GoParam {
    /// The parameter as `go` gives it (nothing for a malformed one).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GoParam::WTime(n) => write!(f, "wtime {n}"),
            GoParam::BTime(n) => write!(f, "btime {n}"),
            GoParam::WInc(n) => write!(f, "winc {n}"),
            GoParam::BInc(n) => write!(f, "binc {n}"),
            GoParam::MovesToGo(n) => write!(f, "movestogo {n}"),
            GoParam::MoveTime(n) => write!(f, "movetime {n}"),
            GoParam::Depth(n) => write!(f, "depth {n}"),
            GoParam::Nodes(n) => write!(f, "nodes {n}"),
            GoParam::Mate(n) => write!(f, "mate {n}"),
            GoParam::Infinite => f.write_str("infinite"),
            GoParam::Ponder => f.write_str("ponder"),
            GoParam::SearchMoves(moves) if moves.is_empty() => f.write_str("searchmoves"),
            GoParam::SearchMoves(moves) => write!(f, "searchmoves {}", moves.join(" ")),
            GoParam::Malformed(_) => Ok(()),
        }
    }
}

impl fmt::Display for Go {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("go")?;
        for p in &self.params {
            if !matches!(p, GoParam::Malformed(_)) {
                write!(f, " {p}")?;
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Replies: engine → GUI.

/// A reply of the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// `id name <name>` or `id author <author>`.
    Id(Id),
    /// `option name <name> type <type> [default <x>] [min <n>] [max <n>] [var <x>]...`.
    Option(OptionDecl),
    /// `uaiok`: the end of the answer to `uai`.
    UaiOk,
    /// `readyok`: the answer to `isready`.
    ReadyOk,
    /// `info …`: what the search is doing, or a message (`info string …`).
    Info(Info),
    /// `bestmove <move> [ponder <move>]`: the answer to `go`.
    BestMove {
        /// The move, in notation.
        mv: String,
        /// The expected answer.
        ponder: Option<String>,
    },
    /// `nodes <count>`: the answer to `perft`.
    Nodes(u64),
}

/// An `id` reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Id {
    /// The engine's name (and version).
    Name(String),
    /// Its author.
    Author(String),
}

/// The type of an option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionKind {
    /// `check`: true or false.
    Check,
    /// `spin`: an integer within `min`..=`max`.
    Spin,
    /// `combo`: one of the `var` values.
    Combo,
    /// `button`: an action, no value.
    Button,
    /// `string`: any text (`<empty>` for none).
    String,
}

impl OptionKind {
    fn name(self) -> &'static str {
        match self {
            OptionKind::Check => "check",
            OptionKind::Spin => "spin",
            OptionKind::Combo => "combo",
            OptionKind::Button => "button",
            OptionKind::String => "string",
        }
    }
}

/// An option the engine offers (an `option` line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionDecl {
    /// Its name (it may hold spaces).
    pub name: String,
    /// Its type.
    pub kind: OptionKind,
    /// Its default value.
    pub default: Option<String>,
    /// The least value of a `spin`.
    pub min: Option<i64>,
    /// The greatest value of a `spin`.
    pub max: Option<i64>,
    /// The values of a `combo`.
    pub vars: Vec<String>,
}

impl OptionDecl {
    /// An option of `kind` named `name`, with nothing else said.
    pub fn new(name: &str, kind: OptionKind) -> OptionDecl {
        OptionDecl {
            name: name.to_string(),
            kind,
            default: None,
            min: None,
            max: None,
            vars: vec![],
        }
    }
}

/// A score in an `info` line, side-to-move view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// `cp <n>`: centi-pieces.
    Cp(i64),
    /// `mate <n>`: a win in `n` moves (negative: a loss).
    Mate(i64),
}

/// An `info` line: each field that is there. Formatted in this order; `string` takes the
/// rest of the line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Info {
    /// `depth`: the iteration's depth.
    pub depth: Option<u64>,
    /// `seldepth`: the deepest ply reached.
    pub seldepth: Option<u64>,
    /// `multipv`: the line's rank.
    pub multipv: Option<u64>,
    /// `score`.
    pub score: Option<Score>,
    /// `nodes`: nodes (or simulations) searched.
    pub nodes: Option<u64>,
    /// `nps`: nodes per second.
    pub nps: Option<u64>,
    /// `hashfull`: permille of the hash table in use.
    pub hashfull: Option<u64>,
    /// `time`: milliseconds searched.
    pub time: Option<u64>,
    /// `currmove`: the move being searched.
    pub currmove: Option<String>,
    /// `currmovenumber`: its number.
    pub currmovenumber: Option<u64>,
    /// `pv`: the principal variation (empty: none given).
    pub pv: Vec<String>,
    /// `string`: free text, to the end of the line.
    pub string: Option<String>,
}

impl Info {
    /// `info string <text>`.
    pub fn string(text: impl Into<String>) -> Info {
        Info {
            string: Some(text.into()),
            ..Info::default()
        }
    }
}

/// A reply that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    /// An empty line.
    #[error("empty reply")]
    Empty,
    /// Not a reply of the protocol.
    #[error("unknown reply `{}`", excerpt(.0))]
    Unknown(String),
    /// A field without its value.
    #[error("`{reply}`: `{field}` needs a value")]
    MissingValue {
        /// The reply (`id`, `option`, `info`, `bestmove`, `nodes`).
        reply: &'static str,
        /// The field.
        field: &'static str,
    },
    /// A field whose value is not a number.
    #[error("`{reply}`: `{field} {}` is not a number", excerpt(.value))]
    NotANumber {
        /// The reply.
        reply: &'static str,
        /// The field.
        field: &'static str,
        /// Its value.
        value: String,
    },
    /// A word that is no field of the reply.
    #[error("`{reply}`: unexpected `{}`", excerpt(.word))]
    Unexpected {
        /// The reply.
        reply: &'static str,
        /// The word.
        word: String,
    },
}

impl ReplyError {
    /// The reply that was malformed (`None`: none, or an unknown one).
    pub fn reply(&self) -> Option<&'static str> {
        match self {
            ReplyError::Empty | ReplyError::Unknown(_) => None,
            ReplyError::MissingValue { reply, .. }
            | ReplyError::NotANumber { reply, .. }
            | ReplyError::Unexpected { reply, .. } => Some(reply),
        }
    }
}

/// The words of a line with where each starts, for fields that take the rest of it.
struct Words<'a> {
    line: &'a str,
    words: Vec<(usize, &'a str)>,
    next: usize,
}

impl<'a> Words<'a> {
    fn new(line: &'a str) -> Words<'a> {
        let mut words = vec![];
        let mut start = None;
        for (i, c) in line
            .char_indices()
            .chain(std::iter::once((line.len(), ' ')))
        {
            if !c.is_whitespace() {
                start.get_or_insert(i);
            } else if let Some(s) = start.take() {
                words.push((s, &line[s..i]));
            }
        }
        Words {
            line,
            words,
            next: 0,
        }
    }

    fn next(&mut self) -> Option<&'a str> {
        let w = self.words.get(self.next).map(|&(_, w)| w);
        self.next += 1;
        w
    }

    fn peek(&self) -> Option<&'a str> {
        self.words.get(self.next).map(|&(_, w)| w)
    }

    /// The rest of the line from the next word on, trimmed (empty at the end).
    fn rest(&mut self) -> &'a str {
        let r = match self.words.get(self.next) {
            Some(&(at, _)) => self.line[at..].trim_end(),
            None => "",
        };
        self.next = self.words.len();
        r
    }

    /// The words up to the next one in `keys`.
    fn until(&mut self, keys: &[&str]) -> Vec<&'a str> {
        let mut out = vec![];
        while let Some(w) = self.peek().filter(|w| !keys.contains(w)) {
            out.push(w);
            self.next += 1;
        }
        out
    }
}

fn value<'a>(
    words: &mut Words<'a>,
    reply: &'static str,
    field: &'static str,
) -> Result<&'a str, ReplyError> {
    words
        .next()
        .ok_or(ReplyError::MissingValue { reply, field })
}

fn int<T: FromStr>(
    words: &mut Words<'_>,
    reply: &'static str,
    field: &'static str,
) -> Result<T, ReplyError> {
    let v = value(words, reply, field)?;
    v.parse().map_err(|_| ReplyError::NotANumber {
        reply,
        field,
        value: v.to_string(),
    })
}

const OPTION_KEYS: [&str; 6] = ["name", "type", "default", "min", "max", "var"];

const INFO_KEYS: [&str; 12] = [
    "depth",
    "seldepth",
    "multipv",
    "score",
    "nodes",
    "nps",
    "hashfull",
    "time",
    "currmove",
    "currmovenumber",
    "pv",
    "string",
];

impl Reply {
    /// Parses one output line of an engine (surrounding whitespace ignored).
    pub fn parse(line: &str) -> Result<Reply, ReplyError> {
        let mut w = Words::new(line);
        let Some(first) = w.next() else {
            return Err(ReplyError::Empty);
        };
        let reply = match first {
            "uaiok" => Reply::UaiOk,
            "readyok" => Reply::ReadyOk,
            "id" => match w.next() {
                Some("name") => Reply::Id(Id::Name(w.rest().to_string())),
                Some("author") => Reply::Id(Id::Author(w.rest().to_string())),
                Some(other) => {
                    return Err(ReplyError::Unexpected {
                        reply: "id",
                        word: other.to_string(),
                    });
                }
                None => {
                    return Err(ReplyError::MissingValue {
                        reply: "id",
                        field: "name",
                    });
                }
            },
            "bestmove" => {
                let mv = value(&mut w, "bestmove", "bestmove")?.to_string();
                let ponder = match w.next() {
                    None => None,
                    Some("ponder") => Some(value(&mut w, "bestmove", "ponder")?.to_string()),
                    Some(other) => {
                        return Err(ReplyError::Unexpected {
                            reply: "bestmove",
                            word: other.to_string(),
                        });
                    }
                };
                Reply::BestMove { mv, ponder }
            }
            "nodes" => Reply::Nodes(int(&mut w, "nodes", "nodes")?),
            "option" => Reply::Option(parse_option(&mut w)?),
            "info" => Reply::Info(parse_info(&mut w)?),
            other => return Err(ReplyError::Unknown(other.to_string())),
        };
        if let Some(extra) = w.next() {
            return Err(ReplyError::Unexpected {
                reply: reply.keyword(),
                word: extra.to_string(),
            });
        }
        Ok(reply)
    }

    /// The reply's first word: `id`, `option`, `uaiok`, `readyok`, `info`, `bestmove` or
    /// `nodes`.
    pub fn keyword(&self) -> &'static str {
        match self {
            Reply::Id(_) => "id",
            Reply::Option(_) => "option",
            Reply::UaiOk => "uaiok",
            Reply::ReadyOk => "readyok",
            Reply::Info(_) => "info",
            Reply::BestMove { .. } => "bestmove",
            Reply::Nodes(_) => "nodes",
        }
    }
}

fn parse_option(w: &mut Words<'_>) -> Result<OptionDecl, ReplyError> {
    const R: &str = "option";
    match w.next() {
        Some("name") => {}
        Some(other) => {
            return Err(ReplyError::Unexpected {
                reply: R,
                word: other.to_string(),
            });
        }
        None => {
            return Err(ReplyError::MissingValue {
                reply: R,
                field: "name",
            });
        }
    }
    let name = w.until(&["type"]).join(" ");
    if name.is_empty() {
        return Err(ReplyError::MissingValue {
            reply: R,
            field: "name",
        });
    }
    if w.next() != Some("type") {
        return Err(ReplyError::MissingValue {
            reply: R,
            field: "type",
        });
    }
    let kind = match value(w, R, "type")? {
        "check" => OptionKind::Check,
        "spin" => OptionKind::Spin,
        "combo" => OptionKind::Combo,
        "button" => OptionKind::Button,
        "string" => OptionKind::String,
        other => {
            return Err(ReplyError::Unexpected {
                reply: R,
                word: other.to_string(),
            });
        }
    };
    let mut decl = OptionDecl::new(&name, kind);
    while let Some(key) = w.next() {
        match key {
            "default" => decl.default = Some(w.until(&OPTION_KEYS).join(" ")),
            "min" => decl.min = Some(int(w, R, "min")?),
            "max" => decl.max = Some(int(w, R, "max")?),
            "var" => {
                let v = w.until(&OPTION_KEYS).join(" ");
                if v.is_empty() {
                    return Err(ReplyError::MissingValue {
                        reply: R,
                        field: "var",
                    });
                }
                decl.vars.push(v);
            }
            other => {
                return Err(ReplyError::Unexpected {
                    reply: R,
                    word: other.to_string(),
                });
            }
        }
    }
    Ok(decl)
}

fn parse_info(w: &mut Words<'_>) -> Result<Info, ReplyError> {
    const R: &str = "info";
    let mut info = Info::default();
    while let Some(key) = w.next() {
        match key {
            "depth" => info.depth = Some(int(w, R, "depth")?),
            "seldepth" => info.seldepth = Some(int(w, R, "seldepth")?),
            "multipv" => info.multipv = Some(int(w, R, "multipv")?),
            "nodes" => info.nodes = Some(int(w, R, "nodes")?),
            "nps" => info.nps = Some(int(w, R, "nps")?),
            "hashfull" => info.hashfull = Some(int(w, R, "hashfull")?),
            "time" => info.time = Some(int(w, R, "time")?),
            "currmove" => info.currmove = Some(value(w, R, "currmove")?.to_string()),
            "currmovenumber" => info.currmovenumber = Some(int(w, R, "currmovenumber")?),
            "score" => {
                info.score = Some(match value(w, R, "score")? {
                    "cp" => Score::Cp(int(w, R, "cp")?),
                    "mate" => Score::Mate(int(w, R, "mate")?),
                    other => {
                        return Err(ReplyError::Unexpected {
                            reply: R,
                            word: other.to_string(),
                        });
                    }
                })
            }
            "pv" => {
                info.pv = w
                    .until(&INFO_KEYS)
                    .into_iter()
                    .map(str::to_string)
                    .collect()
            }
            "string" => info.string = Some(w.rest().to_string()),
            other => {
                return Err(ReplyError::Unexpected {
                    reply: R,
                    word: other.to_string(),
                });
            }
        }
    }
    Ok(info)
}

impl FromStr for Reply {
    type Err = ReplyError;

    fn from_str(s: &str) -> Result<Reply, ReplyError> {
        Reply::parse(s)
    }
}

impl fmt::Display for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reply::Id(Id::Name(n)) => write!(f, "id name {n}"),
            Reply::Id(Id::Author(a)) => write!(f, "id author {a}"),
            Reply::Option(o) => o.fmt(f),
            Reply::UaiOk => f.write_str("uaiok"),
            Reply::ReadyOk => f.write_str("readyok"),
            Reply::Info(i) => i.fmt(f),
            Reply::BestMove { mv, ponder } => {
                write!(f, "bestmove {mv}")?;
                match ponder {
                    Some(p) => write!(f, " ponder {p}"),
                    None => Ok(()),
                }
            }
            Reply::Nodes(n) => write!(f, "nodes {n}"),
        }
    }
}

impl fmt::Display for OptionDecl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "option name {} type {}", self.name, self.kind.name())?;
        if let Some(d) = &self.default {
            write!(f, " default {d}")?;
        }
        if let Some(m) = self.min {
            write!(f, " min {m}")?;
        }
        if let Some(m) = self.max {
            write!(f, " max {m}")?;
        }
        for v in &self.vars {
            write!(f, " var {v}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Info {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("info")?;
        let numbers = [
            ("depth", self.depth),
            ("seldepth", self.seldepth),
            ("multipv", self.multipv),
        ];
        for (k, v) in numbers {
            if let Some(v) = v {
                write!(f, " {k} {v}")?;
            }
        }
        match self.score {
            Some(Score::Cp(s)) => write!(f, " score cp {s}")?,
            Some(Score::Mate(m)) => write!(f, " score mate {m}")?,
            None => {}
        }
        let numbers = [
            ("nodes", self.nodes),
            ("nps", self.nps),
            ("hashfull", self.hashfull),
            ("time", self.time),
        ];
        for (k, v) in numbers {
            if let Some(v) = v {
                write!(f, " {k} {v}")?;
            }
        }
        if let Some(m) = &self.currmove {
            write!(f, " currmove {m}")?;
        }
        if let Some(n) = self.currmovenumber {
            write!(f, " currmovenumber {n}")?;
        }
        if !self.pv.is_empty() {
            write!(f, " pv {}", self.pv.join(" "))?;
        }
        if let Some(s) = &self.string {
            write!(f, " string {s}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command in its formatted form parses back to itself.
    #[test]
    fn commands_round_trip() {
        let commands = [
            Command::Uai,
            Command::IsReady,
            Command::UaiNewGame,
            Command::Stop,
            Command::Quit,
            Command::Perft(5),
            Command::SetOption {
                name: "Hash".into(),
                value: Some("8".into()),
            },
            Command::SetOption {
                name: "Clear Hash".into(),
                value: None,
            },
            Command::SetOption {
                name: "Model".into(),
                value: Some(String::new()),
            },
            Command::SetOption {
                name: "Model".into(),
                value: Some("/a b/run".into()),
            },
            Command::Position {
                start: Start::StartPos,
                moves: vec![],
            },
            Command::Position {
                start: Start::Fen("x5o/7/7/7/7/7/o5x x 0 1".into()),
                moves: vec!["g2".into(), "a1b1".into(), "0000".into()],
            },
            Command::Go(Go::default()),
            Command::Go(Go {
                params: vec![
                    GoParam::WTime(100000),
                    GoParam::BTime(0),
                    GoParam::WInc(1000),
                    GoParam::BInc(10),
                    GoParam::MovesToGo(40),
                    GoParam::MoveTime(50),
                    GoParam::Depth(3),
                    GoParam::Nodes(u64::MAX),
                    GoParam::Mate(3),
                    GoParam::Infinite,
                    GoParam::Ponder,
                    GoParam::SearchMoves(vec!["f2".into(), "g2".into()]),
                ],
            }),
        ];
        for c in commands {
            let text = c.to_string();
            assert_eq!(Command::parse(&text), Ok(c), "{text}");
        }
    }

    /// Every reply in its formatted form parses back to itself, and the lines the
    /// engine writes are formatted exactly so.
    #[test]
    fn replies_round_trip() {
        let game = OptionDecl {
            default: Some("ataxx".into()),
            vars: vec!["ataxx".into(), "ataxx/assimilation".into()],
            ..OptionDecl::new("Game", OptionKind::Combo)
        };
        let hash = OptionDecl {
            default: Some("16".into()),
            min: Some(1),
            max: Some(4096),
            ..OptionDecl::new("Hash", OptionKind::Spin)
        };
        let search = Info {
            depth: Some(3),
            score: Some(Score::Cp(-120)),
            nodes: Some(5000),
            nps: Some(250000),
            time: Some(20),
            pv: vec!["g2".into(), "a1b1".into()],
            ..Info::default()
        };
        let mcts = Info {
            nodes: Some(200),
            nps: Some(1000),
            time: Some(200),
            string: Some("200 evaluations in 50 batches, 0 visits reused".into()),
            ..Info::default()
        };
        let replies = [
            (
                Reply::Id(Id::Name("flipzero 0.1.0".into())),
                "id name flipzero 0.1.0",
            ),
            (
                Reply::Id(Id::Author("the flipzero developers".into())),
                "id author the flipzero developers",
            ),
            (
                Reply::Option(game),
                "option name Game type combo default ataxx var ataxx var ataxx/assimilation",
            ),
            (
                Reply::Option(hash),
                "option name Hash type spin default 16 min 1 max 4096",
            ),
            (
                Reply::Option(OptionDecl {
                    default: Some("<empty>".into()),
                    ..OptionDecl::new("Model", OptionKind::String)
                }),
                "option name Model type string default <empty>",
            ),
            (
                Reply::Option(OptionDecl::new("Clear Hash", OptionKind::Button)),
                "option name Clear Hash type button",
            ),
            (Reply::UaiOk, "uaiok"),
            (Reply::ReadyOk, "readyok"),
            (
                Reply::Info(search),
                "info depth 3 score cp -120 nodes 5000 nps 250000 time 20 pv g2 a1b1",
            ),
            (
                Reply::Info(mcts),
                "info nodes 200 nps 1000 time 200 string 200 evaluations in 50 batches, 0 visits reused",
            ),
            (
                Reply::Info(Info {
                    score: Some(Score::Mate(-2)),
                    ..Info::default()
                }),
                "info score mate -2",
            ),
            (
                Reply::Info(Info::string("error: unknown command `x`")),
                "info string error: unknown command `x`",
            ),
            (
                Reply::BestMove {
                    mv: "g1e3".into(),
                    ponder: None,
                },
                "bestmove g1e3",
            ),
            (
                Reply::BestMove {
                    mv: "0000".into(),
                    ponder: Some("a2".into()),
                },
                "bestmove 0000 ponder a2",
            ),
            (Reply::Nodes(6460), "nodes 6460"),
        ];
        for (r, text) in replies {
            assert_eq!(r.to_string(), text);
            assert_eq!(Reply::parse(text), Ok(r), "{text}");
        }
    }

    #[test]
    fn setoption_names_and_values() {
        let cases = [
            ("name Hash value 8", ("Hash", Some("8"))),
            ("name Model value ", ("Model", Some(""))),
            ("name Model value", ("Model", Some(""))),
            ("name Model", ("Model", None)),
            ("name Clear Hash", ("Clear Hash", None)),
            ("name Move Overhead value 30", ("Move Overhead", Some("30"))),
            ("name Model value /a b/run ", ("Model", Some("/a b/run"))),
            ("name Model value x value y", ("Model", Some("x value y"))),
            ("name Modelvalue x", ("Modelvalue x", None)),
            ("name\tGame\tvalue\thexxagon", ("Game", Some("hexxagon"))),
        ];
        for (input, (name, value)) in cases {
            let want = Command::SetOption {
                name: name.into(),
                value: value.map(str::to_string),
            };
            assert_eq!(
                Command::parse(&format!("setoption {input}")),
                Ok(want),
                "{input}"
            );
        }
        for bad in [
            "",
            "name",
            "name  value 3",
            "nameHash value 3",
            "Hash value 3",
        ] {
            let e = Command::parse(&format!("setoption {bad}")).unwrap_err();
            assert_eq!(e, CommandError::SetOption, "{bad}");
            assert_eq!(e.command(), Some("setoption"));
            assert_eq!(
                e.to_string(),
                "expected `setoption name <name> [value <value>]`"
            );
        }
    }

    #[test]
    fn malformed_commands_name_the_problem() {
        let cases = [
            ("", CommandError::Empty, "empty command"),
            (
                "flibbertigibbet now",
                CommandError::Unknown("flibbertigibbet".into()),
                "unknown command `flibbertigibbet`",
            ),
            (
                "position sideways",
                CommandError::Position("sideways".into()),
                "expected `position startpos|fen <FEN> [moves ...]`, got `sideways`",
            ),
            (
                "position",
                CommandError::Position("".into()),
                "expected `position startpos|fen <FEN> [moves ...]`, got ``",
            ),
            (
                "perft deep",
                CommandError::Perft("deep".into()),
                "`perft deep`: expected a depth",
            ),
            (
                "perft 99999999999",
                CommandError::Perft("99999999999".into()),
                "`perft 99999999999`: expected a depth",
            ),
        ];
        for (line, err, text) in cases {
            let e = Command::parse(line).unwrap_err();
            assert_eq!(e, err, "{line}");
            assert_eq!(e.to_string(), text, "{line}");
        }
        // A long line is not echoed back whole.
        let long = "y".repeat(5000);
        let e = Command::parse(&format!("{long} tail")).unwrap_err();
        assert!(e.to_string().ends_with("… (4920 more characters)`"), "{e}");
        assert!(e.to_string().len() < 200);
        // Words after a command without arguments are ignored; whitespace around a
        // line too; the moves keyword may follow several spaces.
        assert_eq!(Command::parse("  isready now \r"), Ok(Command::IsReady));
        assert_eq!(
            Command::parse("position startpos  moves g2"),
            Ok(Command::Position {
                start: Start::StartPos,
                moves: vec!["g2".into()]
            })
        );
    }

    #[test]
    fn go_keeps_what_it_cannot_read_in_its_place() {
        let go = Go::parse("searchmoves f2 g2 depth 3 ponder bogus movetime -5 nodes x mate winc");
        assert_eq!(
            go.params,
            [
                GoParam::SearchMoves(vec!["f2".into(), "g2".into()]),
                GoParam::Depth(3),
                GoParam::Ponder,
                GoParam::Malformed(GoError::Unknown("bogus".into())),
                GoParam::MoveTime(0),
                GoParam::Malformed(GoError::NotANumber {
                    key: "nodes",
                    value: "x".into()
                }),
                GoParam::Malformed(GoError::MissingValue("mate")),
                GoParam::Malformed(GoError::MissingValue("winc")),
            ]
        );
        let texts: Vec<String> = go.problems().map(|e| e.to_string()).collect();
        assert_eq!(
            texts,
            [
                "unknown `go` parameter `bogus`: ignored",
                "`go nodes x`: not a number, ignored",
                "`go mate` needs a value: ignored",
                "`go winc` needs a value: ignored",
            ]
        );
        assert_eq!(go.depth(), Some(3));
        assert_eq!(go.movetime(), Some(0));
        assert!(go.ponder() && !go.infinite());
        assert_eq!(
            go.to_string(),
            "go searchmoves f2 g2 depth 3 ponder movetime 0"
        );
        // Values beyond u64 saturate; the last of a repeated parameter counts.
        let go = Go::parse("movetime 99999999999999999999999 depth 2 depth 5 mate 3 4");
        assert_eq!(go.movetime(), Some(u64::MAX));
        assert_eq!(go.depth(), Some(5));
        assert_eq!(go.mate(), None);
        assert_eq!(go.problems().next().and_then(GoError::key), Some("mate"));
        // A word that is not a number is not taken as a value of the next parameter.
        assert_eq!(
            Go::parse("depth two movetime 50").params,
            [
                GoParam::Malformed(GoError::NotANumber {
                    key: "depth",
                    value: "two".into()
                }),
                GoParam::MoveTime(50),
            ]
        );
    }

    #[test]
    fn malformed_replies_name_the_problem() {
        let cases = [
            ("", ReplyError::Empty),
            ("uaiokay", ReplyError::Unknown("uaiokay".into())),
            (
                "bestmove",
                ReplyError::MissingValue {
                    reply: "bestmove",
                    field: "bestmove",
                },
            ),
            (
                "bestmove g2 because",
                ReplyError::Unexpected {
                    reply: "bestmove",
                    word: "because".into(),
                },
            ),
            (
                "info depth deep",
                ReplyError::NotANumber {
                    reply: "info",
                    field: "depth",
                    value: "deep".into(),
                },
            ),
            (
                "info score lots 3",
                ReplyError::Unexpected {
                    reply: "info",
                    word: "lots".into(),
                },
            ),
            (
                "option name Game",
                ReplyError::MissingValue {
                    reply: "option",
                    field: "type",
                },
            ),
            (
                "option name Hash type spin min x",
                ReplyError::NotANumber {
                    reply: "option",
                    field: "min",
                    value: "x".into(),
                },
            ),
            (
                "option name Hash type dial",
                ReplyError::Unexpected {
                    reply: "option",
                    word: "dial".into(),
                },
            ),
            (
                "readyok now",
                ReplyError::Unexpected {
                    reply: "readyok",
                    word: "now".into(),
                },
            ),
        ];
        for (line, err) in cases {
            assert_eq!(Reply::parse(line), Err(err), "{line}");
        }
        assert_eq!(
            Reply::parse("bestmove").unwrap_err().to_string(),
            "`bestmove`: `bestmove` needs a value"
        );
        assert_eq!(
            Reply::parse("info depth deep").unwrap_err().to_string(),
            "`info`: `depth deep` is not a number"
        );
        // An engine's string keeps its inner spacing; a name may hold spaces.
        assert_eq!(
            Reply::parse("  info string a  b "),
            Ok(Reply::Info(Info::string("a  b")))
        );
        assert_eq!(
            Reply::parse("option name Move Overhead type spin default 30"),
            Ok(Reply::Option(OptionDecl {
                default: Some("30".into()),
                ..OptionDecl::new("Move Overhead", OptionKind::Spin)
            }))
        );
    }

    #[test]
    fn excerpts_are_bounded() {
        assert_eq!(excerpt("short"), "short");
        let e = excerpt(&"é".repeat(100));
        assert_eq!(e, format!("{}… (20 more characters)", "é".repeat(80)));
    }
}
