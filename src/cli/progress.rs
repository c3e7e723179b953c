//! Batch progress for `graylab convert`: a bar redrawn in place on a terminal (files done, MB/s,
//! ETA from the batch's estimate corrected by its pace), plain lines when stderr is not a
//! terminal, nothing at all with `--json`; for one long file on a terminal, the share of its
//! pixels converted ([`watch_pixels`]).

use super::out::{err_part, errln};
use crate::engine::estimate::Standing;
use crate::system::one_time::OneTimeMark;
use std::io::IsTerminal as _;
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
pub(super) struct FileProgress {
    mode: ProgressMode,
    total_files: usize,
    total_bytes: u64,
    done_files: usize,
    done_bytes: u64,
    /// The bytes of the files converted (a failed file's are done, but no rate).
    converted_bytes: u64,
    failed: usize,
    started: Instant,
    /// The process's one-time work when the batch started (opening the GPU is no pace).
    one_time_at: OneTimeMark,
    /// What the batch was estimated to take before it started, seconds: the ETA's start,
    /// corrected by the pace its files show.
    estimate_s: Option<f64>,
}

impl FileProgress {
    /// Progress over `total_files` inputs of `total_bytes` bytes, from `started` and the one-time
    /// work then (the batch's start, which its summary counts from too), estimated to take
    /// `estimate_s` (`None`: no estimate, the ETA from the pace seen alone).
    pub(super) fn new(
        mode: ProgressMode,
        (total_files, total_bytes): (usize, u64),
        (started, one_time_at): (Instant, OneTimeMark),
        estimate_s: Option<f64>,
    ) -> Self {
        let progress = Self {
            mode,
            total_files,
            total_bytes,
            done_files: 0,
            done_bytes: 0,
            converted_bytes: 0,
            failed: 0,
            started,
            one_time_at,
            estimate_s,
        };
        progress.draw();
        progress
    }

    /// Records a finished file of `input_bytes`; `print` writes its report (to stdout or stderr)
    /// while the bar is cleared.
    pub(super) fn file_done(&mut self, input_bytes: u64, ok: bool, print: impl FnOnce()) {
        self.done_files += 1;
        self.done_bytes += input_bytes;
        self.converted_bytes += if ok { input_bytes } else { 0 };
        self.failed += usize::from(!ok);
        self.clear();
        print();
        self.draw();
    }

    /// Clears the bar, if any: before a file's report, and before the summary.
    pub(super) fn clear(&self) {
        if self.mode == ProgressMode::Bar {
            err_part!("\r\x1b[2K");
        }
    }

    /// The files converted so far, MB (1e6 bytes) of input per second since the start.
    pub(super) fn mb_per_s(&self) -> f64 {
        self.converted_bytes as f64 / 1e6 / self.started.elapsed().as_secs_f64().max(1e-9)
    }

    fn line(&self) -> String {
        let elapsed = self.started.elapsed();
        let mb_per_s = self.mb_per_s();
        let done = (self.done_bytes > 0).then(|| self.done_bytes as f64 / self.total_bytes.max(1) as f64);
        // The estimate, corrected by the pace of the bytes done so far (alone without one).
        let eta = left(self.estimate_s, elapsed, self.one_time_at, done).map_or_else(
            || "ETA -".to_owned(),
            |(s, basis)| format!("ETA {s} ({})", basis.trim_start_matches("from the ")),
        );
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
            }
        }
    }
}

/// A conversion shorter than this shows no progress line, and a batch estimated shorter says
/// no estimate: long enough to matter.
pub(super) const SAID_AFTER: Duration = Duration::from_secs(1);

/// Runs `work`; meanwhile, with a counter to watch, redraws "converting: 42% of the pixels" on
/// stderr (a terminal's) 4 times a second once the run took [`SAID_AFTER`], with an ETA
/// from the share done, and clears the line at the end.
pub(super) fn watch_pixels<T>(
    progress: Option<&crate::engine::PixelProgress>,
    work: impl FnOnce() -> T,
) -> T {
    let Some(progress) = progress else { return work() };
    let finished = std::sync::atomic::AtomicBool::new(false);
    let started = Instant::now();
    let one_time_at = OneTimeMark::now();
    std::thread::scope(|scope| {
        let watcher = std::thread::Builder::new().name("graylab-progress".into()).spawn_scoped(scope, || {
            let mut drawn = false;
            while !finished.load(std::sync::atomic::Ordering::Relaxed) {
                // Woken at once when the work ends.
                std::thread::park_timeout(Duration::from_millis(250));
                let elapsed = started.elapsed();
                let Some(fraction) = progress.fraction().filter(|_| elapsed >= SAID_AFTER) else {
                    continue;
                };
                let eta = left(None, elapsed, one_time_at, Some(fraction))
                    .map_or_else(String::new, |(left, _)| format!(", about {left} left"));
                err_part!(
                    "\r\x1b[2Kconverting: {:.0}% of the pixels ({}{eta})",
                    fraction * 100.0,
                    seconds(elapsed)
                );
                drawn = true;
            }
            if drawn {
                err_part!("\r\x1b[2K");
            }
        });
        let result = work();
        finished.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Ok(watcher) = watcher {
            watcher.thread().unpark();
            let _ = watcher.join();
        }
        result
    })
}

/// The time left, as [`seconds`] writes it, with what it rests on ("from the estimate and the
/// pace so far"), of a job estimated at `estimate_s`, `elapsed` since it started, with the
/// process's one-time work since `one_time_at` left out of its pace, and `done` of it done.
fn left(
    estimate_s: Option<f64>,
    elapsed: Duration,
    one_time_at: OneTimeMark,
    done: Option<f64>,
) -> Option<(String, &'static str)> {
    let (elapsed_s, one_time_s) = (elapsed.as_secs_f64(), one_time_at.since_s());
    // Drawn as the work moves (a file done, pixels counted): the pace is now's.
    let standing = Standing { estimate_s, elapsed_s, one_time_s, done, since_done_s: 0.0 };
    standing.left().map(|(s, basis)| (seconds(Duration::from_secs_f64(s)), basis))
}

/// `3.2 s` or `2 min 05 s`.
pub(super) fn seconds(d: Duration) -> String {
    crate::system::units::elapsed_text(d.as_secs_f64())
}
