//! The runs a server shows: each has an id (its folder name, made unique), and a
//! dashboard built from the records the pipeline writes (see `eval::report`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use eval::report::{Generation, read_generations};
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
}

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
    /// Every generation's records, in order.
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
            eval::report::check_run(d).map_err(|e| e.to_string())?;
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

    /// The runs in the order given.
    pub fn list(&self) -> Vec<RunEntry> {
        self.order
            .iter()
            .map(|id| {
                let dir = &self.by_id[id];
                RunEntry {
                    id: id.clone(),
                    generations: read_generations(dir).map_or(0, |g| g.len()),
                    best: eval::current_best(dir).ok().flatten(),
                }
            })
            .collect()
    }
}

/// The dashboard of run `id` in `dir`.
pub fn dashboard(id: &str, dir: &Path) -> Result<RunDashboard, ApiError> {
    let gens = read_generations(dir).map_err(|e| ApiError::Internal(e.to_string()))?;
    let mut elapsed_s = vec![];
    let mut elo = vec![];
    let mut t = 0.0;
    for g in &gens {
        t += eval::report::seconds(g);
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
    let (anchor, ratings, ratings_note) = rating_list(dir, &gens);
    let losses = eval::report::loss_curve(dir, &gens)
        .into_iter()
        .map(|(name, points)| Series { name, points })
        .collect();
    Ok(RunDashboard {
        id: id.to_string(),
        best: eval::current_best(dir).ok().flatten(),
        generations: gens,
        elapsed_s,
        elo,
        anchor,
        ratings,
        ratings_note,
        losses,
    })
}

/// The rating list anchored on the run's strongest baseline at Elo 0.
fn rating_list(
    dir: &Path,
    gens: &[Generation],
) -> (Option<String>, Vec<RatingRow>, Option<String>) {
    let Some(anchor) = eval::report::ladder_names(gens).pop() else {
        return (None, vec![], Some("no anchoring games yet".into()));
    };
    let list = eval::report::collect_games(&[dir.to_path_buf()])
        .and_then(|games| eval::report::ratings(&games, &anchor, 0.0));
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
