//! An external engine's process, shared by the UAI and NBoard players: its input, its
//! output read line by line on a thread of its own, and its end (`quit`, a moment to exit
//! by itself, then killed) when dropped.

use std::io::{BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::PlayerError;
use crate::input::{Input, MAX_LINE, spawn_reader};

/// A running engine.
pub(crate) struct EngineProcess {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Input>,
}

impl EngineProcess {
    /// Starts `path` (no arguments; its errors are discarded).
    pub(crate) fn spawn(path: &Path) -> Result<EngineProcess, PlayerError> {
        let mut child = std::process::Command::new(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| PlayerError::Spawn {
                path: path.display().to_string(),
                source,
            })?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        Ok(EngineProcess {
            child,
            stdin,
            lines: spawn_reader(BufReader::new(stdout)),
        })
    }

    /// Writes `line` and a newline, flushed.
    pub(crate) fn send(&mut self, line: &str) -> Result<(), PlayerError> {
        writeln!(self.stdin, "{line}")?;
        self.stdin.flush()?;
        Ok(())
    }

    /// The next line, by `deadline`; a timeout names what was awaited (`waiting_for`)
    /// and the time allowed (`within`). A line that is not UTF-8 is taken lossily (what
    /// it says is then refused as a reply, showing it); one longer than
    /// [`MAX_LINE`](crate::input::MAX_LINE) bytes is an error.
    pub(crate) fn next_line(
        &self,
        deadline: Instant,
        within: Duration,
        waiting_for: &'static str,
    ) -> Result<String, PlayerError> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(left) {
            Ok(Input::Line(line) | Input::NotUtf8(line)) => Ok(line),
            Ok(Input::TooLong(bytes)) => Err(PlayerError::BadOutput(format!(
                "a line of {bytes} bytes (at most {MAX_LINE} are read) while waiting for `{waiting_for}`"
            ))),
            Ok(Input::Failed(e)) => Err(PlayerError::Io(e)),
            Ok(Input::Eof) | Err(RecvTimeoutError::Disconnected) => Err(PlayerError::Exited),
            Err(RecvTimeoutError::Timeout) => Err(PlayerError::Timeout(within, waiting_for)),
        }
    }
}

impl Drop for EngineProcess {
    fn drop(&mut self) {
        // `quit` is the same word in UAI and NBoard.
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        // Give it a moment to exit by itself, then make sure it is gone.
        for _ in 0..20 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
