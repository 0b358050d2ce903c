//! Subcommands of the `flipzero` binary.

pub mod bench;
pub mod bench_play;
pub mod bench_serve;
pub mod gate;
pub mod matches;
pub mod nboard;
pub mod observer;
pub mod perft;
pub mod play;
pub mod report;
pub mod run;
pub mod selfplay;
pub mod serve;
pub mod slurm;
pub mod train;
pub mod tune;
pub mod uai;
pub mod worker;

use anyhow::Context;
use engine::{Game, State};

/// The help text listing every game name.
pub const GAMES_HELP: &str = "Game: ataxx, ataxx/assimilation, ataxx/thomas, hexxagon, \
othello, reversi, annexation64, annexation132, annexation76-cross, annexation76-parallel, \
annexation32, annexation80; each also with /misere (e.g. ataxx/misere)";

/// Parses a game name and an optional position text (default: the standard start).
pub fn game_and_position(game: &str, position: Option<&str>) -> anyhow::Result<(Game, State)> {
    let game: Game = game.parse()?;
    let pos = match position {
        None => game.startpos(),
        Some(text) => game
            .parse_position(text)
            .with_context(|| format!("bad position `{text}` for game {game}"))?,
    };
    Ok((game, pos))
}

/// Checks, before the work that makes it, that output `path` can be written by the
/// policy of [`rundir::files`] and does not overwrite any of `inputs` (files, or folders
/// whose contents the command reads).
pub fn check_output(path: &std::path::Path, inputs: &[&std::path::Path]) -> anyhow::Result<()> {
    rundir::check_output(path).with_context(|| format!("cannot write {}", path.display()))?;
    if let Some(input) = rundir::output_overwrites(path, inputs) {
        anyhow::bail!(
            "{} would overwrite {}, which this command reads: name another output",
            path.display(),
            input.display()
        );
    }
    Ok(())
}

/// Writes an output file the user named (`--pgn`, `--json`, `--dump-input`) by the
/// policy of [`rundir::files`]: a regular file (also behind a link) is replaced
/// atomically, a FIFO or a device (`/dev/stdout`) is written as a stream, anything else
/// is refused. A missing parent folder is created.
pub fn write_output(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.exists()
    {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    rundir::write_output(path, bytes)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

pub use pipeline::inputs::{read_positions, selfplay_inputs};
