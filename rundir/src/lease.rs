//! Leases: how the one trainer and the one gatekeeper of a run directory shared between
//! machines make sure that they are the only one of their role.
//!
//! A lease is a small file (`leases/ROLE`) naming its holder (host, PID) and the Unix
//! time it was last renewed. Its holder rewrites it (atomically) every few seconds; a
//! second process of the role finds a fresh lease and refuses to start, naming the
//! holder. A lease not renewed for the timeout (its process killed, its machine gone),
//! or one held by a process of this machine that is gone, is taken over. Reading and
//! writing the lease happen under a file lock (`leases/ROLE.lock`), so that two
//! processes starting at once cannot both take it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::temps::process_alive;

/// Why a lease could not be taken or kept.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    /// Another live process holds it.
    #[error(
        "{path}: the {role} role of this run is held by {holder} ({}); stop that process first, or wait {wait} s after it stops renewing its lease",
        if *ahead > 0 { format!("renewed {ahead} s in the future by this machine's clock: the holder's clock is ahead, or the file was edited") } else { format!("renewed {age} s ago") }
    )]
    Held {
        /// The role (`train`, `gate`).
        role: String,
        /// The lease file.
        path: PathBuf,
        /// Who holds it.
        holder: LeaseHolder,
        /// Seconds since it was renewed.
        age: u64,
        /// Seconds its renewal time lies ahead of this machine's clock (0: not ahead).
        ahead: u64,
        /// Seconds left before it may be taken over.
        wait: u64,
    },
    /// The lease was taken over by another process while this one held it (this one
    /// stopped renewing it for longer than the timeout).
    #[error("{path}: this process lost its lease to {holder}; stopping")]
    Lost {
        /// The lease file.
        path: PathBuf,
        /// Who holds it now.
        holder: String,
    },
    /// The lease or its lock file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// Who holds a lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseHolder {
    /// Host name (as `crate::host_name` gives it).
    pub host: String,
    /// Process id on that host.
    pub pid: u32,
    /// Unix time (seconds) of the last renewal.
    pub renewed: u64,
}

impl std::fmt::Display for LeaseHolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PID {} on host {}", self.pid, self.host)
    }
}

impl LeaseHolder {
    /// The lease file's text: `host=H pid=P renewed=T`.
    pub fn to_line(&self) -> String {
        format!(
            "host={} pid={} renewed={}\n",
            self.host, self.pid, self.renewed
        )
    }

    /// Parses a lease file's text; `None` when it is not one.
    pub fn parse(text: &str) -> Option<LeaseHolder> {
        let (mut host, mut pid, mut renewed) = (None, None, None);
        for field in text.split_whitespace() {
            match field.split_once('=')? {
                ("host", h) if !h.is_empty() => host = Some(h.to_string()),
                ("pid", p) => pid = p.parse().ok(),
                ("renewed", t) => renewed = t.parse().ok(),
                _ => return None,
            }
        }
        Some(LeaseHolder {
            host: host?,
            pid: pid?,
            renewed: renewed?,
        })
    }

    fn is_me(&self) -> bool {
        self.host == crate::host_name() && self.pid == std::process::id()
    }
}

/// How a lease was taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Taken {
    /// Nobody held it.
    Free,
    /// It was taken over from a holder whose renewal time lies more than the timeout
    /// ahead of this machine's clock (a corrupt file, or a clock far off): such a lease
    /// would otherwise block the role for as long as it lies ahead.
    Future {
        /// The previous holder.
        previous: LeaseHolder,
        /// Seconds ahead.
        ahead: u64,
    },
    /// It was taken over from a holder that stopped renewing it.
    Stale {
        /// The previous holder (`None`: the file was not a lease).
        previous: Option<LeaseHolder>,
        /// Seconds since its last renewal.
        age: u64,
    },
    /// It was taken over from a process of this machine that is gone.
    Dead {
        /// The previous holder.
        previous: LeaseHolder,
    },
}

struct Shared {
    path: PathBuf,
    lock: PathBuf,
    lost: AtomicBool,
    lost_to: Mutex<String>,
    stop: Mutex<bool>,
    wake: Condvar,
}

/// A held lease, renewed by a background thread until dropped (which removes the lease
/// file, if it is still this process's).
pub struct Lease {
    shared: Arc<Shared>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> LeaseError + '_ {
    move |source| LeaseError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Holds the role's lock file while `f` runs.
fn locked<T>(lock: &Path, f: impl FnOnce() -> Result<T, LeaseError>) -> Result<T, LeaseError> {
    let _held = crate::lock_file(lock).map_err(io(lock))?;
    f()
}

fn read_holder(path: &Path) -> Result<Option<Result<LeaseHolder, String>>, LeaseError> {
    match crate::read_regular_text(path, crate::Limit::SMALL) {
        Ok(t) => Ok(Some(LeaseHolder::parse(&t).ok_or(t))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(path)(e)),
    }
}

fn write_me(path: &Path) -> Result<(), LeaseError> {
    let me = LeaseHolder {
        host: crate::host_name().to_string(),
        pid: std::process::id(),
        renewed: now(),
    };
    crate::write_atomic(path, me.to_line().as_bytes()).map_err(io(path))
}

impl Lease {
    /// Takes the lease of `role` in run directory `run` (creating `leases/`), or refuses
    /// with its holder. `timeout`: how long a lease may go unrenewed before it is taken
    /// over. The lease is then renewed every `timeout / 4` (at least every second, at
    /// most every 30 s) until dropped.
    pub fn acquire(
        run: &Path,
        role: &str,
        timeout: Duration,
    ) -> Result<(Lease, Taken), LeaseError> {
        let dir = crate::RunDir::new(run).leases();
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        let path = dir.join(role);
        let lock = dir.join(format!("{role}.lock"));
        let taken = locked(&lock, || {
            let taken = match read_holder(&path)? {
                None => Taken::Free,
                Some(Err(_)) => Taken::Stale {
                    previous: None,
                    age: 0,
                },
                Some(Ok(h)) => {
                    let age = now().saturating_sub(h.renewed);
                    let ahead = h.renewed.saturating_sub(now());
                    if h.is_me() {
                        Taken::Free
                    } else if h.host == crate::host_name() && !process_alive(h.pid) {
                        Taken::Dead { previous: h }
                    } else if ahead > timeout.as_secs() {
                        Taken::Future { previous: h, ahead }
                    } else if age >= timeout.as_secs() {
                        Taken::Stale {
                            previous: Some(h),
                            age,
                        }
                    } else {
                        // A renewal up to the timeout ahead (clocks of two machines a
                        // little apart) counts from when it will have been made.
                        return Err(LeaseError::Held {
                            role: role.to_string(),
                            path: path.clone(),
                            wait: timeout.as_secs() - age + ahead,
                            holder: h,
                            age,
                            ahead,
                        });
                    }
                }
            };
            write_me(&path)?;
            Ok(taken)
        })?;
        let shared = Arc::new(Shared {
            path,
            lock,
            lost: AtomicBool::new(false),
            lost_to: Mutex::new(String::new()),
            stop: Mutex::new(false),
            wake: Condvar::new(),
        });
        let every = (timeout / 4).clamp(Duration::from_secs(1), Duration::from_secs(30));
        let s = shared.clone();
        let thread = std::thread::spawn(move || renew_loop(&s, every));
        Ok((
            Lease {
                shared,
                thread: Mutex::new(Some(thread)),
            },
            taken,
        ))
    }

    /// `Ok` while the lease is this process's; [`LeaseError::Lost`] once another process
    /// has taken it over (the holder should stop at once).
    pub fn check(&self) -> Result<(), LeaseError> {
        if self.shared.lost.load(Ordering::SeqCst) {
            return Err(LeaseError::Lost {
                path: self.shared.path.clone(),
                holder: self.shared.lost_to.lock().expect("lease").clone(),
            });
        }
        Ok(())
    }

    /// The lease file.
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// [`Lease::check`] against the lease file now (not the renewing thread's last
    /// look): a holder that was stopped (SIGSTOP, a stalled machine) past the timeout
    /// finds out on its next look that another process took the lease.
    pub fn verify(&self) -> Result<(), LeaseError> {
        self.check()?;
        let s = &self.shared;
        match read_holder(&s.path)? {
            Some(Ok(h)) if !h.is_me() => Err(LeaseError::Lost {
                path: s.path.clone(),
                holder: h.to_string(),
            }),
            _ => Ok(()),
        }
    }

    /// Stops renewing the lease and removes its file if it is still this process's
    /// (what dropping it does; for a process about to exit without unwinding).
    pub fn release(&self) {
        *self.shared.stop.lock().expect("lease") = true;
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.lock().expect("lease").take() {
            let _ = t.join();
        }
        let s = &self.shared;
        let _ = locked(&s.lock, || {
            if let Ok(Some(Ok(h))) = read_holder(&s.path)
                && h.is_me()
            {
                let _ = std::fs::remove_file(&s.path);
            }
            Ok(())
        });
    }
}

/// Renews the lease every `every` until told to stop or until it is lost.
fn renew_loop(s: &Shared, every: Duration) {
    let mut stop = s.stop.lock().expect("lease");
    loop {
        if *stop {
            return;
        }
        stop = s.wake.wait_timeout(stop, every).expect("lease").0;
        if *stop {
            return;
        }
        let renewed = locked(&s.lock, || match read_holder(&s.path)? {
            Some(Ok(h)) if !h.is_me() => Ok(Some(h.to_string())),
            Some(Err(text)) => Ok(Some(format!("an unreadable lease ({})", text.trim()))),
            // Ours, or removed by hand: written again.
            _ => write_me(&s.path).map(|()| None),
        });
        match renewed {
            Ok(None) => {}
            Ok(Some(other)) => {
                *s.lost_to.lock().expect("lease") = other;
                s.lost.store(true, Ordering::SeqCst);
                return;
            }
            // A failed renewal (a full disk, a network glitch) is retried next time; the
            // timeout leaves several chances.
            Err(e) => eprintln!("warning: cannot renew the lease: {e}"),
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("flipzero-lease-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn holder_lines_round_trip_and_garbage_is_none() {
        let h = LeaseHolder {
            host: "node-7".into(),
            pid: 4242,
            renewed: 1_700_000_000,
        };
        assert_eq!(LeaseHolder::parse(&h.to_line()), Some(h));
        for bad in [
            "",
            "host=a pid=1",
            "host=a pid=x renewed=3",
            "junk",
            "host= pid=1 renewed=2",
        ] {
            assert_eq!(LeaseHolder::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_fresh_foreign_lease_is_refused_and_a_stale_one_taken_over() {
        let run = temp("stale");
        std::fs::create_dir_all(run.join("leases")).unwrap();
        let other = LeaseHolder {
            host: "another-host".into(),
            pid: 1,
            renewed: now() - 10,
        };
        std::fs::write(run.join("leases/train"), other.to_line()).unwrap();
        let e = Lease::acquire(&run, "train", Duration::from_secs(60))
            .err()
            .unwrap();
        let msg = e.to_string();
        assert!(matches!(e, LeaseError::Held { age: 10..=11, .. }), "{msg}");
        assert!(msg.contains("PID 1 on host another-host"), "{msg}");
        // A lease renewed "in the future" says so, and waits for as long as it lies
        // ahead plus the timeout; one further ahead than the timeout is taken over.
        let ahead = LeaseHolder {
            renewed: now() + 30,
            ..other.clone()
        };
        std::fs::write(run.join("leases/train"), ahead.to_line()).unwrap();
        let e = Lease::acquire(&run, "train", Duration::from_secs(60))
            .err()
            .unwrap();
        let msg = e.to_string();
        assert!(
            matches!(
                e,
                LeaseError::Held {
                    ahead: 29..=30,
                    wait: 89..=90,
                    ..
                }
            ),
            "{msg}"
        );
        assert!(msg.contains("s in the future"), "{msg}");
        let (lease, taken) = Lease::acquire(&run, "train", Duration::from_secs(10)).unwrap();
        assert!(
            matches!(&taken, Taken::Future { ahead: 29..=30, .. }),
            "{taken:?}"
        );
        drop(lease);
        std::fs::write(run.join("leases/train"), other.to_line()).unwrap();
        // Nine seconds later the same lease is older than a timeout of 10 s.
        let (lease, taken) = Lease::acquire(&run, "train", Duration::from_secs(10)).unwrap();
        assert!(
            matches!(&taken, Taken::Stale { previous: Some(p), age: 10..=11 } if *p == other),
            "{taken:?}"
        );
        let mine = LeaseHolder::parse(&std::fs::read_to_string(lease.path()).unwrap()).unwrap();
        assert_eq!(mine.pid, std::process::id());
        lease.check().unwrap();
        drop(lease);
        assert!(!run.join("leases/train").exists());
        let _ = std::fs::remove_dir_all(&run);
    }
}
