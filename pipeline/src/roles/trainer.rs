//! `flipzero worker train`: the run's one trainer. Whenever `train.rows_per_candidate`
//! new positions have been published beyond those the previous candidate saw, it trains
//! the next candidate `models/gen-NNNN` from the previous one on the current window
//! (the shared training stage: written in `models/gen-NNNN.partial`, resumed from its
//! checkpoint after a crash, published with one rename).

use std::time::Duration;

use crate::error::Context;
use crate::report::{generation_name, read_record};
use serde::{Deserialize, Serialize};

use super::common::{RoleOptions, hold_lease, open_run, role};
use super::shards::{BatchIndex, window_batches};
use crate::observer::Observer;

/// What a candidate of the asynchronous trainer saw (`candidate.json` in its folder).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CandidateRecord {
    /// Positions published in the whole run when its training started.
    pub rows_seen: u64,
    /// Batches published then.
    pub batches_seen: usize,
    /// Batch folders its window read.
    pub window_batches: usize,
    /// Their names, oldest first: a candidate resumed after a crash trains on these,
    /// whatever was published since (empty in records of older versions).
    #[serde(default)]
    pub batches: Vec<String>,
}

/// The record of candidate `g` being trained when the trainer was stopped: its window's
/// batches, to resume its checkpoint on. `None` when there is none, or when its record
/// is unreadable or a batch of its window is gone (then the partial candidate is removed
/// with a warning and trained anew on the current window).
fn resumable(
    p: &crate::stages::Pipeline,
    g: u32,
    published: &[super::Batch],
) -> Option<CandidateRecord> {
    let partial = p.run.model_partial(g);
    if !partial.is_dir() {
        return None;
    }
    let record = read_record::<CandidateRecord>(&partial.join(rundir::CANDIDATE_RECORD));
    let usable = match &record {
        Ok(Some(r)) if !r.batches.is_empty() => r
            .batches
            .iter()
            .find(|b| !published.iter().any(|x| x.dir == p.run.batch(b)))
            .map(|gone| format!("its window's batch {gone} is not published (any more)")),
        Ok(_) => Some("it records no window".into()),
        Err(e) => Some(e.to_string()),
    };
    match usable {
        None => record.ok().flatten(),
        Some(why) => {
            p.warn(&format!(
                "{}: the partial candidate cannot be resumed ({why}); training it anew",
                partial.display()
            ));
            let _ = rundir::remove_dir_if_exists(&partial);
            None
        }
    }
}

/// Runs the trainer until the run's last candidate is trained (or its stop flag is set:
/// then the process ends, giving the lease back; training resumes from its checkpoint).
pub fn trainer(a: &RoleOptions, observer: &dyn Observer) -> crate::Result<()> {
    role(a, "trainer", || run(a, observer))
}

fn run(a: &RoleOptions, observer: &dyn Observer) -> crate::Result<()> {
    let open = open_run(a, "trainer", observer)?;
    let p = &open.pipeline;
    let lease = hold_lease(p, "train", &a.stop)?;
    let (hidden, epochs) = (p.cfg.run.final_net_hidden, p.cfg.run.final_net_epochs);
    if hidden > 0 {
        // The final net is trained when the synchronous loop ends; the roles have no
        // end of the run to hang it on (self-play workers may still be publishing).
        p.warn(&format!(
            "run.final_net_hidden = {hidden}: the roles (`flipzero worker`, `flipzero run --async`, Slurm) do not train the run's final net; train it when the run is done: flipzero train --net fast --game {} --data {}/selfplay --out OUT --set hidden={hidden} --set epochs={epochs}",
            p.cfg.selfplay.game,
            p.run.path().display(),
        ));
    }
    for f in rundir::remove_stale_temps(&p.run.models()) {
        p.log(&format!("removed {}, left by a killed write", f.display()));
    }
    let mut waiting_logged = None;
    let mut index = BatchIndex::default();
    loop {
        lease.check()?;
        let g = (0..)
            .find(|&k| !p.run.train_record(k).is_file())
            .expect("a generation without a network");
        if g >= p.cfg.run.generations {
            p.log(&format!(
                "trainer: all {} candidates are trained, stopping",
                p.cfg.run.generations
            ));
            return Ok(());
        }
        let seen = match g.checked_sub(1) {
            None => 0,
            Some(prev) => {
                let path = p.run.candidate_record(prev);
                // A network trained by the synchronous loop has no record: it saw
                // whatever the run held then, which the batches cannot tell; count none.
                match read_record::<CandidateRecord>(&path) {
                    Ok(c) => c.map_or(0, |c| c.rows_seen),
                    Err(e) => {
                        p.warn(&format!("{e}; counting the positions from the start"));
                        0
                    }
                }
            }
        };
        let batches = index.refresh(&p.run)?;
        for w in index.take_warnings() {
            p.warn(&w);
        }
        let total = batches
            .iter()
            .fold(0u64, |t, b| t.saturating_add(b.summary.positions));
        let need = p.cfg.train_role.rows_per_candidate;
        if total.saturating_sub(seen) < need {
            if waiting_logged != Some(g) {
                p.log(&format!(
                    "{}: waiting for {need} new positions (have {} of the run's {total})",
                    generation_name(g),
                    total.saturating_sub(seen)
                ));
                waiting_logged = Some(g);
            }
            std::thread::sleep(Duration::from_millis(500));
            continue;
        }
        let init = p.init_for(g);
        let record = match resumable(p, g, &batches) {
            Some(r) => r,
            None => {
                let window = p.cfg.train.window_for(total);
                let data = window_batches(&batches, window);
                let record = CandidateRecord {
                    rows_seen: total,
                    batches_seen: batches.len(),
                    window_batches: data.len(),
                    batches: data
                        .iter()
                        .filter_map(|d| d.file_name())
                        .map(|n| n.to_string_lossy().to_string())
                        .collect(),
                };
                // Recorded before training, so that a restart trains on the same window.
                let partial = p.run.model_partial(g);
                std::fs::create_dir_all(&partial)
                    .with_context(|| format!("cannot create {}", partial.display()))?;
                crate::report::write_record(&partial.join(rundir::CANDIDATE_RECORD), &record)?;
                record
            }
        };
        let data = record.batches.iter().map(|b| p.run.batch(b)).collect();
        let text = serde_json::to_string_pretty(&record).context("candidate record")?;
        let seen = record.rows_seen;
        p.train_model(g, data, init, seen, &[(rundir::CANDIDATE_RECORD, text)])?;
    }
}
