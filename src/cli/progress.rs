//! Batch progress for `graylab convert`: a bar redrawn in place on a terminal (files done, MB/s,
//! ETA), plain lines when stderr is not a terminal, nothing at all with `--json`.

use super::out::{err_part, errln};
use std::io::{IsTerminal as _, Write as _};
use std::time::{Duration, Instant};

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ProgressMode {
    /// A line redrawn in place on stderr.
    Bar,
    /// One plain line per finished file on stderr.
    Lines,
    /// Nothing (`--json`, or a single file).
    Off,
}

impl ProgressMode {
    /// The mode for this run: off with `--json` or one file, else a bar on a terminal.
    pub(super) fn choose(json: bool, files: usize) -> Self {
        if json || files < 2 {
            Self::Off
        } else if std::io::stderr().is_terminal() {
            Self::Bar
        } else {
            Self::Lines
        }
    }
}

/// Counts finished files and input bytes, and draws them.
pub(super) struct Progress {
    mode: ProgressMode,
    total_files: usize,
    total_bytes: u64,
    done_files: usize,
    done_bytes: u64,
    failed: usize,
    started: Instant,
}

impl Progress {
    /// Progress over `total_files` inputs of `total_bytes` bytes.
    pub(super) fn new(mode: ProgressMode, total_files: usize, total_bytes: u64) -> Self {
        let progress = Self {
            mode,
            total_files,
            total_bytes,
            done_files: 0,
            done_bytes: 0,
            failed: 0,
            started: Instant::now(),
        };
        progress.draw();
        progress
    }

    /// Records a finished file of `input_bytes`; `print` writes its report (to stdout or stderr)
    /// while the bar is cleared.
    pub(super) fn file_done(&mut self, input_bytes: u64, ok: bool, print: impl FnOnce()) {
        self.done_files += 1;
        self.done_bytes += input_bytes;
        self.failed += usize::from(!ok);
        if self.mode == ProgressMode::Bar {
            err_part!("\r\x1b[2K");
        }
        print();
        self.draw();
    }

    /// Clears the bar, if any, before the summary.
    pub(super) fn finish(&self) {
        if self.mode == ProgressMode::Bar {
            err_part!("\r\x1b[2K");
            let _ = std::io::stderr().flush();
        }
    }

    fn line(&self) -> String {
        let elapsed = self.started.elapsed();
        let mb_per_s = self.done_bytes as f64 / 1e6 / elapsed.as_secs_f64().max(1e-9);
        let eta = if self.done_bytes == 0 {
            "ETA -".to_owned()
        } else {
            let left = self.total_bytes.saturating_sub(self.done_bytes) as f64;
            format!("ETA {}", seconds(Duration::from_secs_f64(left / 1e6 / mb_per_s.max(1e-9))))
        };
        let failed = if self.failed > 0 { format!(", {} failed", self.failed) } else { String::new() };
        format!(
            "[{}/{}] {:.0}%{failed}, {mb_per_s:.1} MB/s, {eta}",
            self.done_files,
            self.total_files,
            100.0 * self.done_bytes as f64 / self.total_bytes.max(1) as f64
        )
    }

    fn draw(&self) {
        match self.mode {
            ProgressMode::Lines if self.done_files > 0 => errln!("{}", self.line()),
            ProgressMode::Off | ProgressMode::Lines => {}
            ProgressMode::Bar => {
                let done = self.done_bytes as f64 / self.total_bytes.max(1) as f64;
                let filled = (done * 24.0).round() as usize;
                err_part!(
                    "\r\x1b[2K[{}{}] {}",
                    "#".repeat(filled),
                    "-".repeat(24 - filled.min(24)),
                    self.line()
                );
                let _ = std::io::stderr().flush();
            }
        }
    }
}

/// `3.2 s` or `2 min 05 s`.
pub(super) fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 60.0 {
        format!("{s:.1} s")
    } else {
        let whole = d.as_secs();
        format!("{} min {:02} s", whole / 60, whole % 60)
    }
}
