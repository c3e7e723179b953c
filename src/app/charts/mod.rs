//! The timing charts: one stacked bar per run, a profiler-style timeline of the last run, kernel
//! time per workgroup size, and the size sweep. Every series name carries the clock its figures
//! came from.

mod runs;
mod sweep;
mod timeline;
mod workgroups;

use egui::{Color32, Ui};

pub use sweep::sweep_chart_ui;

use super::session::Session;
use crate::engine::{Backend, ConvertSettings, Phase};

fn colour(phase: Phase) -> Color32 {
    match phase {
        Phase::Decode => Color32::from_rgb(150, 150, 150),
        Phase::Setup => Color32::from_rgb(170, 120, 200),
        Phase::Upload => Color32::from_rgb(230, 140, 60),
        Phase::Kernel => Color32::from_rgb(80, 170, 90),
        Phase::Download => Color32::from_rgb(70, 140, 220),
        Phase::Encode => Color32::from_rgb(200, 90, 90),
    }
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// The chart area under the viewer.
#[derive(Default)]
pub struct ChartsDock;

impl ChartsDock {
    /// Draws the three run charts side by side.
    #[expect(clippy::unused_self, reason = "a panel struct like the others; it has no state of its own yet")]
    pub fn ui(&mut self, ui: &mut Ui, session: &mut Session) {
        ui.horizontal(|ui| {
            ui.strong("Where the time goes");
            if let Some(input) = session.input() {
                ui.label(format!("· decode {} ms (cpu-clock)", crate::engine::ms(input.decode_ns)));
            }
            if let Some((_, e)) = session.last_export() {
                ui.label(format!("· last export: encode {} ms (cpu-clock)", crate::engine::ms(e.encode_ns)));
            }
        });
        let height = (ui.available_height() - 30.0).max(120.0);
        let image_id = session.input().map(|i| i.id);
        let valid = session.gpu().map(|g| g.valid_workgroups()).unwrap_or_default();
        // Runs 35%, timeline 25%, workgroups 40%: the workgroup axis needs room for its labels.
        let width = ui.available_width() - 24.0;
        let mut try_all = false;
        ui.horizontal_top(|ui| {
            ui.allocate_ui(egui::vec2(width * 0.35, height + 24.0), |ui| {
                ui.vertical(|ui| {
                    ui.label("Each run (stacked phases, ms)");
                    runs::runs_chart_ui(ui, session.runs(), height);
                });
            });
            ui.allocate_ui(egui::vec2(width * 0.25, height + 24.0), |ui| {
                ui.vertical(|ui| {
                    ui.label("Last run, phase by phase");
                    timeline::timeline_ui(ui, session.runs().last(), height);
                });
            });
            ui.allocate_ui(egui::vec2(width * 0.40, height + 24.0), |ui| {
                ui.vertical(|ui| {
                    ui.horizontal(|ui| {
                        ui.label("GPU kernel by workgroup size");
                        let enabled = session.input().is_some() && session.gpu_usable();
                        try_all = ui
                            .add_enabled(enabled, egui::Button::new("Try every size ×5").small())
                            .on_hover_text("One cold run and five warm runs per size, sizes interleaved")
                            .clicked();
                    });
                    workgroups::workgroups_chart_ui(ui, session.runs(), image_id, &valid, height);
                });
            });
        });
        if try_all {
            let base = session.settings().convert;
            let list = valid
                .iter()
                .map(|&workgroup| ConvertSettings { backend: Backend::Gpu, workgroup, ..base })
                .collect();
            session.queue_conversion(list, 6);
        }
    }
}
