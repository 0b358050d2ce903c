//! Lines read on a thread of their own, bounded in length: the input of the UAI and
//! NBoard loops (so that a command loop never waits on a read and a read never waits on
//! a search), and the output of external engines (so that a player waits for a line with
//! a deadline, and an engine that writes without end cannot fill the memory).

use std::io::{BufRead, Read};
use std::sync::mpsc::{Receiver, channel};

/// One event of the input.
pub(crate) enum Input {
    /// A line, without its line ending.
    Line(String),
    /// A line that is not valid UTF-8 (shown lossily).
    NotUtf8(String),
    /// A line longer than [`MAX_LINE`] bytes (its length), skipped without being kept.
    TooLong(u64),
    /// Reading failed; nothing more will come.
    Failed(std::io::Error),
    /// End of input.
    Eof,
}

/// The longest input line kept (UAI lines are short; a FEN with a thousand moves is
/// about 5 KB): a longer one is skipped as it is read, never held in memory whole.
pub(crate) const MAX_LINE: u64 = 1 << 20;

/// Reads one line of at most [`MAX_LINE`] bytes into `buf` (its ending included); a
/// longer one is read to its end and dropped. `Ok(Err(length))`: a line too long;
/// `Ok(Ok(0))`: end of input.
fn read_line(input: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<Result<usize, u64>> {
    let n = input.by_ref().take(MAX_LINE + 1).read_until(b'\n', buf)?;
    if n as u64 <= MAX_LINE || buf.last() == Some(&b'\n') {
        return Ok(Ok(n));
    }
    // Skip to the end of the overlong line, a buffer at a time.
    let mut skipped = n as u64;
    loop {
        let chunk = input.fill_buf()?;
        if chunk.is_empty() {
            break;
        }
        let (used, end) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        input.consume(used);
        skipped += used as u64;
        if end {
            break;
        }
    }
    buf.clear();
    Ok(Err(skipped))
}

/// Starts the reader thread on `input`. The channel ends with `Eof` or `Failed`.
pub(crate) fn spawn_reader(mut input: impl BufRead + Send + 'static) -> Receiver<Input> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let event = match read_line(&mut input, &mut buf) {
                Ok(Err(bytes)) => Input::TooLong(bytes),
                Ok(Ok(0)) => Input::Eof,
                Ok(Ok(_)) => {
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
