//! The GPU adapter panel: name, backend, driver, the limits that matter here, timestamps, and
//! flags for a software adapter or a debug build.

use egui::Ui;

use super::look;

use crate::engine::GpuContext;

/// The adapter's details.
#[derive(Default)]
pub struct AdapterPanel;

impl AdapterPanel {
    /// Draws the adapter's details, or that there is none.
    #[expect(clippy::unused_self, reason = "a panel struct like the others; it has no state of its own yet")]
    pub fn ui(&mut self, ui: &mut Ui, gpu: Option<&GpuContext>, gpu_error: Option<&str>) {
        ui.heading("GPU adapter");
        let Some(gpu) = gpu else {
            ui.colored_label(ui.visuals().error_fg_color, "No GPU: the CPU backend still works.");
            return;
        };
        let info = gpu.adapter_info();
        let limits = gpu.limits();
        let ts = gpu.timestamps();
        egui::Grid::new("adapter").show(ui, |ui| {
            let mut row = |k: &str, v: String| {
                ui.label(k);
                ui.label(v);
                ui.end_row();
            };
            row("name", info.name.clone());
            row("backend", info.backend.to_string());
            row("type", format!("{:?}", info.device_type));
            row("driver", format!("{} {}", info.driver, info.driver_info));
            row("storage binding", crate::io::human_bytes(limits.max_storage_buffer_binding_size));
            row("max texture", format!("{} px", limits.max_texture_dimension_2d));
            row("invocations", format!("{} per workgroup", limits.max_compute_invocations_per_workgroup));
            let stamps = match (ts.passes, ts.encoders) {
                (true, true) => "kernel and copies",
                (true, false) => "kernel only",
                _ => "none (CPU clock)",
            };
            row("timestamps", format!("{stamps}, {} ns/tick", ts.period_ns));
        });
        if gpu.is_software() {
            ui.colored_label(
                look::WARNING,
                "Software adapter: this \"GPU\" runs on the CPU. Its timings say nothing about real GPUs.",
            );
        }
        if cfg!(debug_assertions) {
            ui.colored_label(
                ui.visuals().error_fg_color,
                "Debug build: timings are meaningless (build with cargo build --release).",
            );
        }
        if let Some(e) = gpu_error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
    }
}
