//! The engine's output, shared by the command loop and the search threads: each reply
//! is one line, written whole and flushed under a lock, so that lines never interleave.
//! The first failed write is kept (nothing more is written) and ends the command loop.

use std::fmt::Display;
use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use engine::uai::{Info, Reply};

/// The most characters of an `info string` line.
const MAX_INFO: usize = 400;

/// Where replies go; clones write to the same place.
#[derive(Clone)]
pub(super) struct Output(Arc<Mutex<Sink>>);

struct Sink {
    out: Box<dyn Write + Send>,
    /// Whether a write failed (nothing more is written).
    failed: bool,
    /// That write's error, until taken.
    error: Option<std::io::Error>,
}

impl Output {
    pub(super) fn new(out: impl Write + Send + 'static) -> Output {
        Output(Arc::new(Mutex::new(Sink {
            out: Box::new(out),
            failed: false,
            error: None,
        })))
    }

    /// Writes `reply` as a line.
    pub(super) fn say(&self, reply: &Reply) {
        let line = format!("{reply}\n");
        let mut sink = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if sink.failed {
            return;
        }
        let written = sink
            .out
            .write_all(line.as_bytes())
            .and_then(|()| sink.out.flush());
        if let Err(e) = written {
            sink.failed = true;
            sink.error = Some(e);
        }
    }

    /// `info string <text>`, at most [`MAX_INFO`] characters (the rest counted): an
    /// error that quotes a huge input (a 900 KB option value, a FEN with a million
    /// moves) does not send it back.
    pub(super) fn info(&self, text: impl Into<String>) {
        let text: String = text.into();
        let n = text.chars().count();
        let text = if n > MAX_INFO {
            let head: String = text.chars().take(MAX_INFO).collect();
            format!("{head}… ({} more characters)", n - MAX_INFO)
        } else {
            text
        };
        self.say(&Reply::Info(Info::string(text)));
    }

    /// `info string error: <msg>`.
    pub(super) fn error(&self, msg: impl Display) {
        self.info(format!("error: {msg}"));
    }

    /// The error of the first write that failed (given once).
    pub(super) fn take_failure(&self) -> Option<std::io::Error> {
        let mut sink = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        sink.error.take()
    }
}
