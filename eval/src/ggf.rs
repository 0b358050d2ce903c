//! Othello's notation at the edge: NBoard and GGF name cells with rows counted from the
//! top (the first moves are d3, c4, f5, e6), the engine with ranks counted from the
//! bottom as chess does, so row `r` is rank `9 - r`; moves and boards are turned over
//! here, for the NBoard engine (`flipzero nboard`) and the NBoard client player
//! (`nboard:<path>`). A pass is `PA`.

use engine::uai::excerpt;
use engine::{Game, Move, State};

/// A GGF board value (`8 <64 cells, row 1 first> <side>`, cells `-`, `*` black (x), `O`
/// white (o)) of an Othello position.
pub(crate) fn board_value(pos: &State) -> String {
    let text = pos.text();
    // The engine's text: `othello <rank 8>/…/<rank 1> <side> …`, top rank first, as GGF.
    let mut words = text.split_whitespace().skip(1);
    let (board, side) = (words.next().unwrap_or(""), words.next().unwrap_or("x"));
    let mut cells = String::with_capacity(64);
    for c in board.chars() {
        match c {
            'x' => cells.push('*'),
            'o' => cells.push('O'),
            d if d.is_ascii_digit() => cells.extend(std::iter::repeat_n(
                '-',
                d.to_digit(10).unwrap_or(0) as usize,
            )),
            _ => {}
        }
    }
    format!("8 {cells} {}", if side == "o" { 'O' } else { '*' })
}

/// The engine's move named as Othello names it: `F5` (rows from the top), `PA`.
pub(crate) fn move_name(pos: &State, mv: Move) -> String {
    let text = pos.move_to_string(mv);
    othello_square(&text).unwrap_or_else(|| "PA".into())
}

/// `f4` (rank from the bottom) as `F5` (row from the top), and back: the same turn.
fn othello_square(cell: &str) -> Option<String> {
    let mut chars = cell.chars();
    let file = chars.next()?.to_ascii_lowercase();
    let row: u32 = chars.as_str().parse().ok()?;
    if !('a'..='h').contains(&file) || !(1..=8).contains(&row) {
        return None;
    }
    Some(format!("{}{}", file.to_ascii_uppercase(), 9 - row))
}

/// An NBoard or GGF move (`F5`, `f5`, `PA`, `pass`) in `pos`.
pub(crate) fn parse_move(pos: &State, text: &str) -> Result<Move, String> {
    let t = text.trim();
    let engine_text = if t.eq_ignore_ascii_case("pa") || t.eq_ignore_ascii_case("pass") {
        "0000".to_string()
    } else {
        othello_square(t)
            .ok_or_else(|| format!("`{}` is not a cell (a1 to h8) or PA", excerpt(t)))?
            .to_ascii_lowercase()
    };
    pos.parse_move(&engine_text)
        .map_err(|_| format!("`{}` is not legal here", excerpt(t)))
}

/// The position at the end of a GGF game: its board (`BO[8 <64 cells> <side>]`, cells
/// `-`, `*` black, `O` white, row 1 first) and its moves (`B[F5]`, `W[D6/0.5/1.2]`).
pub(crate) fn parse_ggf(text: &str, game: Game) -> Result<State, String> {
    let mut pos: Option<State> = None;
    for (name, value) in ggf_properties(text)? {
        match name.as_str() {
            "GM" if !value.trim().eq_ignore_ascii_case("othello") => {
                return Err(format!(
                    "game `{}` (this engine plays Othello)",
                    excerpt(&value)
                ));
            }
            "TY" if value.trim() != "8" => {
                return Err(format!(
                    "board type `{}` (this engine plays the 8x8 board, TY[8])",
                    excerpt(&value)
                ));
            }
            "BO" => pos = Some(parse_board(&value, game)?),
            "B" | "W" => {
                let p = pos.as_mut().ok_or("a move before the board (BO)")?;
                let mover = if name == "B" { 'x' } else { 'o' };
                if p.side_to_move().char() != mover {
                    return Err(format!("{name}[{}]: not that side's turn", excerpt(&value)));
                }
                let mv = value.split('/').next().unwrap_or("");
                let m =
                    parse_move(p, mv).map_err(|e| format!("{name}[{}]: {e}", excerpt(&value)))?;
                p.play(m);
            }
            _ => {}
        }
    }
    pos.ok_or_else(|| "no board (BO[...])".to_string())
}

/// The properties of a GGF game in order: `NAME[value]` (a `\` escapes the next
/// character), between `(;` and `;)`.
fn ggf_properties(text: &str) -> Result<Vec<(String, String)>, String> {
    let t = text.trim();
    let body = t
        .strip_prefix("(;")
        .and_then(|b| b.strip_suffix(";)"))
        .ok_or_else(|| format!("`{}` is not a GGF game `(;...;)`", excerpt(t)))?;
    let mut out = Vec::new();
    let mut chars = body.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(&c) = chars.peek() else { break };
        if !c.is_ascii_uppercase() {
            return Err(format!(
                "unexpected `{c}` in the game (a property NAME[value])"
            ));
        }
        let mut name = String::new();
        while let Some(&c) = chars.peek().filter(|c| c.is_ascii_uppercase()) {
            name.push(c);
            chars.next();
        }
        if chars.next() != Some('[') {
            return Err(format!("property {name} without a [value]"));
        }
        let mut value = String::new();
        loop {
            match chars.next() {
                Some(']') => break,
                Some('\\') => value.extend(chars.next()),
                Some(c) => value.push(c),
                None => return Err(format!("property {name}: its value has no closing ]")),
            }
        }
        out.push((name, value));
    }
    Ok(out)
}

/// `8 <cells> <side>`: 64 cells row 1 first (spaces between them allowed).
fn parse_board(value: &str, game: Game) -> Result<State, String> {
    let mut words: Vec<&str> = value.split_whitespace().collect();
    let bad = || {
        format!(
            "board `{}` (8, 64 cells of - * O, the side to move)",
            excerpt(value)
        )
    };
    if words.len() < 3 || words[0] != "8" {
        return Err(bad());
    }
    let side = match words.pop() {
        Some("*" | "X" | "x" | "B" | "b") => "x",
        Some("O" | "o" | "W" | "w") => "o",
        _ => return Err(bad()),
    };
    let cells: String = words[1..].concat();
    if cells.chars().count() != 64 {
        return Err(bad());
    }
    let mut ranks = Vec::new();
    let cells: Vec<char> = cells.chars().collect();
    for row in cells.chunks(8) {
        let mut rank = String::new();
        let mut empty = 0;
        for &c in row {
            let piece = match c {
                '-' | '.' => None,
                '*' | 'X' | 'x' | 'B' | 'b' => Some('x'),
                'O' | 'o' | 'W' | 'w' => Some('o'),
                _ => return Err(bad()),
            };
            match piece {
                None => empty += 1,
                Some(p) => {
                    if empty > 0 {
                        rank.push_str(&empty.to_string());
                        empty = 0;
                    }
                    rank.push(p);
                }
            }
        }
        if empty > 0 {
            rank.push_str(&empty.to_string());
        }
        ranks.push(rank);
    }
    // GGF lists row 1 (the top) first, as the engine's text lists its top rank first.
    let text = format!("othello {} {side} play - - 0", ranks.join("/"));
    game.parse_position(&text)
        .map_err(|e| format!("board: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "(;GM[Othello]PC[NBoard]PB[a]PW[b]RE[?]TI[15:00]TY[8]BO[8 ---------------------------O*------*O--------------------------- *]B[F5]W[F6]B[E6//1.2]W[F4];)";

    #[test]
    fn ggf_games_replay_in_othellos_coordinates() {
        let game: Game = "othello".parse().unwrap();
        let p = parse_ggf(START, game).unwrap();
        // F5 F6 E6 F4 in Othello's rows is f4 f3 e3 f5 in the engine's ranks.
        let mut want = game.startpos();
        for m in ["f4", "f3", "e3", "f5"] {
            want.play(want.parse_move(m).unwrap());
        }
        assert_eq!(p, want);
        assert_eq!(othello_square("f4").as_deref(), Some("F5"));
        assert_eq!(othello_square("F5").as_deref(), Some("F4"));
        // The start's four moves, named as Othello names them.
        let start = game.startpos();
        let mut names: Vec<String> = start
            .legal_moves()
            .into_iter()
            .map(|m| move_name(&start, m))
            .collect();
        names.sort();
        assert_eq!(names, ["C4", "D3", "E6", "F5"]);
    }

    /// The board written for an NBoard engine reads back as the same position, on
    /// random games to their end (passes, both sides to move, full and empty rows).
    #[test]
    fn board_values_read_back_as_the_position() {
        let game: Game = "othello".parse().unwrap();
        let mut rng = engine::Rng::new(7);
        let mut seen = 0;
        for _ in 0..20 {
            let mut p = game.startpos();
            while !p.is_game_over() {
                let ggf = format!("(;GM[Othello]TY[8]BO[{}];)", board_value(&p));
                // The pieces and the side to move (a GGF board does not carry the count
                // of passes just made, which only ends a game after two).
                let back = parse_ggf(&ggf, game).unwrap();
                assert_eq!(board_value(&back), board_value(&p), "{ggf}");
                assert_eq!(back.legal_moves(), p.legal_moves(), "{ggf}");
                assert_eq!(back.side_to_move(), p.side_to_move(), "{ggf}");
                seen += 1;
                let moves = p.legal_moves();
                let m = moves[rng.below(moves.len() as u64) as usize];
                p.play(m);
            }
        }
        assert!(seen > 20 * 55, "{seen}");
        let start = game.startpos();
        let ggf = format!("(;GM[Othello]BO[{}];)", board_value(&start));
        assert_eq!(parse_ggf(&ggf, game).unwrap(), start);
        assert_eq!(
            board_value(&game.startpos()),
            "8 ---------------------------O*------*O--------------------------- *"
        );
    }

    #[test]
    fn malformed_games_are_refused_with_the_reason() {
        let game: Game = "othello".parse().unwrap();
        let err = |t: &str| parse_ggf(t, game).unwrap_err();
        assert!(err("GM[Othello]").contains("is not a GGF game"));
        assert!(err("(;GM[Chess]BO[8 ---------------------------O*------*O--------------------------- *];)").contains("game `Chess`"));
        assert!(err("(;TY[10]BO[8 - *];)").contains("board type `10`"));
        assert!(err("(;BO[8 --- *];)").contains("board `8 --- *`"));
        assert!(err("(;B[F5];)").contains("a move before the board"));
        assert!(err(&START.replace("B[F5]", "B[A1]")).contains("B[A1]: `A1` is not legal here"));
        assert!(err(&START.replace("W[F6]", "B[F6]")).contains("not that side's turn"));
        assert!(
            err("(;BO[8 ---------------------------O*------*O--------------------------- *")
                .contains("is not a GGF game")
        );
        assert!(
            err("(;BO[8 ---------------------------O*------*O--------------------------- *;)")
                .contains("no closing ]")
        );
        assert!(err("(;GM[Othello];)").contains("no board"));
    }
}
