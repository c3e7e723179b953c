//! The size-sweep window: CPU vs GPU over image sizes, the verdict, and saved sweeps to compare.

use std::path::{Path, PathBuf};

use egui::{Color32, RichText, Ui};

use super::charts::sweep_chart_ui;
use super::jobs::Job;
use super::session::Session;
use crate::engine::SweepResult;

/// The sweep window's state.
pub struct SweepWindow {
    /// Whether the window is open.
    pub open: bool,
    /// Sizes in megapixels, as typed.
    sizes: String,
    /// Warm runs per point.
    runs: u32,
    /// Resize the open photo instead of synthetic images.
    use_photo: bool,
    /// Saved sweeps loaded for comparison.
    compare: Vec<(String, SweepResult)>,
    /// Path for saving / loading JSON.
    path: String,
}

impl Default for SweepWindow {
    fn default() -> Self {
        Self {
            open: false,
            sizes: "0.25, 0.5, 1, 2, 4, 8, 16, 33".into(),
            runs: 5,
            use_photo: false,
            compare: Vec::new(),
            path: "sweep.json".into(),
        }
    }
}

impl SweepWindow {
    /// Sets the sizes (megapixels, comma separated) and warm runs per size.
    pub fn set_sizes(&mut self, sizes: &str, runs: u32) {
        sizes.clone_into(&mut self.sizes);
        self.runs = runs;
    }

    /// Shows the window when open.
    pub fn show(&mut self, ctx: &egui::Context, session: &mut Session) {
        let mut open = self.open;
        egui::Window::new("Size sweep: when is the GPU worth it?")
            .open(&mut open)
            .default_width(760.0)
            .show(ctx, |ui| self.ui(ui, session));
        self.open = open;
    }

    fn ui(&mut self, ui: &mut Ui, session: &mut Session) {
        ui.label(
            "Converts images of each size on the CPU (1 thread, all threads) and the GPU (end to end, kernel \
             only, data already on the GPU), warm runs after one cold run, and draws the medians.",
        );
        ui.horizontal(|ui| {
            ui.label("Sizes (MP)");
            ui.add(egui::TextEdit::singleline(&mut self.sizes).desired_width(260.0));
            ui.add(egui::DragValue::new(&mut self.runs).range(1..=100).prefix("runs "));
            ui.checkbox(&mut self.use_photo, "resize the open photo");
            if ui.button("Run sweep").clicked() {
                self.start(session);
            }
        });
        match session.sweep() {
            Some(r) => {
                ui.label(RichText::new(&r.verdict).strong());
                if r.software_adapter || r.build == "debug" {
                    ui.colored_label(
                        Color32::from_rgb(230, 160, 40),
                        "Flagged above: these numbers do not describe a real GPU or a release build.",
                    );
                }
                let rates: Vec<String> = r
                    .points
                    .last()
                    .map(|p| {
                        [("upload", p.upload_gb_per_s), ("download", p.download_gb_per_s)]
                            .iter()
                            .filter_map(|(n, v)| v.map(|v| format!("{n} {v:.2} GB/s")))
                            .collect()
                    })
                    .unwrap_or_default();
                let latency = r
                    .dispatch_latency_ns
                    .map_or_else(String::new, |ns| format!(", dispatch latency {:.3} ms", ns as f64 / 1e6));
                ui.label(format!("At the largest size: {}{latency}.", rates.join(", ")));
                sweep_chart_ui(ui, r, &self.compare);
            }
            None => {
                ui.label("No sweep yet.");
            }
        }
        ui.horizontal(|ui| {
            ui.label("JSON file");
            ui.add(egui::TextEdit::singleline(&mut self.path).desired_width(300.0));
            if ui.add_enabled(session.sweep().is_some(), egui::Button::new("Save")).clicked() {
                save(session, &PathBuf::from(self.path.trim()));
            }
            if ui.button("Load to compare").clicked() {
                self.load(session, &PathBuf::from(self.path.trim()));
            }
            if !self.compare.is_empty() && ui.button("Clear comparisons").clicked() {
                self.compare.clear();
            }
        });
    }

    fn start(&self, session: &mut Session) {
        let sizes: Result<Vec<f64>, _> = self.sizes.split(',').map(|s| s.trim().parse::<f64>()).collect();
        let sizes = match sizes {
            Ok(s) if !s.is_empty() && s.iter().all(|v| v.is_finite() && *v > 0.0) => s,
            _ => {
                session.toasts.error(format!(
                    "Sizes must be positive megapixel counts separated by commas, not {:?}.",
                    self.sizes
                ));
                return;
            }
        };
        let photo = if self.use_photo { session.input().cloned() } else { None };
        if self.use_photo && photo.is_none() {
            session.toasts.error("Open a photo first, or untick \"resize the open photo\".".into());
            return;
        }
        let options = crate::engine::SweepOptions {
            sizes_mp: sizes,
            runs: self.runs as usize,
            workgroup: session.settings().convert.workgroup,
            formula: session.settings().convert.formula,
            gpu: session.gpu_usable(),
        };
        session.send(Job::Sweep { options, photo });
    }

    fn load(&mut self, session: &mut Session, path: &Path) {
        let loaded = std::fs::read_to_string(path).map_err(|e| e.to_string()).and_then(|t| {
            serde_json::from_str::<SweepResult>(&t).map_err(|e| format!("not a graylab sweep: {e}"))
        });
        match loaded {
            Ok(r) => {
                let name = format!(
                    "{} · {}",
                    path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
                    r.adapter.clone().unwrap_or_else(|| "CPU only".into())
                );
                self.compare.push((name, r));
            }
            Err(e) => session.toasts.error(format!("Could not load the sweep ({e}): {}", path.display())),
        }
    }
}

fn save(session: &mut Session, path: &Path) {
    let Some(result) = session.sweep().cloned() else { return };
    if path.exists() {
        session.toasts.error(format!("Not saved: the file exists (choose another name): {}", path.display()));
        return;
    }
    let written = serde_json::to_string_pretty(&*result).map_err(|e| e.to_string()).and_then(|json| {
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or_else(|| Path::new("."));
        let tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| e.to_string())?;
        std::fs::write(tmp.path(), json).map_err(|e| e.to_string())?;
        tmp.persist_noclobber(path).map(drop).map_err(|e| e.error.to_string())
    });
    match written {
        Ok(()) => session.toasts.note(format!("Sweep saved to {}", path.display())),
        Err(e) => session.toasts.error(format!("Could not save the sweep ({e}): {}", path.display())),
    }
}
