//! `GraylabApp`: the shared session plus one struct per panel and window, the frame loop
//! (replies, shortcuts, drops, dialogs) and the layout. Nothing else in `app` depends on it.

mod view;

pub use view::{AppView, OpenWindows};

use std::path::PathBuf;
use std::time::Instant;

use egui::Color32;

use super::charts::{ChartsDock, FileAsked};
use super::session::Session;
use super::state::Settings;
use super::viewer::Viewer;
use super::{AppOptions, look};
use crate::app::panels::controls::SettingsPanel;
use crate::app::panels::frame_meter::FrameMeter;
use crate::app::panels::top_bar::{TopBar, TopBarAction};
use crate::app::windows::claims_window::ClaimsWindow;
use crate::app::windows::dialogs::{self, DialogAnswer, DialogFor, PendingDialog};
use crate::app::windows::export_window::ExportWindow;
use crate::app::windows::parity_window::ParityWindow;
use crate::app::windows::paths_window::PathsWindow;
use crate::app::windows::round_trips_window::RoundTripsWindow;
use crate::app::windows::sweep_window::SweepWindow;
use crate::app::work::preload::Preload;

/// The graylab desktop app.
pub struct GraylabApp {
    session: Session,
    top_bar: TopBar,
    settings_panel: SettingsPanel,
    charts: ChartsDock,
    viewer: Viewer,
    export: ExportWindow,
    sweep: SweepWindow,
    round_trips: RoundTripsWindow,
    paths: PathsWindow,
    parity: ParityWindow,
    claims: ClaimsWindow,
    meter: FrameMeter,
    dialog: Option<PendingDialog>,
    /// When to close the window (`--quit-after`).
    quit_at: Option<Instant>,
    /// Whether the last frame asked for the next one (work in flight): then the interval to it
    /// counts in the frame meter.
    wanted_next_frame: bool,
    /// Frames drawn so far (the first ones put restored scroll offsets back at the top).
    frames: u64,
    /// The window title set last (the open file's name).
    title: String,
    /// Whether egui's animations are off (while work runs).
    still: bool,
    /// Whether a text field had focus when the last frame ended: egui takes the focus away on
    /// Esc before this frame's code runs, so only the last frame can say that Esc left a field.
    typed_last_frame: bool,
    /// While the window is open, the first signal closes it rather than ending the process
    /// (`app::run`); dropped as it closes.
    gentle: Option<crate::system::signals::GentleGuard>,
}

impl GraylabApp {
    /// Creates the app on eframe's wgpu device and starts the worker.
    #[must_use]
    pub fn new(cc: &eframe::CreationContext<'_>, options: AppOptions) -> Self {
        Self::with_preload(cc, options, None)
    }

    /// Creates the app and takes over `preload`, a decode of `options.initial_path` started
    /// before the window opened.
    #[must_use]
    pub fn with_preload(
        cc: &eframe::CreationContext<'_>,
        options: AppOptions,
        preload: Option<Preload>,
    ) -> Self {
        let mut settings: Settings = if options.fresh_settings {
            Settings::default()
        } else {
            cc.storage.and_then(|s| eframe::get_value(s, eframe::APP_KEY)).unwrap_or_default()
        };
        if let Some(backend) = options.backend {
            settings.convert.backend = backend;
        }
        look::set_text_sizes(&cc.egui_ctx);
        // The theme kept with the settings, over the one eframe restored with egui's memory.
        cc.egui_ctx.set_theme(settings.theme);
        let mut session = Session::new(cc, settings, &options);
        session.continuous = options.continuous;
        let mut meter = FrameMeter::default();
        if let Some(path) = &options.frame_log {
            match FrameMeter::with_log(path) {
                Ok(m) => meter = m,
                Err(e) => {
                    let why = if e.kind() == std::io::ErrorKind::AlreadyExists {
                        "it exists already: name a new file".to_owned()
                    } else {
                        e.to_string()
                    };
                    session.toasts.error(format!("Cannot write the frame log ({why}): {}", path.display()));
                }
            }
        }
        let mut app = Self {
            session,
            top_bar: TopBar::default(),
            settings_panel: SettingsPanel::default(),
            charts: ChartsDock::default(),
            viewer: Viewer::default(),
            export: ExportWindow::default(),
            sweep: SweepWindow::default(),
            round_trips: RoundTripsWindow::default(),
            paths: PathsWindow::default(),
            parity: ParityWindow::default(),
            claims: ClaimsWindow::default(),
            meter,
            dialog: None,
            quit_at: options.quit_after_secs.map(|s| Instant::now() + std::time::Duration::from_secs_f64(s)),
            wanted_next_frame: false,
            frames: 0,
            title: String::new(),
            still: false,
            typed_last_frame: false,
            gentle: None,
        };
        if let Some(path) = options.initial_path {
            app.top_bar.set_path(&path);
            app.session.open(path, preload);
        }
        app
    }

    /// Keeps `guard` (the first signal closes the window:
    /// [`crate::system::signals::stop_gently_waking`]) until the window closes: from then on,
    /// while eframe writes the settings and the worker winds down, the first signal ends the
    /// process at once, as it ends a command.
    pub fn stop_gently_while_open(&mut self, guard: crate::system::signals::GentleGuard) {
        self.gentle = Some(guard);
    }

    /// Starts loading a file; the current image stays until the new one is ready. A JSON file
    /// is a saved bench to compare the runs with (the session sets it beside the runs), and leaves
    /// the path field.
    pub fn open(&mut self, path: PathBuf) {
        if !super::state::ComparedRuns::is_saved_bench(&path) {
            self.top_bar.set_path(&path);
        }
        self.session.open(path, None);
    }

    /// Opens the dialog a chart's button asked for, unless one is open.
    fn open_asked_dialog(&mut self, ctx: &egui::Context) {
        match self.charts.file_asked.take().filter(|_| self.dialog.is_none()) {
            Some(FileAsked::CompareRuns) => {
                let dir =
                    self.session.input().and_then(|i| i.path.parent().map(std::path::Path::to_path_buf));
                self.dialog = Some(dialogs::open_bench(ctx, dir.as_deref()));
            }
            Some(FileAsked::SaveTrace) => {
                let (dir, name) = self.session.trace_file_suggestion();
                self.dialog = Some(dialogs::save_trace(ctx, dir.as_deref(), &name));
            }
            None => {}
        }
    }

    fn ask_open(&mut self, ctx: &egui::Context) {
        if self.dialog.is_none() {
            let dir = self.session.input().and_then(|i| i.path.parent().map(std::path::Path::to_path_buf));
            self.dialog = Some(dialogs::open_image(ctx, dir.as_deref()));
        }
    }

    fn shortcuts_and_drops(&mut self, ctx: &egui::Context) {
        use egui::{Key, KeyboardShortcut, Modifiers};
        let (open, save, escape) = ctx.input_mut(|i| {
            (
                i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::O)),
                i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::S)),
                i.key_pressed(Key::Escape),
            )
        });
        if open {
            self.ask_open(ctx);
        }
        if save {
            self.export.open_for(&mut self.session);
        }
        // Keys that a text field or an open menu takes first. An Esc that left a text field took
        // its focus before this frame: the field had it at the end of the last one.
        let typing = ctx.text_edit_focused() || (escape && self.typed_last_frame);
        let typing_or_menu = typing || egui::Popup::is_any_open(ctx);
        // Esc stops the work that can be stopped first (the status bar then says how far it got);
        // with nothing running it closes the top window. Not while it closes a menu or leaves a
        // text field.
        if escape && !typing_or_menu {
            if self.session.stoppable() {
                self.session.stop();
            } else if let Some((kind, _)) = self.session.current_job() {
                // Work that cannot be stopped keeps its window open, and says why nothing stops.
                self.session.toasts.note(crate::app::panels::status_bar::cannot_stop(kind));
            } else {
                self.close_top_window(ctx);
            }
        }
        // ← and → step through the folder, as image viewers do (not while typing, nor while a
        // menu or a widget that uses arrows has focus).
        let (left, right) = ctx.input(|i| {
            let plain = i.modifiers.is_none();
            (plain && i.key_pressed(Key::ArrowLeft), plain && i.key_pressed(Key::ArrowRight))
        });
        let arrows_free = !typing_or_menu && ctx.memory(egui::Memory::focused).is_none();
        if arrows_free && (left || right) {
            self.session.step_in_folder(right);
        }
        self.viewer.shortcuts(ctx, self.session.settings().view);
        let dropped: Vec<PathBuf> =
            ctx.input(|i| i.raw.dropped_files.iter().map(|f| f.path().to_path_buf()).collect());
        if let Some(path) = dropped.into_iter().next() {
            self.open(path);
        }
        if let Some(answer) = self.dialog.as_ref().and_then(PendingDialog::poll) {
            let purpose = self.dialog.take().map_or(DialogFor::Open, |d| d.purpose);
            self.dialog_answered(purpose, answer);
        }
    }

    fn dialog_answered(&mut self, purpose: DialogFor, answer: DialogAnswer) {
        match answer {
            DialogAnswer::Chosen(path) if purpose == DialogFor::Export => self.export.set_path(&path),
            DialogAnswer::Chosen(path) if purpose == DialogFor::Trace => self.session.save_trace(&path),
            DialogAnswer::Chosen(path) if purpose == DialogFor::CompareRuns => {
                self.session.compare_runs_with(&path);
            }
            DialogAnswer::Chosen(path) => self.open(path),
            DialogAnswer::Nothing { probably_unavailable: true } if purpose != DialogFor::Open => {
                let instead = match purpose {
                    DialogFor::Trace => {
                        "`graylab bench IMAGE --trace FILE` traces this image from the command line."
                    }
                    DialogFor::CompareRuns => {
                        "drop the saved bench's JSON file on the window to compare with it."
                    }
                    _ => "type the path in the File field and press Enter.",
                };
                self.session.toasts.note(format!(
                    "No file dialog could be shown on this system (no xdg-desktop-portal or zenity): {instead}"
                ));
            }
            DialogAnswer::Nothing { probably_unavailable: true } => self.session.toasts.error_about(
                crate::app::session::toasts::Topic::Opening,
                "No file dialog could be shown: this system has no file-dialog service (xdg-desktop-portal or \
                 zenity). Drop a file on the window, or type its path in the path field and press Enter."
                    .into(),
            ),
            DialogAnswer::Nothing { probably_unavailable: false } => {}
        }
    }

    /// Closes the window on top, if one is open.
    fn close_top_window(&mut self, ctx: &egui::Context) {
        use crate::app::windows::{CLAIMS_ID, EXPORT_ID, PARITY_ID, PATHS_ID, ROUND_TRIPS_ID, SWEEP_ID};
        let top = ctx.memory(|m| m.areas().top_layer_id(egui::Order::Middle)).map(|l| l.id);
        let mut open: Vec<(&str, &mut bool)> = vec![
            (EXPORT_ID, &mut self.export.open),
            (SWEEP_ID, &mut self.sweep.open),
            (ROUND_TRIPS_ID, &mut self.round_trips.open),
            (PARITY_ID, &mut self.parity.open),
            (CLAIMS_ID, &mut self.claims.open),
            (PATHS_ID, &mut self.paths.open),
        ];
        open.retain(|(_, o)| **o);
        let at = open.iter().position(|(id, _)| Some(egui::Id::unique(*id)) == top);
        // The top one, else (none drawn yet) the last in the list.
        if let Some(i) = at.or_else(|| open.len().checked_sub(1)) {
            *open[i].1 = false;
        }
    }

    /// The window title names the open file (or the one being opened).
    fn update_title(&mut self, ctx: &egui::Context) {
        let path = self.session.input().map(|i| i.path.clone());
        let place = match self.session.folder_place() {
            Some((n, of)) if of > 1 => format!(" ({n} of {of})"),
            _ => String::new(),
        };
        let title = path.map_or_else(
            || "graylab".to_owned(),
            |p| format!("{}{place} — graylab", crate::app::session::file_name(&p)),
        );
        if title != self.title {
            ctx.send_viewport_cmd(egui::ViewportCommand::Title(title.clone()));
            self.title = title;
        }
    }

    /// Preview levels about as large as the screen, so that Fit never magnifies them.
    fn update_preview_side(&mut self, ctx: &egui::Context) {
        let ppp = ctx.pixels_per_point();
        let screen =
            ctx.input(|i| i.viewport().monitor_size).unwrap_or_else(|| ctx.content_rect().size()) * ppp;
        let side = screen.x.max(screen.y) as u32;
        self.session.preview_side =
            side.clamp(crate::app::textures::PREVIEW_MAX_SIDE, 2 * crate::app::textures::PREVIEW_MAX_SIDE);
    }
}

impl eframe::App for GraylabApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let started = Instant::now();
        let ctx = ui.ctx().clone();
        if ctx.input(|i| i.viewport().close_requested()) {
            // The window closes after this frame (the app never cancels a close): a signal from
            // now on ends the process at once, not another close that nothing would answer.
            self.gentle = None;
        }
        self.meter.frame_started(started, self.wanted_next_frame || ctx.requested_repaint_last_pass());
        if let Some(quit_at) = self.quit_at {
            if started >= quit_at {
                self.meter.flush();
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            } else {
                ctx.request_repaint_after(quit_at - started);
            }
        }
        self.update_preview_side(&ctx);
        self.session.handle_replies();
        self.session.keep_pace();
        self.shortcuts_and_drops(&ctx);
        match self.top_bar.ui(ui, &mut self.session) {
            Some(TopBarAction::AskOpen) => self.ask_open(&ctx),
            Some(TopBarAction::Export) => self.export.open_for(&mut self.session),
            Some(TopBarAction::Sweep) => self.sweep.open = true,
            Some(TopBarAction::RoundTrips) => self.round_trips.open = true,
            Some(TopBarAction::Parity) => self.parity.open = true,
            Some(TopBarAction::Claims) => self.claims.open = true,
            None => {}
        }
        let style = ui.style().clone();
        let status = egui::Panel::bottom("status").frame(look::panel_frame(&style)).show(ui, |ui| {
            crate::app::panels::status_bar::status_ui(ui, &self.session, &self.meter, self.dialog.is_some())
        });
        if status.inner {
            self.session.stop();
        }
        let status_top = status.response.rect.top();
        // At most 30% of the window (420 px on a wide one), so the viewer keeps the rest on a small
        // screen.
        let widest = (ctx.content_rect().width() * 0.3).clamp(220.0, 420.0);
        egui::Panel::left("settings")
            .frame(look::panel_frame(&style))
            .resizable(true)
            .default_size(300.0_f32.min(widest))
            .size_range(220.0..=widest)
            .show(ui, |ui| {
                // Vertical only: a sideways scroll area kept kittest's clicks from reaching the
                // buttons below it. Wider content widens the panel, up to `widest`.
                let mut scroll = egui::ScrollArea::vertical().id_salt("settings scroll");
                if self.frames < 2 {
                    // Open at the top (Conversion, Backend), whatever offset egui's memory kept.
                    scroll = scroll.vertical_scroll_offset(0.0);
                }
                scroll.show(ui, |ui| {
                    self.settings_panel.ui(ui, &mut self.session);
                    ui.separator();
                    if crate::app::panels::adapter::adapter_ui(ui, &mut self.session) {
                        self.paths.open = true;
                    }
                });
            });
        self.charts.dock_ui(ui, &mut self.session);
        self.open_asked_dialog(&ctx);
        let viewer = egui::CentralPanel::default()
            .frame(look::central_frame(&style))
            .show(ui, |ui| self.viewer.ui(ui, &mut self.session))
            .response
            .rect;
        let room = crate::app::windows::Room {
            rect: egui::Rect::from_min_max(viewer.min, egui::pos2(viewer.max.x, status_top)),
        };
        if let Some((dir, name)) = self.export.show(&ctx, room, &mut self.session) {
            self.dialog = Some(dialogs::save_image(&ctx, dir.as_deref(), &name));
        }
        self.sweep.show(&ctx, room, &mut self.session);
        self.round_trips.show(&ctx, room, &mut self.session);
        self.parity.show(&ctx, room, &mut self.session);
        self.claims.show(&ctx, room, &mut self.session);
        self.paths.show(&ctx, room, &mut self.session);
        self.update_title(&ctx);
        self.frames += 1;
        self.session.toasts.ui(&ctx, viewer);
        crate::app::panels::status_bar::held_run_ui(&ctx, &mut self.session);
        drop_overlay_ui(&ctx);
        self.session.after_frame();
        let working = self.session.is_busy();
        let software = self.session.gpu().is_some_and(|g| g.is_software());
        let redraw_every = redraw_while_working(software);
        self.meter.set_working(working.then_some(redraw_every));
        if working != self.still {
            // No animation while work runs: a hover or a click would otherwise redraw at the
            // screen's rate for egui's 0.2 s, in the first runs of the job it started.
            let time = if working { 0.0 } else { egui::Style::default().animation_time };
            ctx.all_styles_mut(|s| s.animation_time = time);
            self.still = working;
        }
        self.wanted_next_frame = self.dialog.is_some();
        if self.dialog.is_some() {
            // Polls the file dialog's thread for the chosen path.
            ctx.request_repaint_after(std::time::Duration::from_millis(20));
        } else if working {
            // The progress moves a few times a second; every result, and every input, still
            // redraws at once. A faster redraw takes the cores the work is being timed on.
            ctx.request_repaint_after(redraw_every);
        }
        self.typed_last_frame = ctx.text_edit_focused();
        self.meter.frame_built(started);
    }

    fn clear_color(&self, visuals: &egui::Visuals) -> [f32; 4] {
        look::clear_colour(visuals)
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, eframe::APP_KEY, self.session.settings());
    }

    fn on_exit(&mut self) {
        // Also where the event loop ends without a frame that saw the close asked.
        self.gentle = None;
        self.meter.flush();
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

/// How often the window redraws on its own while work runs (each result and each input still
/// redraw at once): 4 times a second, once a second on a software adapter. There a frame costs
/// about a core of the cores the work is timed on: at the screen's rate the app's GPU figures
/// were 2-6x the CLI's, at 4 a second still 1.05-1.2x at 16 MP, at one a second the CLI's
/// (BENCHMARKS.md, "The desktop app").
#[must_use]
pub fn redraw_while_working(software_adapter: bool) -> std::time::Duration {
    std::time::Duration::from_millis(if software_adapter { 1000 } else { 250 })
}

/// What tests and scripts may do to the running app, beside what a user does with the mouse:
/// shortcuts to start work and to set a window's fields (what it shows: [`AppView`]).
impl GraylabApp {
    /// Holds the next job sent at its first point `at` until [`Self::release_job`], so that a
    /// test's Stop or new setting lands inside it.
    pub fn hold_next_job(&mut self, at: crate::system::progress::HoldAt) {
        self.session.hold_next_job(at);
    }

    /// Lets a held job go on.
    pub fn release_job(&self) {
        self.session.release_job();
    }

    /// The settings in force.
    pub fn settings_mut(&mut self) -> &mut Settings {
        self.session.settings_mut()
    }

    /// Answers the open dialog as a system without a dialog service does: at once, nothing.
    pub fn open_dialog_found_no_service(&mut self) {
        self.dialog_answered(DialogFor::Open, DialogAnswer::Nothing { probably_unavailable: true });
    }

    /// Replaces this machine's pace (so that an estimate is known in advance).
    pub fn set_pace(&mut self, pace: crate::engine::estimate::Pace) {
        self.session.set_pace(pace);
    }

    /// What this machine was seen to take (the estimates' source).
    #[must_use]
    pub fn pace(&self) -> &crate::engine::estimate::Pace {
        self.session.pace()
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

    /// Sets the sweep window's JSON file, as if typed.
    pub fn set_sweep_json_path(&mut self, path: &std::path::Path) {
        self.sweep.set_path(path);
    }

    /// Opens the transfer-paths window with its largest size (MiB: 4, 16, 64 or 256), as if picked.
    pub fn open_transfer_paths(&mut self, largest_mib: u64) {
        self.paths.open = true;
        self.paths.set_largest_mib(largest_mib);
    }

    /// Opens the round-trips window with these counts (comma separated) and warm runs per count.
    pub fn set_round_trips(&mut self, passes: &str, runs: u32) {
        self.round_trips.open = true;
        self.round_trips.set_passes(passes, runs);
    }

    /// Opens the parity window.
    pub fn open_parity_window(&mut self) {
        self.parity.open = true;
    }

    /// Opens the export window (as Ctrl+S does).
    pub fn open_export_window(&mut self) {
        self.export.open_for(&mut self.session);
    }

    /// Opens the export window on `path` (as if chosen in its save dialog).
    pub fn open_export_window_on(&mut self, path: &std::path::Path) {
        self.export.open_for(&mut self.session);
        self.export.set_path(path);
    }

    /// Opens the tutorial-claims window.
    pub fn open_claims_window(&mut self) {
        self.claims.open = true;
    }

    /// Saves every run of the open image as a trace at `path`, as "Save trace…" does once its
    /// dialog answers.
    pub fn save_trace_to(&mut self, path: &std::path::Path) {
        self.session.save_trace(path);
    }

    /// Sets the claims window's JSON file, as if typed.
    pub fn set_claims_json_path(&mut self, path: &std::path::Path) {
        self.claims.set_path(path);
    }
}
