//! The runs a server shows: each has an id (its folder name, made unique), and a
//! dashboard built from the records the pipeline writes (see `pipeline::report`).
//!
//! A record that cannot be read (truncated, not JSON, unreadable) never fails the run:
//! its generation is shown with the records that are intact, and the problem is listed
//! with the file named relative to the run (`eval/gen-0003.json`), never by the
//! server's path.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pipeline::report::Generation;
use serde::Serialize;

use crate::error::ApiError;

/// A run in the list.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunEntry {
    /// The id used in URLs and player names (`mcts:<id>`).
    pub id: String,
    /// Generations with any record.
    pub generations: usize,
    /// Its best model (`bootstrap`, `gen-NNNN`), if any yet.
    pub best: Option<String>,
    /// Records that could not be read (their generations are listed without them).
    pub problems: Vec<RecordProblem>,
    /// The generations' networks that can be loaded (`gen-NNNN`), oldest first.
    pub models: Vec<String>,
    /// The game it plays (`selfplay.game` of its config), when its config says.
    pub game: Option<String>,
}

pub use pipeline::report::RecordProblem;

/// Elo of the run's best model against one baseline after one generation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EloPoint {
    /// The generation.
    pub generation: u32,
    /// Wall-clock seconds of the run up to the end of this generation.
    pub elapsed_s: f64,
    /// The baseline.
    pub baseline: String,
    /// Elo of the best model minus the baseline's.
    pub elo: f64,
    /// 95% half-width (none when unbounded).
    pub ci95: Option<f64>,
    /// The best model's score.
    pub score: f64,
}

/// A row of the rating list.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RatingRow {
    /// The player.
    pub name: String,
    /// Elo relative to the anchor.
    pub elo: f64,
    /// 95% half-width.
    pub ci95: f64,
    /// Games played.
    pub games: u32,
}

/// A named series of (x, y) points.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Series {
    /// Its name.
    pub name: String,
    /// The points.
    pub points: Vec<(f64, f64)>,
}

/// Everything the dashboard shows of a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunDashboard {
    /// The run's id.
    pub id: String,
    /// Its best model, if any yet.
    pub best: Option<String>,
    /// Generations with any record, in all.
    pub total_generations: usize,
    /// The records of the generations asked for (all, or from one on), in order, without
    /// each match's games.
    pub generations: Vec<Generation>,
    /// Wall-clock seconds up to the end of each generation.
    pub elapsed_s: Vec<f64>,
    /// Elo of the best model against the baselines, by generation.
    pub elo: Vec<EloPoint>,
    /// The anchor of the rating list (the strongest baseline), if any.
    pub anchor: Option<String>,
    /// The rating list of every player in the run's recorded games, strongest first.
    pub ratings: Vec<RatingRow>,
    /// Why there is no rating list, when there is none.
    pub ratings_note: Option<String>,
    /// Training losses over cumulative steps.
    pub losses: Vec<Series>,
    /// Records that could not be read: each generation is shown without them.
    pub problems: Vec<RecordProblem>,
    /// What the run is doing now.
    pub status: crate::status::RunStatus,
}

/// The runs of a server.
#[derive(Debug)]
pub struct Runs {
    by_id: BTreeMap<String, PathBuf>,
    order: Vec<String>,
}

impl Runs {
    /// Checks each directory and names it by its folder name (`name-2`, … when taken).
    pub fn new(dirs: &[PathBuf]) -> Result<Runs, String> {
        let mut by_id = BTreeMap::new();
        let mut order = vec![];
        for d in dirs {
            pipeline::report::check_run(d).map_err(|e| e.to_string())?;
            let base: String = d
                .canonicalize()
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| "run".into())
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            let base = if base.is_empty() || base.starts_with('.') {
                format!("run{base}")
            } else {
                base
            };
            let mut id = base.clone();
            let mut n = 2;
            while by_id.contains_key(&id) {
                id = format!("{base}-{n}");
                n += 1;
            }
            by_id.insert(id.clone(), d.clone());
            order.push(id);
        }
        Ok(Runs { by_id, order })
    }

    /// The directory of run `id` (404 when no run has that id).
    pub fn dir(&self, id: &str) -> Result<&Path, ApiError> {
        self.by_id
            .get(id)
            .map(PathBuf::as_path)
            .ok_or_else(|| ApiError::NotFound(format!("no run `{id}` on this server")))
    }

    /// `text` with the run directories no longer named: a path inside a run becomes a
    /// path relative to it (`eval/gen-0003.json`), the directory itself `run `<id>``.
    pub fn hide_paths(&self, text: &str) -> String {
        let mut dirs: Vec<(&String, &PathBuf)> = self.by_id.iter().collect();
        // Longest first: a run inside another is hidden as itself.
        dirs.sort_by_key(|(_, d)| std::cmp::Reverse(d.as_os_str().len()));
        dirs.into_iter().fold(text.to_string(), |t, (id, dir)| {
            hide_dir(&t, dir, &format!("run `{id}`"))
        })
    }

    /// The runs in the order given.
    pub fn list(&self) -> Vec<RunEntry> {
        self.order
            .iter()
            .map(|id| {
                let dir = &self.by_id[id];
                let (gens, problems) = read_generations(dir);
                let run = rundir::RunDir::new(dir);
                let models = gens
                    .iter()
                    .filter(|g| {
                        run.generation_model(g.generation)
                            .join("model.json")
                            .is_file()
                    })
                    .map(|g| rundir::generation_name(g.generation))
                    .collect();
                RunEntry {
                    id: id.clone(),
                    generations: gens.len(),
                    best: rundir::current_best(dir).ok().flatten(),
                    problems,
                    models,
                    game: run_game(dir),
                }
            })
            .collect()
    }
}

/// The game of the run in `dir`: `selfplay.game` of its saved config.
fn run_game(dir: &Path) -> Option<String> {
    let text =
        rundir::read_regular_text(&rundir::RunDir::new(dir).config(), rundir::Limit::TEXT).ok()?;
    let v: toml::Value = toml::from_str(&text).ok()?;
    // Named as the engine names it (a config may write `Othello` or ` ataxx`).
    let game: engine::Game = v.get("selfplay")?.get("game")?.as_str()?.parse().ok()?;
    Some(game.to_string())
}

/// A run's generations, each without the records that cannot be read (named in the
/// problems), so that one corrupt file never hides the run.
pub fn read_generations(dir: &Path) -> (Vec<Generation>, Vec<RecordProblem>) {
    pipeline::report::read_generations_checked(dir).unwrap_or_default()
}

/// A player name of a record as the dashboard shows it: a network's directory from its
/// `models/` folder on (`mcts:models/gen-0003:sims=8`), a run directory and an external
/// engine by their last name. Records name players by the paths they were run with; the
/// server does not show where files are kept.
fn public_player(name: &str) -> String {
    use eval::{NetSource, PlayerSpec};
    let tail = |p: &Path| -> PathBuf {
        let parts: Vec<_> = p.components().collect();
        match parts.iter().rposition(|c| c.as_os_str() == "models") {
            Some(i) => parts[i..].iter().collect(),
            None => p.file_name().map(PathBuf::from).unwrap_or_default(),
        }
    };
    match name.parse::<PlayerSpec>() {
        Ok(PlayerSpec::Mcts {
            net: NetSource::Path(p),
            sims,
            time,
            engine,
            basic,
            params,
        }) => PlayerSpec::Mcts {
            net: NetSource::Path(tail(&p)),
            sims,
            time,
            engine,
            basic,
            params,
        }
        .to_string(),
        Ok(PlayerSpec::Uai { path, options }) => PlayerSpec::Uai {
            path: path.file_name().map(PathBuf::from).unwrap_or_default(),
            options,
        }
        .to_string(),
        Ok(PlayerSpec::Nboard { path, options }) => PlayerSpec::Nboard {
            path: path.file_name().map(PathBuf::from).unwrap_or_default(),
            options,
        }
        .to_string(),
        _ => name.to_string(),
    }
}

/// The dashboard of run `id` in `dir`, with the generations from `from` on (the
/// elapsed times and Elo points too; the rating list and the losses always whole). The
/// games of each match are left out: the rating list is computed from them here, and a
/// page that wants a generation's games asks for them.
pub fn dashboard(id: &str, dir: &Path, from: u32) -> Result<RunDashboard, ApiError> {
    let (mut gens, problems) = read_generations(dir);
    for e in gens.iter_mut().filter_map(|g| g.eval.as_mut()) {
        let gate = e.gate.iter_mut().map(|v| &mut v.matched);
        for m in gate.chain(e.anchor.iter_mut()) {
            m.a_player = public_player(&m.a_player);
            m.b_player = public_player(&m.b_player);
        }
    }
    let mut elapsed_s = vec![];
    let mut elo = vec![];
    let mut t = 0.0;
    for g in &gens {
        t += pipeline::report::seconds(g);
        elapsed_s.push(t);
        for a in g.eval.iter().flat_map(|e| &e.anchor) {
            elo.push(EloPoint {
                generation: g.generation,
                elapsed_s: t,
                baseline: a.b.clone(),
                elo: a.elo,
                ci95: a.elo_ci95,
                score: a.score,
            });
        }
    }
    let (anchor, ratings, ratings_note) = rating_list(&gens);
    let losses = pipeline::report::loss_curve(dir, &gens)
        .into_iter()
        .map(|(name, points)| Series { name, points })
        .collect();
    let status = crate::status::status(dir, &gens);
    for e in gens.iter_mut().filter_map(|g| g.eval.as_mut()) {
        let gate = e.gate.iter_mut().map(|v| &mut v.matched);
        for m in gate.chain(e.anchor.iter_mut()) {
            m.results = vec![];
        }
    }
    let keep = gens
        .iter()
        .position(|g| g.generation >= from)
        .unwrap_or(gens.len());
    let total = gens.len();
    Ok(RunDashboard {
        id: id.to_string(),
        best: rundir::current_best(dir).ok().flatten(),
        total_generations: total,
        generations: gens.split_off(keep),
        elapsed_s: elapsed_s.split_off(keep),
        elo: elo.into_iter().filter(|p| p.generation >= from).collect(),
        anchor,
        ratings,
        ratings_note,
        losses,
        problems,
        status,
    })
}

/// Every rated game of `gens` (gating and anchoring): x, o and x's points. The records
/// are the ones already read, so a corrupt one costs only its own games.
fn rated_games(gens: &[Generation]) -> Vec<(String, String, f64)> {
    let mut out = vec![];
    for e in gens.iter().filter_map(|g| g.eval.as_ref()) {
        for m in e.gate.iter().map(|v| &v.matched).chain(&e.anchor) {
            for r in &m.results {
                if let Some(p) = r.x_points() {
                    out.push((r.x.clone(), r.o.clone(), p));
                }
            }
        }
    }
    out
}

/// The rating list anchored on the run's strongest baseline at Elo 0.
fn rating_list(gens: &[Generation]) -> (Option<String>, Vec<RatingRow>, Option<String>) {
    let Some(anchor) = pipeline::report::ladder_names(gens).pop() else {
        return (None, vec![], Some("no anchoring games yet".into()));
    };
    let list = pipeline::report::ratings(&rated_games(gens), &anchor, 0.0);
    match list {
        Ok(list) => (
            Some(anchor),
            list.into_iter()
                .map(|(name, r)| RatingRow {
                    name,
                    elo: r.elo,
                    ci95: r.ci95,
                    games: r.games,
                })
                .collect(),
            None,
        ),
        Err(e) => (Some(anchor), vec![], Some(e.to_string())),
    }
}

/// `text` with the directory `dir` no longer named: `dir/x/y` becomes `x/y` (a path
/// relative to it) and `dir` itself becomes `name`. Each spelling of `dir` is replaced:
/// as given, made absolute, and with its links resolved; only where it stands as a
/// path (not inside a longer name on either side). A directory given as one relative
/// name (`R`) is hidden only where a path goes on from it (`R/x`): the bare word is as
/// likely the user's own name for something else (a net called `R`).
fn hide_dir(text: &str, dir: &Path, name: &str) -> String {
    let mut forms: Vec<String> = vec![dir.display().to_string()];
    if let Ok(p) = std::path::absolute(dir) {
        forms.push(p.display().to_string());
    }
    if let Ok(p) = dir.canonicalize() {
        forms.push(p.display().to_string());
    }
    for f in &mut forms {
        while f.len() > 1 && f.ends_with('/') {
            f.pop();
        }
    }
    forms.retain(|f| !f.is_empty() && f != "." && f != "/");
    forms.sort_by_key(|f| std::cmp::Reverse(f.len()));
    forms.dedup();
    let part_of_a_name = |c: char| c.is_alphanumeric() || "-_.~/".contains(c);
    let mut out = text.to_string();
    for f in &forms {
        let bare_ok = f.contains('/');
        let mut rest = out.as_str();
        let mut done = String::new();
        while let Some(i) = rest.find(f.as_str()) {
            done.push_str(&rest[..i]);
            let after = &rest[i + f.len()..];
            let starts = done.chars().last().is_none_or(|c| !part_of_a_name(c));
            if starts && let Some(inner) = after.strip_prefix('/') {
                // A path inside the directory: relative to it.
                rest = inner;
                continue;
            }
            let ends = after.chars().next().is_none_or(|c| !part_of_a_name(c));
            done.push_str(if starts && ends && bare_ok { name } else { f });
            rest = after;
        }
        done.push_str(rest);
        out = done;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn players_are_shown_without_their_paths() {
        for (name, shown) in [
            (
                "mcts:/srv/runs/a/models/gen-0003:sims=8",
                "mcts:models/gen-0003:sims=8",
            ),
            ("mcts:/srv/runs/a", "mcts:a"),
            ("mcts:bootstrap:sims=8", "mcts:bootstrap:sims=8"),
            ("uai:/opt/engines/cat:Hash=16", "uai:cat:Hash=16"),
            ("nboard:/opt/engines/ega:depth=5", "nboard:ega:depth=5"),
            ("ab:time=100", "ab:time=100"),
            ("random", "random"),
        ] {
            assert_eq!(public_player(name), shown, "{name}");
        }
    }

    #[test]
    fn runs_get_unique_ids_and_only_run_directories_are_taken() {
        let base = std::env::temp_dir().join(format!("flipzero-serve-runs-{}", std::process::id()));
        let (a, b) = (base.join("x").join("same"), base.join("y").join("same"));
        for d in [&a, &b] {
            std::fs::create_dir_all(d.join("eval")).unwrap();
        }
        let runs = Runs::new(&[a.clone(), b.clone()]).unwrap();
        let ids: Vec<String> = runs.list().into_iter().map(|r| r.id).collect();
        assert_eq!(ids, ["same", "same-2"]);
        assert_eq!(runs.dir("same-2").unwrap(), b.as_path());
        assert_eq!(runs.dir("..").unwrap_err().status(), 404);
        assert!(
            Runs::new(std::slice::from_ref(&base))
                .unwrap_err()
                .contains("not a run directory")
        );
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_directory_is_hidden_in_messages() {
        let d = Path::new("/srv/data/runs/a");
        assert_eq!(
            hide_dir("/srv/data/runs/a/eval/gen-0003.json: corrupt", d, "run `a`"),
            "eval/gen-0003.json: corrupt"
        );
        assert_eq!(
            hide_dir("/srv/data/runs/a is not a run", d, "run `a`"),
            "run `a` is not a run"
        );
        assert_eq!(
            hide_dir("see /srv/data/runs/ab/x", d, "run `a`"),
            "see /srv/data/runs/ab/x"
        );
        // Inside a longer path on the left: not this directory.
        assert_eq!(
            hide_dir(
                "/mnt/srv/data/runs/a/x and /mnt/srv/data/runs/a",
                d,
                "run `a`"
            ),
            "/mnt/srv/data/runs/a/x and /mnt/srv/data/runs/a"
        );
        // A run given as one relative name: paths from it are hidden, the user's own
        // names that happen to be that word are not.
        let r = Path::new("R");
        assert_eq!(
            hide_dir("net `R` is not in R/models/gen-0003 (R)", r, "run `R`"),
            "net `R` is not in models/gen-0003 (R)"
        );
        assert_eq!(hide_dir("MR/x QR", r, "run `R`"), "MR/x QR");
    }
}
