//! The app itself: state, the frame loop (replies, shortcuts, drops), and the layout.

use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use super::dialogs::PendingDialog;
use super::state::{RunRecord, Settings};
use super::tools::{ParityWindow, SweepWindow};
use super::viewer::ViewState;
use super::worker::{Job, Loaded, Output, Reply, Worker};
use super::{AppOptions, dialogs};
use crate::engine::{Backend, ConvertSettings, Engine, GpuContext};
use crate::io::EncodeReport;

/// A message for the user: an error (red) or a note.
pub(super) struct Message {
    pub text: String,
    pub error: bool,
}

/// The export window's state.
pub(super) struct ExportWindow {
    pub path: String,
    /// The chosen file exists: ask before replacing it.
    pub confirm_replace: bool,
}

/// The graylab desktop app.
pub struct GraylabApp {
    pub(super) settings: Settings,
    pub(super) engine: Option<Arc<Engine>>,
    pub(super) gpu: Option<Arc<GpuContext>>,
    pub(super) gpu_error: Option<String>,
    pub(super) worker: Option<Worker>,
    pub(super) input: Option<Arc<Loaded>>,
    pub(super) output: Option<Output>,
    pub(super) runs: Vec<RunRecord>,
    seen: HashSet<String>,
    next_id: u64,
    latest_load: u64,
    latest_convert: u64,
    pub(super) converting: bool,
    /// Jobs sent to the worker and not answered yet.
    in_flight: usize,
    requested: Option<(ConvertSettings, bool)>,
    pub(super) continuous: bool,
    pub(super) view: ViewState,
    pub(super) path_field: String,
    pub(super) message: Option<Message>,
    pub(super) dialog: Option<PendingDialog>,
    pub(super) export_window: Option<ExportWindow>,
    pub(super) last_export: Option<(PathBuf, EncodeReport)>,
    pub(super) sweep_window: Option<SweepWindow>,
    pub(super) parity_window: Option<ParityWindow>,
    /// Time spent in `ui()` per frame, newest last (UI-thread cost, CPU clock).
    pub(super) frame_ms: VecDeque<f32>,
}

impl GraylabApp {
    /// Creates the app on eframe's wgpu device and starts the worker.
    #[must_use]
    pub fn new(cc: &eframe::CreationContext<'_>, options: AppOptions) -> Self {
        let settings = if options.fresh_settings {
            Settings::default()
        } else {
            cc.storage.and_then(|s| eframe::get_value(s, eframe::APP_KEY)).unwrap_or_default()
        };
        let mut app = Self {
            settings,
            engine: None,
            gpu: None,
            gpu_error: None,
            worker: None,
            input: None,
            output: None,
            runs: Vec::new(),
            seen: HashSet::new(),
            next_id: 0,
            latest_load: 0,
            latest_convert: 0,
            converting: false,
            in_flight: 0,
            requested: None,
            continuous: false,
            view: ViewState::default(),
            path_field: String::new(),
            message: None,
            dialog: None,
            export_window: None,
            last_export: None,
            frame_ms: VecDeque::new(),
            sweep_window: None,
            parity_window: None,
        };
        match &cc.wgpu_render_state {
            Some(rs) => {
                let gpu = Arc::new(GpuContext::from_device(
                    rs.device.clone(),
                    rs.queue.clone(),
                    rs.adapter.get_info(),
                ));
                let compute = rs
                    .adapter
                    .get_downlevel_capabilities()
                    .flags
                    .contains(wgpu::DownlevelFlags::COMPUTE_SHADERS);
                let engine = if compute {
                    Arc::new(Engine::with_gpu(Arc::clone(&gpu)))
                } else {
                    app.gpu_error =
                        Some(format!("{} cannot run compute shaders", rs.adapter.get_info().name));
                    Arc::new(Engine::with_gpu(Arc::clone(&gpu)))
                };
                match Worker::start(Arc::clone(&engine), rs.clone(), cc.egui_ctx.clone()) {
                    Ok(w) => app.worker = Some(w),
                    Err(e) => app.error(format!("cannot start the worker thread: {e}")),
                }
                app.engine = Some(engine);
                app.gpu = Some(gpu);
            }
            None => app.error("graylab needs the wgpu renderer, which could not start".into()),
        }
        if app.gpu_error.is_some() && app.settings.convert.backend == Backend::Gpu {
            app.settings.convert.backend = Backend::Cpu;
        }
        if let Some(gpu) = &app.gpu {
            // A saved workgroup size this adapter cannot run falls back to the default.
            if !gpu.valid_workgroups().contains(&app.settings.convert.workgroup) {
                app.settings.convert.workgroup = crate::engine::WorkgroupSize::DEFAULT;
            }
        }
        if let Some(path) = options.initial_path {
            app.open(path);
        }
        app
    }

    /// Whether the GPU backend can be used.
    pub(super) fn gpu_usable(&self) -> bool {
        self.gpu.is_some() && self.gpu_error.is_none()
    }

    pub(super) fn error(&mut self, text: String) {
        self.message = Some(Message { text, error: true });
    }

    pub(super) fn note(&mut self, text: String) {
        self.message = Some(Message { text, error: false });
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Starts loading a file; the current image stays until the new one is ready.
    pub fn open(&mut self, path: PathBuf) {
        let id = self.id();
        self.latest_load = id;
        self.path_field = path.display().to_string();
        if let Some(w) = &self.worker {
            w.send(Job::Load { id, path });
            self.in_flight += 1;
        }
    }

    /// The image on screen, if any.
    #[must_use]
    pub fn input_image(&self) -> Option<&image::DynamicImage> {
        self.input.as_ref().map(|i| &i.image)
    }

    /// The output's host pixels, if the current output has them.
    #[must_use]
    pub fn output_pixels(&self) -> Option<&image::DynamicImage> {
        self.output.as_ref().and_then(|o| o.pixels.as_deref())
    }

    /// Every measured run so far.
    #[must_use]
    pub fn runs(&self) -> &[RunRecord] {
        &self.runs
    }

    /// The settings in force.
    pub fn settings_mut(&mut self) -> &mut Settings {
        &mut self.settings
    }

    /// The current message (error or note), if any.
    #[must_use]
    pub fn message(&self) -> Option<(&str, bool)> {
        self.message.as_ref().map(|m| (m.text.as_str(), m.error))
    }

    /// Whether the worker has work in flight (loads, conversions, exports).
    #[must_use]
    pub fn is_busy(&self) -> bool {
        self.in_flight > 0
    }

    /// Sends a job to the worker and counts it as in flight.
    pub(super) fn send_job(&mut self, job: Job) {
        if let Some(w) = &self.worker {
            w.send(job);
            self.in_flight += 1;
        }
    }

    /// Opens the size-sweep window.
    pub fn open_sweep_window(&mut self) {
        self.sweep_window.get_or_insert_with(SweepWindow::default);
    }

    /// Opens the size-sweep window with these sizes (megapixels, comma separated) and runs.
    pub fn set_sweep_sizes(&mut self, sizes: &str, runs: u32) {
        let w = self.sweep_window.get_or_insert_with(SweepWindow::default);
        sizes.clone_into(&mut w.sizes);
        w.runs = runs;
    }

    /// Opens the parity window.
    pub fn open_parity_window(&mut self) {
        self.parity_window.get_or_insert_with(ParityWindow::default);
    }

    /// The latest sweep, if one finished.
    #[must_use]
    pub fn sweep_result(&self) -> Option<&crate::engine::SweepResult> {
        self.sweep_window.as_ref().and_then(|w| w.result.as_deref())
    }

    /// The latest parity report, if one finished.
    #[must_use]
    pub fn parity_result(&self) -> Option<&crate::engine::ParityReport> {
        self.parity_window.as_ref().and_then(|w| w.result.as_ref()).map(|(r, _)| r)
    }

    /// Queues `runs` conversions of the current image with the current settings.
    pub fn run_conversion(&mut self, runs: u32) {
        let settings = self.settings.convert;
        self.queue_conversion(vec![settings], runs);
    }

    /// Queues `runs` conversions for each of `list`.
    pub(super) fn queue_conversion(&mut self, list: Vec<ConvertSettings>, runs: u32) {
        let Some(input) = self.input.clone() else { return };
        let id = self.id();
        self.latest_convert = id;
        self.converting = true;
        self.requested = Some((self.settings.convert, self.settings.round_trip));
        if let Some(w) = &self.worker {
            w.send(Job::Convert { id, input, settings: list, round_trip: self.settings.round_trip, runs });
            self.in_flight += 1;
        }
    }

    /// Queues an export of the current output to `path` (replacing a file there only when
    /// `overwrite`).
    pub fn export_to(&mut self, path: PathBuf, overwrite: bool) {
        let (Some(input), Some(w)) = (self.input.clone(), &self.worker) else { return };
        let settings = self.output.as_ref().map_or(self.settings.convert, |o| o.settings);
        let pixels = self.output.as_ref().and_then(|o| o.pixels.clone());
        let options = crate::engine::ExportOptions { overwrite, ..self.settings.export };
        self.settings.export_dir = path.parent().map(std::path::Path::to_path_buf);
        w.send(Job::Export { input, pixels, settings, path, options });
        self.in_flight += 1;
    }

    fn handle_replies(&mut self) {
        let replies = self.worker.as_ref().map(Worker::poll).unwrap_or_default();
        for reply in replies {
            if matches!(
                reply,
                Reply::Loaded(..)
                    | Reply::LoadFailed(..)
                    | Reply::ConvertDone(..)
                    | Reply::Exported(..)
                    | Reply::ExportFailed(..)
                    | Reply::Skipped
                    | Reply::Swept(..)
                    | Reply::Parity(..)
            ) {
                self.in_flight = self.in_flight.saturating_sub(1);
            }
            match reply {
                Reply::Loaded(id, loaded) if id == self.latest_load => {
                    self.settings.remember(loaded.path.clone());
                    self.path_field = loaded.path.display().to_string();
                    if loaded.reoriented {
                        self.note("EXIF orientation applied".into());
                    } else if self.message.as_ref().is_some_and(|m| !m.error) {
                        self.message = None;
                    }
                    self.input = Some(loaded);
                    self.output = None;
                    self.view.fit_pending = true;
                    self.run_conversion(1);
                }
                Reply::LoadFailed(id, path, e) if id == self.latest_load => {
                    self.settings.recent.retain(|p| p != &path);
                    self.error(format!("Could not open the image. {e}"));
                }
                Reply::Converted(id, output, report) => self.converted(id, *output, report),
                Reply::Swept(Ok(result)) => {
                    self.sweep_window.get_or_insert_with(SweepWindow::default).result =
                        Some(Arc::new(result));
                }
                Reply::Swept(Err(e)) => self.error(format!("The sweep failed: {e}")),
                Reply::Parity(result) => match *result {
                    Ok(r) => self.parity_window.get_or_insert_with(ParityWindow::default).result = Some(r),
                    Err(e) => self.error(format!("The parity check failed: {e}")),
                },
                Reply::ConvertDone(id) if id == self.latest_convert => {
                    self.converting = false;
                    if self.continuous {
                        self.run_conversion(1);
                    }
                }
                Reply::ConvertFailed(id, e) if id == self.latest_convert => {
                    self.converting = false;
                    self.continuous = false;
                    self.error(format!("Conversion failed: {e}"));
                }
                Reply::Exported(path, report) => {
                    let notes = if report.notes.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", report.notes.join("; "))
                    };
                    self.note(format!(
                        "Exported {} ({}, {}, encode {} ms, cpu-clock){notes}",
                        path.display(),
                        report.format,
                        crate::io::human_bytes(report.bytes),
                        crate::engine::ms(report.encode_ns)
                    ));
                    self.last_export = Some((path, report));
                }
                Reply::ExportFailed(path, e) => {
                    self.error(format!("Export to {} failed, nothing was written. {e}", path.display()));
                }
                // Answers to superseded jobs.
                Reply::Loaded(..)
                | Reply::LoadFailed(..)
                | Reply::ConvertFailed(..)
                | Reply::ConvertDone(..)
                | Reply::Skipped => {}
            }
        }
    }

    fn converted(&mut self, id: u64, output: Output, report: crate::engine::RunReport) {
        if self.input.as_ref().map(|i| i.id) != Some(output.image_id) {
            return;
        }
        let key =
            format!("{}:{:?}:{}", output.image_id, output.settings, report.gpu.is_some_and(|g| g.downloaded));
        let cold = self.seen.insert(key);
        self.runs.push(RunRecord {
            seq: self.runs.len() + 1,
            image_id: output.image_id,
            settings: output.settings,
            report,
            cold,
        });
        // A run of an older job still counts in the charts, but only the newest settings' output
        // is shown.
        if id == self.latest_convert || self.output.is_none() {
            self.output = Some(output);
        }
    }

    /// Re-runs the conversion when a setting that changes the output or its timing changed.
    fn rerun_on_change(&mut self) {
        let now = (self.settings.convert, self.settings.round_trip);
        if self.input.is_some() && self.requested.is_some_and(|r| r != now) {
            self.run_conversion(1);
        }
    }

    fn shortcuts_and_drops(&mut self, ctx: &egui::Context) {
        use egui::{Key, KeyboardShortcut, Modifiers};
        let (open, save) = ctx.input_mut(|i| {
            (
                i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::O)),
                i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::S)),
            )
        });
        if open {
            self.ask_open(ctx);
        }
        if save {
            self.open_export_window();
        }
        let dropped: Vec<PathBuf> =
            ctx.input(|i| i.raw.dropped_files.iter().map(|f| f.path().to_path_buf()).collect());
        if let Some(path) = dropped.into_iter().next() {
            self.open(path);
        }
        if let Some(answer) = self.dialog.as_ref().and_then(PendingDialog::poll) {
            let save = self.dialog.take().is_some_and(|d| d.save);
            self.dialog_answered(save, answer);
        }
    }

    pub(super) fn ask_open(&mut self, ctx: &egui::Context) {
        if self.dialog.is_none() {
            let dir = self.input.as_ref().and_then(|i| i.path.parent().map(std::path::Path::to_path_buf));
            self.dialog = Some(dialogs::open_image(ctx, dir.as_deref()));
        }
    }

    fn dialog_answered(&mut self, save: bool, answer: dialogs::DialogAnswer) {
        match answer {
            dialogs::DialogAnswer::Chosen(path) if save => {
                if let Some(w) = &mut self.export_window {
                    w.path = path.display().to_string();
                    w.confirm_replace = false;
                }
            }
            dialogs::DialogAnswer::Chosen(path) => self.open(path),
            dialogs::DialogAnswer::Nothing { probably_unavailable: true } => self.error(
                "No file dialog could be shown: this system has no file-dialog service (xdg-desktop-portal or zenity). \
                 Drop a file on the window, or type its path in the path field and press Enter."
                    .into(),
            ),
            dialogs::DialogAnswer::Nothing { probably_unavailable: false } => {}
        }
    }

    pub(super) fn open_export_window(&mut self) {
        if self.input.is_none() {
            self.error("Open an image first: there is nothing to export yet.".into());
            return;
        }
        if self.export_window.is_none() {
            let format = self.settings.export.format.unwrap_or_default();
            let input = self.input.as_ref().map(|i| i.path.clone()).unwrap_or_default();
            let path =
                crate::engine::default_output_path(&input, self.settings.export_dir.as_deref(), format);
            self.export_window =
                Some(ExportWindow { path: path.display().to_string(), confirm_replace: false });
        }
    }

    fn record_frame_time(&mut self, started: Instant) {
        self.frame_ms.push_back(started.elapsed().as_secs_f32() * 1e3);
        while self.frame_ms.len() > 120 {
            self.frame_ms.pop_front();
        }
    }
}

impl eframe::App for GraylabApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let started = Instant::now();
        let ctx = ui.ctx().clone();
        self.handle_replies();
        self.shortcuts_and_drops(&ctx);
        self.top_bar_ui(ui);
        egui::Panel::left("settings").resizable(true).default_size(300.0).show(ui, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| self.controls_ui(ui));
        });
        egui::Panel::bottom("charts")
            .resizable(true)
            .default_size(340.0)
            .min_size(260.0)
            .show(ui, |ui| self.charts_ui(ui));
        egui::CentralPanel::default().show(ui, |ui| self.viewer_panel_ui(ui));
        self.export_window_ui(&ctx);
        self.sweep_window_ui(&ctx);
        self.parity_window_ui(&ctx);
        super::panels::drop_overlay_ui(&ctx);
        self.rerun_on_change();
        if self.is_busy() || self.dialog.is_some() {
            ctx.request_repaint_after(std::time::Duration::from_millis(100));
        }
        self.record_frame_time(started);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, eframe::APP_KEY, &self.settings);
    }
}
