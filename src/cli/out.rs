//! Standard output and error for the commands, written without panicking.
//!
//! `println!` panics when stdout fails. Here a closed pipe (the reader is gone, as with
//! `graylab … | head -1`) silences the rest of the output and the work goes on; any other
//! failure (a full disk, `> /dev/full`) is kept, the rest of the output is dropped, and
//! [`finish`] returns it so the command exits 1 with one message. Standard error is written
//! best effort: a message about a failing stderr has nowhere to go.

use std::fmt;
use std::io::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether stdout's reader is gone: nothing more is written.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// The first error writing stdout, other than a closed pipe.
static FAILED: Mutex<Option<std::io::Error>> = Mutex::new(None);

/// Writes one line to standard output; see the module doc for failures.
macro_rules! outln {
    () => {
        $crate::cli::out::write_line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::cli::out::write_line(format_args!($($arg)*))
    };
}

/// Writes one line to standard error, best effort.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::cli::out::write_err(format_args!($($arg)*), true)
    };
}

/// Writes to standard error without a newline, best effort.
macro_rules! err_part {
    ($($arg:tt)*) => {
        $crate::cli::out::write_err(format_args!($($arg)*), false)
    };
}

pub(super) use {err_part, errln, outln};

/// Whether stdout can still be written (no closed pipe, no failure so far).
fn open() -> bool {
    !CLOSED.load(Ordering::Relaxed) && FAILED.lock().map_or(true, |f| f.is_none())
}

/// Records a stdout failure: a closed pipe silences, anything else is kept for [`finish`].
fn record(e: std::io::Error) {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        log::debug!("standard output is closed; the rest of the output is dropped");
        CLOSED.store(true, Ordering::Relaxed);
    } else if let Ok(mut failed) = FAILED.lock() {
        failed.get_or_insert(e);
    }
}

/// Writes `args` and a newline to stdout, unless it is closed or has failed.
pub(super) fn write_line(args: fmt::Arguments<'_>) {
    if !open() {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.write_all(b"\n")) {
        record(e);
    }
}

/// Writes `args` (and a newline when `newline`) to stderr, ignoring failures.
pub(super) fn write_err(args: fmt::Arguments<'_>, newline: bool) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args);
    if newline {
        let _ = err.write_all(b"\n");
    } else {
        let _ = err.flush();
    }
}

/// Flushes stdout; the first failure writing it (a closed pipe aside), if any.
pub(super) fn finish() -> anyhow::Result<()> {
    if open()
        && let Err(e) = std::io::stdout().flush()
    {
        record(e);
    }
    match FAILED.lock().ok().and_then(|mut f| f.take()) {
        Some(e) => Err(anyhow::anyhow!("cannot write to standard output ({e})")),
        None => Ok(()),
    }
}
