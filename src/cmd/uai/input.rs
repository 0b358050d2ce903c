//! Standard input on its own thread, so that the command loop never waits on a read and
//! a read never waits on a search.

use std::io::BufRead;
use std::sync::mpsc::{Receiver, channel};

/// One event of standard input.
pub(super) enum Input {
    /// A line, without its line ending.
    Line(String),
    /// A line that is not valid UTF-8 (shown lossily).
    NotUtf8(String),
    /// Reading failed; nothing more will come.
    Failed(std::io::Error),
    /// End of input.
    Eof,
}

/// Starts the reader thread. The channel ends with `Eof` or `Failed`.
pub(super) fn spawn_reader() -> Receiver<Input> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let event = match stdin.read_until(b'\n', &mut buf) {
                Ok(0) => Input::Eof,
                Ok(_) => {
                    while buf.last().is_some_and(|&b| b == b'\n' || b == b'\r') {
                        buf.pop();
                    }
                    match String::from_utf8(std::mem::take(&mut buf)) {
                        Ok(line) => Input::Line(line),
                        Err(e) => Input::NotUtf8(String::from_utf8_lossy(e.as_bytes()).into()),
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => Input::Failed(e),
            };
            let last = matches!(event, Input::Eof | Input::Failed(_));
            if tx.send(event).is_err() || last {
                return;
            }
        }
    });
    rx
}
