//! The panels around the viewer: the top bar (open, path, recent, export, progress), the
//! settings and adapter panel, the charts, the export window and the drop overlay.

use egui::{Color32, RichText, Ui};

use super::charts;
use super::ui::GraylabApp;
use super::viewer::{ViewerInput, viewer_ui};
use crate::engine::{Backend, ExportFormat, Formula, available_threads, ms, simd_level};

impl GraylabApp {
    pub(super) fn top_bar_ui(&mut self, ui: &mut Ui) {
        egui::Panel::top("top").show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.strong("graylab");
                ui.separator();
                if ui
                    .button("Open…")
                    .on_hover_text("Ctrl+O. You can also drop a file on the window.")
                    .clicked()
                {
                    self.ask_open(&ui.ctx().clone());
                }
                let field = ui.add(
                    egui::TextEdit::singleline(&mut self.path_field)
                        .hint_text("path to an image, Enter opens it")
                        .desired_width(380.0),
                );
                if field.lost_focus()
                    && ui.input(|i| i.key_pressed(egui::Key::Enter))
                    && !self.path_field.trim().is_empty()
                {
                    self.open(self.path_field.trim().into());
                }
                ui.menu_button("Recent", |ui| {
                    if self.settings.recent.is_empty() {
                        ui.label("Nothing opened yet");
                    }
                    for path in self.settings.recent.clone() {
                        if ui.button(path.display().to_string()).clicked() {
                            self.open(path);
                            ui.close();
                        }
                    }
                });
                ui.separator();
                if ui.button("Export…").on_hover_text("Ctrl+S").clicked() {
                    self.open_export_window();
                }
                ui.separator();
                if ui
                    .button("Size sweep…")
                    .on_hover_text("When is the GPU worth it? CPU vs GPU over image sizes")
                    .clicked()
                {
                    self.open_sweep_window();
                }
                if ui.button("Parity…").on_hover_text("CPU output vs GPU output, pixel by pixel").clicked()
                {
                    self.open_parity_window();
                }
                ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| self.status_ui(ui));
            });
            self.message_ui(ui);
        });
    }

    fn status_ui(&self, ui: &mut Ui) {
        let worst = self.frame_ms.iter().copied().fold(0.0f32, f32::max);
        let last = self.frame_ms.back().copied().unwrap_or(0.0);
        ui.label(RichText::new(format!("UI {last:.1} ms/frame (max {worst:.1})")).small().weak())
            .on_hover_text("Time the UI thread spent building each frame (CPU clock), last 120 frames");
        ui.separator();
        match self.worker.as_ref().and_then(|w| w.activity.current()) {
            Some((what, secs)) => {
                ui.label(format!("{what}… {secs:.1} s"));
                ui.spinner();
            }
            None if self.dialog.is_some() => {
                ui.label("Waiting for the file dialog…");
            }
            None => {
                ui.label(RichText::new("Ready").weak());
            }
        }
    }

    fn message_ui(&mut self, ui: &mut Ui) {
        let Some(message) = &self.message else { return };
        let mut dismiss = false;
        ui.horizontal(|ui| {
            let colour = if message.error { ui.visuals().error_fg_color } else { ui.visuals().text_color() };
            if ui.small_button("Dismiss").clicked() {
                dismiss = true;
            }
            ui.add(egui::Label::new(RichText::new(&message.text).color(colour)).wrap());
        });
        if dismiss {
            self.message = None;
        }
    }

    pub(super) fn controls_ui(&mut self, ui: &mut Ui) {
        ui.heading("Conversion");
        let gpu_usable = self.gpu_usable();
        let c = &mut self.settings.convert;
        ui.horizontal(|ui| {
            ui.label("Backend");
            ui.selectable_value(&mut c.backend, Backend::Cpu, "CPU");
            ui.add_enabled_ui(gpu_usable, |ui| {
                ui.selectable_value(&mut c.backend, Backend::Gpu, "GPU");
            })
            .response
            .on_disabled_hover_text(self.gpu_error.clone().unwrap_or_else(|| "no GPU".into()));
        });
        egui::ComboBox::from_label("Formula").selected_text(c.formula.name()).show_ui(ui, |ui| {
            for f in Formula::ALL {
                ui.selectable_value(&mut c.formula, f, format!("{} — {}", f.name(), f.description()));
            }
        });
        match c.backend {
            Backend::Gpu => {
                let valid = self.gpu.as_ref().map(|g| g.valid_workgroups()).unwrap_or_default();
                egui::ComboBox::from_label("Workgroup size")
                    .selected_text(c.workgroup.to_string())
                    .show_ui(ui, |ui| {
                        for wg in valid {
                            ui.selectable_value(&mut c.workgroup, wg, wg.to_string());
                        }
                    })
                    .response
                    .on_hover_text("Only the sizes this adapter allows are listed");
                ui.checkbox(&mut self.settings.round_trip, "Download the result (full round trip)")
                    .on_hover_text(
                        "Off: the result is drawn from GPU memory and never copied back, as a viewer would. \
                     On: it is also downloaded, and the chart shows the download phase.",
                    );
            }
            Backend::Cpu => {
                ui.add(egui::Slider::new(&mut c.threads, 1..=available_threads()).text("CPU threads"));
                ui.label(RichText::new(format!("kernel instruction set: {:?}", simd_level())).weak());
            }
        }
        ui.checkbox(&mut c.keep_alpha, "Keep alpha (gray + alpha output)");
        ui.separator();
        ui.heading("Measure");
        ui.horizontal(|ui| {
            let enabled = self.input.is_some();
            if ui.add_enabled(enabled, egui::Button::new(format!("Run ×{}", self.settings.repeat))).clicked()
            {
                self.run_conversion(self.settings.repeat);
            }
            ui.add(egui::DragValue::new(&mut self.settings.repeat).range(1..=1000).prefix("×"));
        });
        ui.checkbox(&mut self.continuous, "Continuous (re-run as soon as a run ends)");
        if self.continuous && !self.converting && self.input.is_some() {
            self.run_conversion(1);
        }
        if ui.button("Clear the charts").clicked() {
            self.runs.clear();
        }
        ui.separator();
        self.last_run_ui(ui);
        ui.separator();
        self.adapter_ui(ui);
    }

    fn last_run_ui(&self, ui: &mut Ui) {
        ui.heading("Last run");
        let Some(run) = self.runs.last() else {
            ui.label("No run yet.");
            return;
        };
        let r = &run.report;
        let what = match run.settings.backend {
            Backend::Cpu => format!("CPU, {} threads", r.threads.unwrap_or(0)),
            Backend::Gpu => {
                format!("GPU, workgroup {}", r.workgroup.map(|w| w.to_string()).unwrap_or_default())
            }
        };
        ui.label(format!("run {}: {what}, {}, {} x {}", run.seq, r.formula, r.width, r.height));
        egui::Grid::new("last run").striped(true).show(ui, |ui| {
            for p in &r.phases {
                ui.label(p.phase.name());
                ui.label(RichText::new(format!("{} ms", ms(p.ns))).monospace());
                ui.label(RichText::new(p.source.label()).weak());
                ui.end_row();
            }
            ui.label("total");
            ui.label(RichText::new(format!("{} ms", ms(r.total_ns))).monospace());
            ui.label(RichText::new("cpu-clock").weak());
            ui.end_row();
        });
        if run.cold {
            let why = match run.settings.backend {
                Backend::Gpu => "pipeline compilation and buffer allocation",
                Backend::Cpu => "starting the thread pool and first-touch page faults",
            };
            ui.colored_label(
                Color32::from_rgb(230, 160, 40),
                format!("Cold run (first with these settings): includes {why}."),
            );
        }
        for note in &r.notes {
            ui.label(RichText::new(note).italics());
        }
    }

    fn adapter_ui(&self, ui: &mut Ui) {
        ui.heading("GPU adapter");
        let Some(gpu) = &self.gpu else {
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
                Color32::from_rgb(230, 160, 40),
                "Software adapter: this \"GPU\" runs on the CPU. Its timings say nothing about real GPUs.",
            );
        }
        if cfg!(debug_assertions) {
            ui.colored_label(
                ui.visuals().error_fg_color,
                "Debug build: timings are meaningless (use --release).",
            );
        }
        if let Some(e) = &self.gpu_error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
    }

    pub(super) fn charts_ui(&mut self, ui: &mut Ui) {
        ui.horizontal(|ui| {
            ui.strong("Where the time goes");
            if let Some(input) = &self.input {
                ui.label(format!("· decode {} ms (cpu-clock)", ms(input.decode_ns)));
            }
            if let Some((_, e)) = &self.last_export {
                ui.label(format!("· last export: encode {} ms (cpu-clock)", ms(e.encode_ns)));
            }
        });
        let height = (ui.available_height() - 30.0).max(120.0);
        let image_id = self.input.as_ref().map(|i| i.id);
        let valid = self.gpu.as_ref().map(|g| g.valid_workgroups()).unwrap_or_default();
        // Runs 35%, timeline 25%, workgroups 40%: the workgroup axis needs room for its labels.
        let width = ui.available_width() - 24.0;
        let mut try_all = false;
        ui.horizontal_top(|ui| {
            ui.allocate_ui(egui::vec2(width * 0.35, height + 24.0), |ui| {
                ui.vertical(|ui| {
                    ui.label("Each run (stacked phases, ms)");
                    charts::runs_chart_ui(ui, &self.runs, height);
                });
            });
            ui.allocate_ui(egui::vec2(width * 0.25, height + 24.0), |ui| {
                ui.vertical(|ui| {
                    ui.label("Last run, phase by phase");
                    charts::timeline_ui(ui, self.runs.last(), height);
                });
            });
            ui.allocate_ui(egui::vec2(width * 0.40, height + 24.0), |ui| {
                ui.vertical(|ui| {
                    ui.horizontal(|ui| {
                        ui.label("GPU kernel by workgroup size");
                        let enabled = self.input.is_some() && self.gpu_usable();
                        try_all = ui
                            .add_enabled(enabled, egui::Button::new("Try every size ×5").small())
                            .on_hover_text("One cold run and five warm runs per size, sizes interleaved")
                            .clicked();
                    });
                    charts::workgroups_chart_ui(ui, &self.runs, image_id, &valid, height);
                });
            });
        });
        if try_all {
            let list = valid
                .iter()
                .map(|&workgroup| crate::engine::ConvertSettings {
                    backend: Backend::Gpu,
                    workgroup,
                    ..self.settings.convert
                })
                .collect();
            self.queue_conversion(list, 6);
        }
    }

    pub(super) fn viewer_panel_ui(&mut self, ui: &mut Ui) {
        let output_label = self.output.as_ref().map_or_else(String::new, |o| {
            let s = o.settings;
            match s.backend {
                Backend::Cpu => format!("Gray: CPU, {}", s.formula),
                Backend::Gpu => format!("Gray: GPU, {}, workgroup {}", s.formula, s.workgroup),
            }
        });
        let input = self.input.clone();
        let output_pixels = self.output.as_ref().and_then(|o| o.pixels.clone());
        let on_gpu = self.output.is_some() && output_pixels.is_none();
        let readout = move |x: u32, y: u32| {
            let Some(input) = &input else { return String::new() };
            let p = image::GenericImageView::get_pixel(&input.image, x, y).0;
            let out = match &output_pixels {
                Some(o) => {
                    let q = image::GenericImageView::get_pixel(o.as_ref(), x, y).0;
                    if o.color().has_alpha() {
                        format!("gray {:3} alpha {:3}", q[0], q[3])
                    } else {
                        format!("gray {:3}", q[0])
                    }
                }
                None if on_gpu => "on the GPU (tick \"Download the result\" to read it)".into(),
                None => "not converted yet".into(),
            };
            format!(
                "x {x:5} y {y:5} │ input R {:3} G {:3} B {:3} A {:3} │ output {out}",
                p[0], p[1], p[2], p[3]
            )
        };
        let images = ViewerInput {
            input: self.input.as_ref().map(|i| &i.display),
            output: self.output.as_ref().map(|o| &o.display),
            output_label: &output_label,
            readout: &readout,
        };
        viewer_ui(ui, &mut self.view, &mut self.settings.view, &images);
    }

    pub(super) fn export_window_ui(&mut self, ctx: &egui::Context) {
        let Some(mut window) = self.export_window.take() else { return };
        let mut keep_open = true;
        let mut export: Option<bool> = None;
        let mut choose = false;
        egui::Window::new("Export").collapsible(false).resizable(false).open(&mut keep_open).show(
            ctx,
            |ui| {
                let opts = &mut self.settings.export;
                ui.horizontal(|ui| {
                    ui.label("File");
                    ui.add(egui::TextEdit::singleline(&mut window.path).desired_width(360.0));
                    choose = ui.button("Choose…").clicked();
                });
                let format =
                    opts.format.or_else(|| ExportFormat::from_path(std::path::Path::new(&window.path)));
                egui::ComboBox::from_label("Format")
                    .selected_text(
                        opts.format.map_or_else(|| "from the file name".to_owned(), |f| f.to_string()),
                    )
                    .show_ui(ui, |ui| {
                        ui.selectable_value(&mut opts.format, None, "from the file name");
                        for f in ExportFormat::ALL {
                            ui.selectable_value(&mut opts.format, Some(f), f.to_string());
                        }
                    });
                if format == Some(ExportFormat::Jpeg) {
                    ui.add(egui::Slider::new(&mut opts.jpeg_quality, 1..=100).text("JPEG quality"));
                }
                ui.checkbox(
                    &mut opts.force_8bit,
                    "Always 8-bit (else 16-bit images stay 16-bit in PNG and TIFF)",
                );
                match format {
                    Some(f) => {
                        ui.label(
                            RichText::new(format!(
                                "{f}: {}, {}",
                                if f.has_16bit() { "8 or 16 bit" } else { "8 bit only" },
                                if f.has_alpha() { "keeps alpha" } else { "no alpha channel" }
                            ))
                            .weak(),
                        );
                    }
                    None => {
                        ui.colored_label(
                            ui.visuals().error_fg_color,
                            "Unknown format: end the name with .png, .jpg, .tif, .bmp or .webp",
                        );
                    }
                }
                if window.confirm_replace {
                    ui.colored_label(Color32::from_rgb(230, 160, 40), "This file exists. Replace it?");
                    ui.horizontal(|ui| {
                        if ui.button("Replace").clicked() {
                            export = Some(true);
                        }
                        if ui.button("Keep it").clicked() {
                            window.confirm_replace = false;
                        }
                    });
                } else if ui.add_enabled(format.is_some(), egui::Button::new("Export")).clicked() {
                    export = Some(false);
                }
                ui.label(
                    RichText::new(
                        "Written to a temporary file first, then renamed: never a half-written file.",
                    )
                    .weak(),
                );
            },
        );
        if choose {
            let path = std::path::PathBuf::from(&window.path);
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            self.dialog = Some(super::dialogs::save_image(ctx, path.parent(), &name));
        }
        let path = std::path::PathBuf::from(window.path.trim());
        match export {
            Some(overwrite) if !overwrite && path.exists() => window.confirm_replace = true,
            Some(overwrite) => {
                self.export_to(path, overwrite);
                return;
            }
            None => {}
        }
        if keep_open {
            self.export_window = Some(window);
        }
    }
}

/// Darkens the window while a file is dragged over it.
pub(super) fn drop_overlay_ui(ctx: &egui::Context) {
    if ctx.input(|i| i.raw.hovered_files.is_empty()) {
        return;
    }
    let painter = ctx
        .layer_painter(egui::LayerId::new(egui::Order::Foreground, egui::Id::unique("graylab drop overlay")));
    let rect = ctx.content_rect();
    painter.rect_filled(rect, 0.0, Color32::from_black_alpha(160));
    painter.text(
        rect.center(),
        egui::Align2::CENTER_CENTER,
        "Drop to open",
        egui::FontId::proportional(32.0),
        Color32::WHITE,
    );
}
