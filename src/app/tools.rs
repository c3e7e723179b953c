//! The two analysis windows: the size sweep (CPU vs GPU over image sizes, log-log, crossover
//! marked, a verdict, saved sweeps drawn beside) and CPU/GPU parity for the open image.

use std::path::PathBuf;
use std::sync::Arc;

use egui::{Color32, RichText, Ui};
use egui_plot::{Legend, Line, LineStyle, Plot, PlotPoints, VLine};

use super::textures::DisplayImage;
use super::ui::GraylabApp;
use crate::engine::{DIFF_GAIN, ParityReport, Series, SweepResult};

/// State of the sweep window.
pub struct SweepWindow {
    /// Sizes in megapixels, as typed.
    pub sizes: String,
    /// Warm runs per point.
    pub runs: u32,
    /// Resize the open photo instead of synthetic images.
    pub use_photo: bool,
    /// The latest sweep.
    pub result: Option<Arc<SweepResult>>,
    /// Saved sweeps loaded for comparison.
    pub compare: Vec<(String, SweepResult)>,
    /// Path for saving / loading JSON.
    pub path: String,
}

impl Default for SweepWindow {
    fn default() -> Self {
        Self {
            sizes: "0.25, 0.5, 1, 2, 4, 8, 16, 33".into(),
            runs: 5,
            use_photo: false,
            result: None,
            compare: Vec::new(),
            path: "sweep.json".into(),
        }
    }
}

/// State of the parity window.
#[derive(Default)]
pub struct ParityWindow {
    /// The latest report and its difference image.
    pub result: Option<(ParityReport, DisplayImage)>,
}

fn colour(series: Series) -> Color32 {
    match series {
        Series::Cpu1 => Color32::from_rgb(150, 150, 150),
        Series::CpuAll => Color32::from_rgb(230, 230, 230),
        Series::GpuTotal => Color32::from_rgb(230, 140, 60),
        Series::GpuKernel => Color32::from_rgb(80, 170, 90),
        Series::GpuResident => Color32::from_rgb(70, 140, 220),
    }
}

fn lines(result: &SweepResult, suffix: &str, style: LineStyle) -> Vec<Line<'static>> {
    Series::ALL
        .iter()
        .filter_map(|&s| {
            let points: Vec<[f64; 2]> = result
                .points
                .iter()
                .filter_map(|p| {
                    Some([p.megapixels.log10(), (p.median_ns(s)? as f64 / 1e6).max(1e-6).log10()])
                })
                .collect();
            (!points.is_empty()).then(|| {
                Line::new(format!("{}{suffix}", s.label()), PlotPoints::from(points))
                    .color(colour(s))
                    .style(style)
                    .width(2.0)
            })
        })
        .collect()
}

/// `10^v` as a readable number.
fn power_label(v: f64) -> String {
    let x = 10f64.powf(v);
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 1.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// The log-log chart of one sweep and the saved ones beside it.
pub fn sweep_chart_ui(ui: &mut Ui, result: &SweepResult, compare: &[(String, SweepResult)]) {
    let mut all = lines(result, "", LineStyle::Solid);
    for (name, saved) in compare {
        all.extend(lines(saved, &format!(" [{name}]"), LineStyle::dashed_loose()));
    }
    let crossover = result
        .crossover_mp
        .map(|mp| VLine::new("crossover (GPU total < CPU)", mp.log10()).color(Color32::YELLOW));
    let resident = result.resident_crossover_mp.map(|mp| {
        VLine::new("crossover with data on the GPU", mp.log10())
            .color(Color32::LIGHT_BLUE)
            .style(LineStyle::dotted_dense())
    });
    Plot::new("sweep")
        .height(320.0)
        .legend(Legend::default().position(egui_plot::Corner::LeftTop))
        .x_axis_label("image size, megapixels (log)")
        .y_axis_label("median ms (log)")
        .x_axis_formatter(|mark, _| power_label(mark.value))
        .y_axis_formatter(|mark, _| power_label(mark.value))
        .label_formatter(|h| {
            let (name, p) = match h {
                egui_plot::HoverPosition::NearDataPoint { plot_name, position, .. } => {
                    (*plot_name, *position)
                }
                egui_plot::HoverPosition::Elsewhere { position } => ("", *position),
            };
            Some(format!("{name}\n{} MP, {} ms", power_label(p.x), power_label(p.y)))
        })
        .show(ui, |plot| {
            for l in all {
                plot.line(l);
            }
            if let Some(v) = crossover {
                plot.vline(v);
            }
            if let Some(v) = resident {
                plot.vline(v);
            }
        });
}

impl GraylabApp {
    pub(super) fn sweep_window_ui(&mut self, ctx: &egui::Context) {
        let mut open = self.sweep_window.is_some();
        let mut start = false;
        let mut save = None;
        let mut load = None;
        egui::Window::new("Size sweep: when is the GPU worth it?").open(&mut open).default_width(760.0).show(ctx, |ui| {
            let Some(w) = self.sweep_window.as_mut() else { return };
            ui.label(
                "Converts images of each size on the CPU (1 thread, all threads) and the GPU (end to end, kernel only, \
                 data already on the GPU), warm runs after one cold run, and draws the medians.",
            );
            ui.horizontal(|ui| {
                ui.label("Sizes (MP)");
                ui.add(egui::TextEdit::singleline(&mut w.sizes).desired_width(260.0));
                ui.add(egui::DragValue::new(&mut w.runs).range(1..=100).prefix("runs "));
                ui.checkbox(&mut w.use_photo, "resize the open photo");
                start = ui.button("Run sweep").clicked();
            });
            match &w.result {
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
                    let latency = r.dispatch_latency_ns.map_or_else(String::new, |ns| format!(", dispatch latency {:.3} ms", ns as f64 / 1e6));
                    ui.label(format!("At the largest size: {}{latency}.", rates.join(", ")));
                    sweep_chart_ui(ui, r, &w.compare);
                }
                None => {
                    ui.label("No sweep yet.");
                }
            }
            ui.horizontal(|ui| {
                ui.label("JSON file");
                ui.add(egui::TextEdit::singleline(&mut w.path).desired_width(300.0));
                if ui.add_enabled(w.result.is_some(), egui::Button::new("Save")).clicked() {
                    save = Some(PathBuf::from(w.path.trim()));
                }
                if ui.button("Load to compare").clicked() {
                    load = Some(PathBuf::from(w.path.trim()));
                }
                if !w.compare.is_empty() && ui.button("Clear comparisons").clicked() {
                    w.compare.clear();
                }
            });
        });
        if !open {
            self.sweep_window = None;
        }
        if start {
            self.start_sweep();
        }
        if let Some(path) = save {
            self.save_sweep(&path);
        }
        if let Some(path) = load {
            self.load_sweep(&path);
        }
    }

    fn start_sweep(&mut self) {
        let Some(w) = &self.sweep_window else { return };
        let sizes: Result<Vec<f64>, _> = w.sizes.split(',').map(|s| s.trim().parse::<f64>()).collect();
        let sizes = match sizes {
            Ok(s) if !s.is_empty() && s.iter().all(|v| v.is_finite() && *v > 0.0) => s,
            _ => {
                self.error(format!(
                    "Sizes must be positive megapixel counts separated by commas, not {:?}.",
                    w.sizes
                ));
                return;
            }
        };
        let photo = if w.use_photo { self.input.clone() } else { None };
        if w.use_photo && photo.is_none() {
            self.error("Open a photo first, or untick \"resize the open photo\".".into());
            return;
        }
        let options = crate::engine::SweepOptions {
            sizes_mp: sizes,
            runs: w.runs as usize,
            workgroup: self.settings.convert.workgroup,
            formula: self.settings.convert.formula,
            gpu: self.gpu_usable(),
        };
        self.send_job(super::worker::Job::Sweep { options, photo });
    }

    fn save_sweep(&mut self, path: &std::path::Path) {
        let Some(result) = self.sweep_window.as_ref().and_then(|w| w.result.clone()) else { return };
        if path.exists() {
            self.error(format!("Not saved: the file exists (choose another name): {}", path.display()));
            return;
        }
        let written = serde_json::to_string_pretty(&*result).map_err(|e| e.to_string()).and_then(|json| {
            let dir = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or_else(|| std::path::Path::new("."));
            let tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| e.to_string())?;
            std::fs::write(tmp.path(), json).map_err(|e| e.to_string())?;
            tmp.persist_noclobber(path).map(drop).map_err(|e| e.error.to_string())
        });
        match written {
            Ok(()) => self.note(format!("Sweep saved to {}", path.display())),
            Err(e) => self.error(format!("Could not save the sweep ({e}): {}", path.display())),
        }
    }

    fn load_sweep(&mut self, path: &std::path::Path) {
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
                if let Some(w) = &mut self.sweep_window {
                    w.compare.push((name, r));
                }
            }
            Err(e) => self.error(format!("Could not load the sweep ({e}): {}", path.display())),
        }
    }

    pub(super) fn parity_window_ui(&mut self, ctx: &egui::Context) {
        let mut open = self.parity_window.is_some();
        let mut start = false;
        egui::Window::new("CPU / GPU parity").open(&mut open).default_width(520.0).show(ctx, |ui| {
            ui.label("Converts the open image on the CPU and on the GPU with the current settings and compares every sample.");
            start = ui.add_enabled(self.input.is_some(), egui::Button::new("Check the open image")).clicked();
            let Some((report, difference)) = self.parity_window.as_ref().and_then(|p| p.result.as_ref()) else {
                return;
            };
            egui::Grid::new("parity").striped(true).show(ui, |ui| {
                ui.strong("compared");
                ui.strong("differing pixels");
                ui.strong("max difference");
                ui.end_row();
                match (&report.cpu_vs_gpu, &report.gpu_error) {
                    (Some(d), _) => {
                        ui.label("CPU vs GPU (same formula)");
                        let text = format!("{} of {}", d.differing, d.pixels);
                        let good = d.differing == 0;
                        ui.colored_label(if good { Color32::LIGHT_GREEN } else { ui.visuals().error_fg_color }, text);
                        ui.label(format!("{} levels", d.max_diff));
                    }
                    (None, e) => {
                        ui.label("CPU vs GPU");
                        ui.colored_label(ui.visuals().error_fg_color, e.clone().unwrap_or_default());
                        ui.label("");
                    }
                }
                ui.end_row();
                for (a, b, d) in &report.formulas {
                    ui.label(format!("{a} vs {b} (CPU)"));
                    ui.label(format!("{} of {} ({:.1}%)", d.differing, d.pixels, d.differing as f64 * 100.0 / d.pixels.max(1) as f64));
                    ui.label(format!("{} levels", d.max_diff));
                    ui.end_row();
                }
            });
            ui.label(format!("Difference image |CPU - GPU| x {DIFF_GAIN}: all black when they agree."));
            let size = egui::vec2(difference.size[0] as f32, difference.size[1] as f32);
            let scale = (480.0 / size.x).min(270.0 / size.y);
            let (rect, _) = ui.allocate_exact_size(size * scale, egui::Sense::hover());
            let uv = egui::Rect::from_min_max(egui::Pos2::ZERO, egui::pos2(1.0, 1.0));
            for t in &difference.tiles {
                let r = egui::Rect::from_min_size(rect.min + t.rect.min.to_vec2() * scale, t.rect.size() * scale);
                ui.painter().image(t.linear, r, uv, Color32::WHITE);
            }
            ui.painter().rect_stroke(rect, 0.0, egui::Stroke::new(1.0, Color32::GRAY), egui::StrokeKind::Outside);
        });
        if !open {
            self.parity_window = None;
        }
        if start && let Some(input) = self.input.clone() {
            let settings = self.settings.convert;
            self.send_job(super::worker::Job::Parity { input, settings });
        }
    }
}
