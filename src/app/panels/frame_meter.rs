//! How smooth the UI is: the interval from one frame to the next (p95 and max over the last
//! seconds, what a user sees as stutter) beside the time the UI thread spends building a frame
//! (CPU clock). Optionally writes every interval to a file (`--frame-log`).

use std::collections::VecDeque;
use std::io::Write as _;
use std::time::{Duration, Instant};

use egui::{RichText, Ui};

/// The window the readout covers.
const WINDOW: Duration = Duration::from_secs(3);

/// Frame intervals and build times of the last seconds.
#[derive(Default)]
pub struct FrameMeter {
    /// Start of the previous frame.
    previous: Option<Instant>,
    /// (frame start, interval since the previous frame in ms, or `None` after an idle gap).
    intervals: VecDeque<(Instant, Option<f32>)>,
    /// Build times in ms, same frames.
    build_ms: VecDeque<f32>,
    log: Option<std::io::BufWriter<std::fs::File>>,
    /// Lines written to the log.
    logged: u64,
    /// How often the window redraws on its own while work runs; `None` when none runs.
    working: Option<Duration>,
}

impl FrameMeter {
    /// Also writes each frame's interval, one line in ms, to `path`, a new file: an existing one
    /// (the photo being opened, a FIFO, anything else) is never opened, let alone emptied.
    pub fn with_log(path: &std::path::Path) -> std::io::Result<Self> {
        let file = std::fs::OpenOptions::new().write(true).create_new(true).open(path)?;
        Ok(Self { log: Some(std::io::BufWriter::new(file)), ..Self::default() })
    }

    /// Marks the start of a frame. `wanted` says whether the previous frame asked to be followed
    /// at once (busy or animating): otherwise the gap was the app idling, not a stutter.
    pub fn frame_started(&mut self, now: Instant, wanted: bool) {
        let interval_ms = self.previous.map(|p| (now - p).as_secs_f32() * 1e3);
        self.previous = Some(now);
        if let (Some(log), Some(ms)) = (&mut self.log, interval_ms) {
            // A failed write only loses the log; the app goes on. Flushed every 32 frames, so
            // that the file can be followed while the app runs.
            let _ = writeln!(log, "{ms:.2}");
            self.logged += 1;
            if self.logged.is_multiple_of(32) {
                let _ = log.flush();
            }
        }
        // While work ran the window redrew only a few times a second on purpose
        // (`app::redraw_while_working`): those gaps are not stutters either.
        self.intervals.push_back((now, interval_ms.filter(|_| wanted && self.working.is_none())));
        while self.intervals.front().is_some_and(|(t, _)| now - *t > WINDOW) {
            self.intervals.pop_front();
            self.build_ms.pop_front();
        }
    }

    /// Says whether work runs now, and how often the window then redraws on its own: the
    /// readout says so.
    pub fn set_working(&mut self, working: Option<Duration>) {
        self.working = working;
    }

    /// Records the time since `started` as the current frame's build time.
    pub fn frame_built(&mut self, started: Instant) {
        self.build_ms.push_back(started.elapsed().as_secs_f32() * 1e3);
        while self.build_ms.len() > self.intervals.len() {
            self.build_ms.pop_front();
        }
    }

    /// Flushes the frame log.
    pub fn flush(&mut self) {
        if let Some(log) = &mut self.log {
            let _ = log.flush();
        }
    }

    /// p95 and max of the frame intervals (ms) over the last seconds, while the app was busy.
    #[must_use]
    pub fn interval_p95_max_ms(&self) -> Option<(f32, f32)> {
        let mut v: Vec<f32> = self.intervals.iter().filter_map(|(_, i)| *i).collect();
        if v.len() < 2 {
            return None;
        }
        v.sort_by(f32::total_cmp);
        let p95 = v[((v.len() - 1) as f32 * 0.95).round() as usize];
        Some((p95, v[v.len() - 1]))
    }

    /// The readout.
    pub fn ui(&self, ui: &mut Ui) {
        let build_max = self.build_ms.iter().copied().fold(0.0f32, f32::max);
        let redraws = self.working.map_or(4.0, |every| 1.0 / every.as_secs_f32().max(1e-3));
        let frames = match self.interval_p95_max_ms() {
            _ if self.working.is_some() => format!("redrawing {redraws:.0}×/s while work runs"),
            Some((p95, max)) => format!("frame interval p95 {p95:.0} ms, max {max:.0} ms"),
            None => "idle".to_owned(),
        };
        ui.label(RichText::new(format!("{frames} · build max {build_max:.1} ms")).small().weak())
            .on_hover_text(format!(
                "Frame interval: time from one frame to the next while the app animates, over the last \
                 3 s (above ~33 ms it stutters). While work runs the window redraws on its own only \
                 {redraws:.0}×/s (once a second on a software adapter, 4 times elsewhere), and at once \
                 for every result and every input, so that its drawing takes little of the cores the \
                 work is timed on. Build: CPU time of the UI thread per frame."
            ));
    }
}
