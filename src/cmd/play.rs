//! `flipzero play`: a game against any player in the terminal.

use std::io::{BufRead, Write};

use anyhow::Context;
use clap::Args;
use engine::{Game, Side, State};
use eval::{PlayerSpec, Timeouts};

/// Arguments of `flipzero play`.
#[derive(Args)]
pub struct PlayArgs {
    #[arg(long, default_value = "ataxx", help = super::GAMES_HELP)]
    game: String,
    #[arg(long, default_value = "ab3", help = format!("The opponent: {}", eval::PLAYER_NAMES))]
    opponent: String,
    /// Your side: x (moves first) or o.
    #[arg(long, default_value = "x")]
    side: String,
    /// Start from this position (the game's text format) instead of the start.
    #[arg(long, allow_hyphen_values = true)]
    position: Option<String>,
    /// Seed of the opponent's random choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Search threads of an MCTS opponent (it keeps its tree between moves).
    #[arg(long, default_value_t = 1)]
    threads: usize,
}

/// A drawing of any board with coordinates: ranks top-down, files a, b, c… left to right.
fn draw(s: &State) -> String {
    if let State::Ataxx(p) = s {
        return p.pretty();
    }
    let game = s.game();
    let (w, h) = game.grid();
    let mut out = String::new();
    for y in (0..h).rev() {
        out.push_str(&format!("{:>2} ", y + 1));
        for x in 0..w {
            let c = match game.cell_at(x as i32, y as i32) {
                None => ' ',
                Some(cell) if s.is_blocked(cell) => '#',
                Some(cell) => match s.piece_at(cell) {
                    Some(Side::X) => 'x',
                    Some(Side::O) => 'o',
                    None => '.',
                },
            };
            out.push(' ');
            out.push(c);
        }
        out.push('\n');
    }
    out.push_str("   ");
    for x in 0..w {
        out.push(' ');
        out.push((b'a' + x as u8) as char);
    }
    let [cx, co] = s.counts();
    out.push_str(&format!(
        "\n{} to move  (x {cx}, o {co})",
        s.side_to_move().char()
    ));
    out
}

const HELP: &str = "Type a move (e.g. f2 to clone, g1e3 to jump, d3 to place; 0000 to pass when \
you must), `moves` to list your legal moves, `board` to redraw, `undo` to take back your last \
move, or `quit`.";

/// Plays a game on the terminal.
pub fn run(a: PlayArgs) -> anyhow::Result<()> {
    let game: Game = a.game.parse()?;
    let mut state = match &a.position {
        Some(t) => game
            .parse_position(t)
            .with_context(|| format!("bad position `{t}` for {game}"))?,
        None => game.startpos(),
    };
    let human = match a.side.as_str() {
        "x" => Side::X,
        "o" => Side::O,
        other => anyhow::bail!("--side {other}: expected x or o"),
    };
    let spec: PlayerSpec = a.opponent.parse()?;
    anyhow::ensure!(
        !spec.needs_clock(),
        "--opponent {spec} has no limit of its own: give it one (ab:time=MS, ab3, ...)"
    );
    let mut opponent = spec
        .build_with(game, a.seed, Timeouts::default(), a.threads.max(1), false)
        .with_context(|| format!("cannot start the opponent {spec}"))?;
    opponent.new_game()?;
    println!("{game}: you play {} against {spec}. {HELP}\n", human.char());
    println!("{}", draw(&state));
    let mut history: Vec<State> = vec![];
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().split(b'\n');
    loop {
        if let Some(r) = state.result() {
            let verdict = match r.winner {
                Some(w) if w == human => "you win",
                Some(_) => "you lose",
                None => "a draw",
            };
            println!(
                "game over ({}): {verdict}, x {} o {}",
                r.reason.name(),
                r.counts[0],
                r.counts[1]
            );
            return Ok(());
        }
        if state.side_to_move() != human {
            let mv = opponent
                .choose(&state)
                .with_context(|| format!("{spec} failed to move"))?;
            anyhow::ensure!(state.is_legal(mv), "{spec} played an illegal move");
            println!("{spec} plays {}", state.move_to_string(mv));
            state.play(mv);
            println!("{}", draw(&state));
            continue;
        }
        print!("your move> ");
        std::io::stdout().flush()?;
        let Some(line) = lines.next() else {
            println!("\nend of input: game abandoned");
            return Ok(());
        };
        let line = line?;
        let Ok(line) = String::from_utf8(line) else {
            println!("that line is not valid UTF-8 text; type a move such as g2, or `help`");
            continue;
        };
        let input = line.trim();
        match input {
            "" => {}
            "quit" | "exit" => return Ok(()),
            "help" | "?" => println!("{HELP}"),
            "board" => println!("{}", draw(&state)),
            "moves" => {
                let mut m: Vec<String> = state
                    .legal_moves()
                    .into_iter()
                    .map(|m| state.move_to_string(m))
                    .collect();
                m.sort();
                println!("{} legal moves: {}", m.len(), m.join(" "));
            }
            "undo" => match history.pop() {
                Some(s) => {
                    state = s;
                    println!("{}", draw(&state));
                }
                None => println!("nothing to undo"),
            },
            text => match state.parse_move(text) {
                Ok(mv) => {
                    history.push(state);
                    state.play(mv);
                    println!("{}", draw(&state));
                }
                Err(e) => {
                    println!("`{text}` is not a legal move here ({e}); type `moves` to list them")
                }
            },
        }
    }
}
