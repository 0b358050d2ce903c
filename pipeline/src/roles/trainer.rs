//! `flipzero worker train`: the run's one trainer. Whenever `train.rows_per_candidate`
//! new positions have been published beyond those the previous candidate saw, it trains
//! the next candidate `models/gen-NNNN` from the previous one on the current window
//! (the shared training stage: written in `models/gen-NNNN.partial`, resumed from its
//! checkpoint after a crash, published with one rename).

use std::time::Duration;

use crate::error::Context;
use crate::report::{generation_name, read_record};
use serde::{Deserialize, Serialize};

use super::shards::{BatchIndex, window_batches};
use super::{RoleOptions, hold_lease, open_run, role};
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
                read_record::<CandidateRecord>(&path)?.map_or(0, |c| c.rows_seen)
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
        let window = p.cfg.train.window_for(total);
        let data = window_batches(&batches, window);
        let init = g
            .checked_sub(1)
            .map(|prev| (generation_name(prev), p.run.generation_model(prev)));
        let record = CandidateRecord {
            rows_seen: total,
            batches_seen: batches.len(),
            window_batches: data.len(),
        };
        let text = serde_json::to_string_pretty(&record).context("candidate record")?;
        p.train_model(g, data, init, total, &[(rundir::CANDIDATE_RECORD, text)])?;
    }
}
