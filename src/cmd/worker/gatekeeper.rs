//! `flipzero worker gate`: the run's one gatekeeper. It takes the candidates in order
//! as the trainer publishes them (`models/gen-NNNN` with its `train.json`: a folder
//! still being written is hidden under `.partial`), gates each against the best, promotes
//! it when it passes, anchors the new best and rewrites the report: the shared
//! evaluation stage, whose verdict (`eval/gen-NNNN.json`) is recorded before it is acted
//! on, so that a restarted gatekeeper neither gates a candidate twice nor skips a
//! promotion.

use std::time::Duration;

use eval::report::{EvalRecord, generation_name, read_record};

use super::{RoleArgs, hold_lease, open_run};

/// Runs the gatekeeper until the run's last candidate is evaluated.
pub(super) fn run(a: &RoleArgs) -> anyhow::Result<()> {
    let open = open_run(a, "gatekeeper")?;
    let p = &open.pipeline;
    p.check_ladder()?;
    let lease = hold_lease(p, "gate")?;
    for sub in ["", "models", "eval"] {
        for f in eval::rundir::remove_stale_temps(&p.dir.join(sub)) {
            eprintln!("removed {}, left by a killed write", f.display());
        }
    }
    p.log(&format!(
        "gatekeeper: {} generations of {} (best so far: {})",
        p.cfg.run.generations,
        p.game,
        p.best()?
    ));
    let mut waiting_logged = None;
    loop {
        lease.check()?;
        let finished = |k: u32| -> anyhow::Result<bool> {
            let path = p
                .dir
                .join("eval")
                .join(format!("{}.json", generation_name(k)));
            Ok(read_record::<EvalRecord>(&path)?.is_some_and(|r| r.finished))
        };
        let mut g = 0;
        while g < p.cfg.run.generations && finished(g)? {
            g += 1;
        }
        if g >= p.cfg.run.generations {
            let table = eval::report::write_report(&p.dir, None)?;
            if !p.quiet {
                eprintln!("{table}");
            }
            p.log(&format!(
                "gatekeeper: all {} candidates are evaluated (best: {}), stopping",
                p.cfg.run.generations,
                p.best()?
            ));
            return Ok(());
        }
        let name = generation_name(g);
        if !p
            .dir
            .join("models")
            .join(&name)
            .join("train.json")
            .is_file()
        {
            if waiting_logged != Some(g) {
                p.log(&format!("{name}: waiting for the trainer"));
                waiting_logged = Some(g);
            }
            std::thread::sleep(Duration::from_millis(500));
            continue;
        }
        p.evaluate(g)?;
        let table = eval::report::write_report(&p.dir, None)?;
        if !p.quiet {
            eprintln!("{table}");
        }
    }
}
