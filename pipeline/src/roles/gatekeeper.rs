//! `flipzero worker gate`: the run's one gatekeeper. It takes the candidates in order
//! as the trainer publishes them (`models/gen-NNNN` with its `train.json`: a folder
//! still being written is hidden under `.partial`), gates each against the best, promotes
//! it when it passes, anchors the new best and rewrites the report: the shared
//! evaluation stage, whose verdict (`eval/gen-NNNN.json`) is recorded before it is acted
//! on, so that a restarted gatekeeper neither gates a candidate twice nor skips a
//! promotion.

use std::time::Duration;

use crate::report::{EvalRecord, generation_name};

use super::common::{RoleOptions, hold_lease, open_run, role};
use crate::observer::Observer;

/// Runs the gatekeeper until the run's last candidate is evaluated (or its stop flag is
/// set: then the process ends, giving the lease back).
pub fn gatekeeper(a: &RoleOptions, observer: &dyn Observer) -> crate::Result<()> {
    role(a, "gatekeeper", || run(a, observer))
}

fn run(a: &RoleOptions, observer: &dyn Observer) -> crate::Result<()> {
    let open = open_run(a, "gatekeeper", observer)?;
    let p = &open.pipeline;
    p.check_ladder()?;
    let lease = hold_lease(p, "gate", &a.stop)?;
    for sub in [p.dir().to_path_buf(), p.run.models(), p.run.eval()] {
        for f in rundir::remove_stale_temps(&sub) {
            p.log(&format!("removed {}, left by a killed write", f.display()));
        }
    }
    p.log(&format!(
        "gatekeeper: {} generations of {} (best so far: {})",
        p.cfg.run.generations,
        p.game,
        p.best()?
    ));
    p.apply_retention()?;
    let mut waiting_logged = None;
    loop {
        lease.check()?;
        let finished = |k: u32| -> crate::Result<bool> {
            Ok(p.record_or_redo::<EvalRecord>(&p.run.eval_record(k))?
                .is_some_and(|r| r.finished))
        };
        let mut g = 0;
        while g < p.cfg.run.generations && finished(g)? {
            g += 1;
        }
        if g >= p.cfg.run.generations {
            let table = crate::report::write_report(p.dir(), None)?;
            p.observer.line(&table);
            p.log(&format!(
                "gatekeeper: all {} candidates are evaluated (best: {}), stopping",
                p.cfg.run.generations,
                p.best()?
            ));
            return Ok(());
        }
        let name = generation_name(g);
        if !p.run.train_record(g).is_file() {
            if waiting_logged != Some(g) {
                p.log(&format!("{name}: waiting for the trainer"));
                waiting_logged = Some(g);
            }
            std::thread::sleep(Duration::from_millis(500));
            continue;
        }
        p.evaluate(g)?;
        let table = crate::report::write_report(p.dir(), None)?;
        p.observer.line(&table);
    }
}
