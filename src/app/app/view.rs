//! What the running app shows, read-only, for tests and scripts: runs, images, messages, the
//! job in flight and each window's result, in one [`AppView`] taken from [`GraylabApp::view`].

use super::GraylabApp;
use crate::app::state::{ExportRecord, RunRecord};

/// What the running app shows, read-only, for tests and scripts: [`GraylabApp::view`].
#[expect(clippy::struct_excessive_bools, reason = "independent facts on screen, read one at a time")]
pub struct AppView<'a> {
    /// Every measured conversion so far (exports are listed apart).
    pub runs: &'a [RunRecord],
    /// Every export so far.
    pub exports: &'a [ExportRecord],
    /// The run numbers the runs chart shows now.
    pub charted_runs: Vec<usize>,
    /// The saved bench set beside them, if one was loaded.
    pub compared_runs: Option<&'a crate::app::state::ComparedRuns>,
    /// The image on screen, if any, and its file.
    pub input_image: Option<&'a image::DynamicImage>,
    /// The file of the image on screen.
    pub input_path: Option<&'a std::path::Path>,
    /// The output's host pixels, if the current output has them.
    pub output_pixels: Option<&'a image::DynamicImage>,
    /// Full-resolution tiles on the GPU now for the input and the output (none at Fit).
    pub detail_tiles: (usize, usize),
    /// The newest message (error or note) and whether it is an error.
    pub message: Option<(&'a str, bool)>,
    /// The warnings on screen (they stay until dismissed).
    pub warnings: Vec<&'a str>,
    /// Whether the worker has work in flight (loads, conversions, exports, sweeps).
    pub busy: bool,
    /// What the job running now reports doing, once it has started.
    pub job_progress: Option<String>,
    /// Whether the running job waits at the hold a test set ([`GraylabApp::hold_next_job`]).
    pub job_held: bool,
    /// The estimate of a run held for confirmation, if one is.
    pub held_run: Option<crate::engine::estimate::Estimate>,
    /// GPU runs stopped between their submissions by Stop, Esc or a newer setting, so far.
    pub runs_cut_short: usize,
    /// Whether Continuous is on.
    pub continuous: bool,
    /// Whether Fit is in effect in the viewer.
    pub fitting: bool,
    /// The open image's caption ("Original · JPEG · 8-bit RGB", and what a damaged file lacks).
    pub input_caption: Option<String>,
    /// The viewer's scale: screen pixels per image pixel (1 at 1:1, whatever the display scale).
    pub screen_px_per_image_px: f32,
    /// Flip mode: whether the output is shown (else the input).
    pub showing_output: bool,
    /// Which windows are open.
    pub windows_open: OpenWindows,
    /// The options of the last sweep sent.
    pub sweep_sent: Option<&'a crate::engine::sweep::SweepOptions>,
    /// The latest sweep.
    pub sweep: Option<&'a crate::engine::sweep::SweepResult>,
    /// The round-trips window's result, or why it has none.
    pub round_trips: (Option<&'a crate::engine::round_trip::RoundTripResult>, Option<String>),
    /// The transfer paths window's latest measurement.
    pub transfer_paths: Option<&'a [crate::engine::ceilings::TransferPath]>,
    /// The latest claims report that finished, and why the latest run has none.
    pub claims: (Option<&'a crate::engine::claims::ClaimsReport>, Option<&'a str>),
    /// The claims window's comparison with a loaded report, as shown.
    pub compared_claims: Option<&'a str>,
    /// The latest parity report.
    pub parity: Option<&'a crate::engine::ParityReport>,
    /// This CPU's compute ceiling, once known.
    pub cpu_compute: Option<&'a crate::engine::CpuCompute>,
    /// This GPU's ceilings, once known.
    pub ceilings: Option<&'a crate::engine::ceilings::KnownCeilings>,
}

/// Which of the windows a shortcut or a restored layout may open are open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenWindows {
    /// The export window.
    pub export: bool,
    /// The size-sweep window.
    pub sweep: bool,
    /// The parity window.
    pub parity: bool,
}

impl GraylabApp {
    /// What the app shows now.
    #[must_use]
    pub fn view(&self) -> AppView<'_> {
        let s = &self.session;
        let claims = self.claims.shown();
        AppView {
            runs: s.runs(),
            exports: s.exports(),
            charted_runs: self.charts.charted_runs(s),
            compared_runs: s.compared_runs(),
            input_image: s.input().map(|i| i.image.as_ref()),
            input_path: s.input().map(|i| i.path.as_path()),
            output_pixels: s.output().and_then(|o| o.pixels.as_deref()),
            detail_tiles: (
                s.input().map_or(0, |i| i.display.detail_tiles()),
                s.output().map_or(0, |o| o.display.detail_tiles()),
            ),
            message: s.toasts.latest(),
            warnings: s.toasts.warnings(),
            busy: s.is_busy(),
            job_progress: s.current_job().and_then(|(_, p)| p).map(|p| p.what),
            job_held: s.job_held(),
            held_run: s.held_run(),
            runs_cut_short: s.runs_cut_short(),
            continuous: s.continuous,
            fitting: self.viewer.fitting(),
            input_caption: s.input().map(|i| i.caption()),
            screen_px_per_image_px: self.viewer.screen_px_per_image_px(),
            showing_output: self.viewer.showing_output(),
            windows_open: OpenWindows {
                export: self.export.open,
                sweep: self.sweep.open,
                parity: self.parity.open,
            },
            sweep_sent: self.sweep.sent(),
            sweep: self.sweep.result(),
            round_trips: (self.round_trips.result(), self.round_trips.unfinished()),
            transfer_paths: self.paths.result(),
            claims: (claims.report.as_deref(), claims.unfinished.as_deref()),
            compared_claims: self.claims.compared(),
            parity: self.parity.report(),
            cpu_compute: s.cpu_compute(),
            ceilings: s.ceilings(),
        }
    }
}
