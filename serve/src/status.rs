//! What a run is doing now, read from the files it keeps: who holds `run.lock` (and
//! whether that process is alive), the last stage line of `run.log`, the records of the
//! finished generations and the config's budget. Every time is a Unix time, so that the
//! answer stays the same while nothing happens (the page works out "3 min ago" and the
//! time left), and an idle page's polls are answered "not modified".

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use pipeline::report::Generation;
use rundir::RunDir;
use serde::Serialize;

/// How much of the end of `run.log` is read for its last lines.
const LOG_TAIL: u64 = 16 * 1024;
/// A run held on another machine whose log has been silent this long is called stalled.
const SILENT_STALLED_S: u64 = 30 * 60;
/// Generations whose mean time estimates the time left.
const RECENT: usize = 5;

/// A run's state and progress.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunStatus {
    /// `running`, `stalled` (held by a process that is gone, or silent for 30 minutes),
    /// `finished` (its generations or its time budget are used up), `stopped` (not held,
    /// not finished: `flipzero run` resumes it) or `new` (nothing written yet).
    pub state: &'static str,
    /// Why the state is what it is, in words.
    pub why: String,
    /// Who holds the run (the text `run.lock` holds: command, PID, host), if anyone.
    pub holder: Option<String>,
    /// The separate roles registered on the run (`HOST-PID`).
    pub roles: Vec<String>,
    /// The generation of the last stage line, and its stage (`self-play`, `training`,
    /// `gating`, `anchoring`).
    pub generation: Option<u32>,
    /// See `generation`.
    pub stage: Option<String>,
    /// The last line of `run.log`, and its Unix time.
    pub last_line: Option<String>,
    /// See `last_line`.
    pub last_line_unix: Option<u64>,
    /// Generations whose evaluation is finished, and how many the config asks for.
    pub generations_done: usize,
    /// See `generations_done`.
    pub generations_planned: Option<u64>,
    /// The config's time budget in minutes (0: none).
    pub time_budget_minutes: Option<f64>,
    /// Seconds the finished generations took, and the mean of the last five.
    pub elapsed_s: f64,
    /// See `elapsed_s`.
    pub recent_generation_s: Option<f64>,
    /// Positions of self-play, and the last generation's self-play rate.
    pub positions: u64,
    /// See `positions`.
    pub positions_per_s: Option<f64>,
    /// When the run is expected to end (Unix time), while it runs.
    pub eta_unix: Option<u64>,
}

/// The status of the run in `dir`, whose readable records are `gens`.
pub fn status(dir: &Path, gens: &[Generation]) -> RunStatus {
    let run = RunDir::new(dir);
    let holder = rundir::read_own_text(&run.lock_file(), rundir::Limit::SMALL)
        .ok()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty());
    let roles: Vec<String> = std::fs::read_dir(run.roles())
        .map(|d| {
            let mut v: Vec<String> = d
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect();
            v.sort();
            v
        })
        .unwrap_or_default();
    let lines = last_log_lines(&run.log_file());
    let last = lines.last().cloned();
    // The stage of the last stage line (a warning after it tells none).
    let (generation, stage) = lines
        .iter()
        .rev()
        .map(|(_, text)| stage_of(text))
        .find(|(g, _)| g.is_some())
        .unwrap_or((None, None));
    let config = rundir::read_own_text(&run.config(), rundir::Limit::CONFIG)
        .ok()
        .and_then(|t| t.parse::<toml::Table>().ok());
    let run_table = config.as_ref().and_then(|c| c.get("run"));
    let generations_planned = run_table
        .and_then(|r| r.get("generations"))
        .and_then(toml::Value::as_integer)
        .and_then(|n| u64::try_from(n).ok());
    let time_budget_minutes = run_table
        .and_then(|r| r.get("time_budget_minutes"))
        .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)));
    let done = gens
        .iter()
        .filter(|g| g.eval.as_ref().is_some_and(|e| e.finished))
        .count();
    let secs: Vec<f64> = gens.iter().map(pipeline::report::seconds).collect();
    let elapsed_s: f64 = secs.iter().sum();
    let recent: Vec<f64> = secs
        .iter()
        .rev()
        .take(RECENT)
        .copied()
        .filter(|s| *s > 0.0)
        .collect();
    let recent_generation_s =
        (!recent.is_empty()).then(|| recent.iter().sum::<f64>() / recent.len() as f64);
    let positions = gens
        .iter()
        .filter_map(|g| g.selfplay.as_ref())
        .map(|s| s.positions)
        .sum();
    let positions_per_s = gens
        .iter()
        .rev()
        .find_map(|g| g.selfplay.as_ref())
        .filter(|s| s.seconds > 0.0)
        .map(|s| s.positions as f64 / s.seconds);

    let budget_used = time_budget_minutes.is_some_and(|b| b > 0.0 && elapsed_s >= b * 60.0)
        || last
            .as_ref()
            .is_some_and(|(_, t)| t.starts_with("time budget of"));
    let all_done = generations_planned.is_some_and(|n| done as u64 >= n);
    // A run that ended with its final net (`run.final_net_hidden`): the newest
    // generation is that net, evaluated; the budget's reserve ends it inside the budget.
    let final_done = gens.last().is_some_and(|g| {
        g.train.as_ref().is_some_and(|t| t.final_net) && g.eval.as_ref().is_some_and(|e| e.finished)
    });
    let live = holder.as_deref().map(holder_alive);
    let last_unix = last.as_ref().map(|(t, _)| *t);
    let (state, why) = match live {
        Some(Liveness::Alive) => ("running", "its process is alive".to_string()),
        Some(Liveness::Elsewhere) => match last_unix.map(|t| now_unix().saturating_sub(t)) {
            Some(s) if s <= SILENT_STALLED_S => {
                ("running", "held on another machine, its log recent".into())
            }
            _ => (
                "stalled",
                "held on another machine, and its log has been silent for 30 minutes (or is missing)"
                    .into(),
            ),
        },
        Some(Liveness::Unreadable) => (
            "stalled",
            "its lock names no process this server can check".into(),
        ),
        Some(Liveness::Gone) if !(budget_used || all_done || final_done) => (
            "stalled",
            "its lock names a process that no longer runs on this machine".into(),
        ),
        _ if budget_used => ("finished", "its time budget is used".into()),
        _ if all_done => ("finished", "every generation is done".into()),
        _ if final_done => ("finished", "its final net is trained and evaluated".into()),
        _ if last.is_none() && gens.is_empty() => ("new", "nothing written yet".into()),
        _ => (
            "stopped",
            "no process holds it; `flipzero run` resumes it".into(),
        ),
    };
    let eta_unix = (state == "running")
        .then(|| {
            eta(
                last_unix,
                elapsed_s,
                time_budget_minutes,
                generations_planned,
                done,
                recent_generation_s,
            )
        })
        .flatten();
    RunStatus {
        state,
        why,
        holder: holder
            .filter(|_| live.is_some_and(|l| matches!(l, Liveness::Alive | Liveness::Elsewhere))),
        roles,
        generation,
        stage,
        last_line: last.as_ref().map(|(_, t)| t.clone()),
        last_line_unix: last_unix,
        generations_done: done,
        generations_planned,
        time_budget_minutes,
        elapsed_s,
        recent_generation_s,
        positions,
        positions_per_s,
        eta_unix,
    }
}

/// When a running run should end: where the time budget runs out, or after the
/// generations left at the recent pace, whichever is first; counted from its last line.
fn eta(
    last_unix: Option<u64>,
    elapsed_s: f64,
    budget_minutes: Option<f64>,
    planned: Option<u64>,
    done: usize,
    recent_s: Option<f64>,
) -> Option<u64> {
    let from = last_unix?;
    let by_budget = budget_minutes
        .filter(|b| *b > 0.0)
        .map(|b| (b * 60.0 - elapsed_s).max(0.0));
    let by_count = planned
        .zip(recent_s)
        .map(|(n, s)| n.saturating_sub(done as u64) as f64 * s);
    let left = match (by_budget, by_count) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => a.or(b)?,
    };
    Some(from.saturating_add(left as u64))
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Liveness {
    Alive,
    Gone,
    Elsewhere,
    /// The text names no host and PID (not what flipzero writes).
    Unreadable,
}

/// Whether the holder `run.lock` names is alive: its PID on this machine, or a process
/// on another host (which this server cannot see).
fn holder_alive(text: &str) -> Liveness {
    match rundir::parse_holder(text) {
        Some((_, host)) if host != rundir::host_name() => Liveness::Elsewhere,
        Some((pid, _)) if rundir::process_alive(pid) => Liveness::Alive,
        Some(_) => Liveness::Gone,
        None => Liveness::Unreadable,
    }
}

fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The whole lines at the end of `run.log` (`UNIX [  12s] text`, the last 16 KiB), in
/// order: each one's time and text.
fn last_log_lines(path: &Path) -> Vec<(u64, String)> {
    let Ok(mut f) = rundir::open_own(path) else {
        return vec![];
    };
    let len = f.metadata().map_or(0, |m| m.len());
    let mut buf = Vec::new();
    if f.seek(SeekFrom::Start(len.saturating_sub(LOG_TAIL)))
        .is_err()
        || f.take(LOG_TAIL).read_to_end(&mut buf).is_err()
    {
        return vec![];
    }
    let text = String::from_utf8_lossy(&buf);
    let mut lines: Vec<&str> = text.lines().collect();
    if len > LOG_TAIL && !lines.is_empty() {
        // The first line read may be the end of a longer one.
        lines.remove(0);
    }
    lines
        .into_iter()
        .filter_map(|line| {
            let (unix, rest) = line.split_once(' ')?;
            let unix = unix.parse().ok()?;
            let rest = rest.trim_start();
            let text = match rest.strip_prefix('[').and_then(|r| r.split_once(']')) {
                Some((_, t)) => t.trim(),
                None => rest,
            };
            Some((unix, text.to_string()))
        })
        .collect()
}

/// The generation and the stage a stage line tells (the stage under way after it).
fn stage_of(line: &str) -> (Option<u32>, Option<String>) {
    let Some((name, rest)) = line.split_once(':') else {
        return (None, None);
    };
    let Some(g) = rundir::parse_generation(name.split_whitespace().next().unwrap_or("")) else {
        return (None, None);
    };
    let rest = rest.trim();
    let stage = if rest.starts_with("self-play") {
        "self-play"
    } else if rest.starts_with("training")
        || rest.starts_with("the run's final net")
        || rest.contains("positions/s")
    {
        "training"
    } else if rest.starts_with("trained on") || rest.starts_with("gating") {
        "gating"
    } else {
        // The gate's verdict, a promotion and each anchoring match: anchoring (or the
        // next generation, which its own line announces).
        "anchoring"
    };
    (Some(g), Some(stage.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_lines_tell_generation_and_stage() {
        for (line, g, stage) in [
            (
                "gen-0003: self-play, 512 games with gen-0002 (800 simulations)",
                Some(3),
                Some("self-play"),
            ),
            (
                "gen-0003: 512 games, 45000 positions, 900 positions/s",
                Some(3),
                Some("training"),
            ),
            (
                "gen-0003: training a fast net, 2 epochs",
                Some(3),
                Some("training"),
            ),
            (
                "gen-0046: the run's final net: a fresh fast net of 512 hidden, 2 epochs over all 753395 positions in batches of 1024",
                Some(46),
                Some("training"),
            ),
            (
                "gen-0003: trained on 500000 positions, loss 2.1",
                Some(3),
                Some("gating"),
            ),
            (
                "gen-0003: gating against gen-0002 (sprt mode, up to 100 pairs)",
                Some(3),
                Some("gating"),
            ),
            ("gen-0003: promoted to best", Some(3), Some("anchoring")),
            (
                "gen-0003 vs ab4: 20 games, score 0.5",
                Some(3),
                Some("anchoring"),
            ),
            (
                "run /x: 500 generations of ataxx (best so far: bootstrap)",
                None,
                None,
            ),
            ("time budget of 120 minutes used: stopping", None, None),
        ] {
            let (gg, s) = stage_of(line);
            assert_eq!((gg, s.as_deref()), (g, stage), "{line}");
        }
    }

    #[test]
    fn a_dead_holder_is_gone_and_a_live_one_alive() {
        let host = rundir::host_name();
        let me = format!(
            "flipzero run, PID {} on host {host}, since 1",
            std::process::id()
        );
        assert_eq!(holder_alive(&me), Liveness::Alive);
        let dead = format!("flipzero run, PID {} on host {host}, since 1", u32::MAX - 1);
        assert_eq!(holder_alive(&dead), Liveness::Gone);
        assert_eq!(
            holder_alive("flipzero run, PID 1 on host not-this-machine-x, since 1"),
            Liveness::Elsewhere
        );
        for junk in [
            "hello world",
            "flipzero run, PID 99999999999999999999 on host x, since 1",
            "flipzero run, PID -5 on host x",
            "PID PID 999999 host host",
        ] {
            assert_eq!(holder_alive(junk), Liveness::Unreadable, "{junk}");
        }
    }

    #[test]
    fn the_eta_is_the_budget_or_the_generations_left_whichever_first() {
        // 120 minutes, 100 minutes used: 20 minutes after the last line.
        assert_eq!(
            eta(Some(1000), 6000.0, Some(120.0), Some(500), 50, Some(120.0)),
            Some(2200)
        );
        // 3 generations left at 100 s each come first.
        assert_eq!(
            eta(Some(1000), 60.0, Some(120.0), Some(10), 7, Some(100.0)),
            Some(1300)
        );
        assert_eq!(eta(Some(1000), 60.0, None, None, 7, Some(100.0)), None);
        assert_eq!(
            eta(Some(u64::MAX - 5), 0.0, None, Some(u64::MAX), 0, Some(1e6)),
            Some(u64::MAX)
        );
    }
}
