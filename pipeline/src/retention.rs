//! Retention: which generations' networks a run keeps (`run.keep_models`,
//! `run.keep_every`), applied after every verdict and when a run is opened again.
//!
//! A network is removed only when nothing of the run can still need it: it has been
//! judged (its evaluation record is finished), it is not the best nor the best before it
//! (a self-play worker may have read the pointer just before a promotion), it is not the
//! network the next training starts from, it is not one of the newest `keep_models`
//! trained generations, and its number is not a multiple of `keep_every`. What goes is
//! the folder's network ([`network_files`]: weights, exports, checkpoints); its records
//! stay (`train.json`, `metrics.csv` for the loss curve, `candidate.json`) and anything
//! else a user put there, with [`rundir::REMOVED_RECORD`] saying what was removed and
//! why, so that every report, game record and plot of the run still reads.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::error::Context;
use crate::report::Generation;
use crate::stages::Pipeline;

/// The files of a model folder that are its network: a CNN's and a fast net's files as
/// their exports write them (description, weights, exports) and the training
/// checkpoints. A removal takes these and nothing else.
pub fn network_files() -> BTreeSet<&'static str> {
    train::EXPORT_FILES
        .into_iter()
        .chain(fastnet::io::FILES)
        .chain([train::store::CHECKPOINTS])
        .collect()
}

/// What [`rundir::REMOVED_RECORD`] says about a generation whose network was removed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Removed {
    /// The files removed.
    pub files: Vec<String>,
    /// Their bytes.
    pub bytes: u64,
    /// The settings that removed them.
    pub rule: String,
}

/// The generations whose networks the rule removes now, of `gens` (the run's records),
/// `best` (the best's generation, if a network) and the settings; see the module docs.
/// Generations without a training record have no network to remove.
pub fn removable(
    gens: &[Generation],
    best: Option<u32>,
    keep_models: u32,
    keep_every: u32,
) -> Vec<u32> {
    if keep_models == 0 {
        return Vec::new();
    }
    let trained: Vec<&Generation> = gens.iter().filter(|g| g.train.is_some()).collect();
    let mut kept: BTreeSet<u32> = trained
        .iter()
        .rev()
        .take(keep_models as usize)
        .map(|g| g.generation)
        .collect();
    kept.extend(best);
    // The best before the current one: the newest promotion of another generation.
    kept.extend(
        gens.iter()
            .rev()
            .filter_map(|g| g.eval.as_ref())
            .filter(|e| e.promoted && e.finished && Some(e.generation) != best)
            .map(|e| e.generation)
            .next(),
    );
    // The next training's start: the newest network that is not a final net.
    kept.extend(
        trained
            .iter()
            .rev()
            .find(|g| g.train.as_ref().is_some_and(|t| !t.final_net))
            .map(|g| g.generation),
    );
    trained
        .iter()
        .filter(|g| g.eval.as_ref().is_some_and(|e| e.finished))
        .map(|g| g.generation)
        .filter(|k| !(kept.contains(k) || (keep_every > 0 && k % keep_every == 0)))
        .collect()
}

impl Pipeline<'_> {
    /// Removes the networks the retention rule lets go (see the module docs), logging
    /// each. Only the files of [`network_files`] go: anything else a user put in the
    /// folder stays. A removal a kill cut short is finished; a folder without any of
    /// those files is left as it is.
    pub fn apply_retention(&self) -> crate::Result<()> {
        let (keep_models, keep_every) = (self.cfg.run.keep_models, self.cfg.run.keep_every);
        if keep_models == 0 {
            return Ok(());
        }
        // Only real folders of the run: a link (models/ or a generation moved to another
        // disk, say) is the user's arrangement, and what it leads to is never emptied.
        let real_dir = |p: &std::path::Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
        let models = self.run.models();
        if !real_dir(&models) {
            if std::fs::symlink_metadata(&models).is_ok() {
                self.warn(&format!(
                    "{}: not a folder of the run (a link): the retention removes nothing",
                    models.display()
                ));
            }
            return Ok(());
        }
        let best = rundir::parse_generation(&self.best()?);
        // A best pointer that names no network (a removed or missing one) is repaired
        // first, where the run loads its best; nothing is removed on its word.
        if let Some(b) = best
            && !self.run.generation_model(b).join("model.json").is_file()
        {
            self.warn(&format!(
                "models/best names {}, which holds no network: the retention waits until the best is repaired",
                rundir::generation_name(b)
            ));
            return Ok(());
        }
        let gens = crate::report::read_generations(self.dir())?;
        let rule = format!("run.keep_models = {keep_models}, run.keep_every = {keep_every}");
        for g in removable(&gens, best, keep_models, keep_every) {
            let dir = self.run.generation_model(g);
            if !real_dir(&dir) {
                self.warn(&format!(
                    "{}: not a folder of the run (a link, or missing): the retention leaves it alone",
                    dir.display()
                ));
                continue;
            }
            if let Some(bytes) = remove_network(&dir, &rule)? {
                self.log(&format!(
                    "{}: network removed by the retention ({:.1} MB; {rule})",
                    rundir::generation_name(g),
                    bytes as f64 / 1e6,
                ));
            }
        }
        Ok(())
    }
}

/// Removes the network files of model folder `dir`, after recording them in its
/// [`rundir::REMOVED_RECORD`] (a kill between the two leaves a folder that says what it
/// loses, and the next pass finishes the job); the bytes removed, `None` when there was
/// nothing to remove. A record there already (a pass a kill cut short, a file put back
/// since) gains what this pass removes, a file it lists counted once.
fn remove_network(dir: &std::path::Path, rule: &str) -> crate::Result<Option<u64>> {
    let mut files: Vec<&str> = network_files()
        .into_iter()
        .filter(|f| std::fs::symlink_metadata(dir.join(f)).is_ok())
        .collect();
    if files.is_empty() {
        return Ok(None);
    }
    let size = |f: &str| match std::fs::symlink_metadata(dir.join(f)) {
        Ok(m) if m.is_dir() => dir_bytes(&dir.join(f)),
        Ok(m) => m.len(),
        Err(_) => 0,
    };
    let bytes: u64 = files.iter().map(|f| size(f)).sum();
    let record_path = dir.join(rundir::REMOVED_RECORD);
    let record = match crate::report::read_record::<Removed>(&record_path) {
        Ok(Some(earlier)) => {
            let new: Vec<String> = files
                .iter()
                .filter(|f| !earlier.files.iter().any(|e| e == *f))
                .map(|f| f.to_string())
                .collect();
            Removed {
                bytes: earlier.bytes + new.iter().map(|f| size(f)).sum::<u64>(),
                files: earlier.files.into_iter().chain(new).collect(),
                rule: earlier.rule,
            }
        }
        _ => Removed {
            files: files.iter().map(|f| f.to_string()).collect(),
            bytes,
            rule: rule.to_string(),
        },
    };
    crate::report::write_record(&record_path, &record)?;
    // model.json first: without it the folder is no model to any loader, so no reader
    // sees a model whose weights are half gone.
    files.sort_by_key(|f| *f != "model.json");
    for f in &files {
        let path = dir.join(f);
        let gone = match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&path),
            _ => std::fs::remove_file(&path),
        };
        gone.with_context(|| format!("cannot remove {}", path.display()))?;
    }
    Ok(Some(bytes))
}

/// The bytes of the regular files under `dir`.
fn dir_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_bytes(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{EvalRecord, TrainSummary};

    fn generation(g: u32, promoted: Option<bool>, final_net: bool) -> Generation {
        Generation {
            generation: g,
            selfplay: None,
            train: Some(TrainSummary {
                generation: g,
                steps: 1,
                window_rows: 1,
                init: "random".into(),
                loss: 0.0,
                policy_loss: 0.0,
                value_loss: 0.0,
                score_loss: 0.0,
                seconds: 1.0,
                final_net,
            }),
            eval: promoted.map(|promoted| EvalRecord {
                generation: g,
                candidate: rundir::generation_name(g),
                incumbent: String::new(),
                gate: None,
                promoted,
                reason: String::new(),
                best: String::new(),
                anchor: vec![],
                finished: true,
                seconds: 0.0,
            }),
        }
    }

    /// The rule keeps what the run can still need and lets the rest go.
    #[test]
    fn the_rule_keeps_what_the_run_can_still_need() {
        // Ten judged generations, all promoted (gating off): the newest three go on.
        let all: Vec<Generation> = (0..10).map(|g| generation(g, Some(true), false)).collect();
        assert_eq!(removable(&all, Some(9), 3, 0), [0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(removable(&all, Some(9), 0, 0), Vec::<u32>::new());
        assert_eq!(removable(&all, Some(9), 3, 4), [1, 2, 3, 5, 6]);
        assert_eq!(removable(&all, Some(9), 20, 0), Vec::<u32>::new());
        // Gating: 2 and 5 promoted, the rest rejected; the best (5) and the best
        // before it (2) stay however old.
        let gated: Vec<Generation> = (0..10)
            .map(|g| generation(g, Some(g == 2 || g == 5), false))
            .collect();
        assert_eq!(removable(&gated, Some(5), 1, 0), [0, 1, 3, 4, 6, 7, 8]);
        // Candidates not judged yet (the asynchronous gatekeeper behind the trainer)
        // stay whatever their age.
        let mut behind = gated.clone();
        for g in &mut behind[3..] {
            g.eval = None;
        }
        assert_eq!(removable(&behind, Some(2), 1, 0), [0, 1]);
        // A final net is the newest; the network the next training starts from is the
        // newest other one, kept even with keep_models = 1.
        let mut ended = all.clone();
        ended.push(generation(10, Some(false), true));
        assert_eq!(removable(&ended, Some(9), 1, 0), (0..8).collect::<Vec<_>>());
        ended[10].eval.as_mut().unwrap().promoted = true;
        assert_eq!(
            removable(&ended, Some(10), 1, 0),
            (0..9).collect::<Vec<_>>()
        );
        // Generations without a network (self-play only) are not in the list.
        let mut partial = all.clone();
        partial[4].train = None;
        assert!(!removable(&partial, Some(9), 1, 0).contains(&4));
    }
}
