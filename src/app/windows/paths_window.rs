//! The transfer-paths window: every way bytes reach this GPU and come back, timed end to end from
//! 4 KiB up and fitted with latency plus bandwidth; what it will take, said before it starts; the
//! table of fits with each path's n½, and the chart (`charts/paths.rs`).

use std::sync::Arc;

use egui::{RichText, Ui};

use crate::app::charts::paths_chart_ui;
use crate::app::look;
use crate::app::session::{JobKind, Session};
use crate::app::work::error::WorkError;
use crate::app::work::jobs::{Answer, Job};
use crate::engine::ceilings::{PathKind, TransferPath};
use crate::engine::estimate::{Part, Task};
use crate::system::units::{duration, gb, human_bytes};

/// The largest sizes offered, MiB.
const LARGEST_MIB: [u64; 4] = [4, 16, 64, 256];

/// The transfer-paths window's state.
pub struct PathsWindow {
    /// Whether the window is open.
    pub open: bool,
    /// The largest size to time, MiB.
    largest_mib: u64,
    /// The job in flight, until its answer arrives.
    pending: Option<u64>,
    /// The latest result, or why the latest measurement has none.
    shown: Option<Result<Arc<Vec<TransferPath>>, WorkError>>,
    /// What was shown before the measurement in flight: shown again if it is stopped.
    before: Option<Result<Arc<Vec<TransferPath>>, WorkError>>,
    /// Whether the last measurement was stopped.
    stopped: bool,
}

impl Default for PathsWindow {
    fn default() -> Self {
        Self { open: false, largest_mib: 64, pending: None, shown: None, before: None, stopped: false }
    }
}

impl PathsWindow {
    /// Sets the largest size to time, MiB (one of 4, 16, 64, 256), as if picked.
    pub fn set_largest_mib(&mut self, mib: u64) {
        if LARGEST_MIB.contains(&mib) {
            self.largest_mib = mib;
        }
    }

    /// The latest measurement, if one finished.
    #[must_use]
    pub fn result(&self) -> Option<&[TransferPath]> {
        self.shown.as_ref().and_then(|s| s.as_ref().ok()).map(|p| p.as_slice())
    }

    /// Shows the window when open, and takes the worker's answer in when it arrives.
    pub fn show(&mut self, ctx: &egui::Context, room: super::Room, session: &mut Session) {
        if let Some(Answer::TransferPaths(result)) = self.pending.and_then(|id| session.take_answer(id)) {
            // Stopped, the measurement before stays: a path cut short has no fit.
            self.stopped = matches!(result, Err(WorkError::Engine(crate::engine::EngineError::Cancelled)));
            self.shown = if self.stopped { self.before.take() } else { Some(result.map(Arc::new)) };
            self.pending = None;
        }
        let title = "Transfer paths: latency and bandwidth";
        let window = room.window(title, super::PATHS_ID, egui::Align2::LEFT_TOP).default_width(620.0);
        self.open = super::show(ctx, window, self.open, |ui| self.ui(ui, session, room.bottom_y()));
    }

    /// The content, reaching down to `bottom_y` at the most.
    fn ui(&mut self, ui: &mut Ui, session: &mut Session, bottom_y: f32) {
        ui.label(
            "Each path is timed end to end on the CPU clock, from the first call until the bytes are usable \
             (mapped, filled, copied, submitted, waited for, read), at 4 KiB, 16 KiB, … up to the size below, \
             and fitted with t(n) = latency + n / bandwidth. n½ = latency × bandwidth is the size that reaches \
             half the bandwidth: below it a transfer is mostly its fixed cost, and an image that small loses on \
             the GPU whatever the kernel does.",
        );
        let running = session.current_job().is_some_and(|(k, _)| k == JobKind::TransferPaths);
        ui.horizontal(|ui| {
            egui::ComboBox::from_label("largest size")
                .selected_text(format!("{} MiB", self.largest_mib))
                .show_ui(ui, |ui| {
                    for mib in LARGEST_MIB {
                        ui.selectable_value(&mut self.largest_mib, mib, format!("{mib} MiB"));
                    }
                });
            let can = !running && session.gpu_usable();
            let button = ui.add_enabled(can, egui::Button::new("Measure transfer paths"));
            if button
                .on_hover_text("Eight paths (ten on unified memory), nine repeats a size (five from 64 MiB)")
                .clicked()
            {
                self.start(session);
            }
        });
        // What the job will take, said before it starts.
        if let Some(parts) = self.parts(session).filter(|_| !running && self.pending.is_none()) {
            let estimate = session.pace().job(Task::TransferPaths, &parts);
            let text = format!("Takes {}.", estimate.brief());
            crate::app::look::estimate_line(ui, text);
        }
        if !session.gpu_usable() {
            ui.colored_label(
                look::warning(ui.visuals()),
                "The GPU cannot be used here: there is no transfer to measure.",
            );
        } else if session.gpu().is_some_and(|g| g.is_software()) {
            ui.colored_label(
                look::warning(ui.visuals()),
                "Software adapter: every path is host memory, copied by the CPU.",
            );
        }
        if self.stopped && !running {
            let what =
                if self.shown.is_some() { "the measurement before is shown" } else { "nothing is kept" };
            ui.label(RichText::new(format!("Stopped: {what}.")).weak());
        }
        ui.separator();
        match &self.shown {
            Some(Ok(paths)) => {
                let paths = Arc::clone(paths);
                table_ui(ui, &paths);
                ui.add_space(4.0);
                paths_chart_ui(ui, &paths, 280.0, bottom_y);
            }
            Some(Err(why)) => {
                ui.label(why.describe());
            }
            None if running => {
                ui.label("Measuring…");
            }
            None if self.pending.is_some() => {
                ui.label("Waiting for the work before it…");
            }
            None => {
                ui.label("Not measured yet.");
            }
        }
    }

    /// What measuring every path this GPU has up to the largest size runs, for its estimate;
    /// `None` without a usable GPU.
    fn parts(&self, session: &Session) -> Option<Vec<Part>> {
        let gpu = session.gpu().filter(|_| session.gpu_usable())?;
        let (features, device_type) = (gpu.device().features(), gpu.adapter_info().device_type);
        let paths = PathKind::ALL.iter().filter(|k| k.measured_on(features, device_type)).count();
        Some(crate::engine::estimate::transfer_paths_parts(self.largest_mib << 20, paths))
    }

    fn start(&mut self, session: &mut Session) {
        self.before = self.shown.take();
        self.stopped = false;
        let job = Job::TransferPaths { largest_bytes: self.largest_mib << 20 };
        self.pending = Some(match self.parts(session) {
            Some(parts) => session.send_estimated(job, Task::TransferPaths, parts),
            None => session.send(job).id,
        });
    }
}

/// Each path's fit: latency, bandwidth, n½, the fit's error and the rate at the largest size.
fn table_ui(ui: &mut Ui, paths: &[TransferPath]) {
    egui::Grid::new("transfer paths").striped(true).spacing([10.0, 2.0]).show(ui, |ui| {
        let largest = paths.first().and_then(|p| p.points.last()).map_or(0, |q| q.bytes);
        for head in
            ["path", "latency", "bandwidth", "n½", "fit error", &format!("at {}", human_bytes(largest))]
        {
            ui.label(RichText::new(head).weak());
        }
        ui.end_row();
        for p in paths {
            // In its line's colour: the table is the chart's legend.
            ui.label(RichText::new(p.path.label()).color(crate::app::charts::path_colour(p.path)));
            if let Some(f) = &p.fit {
                ui.label(RichText::new(duration(f.latency_ns.round() as u64)).monospace());
                ui.label(RichText::new(gb(f.gb_per_s)).monospace());
                ui.label(RichText::new(human_bytes(f.n_half_bytes.round() as u64)).monospace());
                ui.label(RichText::new(format!("{:.0}%", f.rms_relative_error * 100.0)).monospace());
            } else {
                ui.label(RichText::new("no fit: time did not grow with size").weak());
                for _ in 0..3 {
                    ui.label("");
                }
            }
            ui.label(RichText::new(gb(p.largest_gb_per_s())).monospace());
            ui.end_row();
        }
    });
    ui.label(
        RichText::new(
            "A large fit error, or a rate at the largest size far from the fitted one, says two numbers do not \
             describe the path (caches, page faults on fresh memory). Measured with the CPU clock.",
        )
        .small()
        .weak(),
    );
}
