//! What self-play reads besides its config: a file of opening positions, and the
//! metadata every shard carries.

use std::collections::HashMap;
use std::path::Path;

use engine::{Game, State};

use crate::error::{Context, bail};

/// Makes one evaluator per call, for self-play's threads.
pub type EvaluatorFactory = Box<dyn Fn() -> Box<dyn selfplay::Evaluator> + Sync>;

/// The evaluators self-play's threads use: of the network in `model` (a model folder of
/// either family, or a run whose best it is; checked to be of `game`; its data carries
/// the folder's name), run as `cfg` says (engine, device), or of `fallback` without one.
pub fn selfplay_evaluators(
    model: Option<&Path>,
    game: Game,
    cfg: &selfplay::SelfplayConfig,
    fallback: selfplay::BuiltinEvaluator,
) -> crate::Result<EvaluatorFactory> {
    let without = move || -> EvaluatorFactory { Box::new(move || fallback.build()) };
    let Some(dir) = model else {
        return Ok(without());
    };
    let source = eval::NetSource::Path(dir.to_path_buf());
    let name_of = |d: &Path| {
        d.file_name()
            .map_or("model".into(), |n| n.to_string_lossy().to_string())
    };
    if let Some((d, net)) = eval::load_fastnet(&source, game)? {
        let name = name_of(&d);
        return Ok(Box::new(move || {
            Box::new(fastnet::FastEvaluator::new(net.clone(), &name))
        }));
    }
    Ok(match eval::load_network(&source, game)? {
        None => without(),
        Some((d, m)) => Box::new(train::infer::evaluators(
            &m,
            &name_of(&d),
            cfg.net_engine,
            &cfg.device,
        )?),
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
