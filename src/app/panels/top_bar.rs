//! The top bar: open (button, path field, recent files), export, the analysis windows and the
//! View menu (the theme).

use egui::Ui;

use crate::app::session::Session;

/// What the top bar asks the app to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopBarAction {
    /// Show the system's open dialog.
    AskOpen,
    /// Open the export window.
    Export,
    /// Open the size-sweep window.
    Sweep,
    /// Open the round-trips window.
    RoundTrips,
    /// Open the parity window.
    Parity,
    /// Open the tutorial-claims window.
    Claims,
}

/// The top bar's own state.
#[derive(Default)]
pub struct TopBar {
    path_field: String,
    /// The image whose path the field shows.
    shown_image: Option<u64>,
    /// The session's failed opens when the field was last set: after a new failure it shows the
    /// image on screen again (the error itself is a message).
    failed_opens: u64,
}

impl TopBar {
    /// Puts `path` in the path field.
    pub fn set_path(&mut self, path: &std::path::Path) {
        self.path_field = path.display().to_string();
    }

    /// Draws the bar; returns what the user asked for.
    pub fn ui(&mut self, ui: &mut Ui, session: &mut Session) -> Option<TopBarAction> {
        let input = session.input().map(|i| (i.id, i.path.clone()));
        let failed = session.failed_opens() != self.failed_opens;
        self.failed_opens = session.failed_opens();
        if let Some((id, path)) = input
            && (self.shown_image != Some(id) || failed)
        {
            // A new image, or a file that failed to open while this one stays on screen: the
            // field names the file shown. With no image shown, a failed path stays to be fixed.
            self.shown_image = Some(id);
            self.set_path(&path);
        }
        let mut action = None;
        egui::Panel::top("top").frame(crate::app::look::panel_frame(ui.style())).show(ui, |ui| {
            // Wrapped: on a screen too narrow for one row (800 points) the buttons that do not
            // fit go to a second row, where they were cut at the window's edge.
            ui.horizontal_wrapped(|ui| {
                ui.strong("graylab");
                ui.separator();
                if ui
                    .button("Open…")
                    .on_hover_text("Ctrl+O. You can also drop a file on the window.")
                    .clicked()
                {
                    action = Some(TopBarAction::AskOpen);
                }
                // The buttons right of the field need about 640 points (of the row's width: a
                // wrapping row's available width is more than is left of it).
                let width = (ui.available_size_before_wrap().x - 640.0).clamp(120.0, 520.0);
                let field = ui.add(
                    egui::TextEdit::singleline(&mut self.path_field)
                        .hint_text("path to an image, Enter opens it")
                        .desired_width(width),
                );
                if field.lost_focus()
                    && ui.input(|i| i.key_pressed(egui::Key::Enter))
                    && !self.path_field.trim().is_empty()
                {
                    let typed: std::path::PathBuf = self.path_field.trim().into();
                    if crate::app::state::ComparedRuns::is_saved_bench(&typed) {
                        // A saved bench goes beside the runs: the field names the image again.
                        self.path_field =
                            session.input().map(|i| i.path.display().to_string()).unwrap_or_default();
                    }
                    session.open(typed, None);
                }
                ui.menu_button("Recent", |ui| {
                    if session.settings().recent.is_empty() {
                        ui.label("Nothing opened yet");
                    }
                    for path in session.settings().recent.clone() {
                        if ui.button(path.display().to_string()).clicked() {
                            self.set_path(&path);
                            session.open(path, None);
                            ui.close();
                        }
                    }
                });
                ui.separator();
                if ui.button("Export…").on_hover_text("Ctrl+S").clicked() {
                    action = Some(TopBarAction::Export);
                }
                ui.separator();
                for (label, hover, asked) in [
                    (
                        "Size sweep…",
                        "When is the GPU worth it? CPU vs GPU over image sizes",
                        TopBarAction::Sweep,
                    ),
                    (
                        "Round trips…",
                        "Operations per upload and download: when the GPU wins",
                        TopBarAction::RoundTrips,
                    ),
                    ("Parity…", "CPU output vs GPU output, pixel by pixel", TopBarAction::Parity),
                    (
                        "Tutorial claims…",
                        "The GPU tutorial's claims, each tested on this machine",
                        TopBarAction::Claims,
                    ),
                ] {
                    if ui.button(label).on_hover_text(hover).clicked() {
                        action = Some(asked);
                    }
                }
                ui.separator();
                ui.menu_button("View", |ui| theme_ui(ui, session));
            });
        });
        action
    }
}

/// The theme's choice in the View menu: the system's, light or dark, kept with the settings and
/// put in force at once (the app's colours follow it through `look`).
fn theme_ui(ui: &mut Ui, session: &mut Session) {
    use egui::ThemePreference;
    ui.label(egui::RichText::new("Theme").small().weak());
    let mut theme = session.settings().theme;
    ui.radio_value(&mut theme, ThemePreference::System, "System")
        .on_hover_text("Light or dark as the desktop is set (dark where it does not say)");
    ui.radio_value(&mut theme, ThemePreference::Light, "Light");
    ui.radio_value(&mut theme, ThemePreference::Dark, "Dark");
    if theme != session.settings().theme {
        session.settings_mut().theme = theme;
        ui.ctx().set_theme(theme);
        ui.ctx().request_repaint();
    }
}
