//! The position text of the outflanking games and the errors of parsing positions and
//! moves.
//!
//! # Position text
//! `<board> <ranks> <side> <phase> <supply x> <supply o> <passes>`, for example
//! `othello 8/8/8/3ox3/3xo3/8/8/8 x play - - 0`:
//! - `<board>`: the board's name (optional on input; checked against the game);
//! - `<ranks>`: ranks from the top down separated by `/`, each listing only the cells
//!   that exist on that rank, from the left: `x`, `o`, or a number of empty cells
//!   (numbers may have two digits);
//! - `<side>`: `x` (Black, first player) or `o`;
//! - `<phase>`: `place` (the opening placements on the four central cells, no flips)
//!   or `play`;
//! - `<supply x> <supply o>`: pieces each player has left to place, or `-` for no limit;
//! - `<passes>`: passes played in a row just before this position (optional on input,
//!   default 0).

use std::fmt::Write;

use super::bits::Bits;
use super::position::{FlankMove, FlankPosition, FlankRules, Phase, UNLIMITED};
use crate::Side;

impl FlankPosition {
    /// The position text (see the [module docs](crate::flank::text)).
    pub fn text(&self) -> String {
        let b = self.board();
        let (x, o) = (self.pieces(Side::X), self.pieces(Side::O));
        let mut s = String::from(b.id.name());
        s.push(' ');
        for r in (0..b.height).rev() {
            let cells = b.rank_cells(r).map(|i| {
                if x.has(i) {
                    Some('x')
                } else if o.has(i) {
                    Some('o')
                } else {
                    None
                }
            });
            crate::fen::write_run_length(&mut s, cells);
            if r > 0 {
                s.push('/');
            }
        }
        let sup = |v: Option<u16>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
        let phase = if self.phase() == Phase::Place {
            "place"
        } else {
            "play"
        };
        write!(
            s,
            " {} {phase} {} {} {}",
            self.side_to_move().char(),
            sup(self.supply(Side::X)),
            sup(self.supply(Side::O)),
            self.passes()
        )
        .unwrap();
        s
    }

    /// Parses a position text (see the [module docs](crate::flank::text)), or `startpos`.
    pub fn from_text(text: &str, rules: FlankRules) -> Result<FlankPosition, FlankTextError> {
        use FlankTextError as E;
        let b = rules.board.board();
        let text = text.trim_ascii();
        if text.is_empty() {
            return Err(E::Empty);
        }
        if text == "startpos" {
            return Ok(FlankPosition::startpos(rules));
        }
        let mut fields: Vec<&str> = text.split_ascii_whitespace().collect();
        // Every board has several ranks, so the ranks field has a `/` and a name has none.
        if fields.len() > 1 && !fields[0].contains('/') {
            if fields[0] != b.id.name() {
                return Err(E::WrongBoard {
                    found: crate::fen::shown(fields[0]),
                    expected: b.id.name(),
                });
            }
            fields.remove(0);
        }
        if fields.len() != 5 && fields.len() != 6 {
            return Err(E::FieldCount(fields.len()));
        }
        let passes = match fields.get(5) {
            None => 0,
            Some(f) => f
                .parse::<u8>()
                .ok()
                .filter(|&p| p <= 2 && f.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| E::BadPasses(crate::fen::shown(f)))?,
        };
        let ranks: Vec<&str> = fields[0].split('/').collect();
        if ranks.len() != b.height as usize {
            return Err(E::RankCount {
                found: ranks.len(),
                expected: b.height as usize,
            });
        }
        let mut pieces = [Bits::EMPTY; 2];
        for (k, rank_text) in ranks.iter().enumerate() {
            let r = b.height - 1 - k as u8;
            let cells: Vec<usize> = b.rank_cells(r).collect();
            let mut i = 0usize;
            let mut chars = rank_text.chars().peekable();
            while let Some(ch) = chars.next() {
                match ch {
                    'x' | 'o' => {
                        if let Some(&c) = cells.get(i) {
                            pieces[(ch == 'o') as usize] |= Bits::single(c);
                        }
                        i += 1;
                    }
                    '1'..='9' => {
                        let mut n = ch as usize - '0' as usize;
                        if let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                            n = n * 10 + (d as usize - '0' as usize);
                            chars.next();
                        }
                        i += n;
                    }
                    _ => return Err(E::BadChar { rank: r + 1, ch }),
                }
            }
            if i != cells.len() {
                return Err(E::RankLength {
                    rank: r + 1,
                    found: i,
                    expected: cells.len(),
                });
            }
        }
        let side = match fields[1] {
            "x" => Side::X,
            "o" => Side::O,
            s => return Err(E::BadSide(crate::fen::shown(s))),
        };
        let phase = match fields[2] {
            "place" if b.placement_phase => Phase::Place,
            "play" => Phase::Play,
            s => return Err(E::BadPhase(crate::fen::shown(s))),
        };
        if phase == Phase::Place && !((pieces[0] | pieces[1]) & !b.centre).is_empty() {
            return Err(E::PiecesOutsideCentre);
        }
        let mut supply = [0u16; 2];
        for s in 0..2 {
            let f = fields[3 + s];
            supply[s] = match (f, b.supply) {
                ("-", None) => UNLIMITED,
                (_, Some(max)) => match crate::fen::counter(f) {
                    Some(v) if v <= max => v,
                    _ => {
                        return Err(E::BadSupply {
                            field: crate::fen::shown(f),
                            max: Some(max),
                        });
                    }
                },
                _ => {
                    return Err(E::BadSupply {
                        field: crate::fen::shown(f),
                        max: None,
                    });
                }
            };
        }
        Ok(FlankPosition::from_parts(
            rules, pieces, side, phase, supply, passes,
        ))
    }

    /// Parses a move (`e5`, or `0000` for the pass) and checks that it is legal.
    pub fn parse_move(&self, text: &str) -> Result<FlankMove, FlankMoveError> {
        let t = text.trim().to_ascii_lowercase();
        let mv = if t == "0000" {
            None
        } else {
            Some(
                self.board()
                    .parse_square(&t)
                    .ok_or_else(|| FlankMoveError::NoSuchSquare {
                        text: text.to_string(),
                    })?,
            )
        };
        if self.is_legal(mv) {
            Ok(mv)
        } else {
            Err(FlankMoveError::Illegal {
                text: text.to_string(),
            })
        }
    }

    /// A move in notation.
    pub fn move_to_string(&self, mv: FlankMove) -> String {
        match mv {
            None => "0000".into(),
            Some(i) => self.board().square_name(i),
        }
    }
}

/// What is wrong with an outflanking position text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FlankTextError {
    /// Nothing given.
    #[error("empty position text")]
    Empty,
    /// Wrong number of fields.
    #[error(
        "expected the fields [board] ranks side phase supply-x supply-o [passes], found {0} fields after the board name"
    )]
    FieldCount(usize),
    /// The pass count is not 0, 1 or 2.
    #[error("pass count `{0}` is not 0, 1 or 2")]
    BadPasses(String),
    /// The text names another board.
    #[error("the text is for board `{found}`, but the game is played on `{expected}`")]
    WrongBoard {
        /// Name in the text.
        found: String,
        /// Name of the game's board.
        expected: &'static str,
    },
    /// Wrong number of ranks.
    #[error("found {found} ranks separated by `/`, expected {expected}")]
    RankCount {
        /// Found.
        found: usize,
        /// Expected.
        expected: usize,
    },
    /// A rank describes the wrong number of cells.
    #[error("rank {rank} describes {found} cells, but it has {expected} on this board")]
    RankLength {
        /// Rank number from 1.
        rank: u8,
        /// Described.
        found: usize,
        /// Existing.
        expected: usize,
    },
    /// An unexpected character.
    #[error("rank {rank}: unexpected character `{}` (expected x, o or a number)", .ch.escape_debug())]
    BadChar {
        /// Rank number from 1.
        rank: u8,
        /// The character.
        ch: char,
    },
    /// Side is not `x` or `o`.
    #[error("side to move `{0}` is not `x` or `o`")]
    BadSide(String),
    /// Phase is not `place` or `play` (or `place` on a board without a placement phase).
    #[error(
        "phase `{0}` is not valid here (expected `play`, or `place` on boards with an opening placement phase)"
    )]
    BadPhase(String),
    /// Placement phase with pieces off the centre.
    #[error("in the placement phase, pieces may only stand on the four central cells")]
    PiecesOutsideCentre,
    /// A supply out of range.
    #[error("supply `{field}` is invalid (expected {})", match .max { Some(m) => format!("a number 0..={m}"), None => "`-` (no limit on this board)".into() })]
    BadSupply {
        /// The field.
        field: String,
        /// The board's supply.
        max: Option<u16>,
    },
}

/// What is wrong with an outflanking move.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FlankMoveError {
    /// Not a cell of this board.
    #[error("`{text}` is not a cell of this board (expected a cell like e5, or 0000)")]
    NoSuchSquare {
        /// Text given.
        text: String,
    },
    /// Not legal here.
    #[error("`{text}` is not legal here")]
    Illegal {
        /// Text given.
        text: String,
    },
}
