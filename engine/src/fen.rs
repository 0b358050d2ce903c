//! Position text (FEN) and move notation: parse first, then validate.
//!
//! # Square boards (the engine community's FEN)
//! Ranks from the top (7) down to 1 separated by `/`; in a rank, from file a to the
//! right: `x`, `o`, `-` (blocked), or a digit 1–9 for that many empty cells; then the
//! side to move (`x`/`o`), the half-move clock and the full-move number. As in libataxx,
//! the fields after the board may be left out from the right (they default to `x 0 1`)
//! and one `/` may end the board field. `startpos` stands for the rule set's standard
//! start.
//!
//! # The Hexxagon board
//! The same alphabet, but the board field lists the nine **columns** a to i from left to
//! right, separated by `/`, each from its bottom cell (row 1) upwards: columns hold
//! 5, 6, 7, 8, 9, 8, 7, 6, 5 cells. The standard start is
//! `o3x/6/7/3-4/x4-2o/3-4/7/6/o3x x 0 1` (x on a5, e1, i5; o on a1, e9, i1; d4, e6,
//! f4 blocked).
//!
//! # Moves
//! A clone is its target (`g2`), a jump is source then target (`g1e3`), a pass is
//! `0000`. On input, a dash between the cells is accepted (`a1-a3`, as in Italian
//! records), and a source–target pair at clone distance is read as a clone from that
//! piece (`a1a2`).

use std::fmt::Write;

use crate::geometry::Shape;
use crate::position::IllegalMove;
use crate::{Bitboard, Move, Position, Rules, Side, Square};

/// What is wrong with a position text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FenError {
    /// Nothing was given.
    #[error("empty position text")]
    Empty,
    /// More than 4 whitespace-separated fields.
    #[error(
        "expected at most 4 fields (board[, side to move[, half-move clock[, full-move number]]]), found {0}"
    )]
    FieldCount(usize),
    /// The board field has the wrong number of ranks (columns on the hex board).
    #[error("board field has {found} {unit}s separated by `/`, expected {expected}")]
    LineCount {
        /// `rank` or `column`.
        unit: &'static str,
        /// How many were found.
        found: usize,
        /// How many the board has.
        expected: usize,
    },
    /// A rank (column) describes the wrong number of cells.
    #[error("{unit} {name} describes {found} cells, expected {expected}")]
    LineLength {
        /// `rank` or `column`.
        unit: &'static str,
        /// The rank number or column letter.
        name: String,
        /// Cells described.
        found: usize,
        /// Cells the board has there.
        expected: usize,
    },
    /// A character that is no piece, blocker or digit.
    #[error("{unit} {name}: unexpected character `{}` (expected x, o, -, or a digit 1-9)", .ch.escape_debug())]
    BadChar {
        /// `rank` or `column`.
        unit: &'static str,
        /// The rank number or column letter.
        name: String,
        /// The character.
        ch: char,
    },
    /// The side-to-move field is not `x` or `o`.
    #[error("side to move `{0}` is not `x` or `o`")]
    BadSide(String),
    /// The half-move clock is not a number in range.
    #[error("half-move clock `{0}` is not a number in 0..=65535")]
    BadHalfmove(String),
    /// The full-move number is not a number in range.
    #[error("full-move number `{0}` is not a number in 0..=65535")]
    BadFullmove(String),
}

/// What is wrong with a move string.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// Not of the form `g2`, `g1e3`, `g1-e3` or `0000`.
    #[error("`{text}` is not a move (expected a cell like g2, a jump like g1e3, or 0000)")]
    Syntax {
        /// The text given.
        text: String,
    },
    /// A cell name that is not on this board.
    #[error("`{text}`: there is no cell `{square}` on this board")]
    NoSuchSquare {
        /// The text given.
        text: String,
        /// The cell name.
        square: String,
    },
    /// Well-formed, but not legal in this position.
    #[error("`{text}` is not legal here: {reason}")]
    Illegal {
        /// The text given.
        text: String,
        /// Why.
        reason: IllegalMove,
    },
}

/// A move counter: decimal digits only (no sign), in `u16`.
pub(crate) fn counter(field: &str) -> Option<u16> {
    field
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| field.parse().ok())
        .flatten()
}

/// A piece of user text as an error message shows it: control characters escaped, and
/// at most 40 characters, so a malformed input cannot flood or garble a terminal.
///
/// ```
/// assert_eq!(engine::shown("a\u{1b}b"), "a\\u{1b}b");
/// assert_eq!(engine::shown(&"y".repeat(50)).chars().count(), 41);
/// ```
pub fn shown(text: &str) -> String {
    let mut out: String = text.chars().take(40).flat_map(char::escape_debug).collect();
    if text.chars().nth(40).is_some() {
        out.push('…');
    }
    out
}

impl Position {
    /// Parses a position in this rule set's text format (see the module docs), or
    /// `startpos`.
    ///
    /// ```
    /// use engine::{Position, Rules};
    /// let p = Position::from_fen("x5o/7/7/7/7/7/o5x x", Rules::ATAXX).unwrap();
    /// assert_eq!(p.fen(), "x5o/7/7/7/7/7/o5x x 0 1");
    /// // As libataxx reads them: a trailing `/`, and fields left out from the right.
    /// let q = Position::from_fen("x5o/7/7/7/7/7/o5x/ o 3", Rules::ATAXX).unwrap();
    /// assert_eq!(q.fen(), "x5o/7/7/7/7/7/o5x o 3 1");
    /// let e = Position::from_fen("x5o/8/7/7/7/7/o5x x 0 1", Rules::ATAXX).unwrap_err();
    /// assert_eq!(e.to_string(), "rank 6 describes 8 cells, expected 7");
    /// ```
    pub fn from_fen(fen: &str, rules: Rules) -> Result<Position, FenError> {
        let fen = fen.trim_ascii();
        if fen.is_empty() {
            return Err(FenError::Empty);
        }
        if fen == "startpos" {
            return Ok(Position::startpos(rules));
        }
        let fields: Vec<&str> = fen.split_ascii_whitespace().collect();
        if fields.len() > 4 {
            return Err(FenError::FieldCount(fields.len()));
        }
        let g = rules.geometry();
        let (unit, lines) = layout(rules);
        // libataxx ends its board loop at the field's end, so a final `/` is harmless there.
        let board = fields[0].strip_suffix('/').unwrap_or(fields[0]);
        let parts: Vec<&str> = board.split('/').collect();
        if parts.len() != lines.len() {
            return Err(FenError::LineCount {
                unit,
                found: parts.len(),
                expected: lines.len(),
            });
        }
        let mut pieces = [Bitboard::EMPTY; 2];
        let mut blocked = Bitboard::EMPTY;
        for (text, (name, cells)) in parts.iter().zip(&lines) {
            let mut i = 0usize;
            let put = |i: usize, b: &mut Bitboard| {
                if let Some(&sq) = cells.get(i) {
                    *b = b.with(sq);
                }
            };
            for ch in text.chars() {
                match ch {
                    'x' => put(i, &mut pieces[0]),
                    'o' => put(i, &mut pieces[1]),
                    '-' => put(i, &mut blocked),
                    '1'..='9' => {
                        i += ch as usize - '1' as usize;
                    }
                    _ => {
                        return Err(FenError::BadChar {
                            unit,
                            name: name.clone(),
                            ch,
                        });
                    }
                }
                i += 1;
            }
            if i != cells.len() {
                return Err(FenError::LineLength {
                    unit,
                    name: name.clone(),
                    found: i,
                    expected: cells.len(),
                });
            }
        }
        let side = match fields.get(1).copied().unwrap_or("x") {
            "x" | "X" => Side::X,
            "o" | "O" => Side::O,
            s => return Err(FenError::BadSide(shown(s))),
        };
        let halfmove = match fields.get(2) {
            Some(f) => counter(f).ok_or_else(|| FenError::BadHalfmove(shown(f)))?,
            None => 0u16,
        };
        let fullmove = match fields.get(3) {
            Some(f) => counter(f).ok_or_else(|| FenError::BadFullmove(shown(f)))?,
            None => 1u16,
        };
        debug_assert!((pieces[0] | pieces[1] | blocked).0 & !g.cells.0 == 0);
        Ok(Position::from_parts(
            rules, pieces[0], pieces[1], blocked, side, halfmove, fullmove,
        )
        .expect("cells from the layout are distinct and on the board"))
    }

    /// The position in its rule set's text format (see the module docs).
    pub fn fen(&self) -> String {
        let (_, lines) = layout(self.rules);
        let mut s = String::with_capacity(64);
        for (k, (_, cells)) in lines.iter().enumerate() {
            if k > 0 {
                s.push('/');
            }
            let marks = cells.iter().map(|&sq| {
                if self.pieces[0].has(sq) {
                    Some('x')
                } else if self.pieces[1].has(sq) {
                    Some('o')
                } else if self.blocked.has(sq) {
                    Some('-')
                } else {
                    None
                }
            });
            write_run_length(&mut s, marks);
        }
        write!(
            s,
            " {} {} {}",
            self.side.char(),
            self.halfmove,
            self.fullmove
        )
        .unwrap();
        s
    }

    /// Parses a move in notation and checks that it is legal here.
    ///
    /// ```
    /// use engine::{Position, Rules};
    /// let p = Position::startpos(Rules::ATAXX);
    /// assert!(p.parse_move("g1-e3").is_ok());
    /// let e = p.parse_move("a1a3").unwrap_err().to_string();
    /// assert!(e.contains("does not hold a piece of the side to move"), "{e}");
    /// ```
    pub fn parse_move(&self, text: &str) -> Result<Move, MoveError> {
        let g = self.geometry();
        let t = text.trim();
        let syntax = || MoveError::Syntax {
            text: text.to_string(),
        };
        if t == "0000" {
            return self.legal_or(Move::PASS, text);
        }
        let lower = t.to_ascii_lowercase();
        let (a, b) = split_squares(&lower).ok_or_else(syntax)?;
        let square = |name: &str| {
            g.parse_square(name).ok_or_else(|| MoveError::NoSuchSquare {
                text: text.to_string(),
                square: name.to_string(),
            })
        };
        let first = square(a)?;
        let Some(b) = b else {
            return self.legal_or(Move::clone_to(first), text);
        };
        let second = square(b)?;
        if first == second {
            return Err(syntax());
        }
        if g.clone[first.index()].has(second) {
            if !self.pieces(self.side).has(first) {
                return Err(MoveError::Illegal {
                    text: text.to_string(),
                    reason: IllegalMove::NotOwnPiece,
                });
            }
            return self.legal_or(Move::clone_to(second), text);
        }
        self.legal_or(Move::jump(first, second), text)
    }

    fn legal_or(&self, mv: Move, text: &str) -> Result<Move, MoveError> {
        self.check_legal(mv)
            .map(|()| mv)
            .map_err(|reason| MoveError::Illegal {
                text: text.to_string(),
                reason,
            })
    }

    /// The move in notation (`g2`, `g1e3`, `0000`).
    pub fn move_to_string(&self, mv: Move) -> String {
        mv.display(self.geometry()).to_string()
    }

    /// A text drawing of the board with coordinates (ranks top-down on square boards,
    /// columns left to right, bottom cell first, on the hex board).
    pub fn pretty(&self) -> String {
        let (_, lines) = layout(self.rules);
        let mut s = String::new();
        for (name, cells) in &lines {
            write!(s, "{name:>2} ").unwrap();
            for &sq in cells {
                let c = if self.pieces[0].has(sq) {
                    'x'
                } else if self.pieces[1].has(sq) {
                    'o'
                } else if self.blocked.has(sq) {
                    '#'
                } else {
                    '.'
                };
                write!(s, " {c}").unwrap();
            }
            s.push('\n');
        }
        if let Shape::Rect { width, .. } = self.geometry().shape {
            s.push_str("   ");
            for f in 0..width {
                write!(s, " {}", (b'a' + f) as char).unwrap();
            }
            s.push('\n');
        }
        write!(
            s,
            "{} to move, half-move clock {}",
            self.side.char(),
            self.halfmove
        )
        .unwrap();
        s
    }
}

/// Appends one rank (or column) of a position text: each cell's mark, with runs of
/// empty cells (`None`) written as their count.
pub(crate) fn write_run_length(s: &mut String, cells: impl Iterator<Item = Option<char>>) {
    let mut run = 0;
    for c in cells {
        match c {
            None => run += 1,
            Some(ch) => {
                if run > 0 {
                    write!(s, "{run}").unwrap();
                    run = 0;
                }
                s.push(ch);
            }
        }
    }
    if run > 0 {
        write!(s, "{run}").unwrap();
    }
}

/// The lines of the text format, in order, each with its name and its cells in order.
fn layout(rules: Rules) -> (&'static str, Vec<(String, Vec<Square>)>) {
    let g = rules.geometry();
    match g.shape {
        Shape::Rect { width, height } => (
            "rank",
            (0..height)
                .rev()
                .map(|r| {
                    let cells = (0..width)
                        .map(|f| g.cell(f, r).expect("in range"))
                        .collect();
                    ((r + 1).to_string(), cells)
                })
                .collect(),
        ),
        Shape::Hex5 => (
            "column",
            (0..g.columns())
                .map(|c| {
                    let cells = (0..g.column_len(c))
                        .map(|r| g.cell(c, r).expect("in range"))
                        .collect();
                    (((b'a' + c) as char).to_string(), cells)
                })
                .collect(),
        ),
    }
}

/// Splits `g1e3`, `g1-e3` or `g2` into cell names; `None` if the text has another form.
fn split_squares(s: &str) -> Option<(&str, Option<&str>)> {
    let b = s.as_bytes();
    let cell_len = |from: usize| -> Option<usize> {
        if from >= b.len() || !b[from].is_ascii_lowercase() {
            return None;
        }
        let digits = b[from + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        (1..=2).contains(&digits).then_some(1 + digits)
    };
    let n1 = cell_len(0)?;
    if n1 == b.len() {
        return Some((s, None));
    }
    let rest = if b[n1] == b'-' { n1 + 1 } else { n1 };
    let n2 = cell_len(rest)?;
    (rest + n2 == b.len()).then(|| (&s[..n1], Some(&s[rest..])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Variant;

    #[test]
    fn errors_name_the_problem() {
        let r = Rules::ATAXX;
        let err = |f: &str| Position::from_fen(f, r).unwrap_err().to_string();
        assert_eq!(err(""), "empty position text");
        assert!(err("x5o/7/7/7/7/7/o5x x 0 1 moves").contains("found 5"));
        assert!(err("x5o/7/7/7/7/7/o5x// x").contains("8 ranks"));
        assert!(err("/x5o/7/7/7/7/7/o5x x").contains("8 ranks"));
        assert!(err("x5o/7/7/7/7/o5x x 0 1").contains("6 ranks"));
        assert!(err("x5o/7/7/7/7/7/o5q x").contains("rank 1: unexpected character `q`"));
        assert!(err("x5o/7/7/7/7/7/o0x x").contains("`0`"));
        assert!(err("x5o/7/7/7/7/7/o5x z").contains("side to move `z`"));
        assert!(err("x5o/7/7/7/7/7/o5x x -1 1").contains("half-move clock `-1`"));
        assert!(err("x5o/7/7/7/7/7/o5x x 0 99999").contains("full-move number"));
        assert!(err("x5o/7/7/7/7/7/o9 x").contains("rank 1 describes 10 cells"));
        // Signs, non-ASCII spaces and control characters are refused, and shown escaped.
        assert!(err("x5o/7/7/7/7/7/o5x x +5 1").contains("half-move clock `+5`"));
        assert!(err("x5o/7/7/7/7/7/o5x\u{a0}x").contains("unexpected character `\\u{a0}`"));
        assert!(err("x5o/7/7/7/7/7/o5x \u{1b}[2J").contains("side to move `\\u{1b}[2J`"));
        let long = err(&format!("x5o/7/7/7/7/7/o5x {}", "y".repeat(100_000)));
        assert!(long.len() < 100, "{long}");
    }

    #[test]
    fn libataxx_forms_are_read() {
        let r = Rules::ATAXX;
        let fen = |f: &str| Position::from_fen(f, r).unwrap().fen();
        let start = "x5o/7/7/7/7/7/o5x x 0 1";
        for f in [
            "x5o/7/7/7/7/7/o5x",
            "x5o/7/7/7/7/7/o5x/",
            "x5o/7/7/7/7/7/o5x/ x",
            "x5o/7/7/7/7/7/o5x/ x 0 1",
            "x5o/7/7/7/7/7/o5x x 0",
            "startpos",
        ] {
            assert_eq!(fen(f), start, "{f}");
        }
        assert_eq!(
            fen("x5o/7/2-1-2/7/2-1-2/7/o5x/ o 7"),
            "x5o/7/2-1-2/7/2-1-2/7/o5x o 7 1"
        );
        let hex = Rules::new(Variant::Hexxagon);
        let p = Position::from_fen("o3x/6/7/3-4/x4-2o/3-4/7/6/o3x/ x", hex).unwrap();
        assert_eq!(p, Position::startpos(hex));
    }

    #[test]
    fn hex_start_is_as_rules_say() {
        let p = Position::startpos(Rules::new(Variant::Hexxagon));
        let g = p.geometry();
        let names = |b: Bitboard| b.iter().map(|s| g.square_name(s)).collect::<Vec<_>>();
        assert_eq!(names(p.pieces(Side::X)), ["a5", "e1", "i5"]);
        assert_eq!(names(p.pieces(Side::O)), ["a1", "e9", "i1"]);
        assert_eq!(names(p.blocked()), ["d4", "e6", "f4"]);
        assert_eq!(p.playable().len(), 58);
    }

    #[test]
    fn move_notation() {
        let p = Position::startpos(Rules::ATAXX);
        assert_eq!(p.move_to_string(p.parse_move("g2").unwrap()), "g2");
        assert_eq!(p.move_to_string(p.parse_move("G1-E3").unwrap()), "g1e3");
        assert_eq!(p.move_to_string(p.parse_move("g1g2").unwrap()), "g2");
        assert!(matches!(
            p.parse_move("0000"),
            Err(MoveError::Illegal { .. })
        ));
        assert!(matches!(
            p.parse_move("z9"),
            Err(MoveError::NoSuchSquare { .. })
        ));
        assert!(matches!(
            p.parse_move("g1e3x"),
            Err(MoveError::Syntax { .. })
        ));
        assert!(matches!(
            p.parse_move("g1g1"),
            Err(MoveError::Syntax { .. })
        ));
        assert!(matches!(p.parse_move(""), Err(MoveError::Syntax { .. })));
        assert!(matches!(p.parse_move("d4"), Err(MoveError::Illegal { .. })));
    }
}
