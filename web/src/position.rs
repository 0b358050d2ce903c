//! A position as a page draws it: the board's cells with their grid coordinates, the
//! pieces and blockers, the legal moves (source and target cells), and the result of a
//! finished game, explained; and the checks of a position or move typed by a user. Every
//! rule is the engine's. `flipzero serve` answers with these views, and the WebAssembly
//! player builds them in the browser.

use engine::{EndReason, Game, Move, MoveKind, Shape, Side, Square, State};
use serde::Serialize;

/// One cell of the board.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BoardCell {
    /// The cell index (as in moves).
    pub cell: usize,
    /// Grid column (see `engine::game`: axial coordinates on the hexagonal board).
    pub x: usize,
    /// Grid row, from the bottom.
    pub y: usize,
    /// The cell's name in move notation.
    pub name: String,
    /// `x`, `o`, or none.
    pub piece: Option<char>,
    /// Whether the cell is blocked.
    pub blocked: bool,
}

/// A legal move.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LegalMove {
    /// In notation (`0000` is the pass).
    pub text: String,
    /// The source cell of a jump.
    pub from: Option<usize>,
    /// The target cell (none for the pass).
    pub to: Option<usize>,
}

/// How a finished game ended.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Outcome {
    /// `x`, `o`, or none for a draw.
    pub winner: Option<char>,
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub result: String,
    /// Pieces at the end: `[x, o]`.
    pub counts: [u32; 2],
    /// The margin from `x`'s view (see `engine::GameResult::score`).
    pub score: i32,
    /// Why it ended (`full-board`, `wipe-out`, `no-moves`, `halfmove-cap`).
    pub reason: String,
    /// The end and the score in words.
    pub explanation: String,
}

/// A position with everything the page needs to draw it and to offer its moves.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PositionView {
    /// The game name.
    pub game: String,
    /// The position text (FEN for the Ataxx family).
    pub position: String,
    /// `square` or `hex`.
    pub shape: &'static str,
    /// Width of the board box.
    pub width: usize,
    /// Height of the board box.
    pub height: usize,
    /// `x` or `o`.
    pub side_to_move: char,
    /// Pieces: `[x, o]`.
    pub counts: [u32; 2],
    /// Whether fewest pieces wins.
    pub misere: bool,
    /// Whether pieces move (clone or jump: the Ataxx family) rather than being placed
    /// (the outflanking games).
    pub moves_pieces: bool,
    /// Every cell of the board.
    pub cells: Vec<BoardCell>,
    /// The legal moves (empty when the game is over).
    pub legal: Vec<LegalMove>,
    /// Whether the only legal move is the pass.
    pub must_pass: bool,
    /// The result, when the game is over.
    pub outcome: Option<Outcome>,
}

/// The longest position text accepted from a user.
pub const MAX_POSITION_TEXT: usize = 4096;

/// Parses a position of `game` typed by a user; `None` or empty text is the start.
pub fn parse_position(game: Game, text: Option<&str>) -> Result<State, String> {
    match text.map(str::trim).filter(|t| !t.is_empty()) {
        None => Ok(game.startpos()),
        Some(t) if t.len() > MAX_POSITION_TEXT => Err(format!(
            "position text longer than {MAX_POSITION_TEXT} bytes"
        )),
        Some(t) => game
            .parse_position(t)
            .map_err(|e| format!("bad position `{t}` for {game}: {e}")),
    }
}

/// Parses a move typed by a user, which must be legal in `state` (and the game not over).
pub fn parse_legal_move(state: &State, text: &str) -> Result<Move, String> {
    if let Some(r) = state.result() {
        return Err(format!(
            "the game is over ({}): no move can be played",
            r.reason.name()
        ));
    }
    // A move is a few characters: whatever was typed is shown cut short, as a position
    // text is, and so is the parser's message (which may quote it).
    let shown = engine::uai::excerpt(text);
    let mv = state.parse_move(text.trim()).map_err(|e| {
        format!(
            "illegal move `{shown}`: {}",
            engine::uai::excerpt(&e.to_string())
        )
    })?;
    if !state.is_legal(mv) {
        return Err(format!("illegal move `{shown}`"));
    }
    Ok(mv)
}

/// The source and target cells of a move.
pub fn move_cells(mv: Move) -> (Option<usize>, Option<usize>) {
    match mv.kind() {
        MoveKind::Pass => (None, None),
        MoveKind::Clone { to } => (None, Some(to.index())),
        MoveKind::Jump { from, to } => (Some(from.index()), Some(to.index())),
    }
}

/// The end of a finished game in words: why it ended, the count, who won and by what.
fn explain(state: &State) -> Option<Outcome> {
    let r = state.result()?;
    let game = state.game();
    let [x, o] = r.counts;
    let why = match r.reason {
        EndReason::FullBoard => "the board is full".to_string(),
        EndReason::WipeOut => {
            let gone = if x == 0 { 'x' } else { 'o' };
            format!(
                "{gone} has no pieces left; a wipe-out scores as if the winner held all {} playable cells",
                state.playable_cells()
            )
        }
        EndReason::NoMoves => "neither side can move".to_string(),
        EndReason::HalfmoveCap => {
            "the half-move limit was reached without a capture or clone: adjudicated a draw"
                .to_string()
        }
    };
    let rule = if game.misere() {
        "misère: fewest pieces wins"
    } else {
        "most pieces wins"
    };
    let verdict = match r.winner {
        Some(w) => format!("{} wins by {}", w.char(), r.score.unsigned_abs()),
        None => "a draw".to_string(),
    };
    Some(Outcome {
        winner: r.winner.map(Side::char),
        result: match r.winner {
            Some(Side::X) => "1-0",
            Some(Side::O) => "0-1",
            None => "1/2-1/2",
        }
        .to_string(),
        counts: r.counts,
        score: r.score,
        reason: r.reason.name().to_string(),
        explanation: format!("Game over: {why}. x {x}, o {o} ({rule}): {verdict}."),
    })
}

/// The name of a cell in move notation.
fn cell_name(state: &State, cell: usize) -> String {
    state.move_to_string(Move::clone_to(Square::new(cell as u8)))
}

/// Everything the page draws of `state`.
pub fn view(state: &State) -> PositionView {
    let game = state.game();
    let (width, height) = game.grid();
    let hex = matches!(game, Game::Ataxx(r) if r.geometry().shape == Shape::Hex5);
    let cells = game
        .cells()
        .into_iter()
        .map(|c| {
            let (x, y) = game.grid_xy(c);
            BoardCell {
                cell: c,
                x,
                y,
                name: cell_name(state, c),
                piece: state.piece_at(c).map(Side::char),
                blocked: state.is_blocked(c),
            }
        })
        .collect();
    // A finished game has no legal moves (`State::legal_moves`).
    let mut legal: Vec<LegalMove> = state
        .legal_moves()
        .into_iter()
        .map(|m| {
            let (from, to) = move_cells(m);
            LegalMove {
                text: state.move_to_string(m),
                from,
                to,
            }
        })
        .collect();
    legal.sort_by(|a, b| a.text.cmp(&b.text));
    let must_pass = legal.len() == 1 && legal[0].to.is_none();
    PositionView {
        game: game.to_string(),
        position: state.text(),
        shape: if hex { "hex" } else { "square" },
        width,
        height,
        side_to_move: state.side_to_move().char(),
        counts: state.counts(),
        misere: game.misere(),
        moves_pieces: matches!(state, State::Ataxx(_)),
        cells,
        legal,
        must_pass,
        outcome: explain(state),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_bad_move_is_shown_cut_short() {
        let s = "ataxx".parse::<Game>().unwrap().startpos();
        let long = "z9".repeat(1000);
        let e = parse_legal_move(&s, &long).unwrap_err();
        assert!(e.len() < 400 && e.contains("more characters"), "{e}");
        let e = parse_legal_move(&s, "a1a7").unwrap_err();
        assert!(e.starts_with("illegal move `a1a7`"), "{e}");
    }

    #[test]
    fn views_follow_the_engine() {
        let hex = "hexxagon".parse::<Game>().unwrap().startpos();
        let v = view(&hex);
        assert_eq!(v.shape, "hex");
        let blocked = hex
            .game()
            .cells()
            .into_iter()
            .filter(|&c| hex.is_blocked(c))
            .count();
        assert_eq!(v.cells.iter().filter(|c| c.blocked).count(), blocked);
        assert!(blocked > 0);
        assert_eq!(v.legal.len(), hex.legal_moves().len());
        // Jumps carry their source, clones none.
        assert!(v.legal.iter().any(|m| m.from.is_some()));
        assert!(v.legal.iter().any(|m| m.from.is_none() && m.to.is_some()));
        assert!(!v.must_pass && v.outcome.is_none());
    }

    #[test]
    fn the_end_is_explained() {
        let g = "ataxx".parse::<Game>().unwrap();
        let wiped = parse_position(g, Some("x6/7/7/7/7/7/7 o 0 1")).unwrap();
        let o = view(&wiped).outcome.unwrap();
        assert_eq!((o.result.as_str(), o.reason.as_str()), ("1-0", "wipe-out"));
        assert!(
            o.explanation.contains("o has no pieces left"),
            "{}",
            o.explanation
        );
        assert!(o.explanation.contains("x wins by 49"), "{}", o.explanation);
        let m = "ataxx/misere".parse::<Game>().unwrap();
        let full = parse_position(
            m,
            Some("xxxxxxx/xxxxxxx/xxxxxxx/xxxxxxx/xxxxxxx/xxxxxxx/xxxxxoo x 0 1"),
        )
        .unwrap();
        let o = view(&full).outcome.unwrap();
        assert_eq!(o.result, "0-1");
        assert!(
            o.explanation.contains("misère") && o.explanation.contains("o wins by 45"),
            "{}",
            o.explanation
        );
    }
}
