//! What self-play reads besides its config: a file of opening positions, and the
//! metadata every shard carries.

use std::collections::HashMap;
use std::path::Path;

use engine::{Game, State};

use crate::error::{Context, bail};

/// The evaluators self-play's threads use: one per call, of `net` (its model and the name
/// its data carries) as `cfg` says (engine, device), or of `fallback` without a network.
pub fn selfplay_evaluators(
    net: Option<(&train::LoadedModel, &str)>,
    cfg: &selfplay::SelfplayConfig,
    fallback: selfplay::BuiltinEvaluator,
) -> crate::Result<impl Fn() -> Box<dyn selfplay::Evaluator> + Sync + use<>> {
    let nets = match net {
        Some((m, name)) => Some(train::infer::evaluators(
            m,
            name,
            cfg.net_engine,
            &cfg.device,
        )?),
        None => None,
    };
    Ok(move || match &nets {
        Some(make) => make(),
        None => fallback.build(),
    })
}

/// Reads a file of positions, one a line (`#` starts a comment); finished games are
/// refused, naming the line.
pub fn read_positions(path: &Path, game: Game) -> crate::Result<Vec<State>> {
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
            bail!(
                "{}:{}: the position is a finished game",
                path.display(),
                n + 1
            );
        }
        out.push(s);
    }
    if out.is_empty() {
        bail!("{} holds no positions", path.display());
    }
    Ok(out)
}

/// What a self-play run needs besides its config: the openings of `opening_file` (none:
/// generated), and the metadata every shard carries (the config and the version).
pub fn selfplay_inputs(
    cfg: &selfplay::SelfplayConfig,
    game: Game,
) -> crate::Result<(Vec<State>, HashMap<String, String>)> {
    let openings = match &cfg.opening_file {
        Some(p) => read_positions(p, game)?,
        None => Vec::new(),
    };
    let mut metadata = HashMap::new();
    metadata.insert(
        selfplay::data::KEY_CONFIG.to_string(),
        toml::to_string(cfg)?,
    );
    metadata.insert(
        "flipzero.version".to_string(),
        env!("CARGO_PKG_VERSION").to_string(),
    );
    Ok((openings, metadata))
}
