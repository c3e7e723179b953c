//! `GraylabApp`: the shared session plus one struct per panel and window, the frame loop
//! (replies, shortcuts, drops, dialogs) and the layout. Nothing else in `app` depends on it.

use std::path::PathBuf;
use std::time::Instant;

use egui::Color32;

use super::AppOptions;
use super::adapter::AdapterPanel;
use super::charts::ChartsDock;
use super::controls::SettingsPanel;
use super::dialogs::{self, DialogAnswer, PendingDialog};
use super::export_window::ExportWindow;
use super::frame_meter::FrameMeter;
use super::parity_window::ParityWindow;
use super::session::Session;
use super::state::{RunRecord, Settings};
use super::sweep_window::SweepWindow;
use super::top_bar::{TopBar, TopBarAction};
use super::viewer::Viewer;

/// The graylab desktop app.
pub struct GraylabApp {
    session: Session,
    top_bar: TopBar,
    settings_panel: SettingsPanel,
    adapter_panel: AdapterPanel,
    charts: ChartsDock,
    viewer: Viewer,
    export: ExportWindow,
    sweep: SweepWindow,
    parity: ParityWindow,
    meter: FrameMeter,
    dialog: Option<PendingDialog>,
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
            session: Session::new(cc, settings),
            top_bar: TopBar::default(),
            settings_panel: SettingsPanel,
            adapter_panel: AdapterPanel,
            charts: ChartsDock,
            viewer: Viewer::default(),
            export: ExportWindow::default(),
            sweep: SweepWindow::default(),
            parity: ParityWindow::default(),
            meter: FrameMeter::default(),
            dialog: None,
        };
        if let Some(path) = options.initial_path {
            app.open(path);
        }
        app
    }

    /// Starts loading a file; the current image stays until the new one is ready.
    pub fn open(&mut self, path: PathBuf) {
        self.top_bar.set_path(&path);
        self.session.open(path);
    }

    /// The image on screen, if any.
    #[must_use]
    pub fn input_image(&self) -> Option<&image::DynamicImage> {
        self.session.input().map(|i| &i.image)
    }

    /// The output's host pixels, if the current output has them.
    #[must_use]
    pub fn output_pixels(&self) -> Option<&image::DynamicImage> {
        self.session.output().and_then(|o| o.pixels.as_deref())
    }

    /// Every measured run so far.
    #[must_use]
    pub fn runs(&self) -> &[RunRecord] {
        self.session.runs()
    }

    /// The settings in force.
    pub fn settings_mut(&mut self) -> &mut Settings {
        self.session.settings_mut()
    }

    /// The newest message (error or note), if any.
    #[must_use]
    pub fn message(&self) -> Option<(&str, bool)> {
        self.session.toasts.latest()
    }

    /// Whether the worker has work in flight (loads, conversions, exports).
    #[must_use]
    pub fn is_busy(&self) -> bool {
        self.session.is_busy()
    }

    /// Queues `runs` conversions of the current image with the current settings.
    pub fn run_conversion(&mut self, runs: u32) {
        self.session.run_conversion(runs);
    }

    /// Queues an export of the current output to `path` (replacing a file there only when
    /// `overwrite`).
    pub fn export_to(&mut self, path: PathBuf, overwrite: bool) {
        self.session.export_to(path, overwrite);
    }

    /// Opens the size-sweep window.
    pub fn open_sweep_window(&mut self) {
        self.sweep.open = true;
    }

    /// Opens the size-sweep window with these sizes (megapixels, comma separated) and runs.
    pub fn set_sweep_sizes(&mut self, sizes: &str, runs: u32) {
        self.sweep.open = true;
        self.sweep.set_sizes(sizes, runs);
    }

    /// Opens the parity window.
    pub fn open_parity_window(&mut self) {
        self.parity.open = true;
    }

    /// The latest sweep, if one finished.
    #[must_use]
    pub fn sweep_result(&self) -> Option<&crate::engine::SweepResult> {
        self.session.sweep().map(AsRef::as_ref)
    }

    /// The latest parity report, if one finished.
    #[must_use]
    pub fn parity_result(&self) -> Option<&crate::engine::ParityReport> {
        self.session.parity().map(|(r, _)| r)
    }

    fn ask_open(&mut self, ctx: &egui::Context) {
        if self.dialog.is_none() {
            let dir = self.session.input().and_then(|i| i.path.parent().map(std::path::Path::to_path_buf));
            self.dialog = Some(dialogs::open_image(ctx, dir.as_deref()));
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
            self.export.open_for(&mut self.session);
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

    fn dialog_answered(&mut self, save: bool, answer: DialogAnswer) {
        match answer {
            DialogAnswer::Chosen(path) if save => self.export.set_path(&path),
            DialogAnswer::Chosen(path) => self.open(path),
            DialogAnswer::Nothing { probably_unavailable: true } => self.session.toasts.error(
                "No file dialog could be shown: this system has no file-dialog service (xdg-desktop-portal or \
                 zenity). Drop a file on the window, or type its path in the path field and press Enter."
                    .into(),
            ),
            DialogAnswer::Nothing { probably_unavailable: false } => {}
        }
    }
}

impl eframe::App for GraylabApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let started = Instant::now();
        let ctx = ui.ctx().clone();
        self.session.handle_replies();
        self.shortcuts_and_drops(&ctx);
        match self.top_bar.ui(ui, &mut self.session, &self.meter, self.dialog.is_some()) {
            Some(TopBarAction::AskOpen) => self.ask_open(&ctx),
            Some(TopBarAction::Export) => self.export.open_for(&mut self.session),
            Some(TopBarAction::Sweep) => self.sweep.open = true,
            Some(TopBarAction::Parity) => self.parity.open = true,
            None => {}
        }
        egui::Panel::left("settings").resizable(true).default_size(300.0).show(ui, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| {
                self.settings_panel.ui(ui, &mut self.session);
                ui.separator();
                self.adapter_panel.ui(ui, self.session.gpu().map(AsRef::as_ref), self.session.gpu_error());
            });
        });
        egui::Panel::bottom("charts")
            .resizable(true)
            .default_size(340.0)
            .min_size(260.0)
            .show(ui, |ui| self.charts.ui(ui, &mut self.session));
        egui::CentralPanel::default().show(ui, |ui| self.viewer.ui(ui, &mut self.session));
        if let Some((dir, name)) = self.export.show(&ctx, &mut self.session) {
            self.dialog = Some(dialogs::save_image(&ctx, dir.as_deref(), &name));
        }
        self.sweep.show(&ctx, &mut self.session);
        self.parity.show(&ctx, &mut self.session);
        drop_overlay_ui(&ctx);
        self.session.after_frame();
        if self.session.is_busy() || self.dialog.is_some() {
            ctx.request_repaint_after(std::time::Duration::from_millis(100));
        }
        self.meter.record(started);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, eframe::APP_KEY, self.session.settings());
    }
}

/// Darkens the window while a file is dragged over it.
fn drop_overlay_ui(ctx: &egui::Context) {
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
