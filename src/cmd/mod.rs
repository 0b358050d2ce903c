//! Subcommands of the `flipzero` binary.

pub mod bench;
pub mod bench_play;
pub mod bench_serve;
pub mod config;
pub mod gate;
pub mod matches;
pub mod perft;
pub mod play;
pub mod report;
pub mod run;
pub mod selfplay;
pub mod serve;
pub mod slurm;
pub mod stages;
pub mod train;
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

/// Reads a file of positions, one a line (`#` starts a comment); finished games are refused.
pub fn read_positions(path: &std::path::Path, game: Game) -> anyhow::Result<Vec<State>> {
    let text = rundir::read_regular_text(path, rundir::Limit::TEXT)
        .with_context(|| format!("cannot read positions file {}", path.display()))?;
    let mut out = vec![];
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let s = game
            .parse_position(line)
            .with_context(|| format!("{}:{}: bad position", path.display(), n + 1))?;
        if s.is_game_over() {
            anyhow::bail!(
                "{}:{}: the position is a finished game",
                path.display(),
                n + 1
            );
        }
        out.push(s);
    }
    if out.is_empty() {
        anyhow::bail!("{} holds no positions", path.display());
    }
    Ok(out)
}

/// What a self-play run needs besides its config: the openings of `opening_file` (none:
/// generated), and the metadata every shard carries (the config and the version).
pub fn selfplay_inputs(
    cfg: &::selfplay::SelfplayConfig,
    game: Game,
) -> anyhow::Result<(Vec<State>, std::collections::HashMap<String, String>)> {
    let openings = match &cfg.opening_file {
        Some(p) => read_positions(p, game)?,
        None => Vec::new(),
    };
    let mut metadata = std::collections::HashMap::new();
    metadata.insert(
        ::selfplay::data::KEY_CONFIG.to_string(),
        toml::to_string(cfg)?,
    );
    metadata.insert(
        "flipzero.version".to_string(),
        env!("CARGO_PKG_VERSION").to_string(),
    );
    Ok((openings, metadata))
}
