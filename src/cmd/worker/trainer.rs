//! `flipzero worker train`: the run's one trainer. Whenever `train.rows_per_candidate`
//! new positions have been published beyond those the previous candidate saw, it trains
//! the next candidate `models/gen-NNNN` from the previous one on the current window
//! (the shared training stage: written in `models/gen-NNNN.partial`, resumed from its
//! checkpoint after a crash, published with one rename).

use std::time::Duration;

use anyhow::Context;
use eval::report::{generation_name, read_record};
use serde::{Deserialize, Serialize};

use super::shards::{BatchIndex, window_batches};
use super::{RoleArgs, hold_lease, open_run};

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

/// Runs the trainer until the run's last candidate is trained.
pub(super) fn run(a: &RoleArgs) -> anyhow::Result<()> {
    let open = open_run(a, "trainer")?;
    let p = &open.pipeline;
    let lease = hold_lease(p, "train")?;
    for f in eval::rundir::remove_stale_temps(&p.dir.join("models")) {
        eprintln!("removed {}, left by a killed write", f.display());
    }
    let models = p.dir.join("models");
    let mut waiting_logged = None;
    let mut index = BatchIndex::default();
    loop {
        lease.check()?;
        let g = (0..)
            .find(|&k| !models.join(generation_name(k)).join("train.json").is_file())
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
                let path = models.join(generation_name(prev)).join("candidate.json");
                // A network trained by the synchronous loop has no record: it saw
                // whatever the run held then, which the batches cannot tell; count none.
                read_record::<CandidateRecord>(&path)?.map_or(0, |c| c.rows_seen)
            }
        };
        let batches = index.refresh(&p.dir)?;
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
        let init = g.checked_sub(1).map(|prev| {
            let n = generation_name(prev);
            let d = models.join(&n);
            (n, d)
        });
        let record = CandidateRecord {
            rows_seen: total,
            batches_seen: batches.len(),
            window_batches: data.len(),
        };
        let text = serde_json::to_string_pretty(&record).context("candidate record")?;
        p.train_model(g, data, init, total, &[("candidate.json", text)])?;
    }
}
