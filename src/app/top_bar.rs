//! The top bar: open (button, path field, recent files), export, the analysis windows, what the
//! worker is doing and the frame meter.

use egui::{RichText, Ui};

use super::frame_meter::FrameMeter;
use super::session::Session;

/// What the top bar asks the app to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopBarAction {
    /// Show the system's open dialog.
    AskOpen,
    /// Open the export window.
    Export,
    /// Open the size-sweep window.
    Sweep,
    /// Open the parity window.
    Parity,
}

/// The top bar's own state.
#[derive(Default)]
pub struct TopBar {
    path_field: String,
    /// The image whose path the field shows.
    shown_image: Option<u64>,
}

impl TopBar {
    /// Puts `path` in the path field.
    pub fn set_path(&mut self, path: &std::path::Path) {
        self.path_field = path.display().to_string();
    }

    /// Draws the bar; returns what the user asked for.
    pub fn ui(
        &mut self,
        ui: &mut Ui,
        session: &mut Session,
        meter: &FrameMeter,
        waiting_for_dialog: bool,
    ) -> Option<TopBarAction> {
        let input = session.input().map(|i| (i.id, i.path.clone()));
        if let Some((id, path)) = input
            && self.shown_image != Some(id)
        {
            self.shown_image = Some(id);
            self.set_path(&path);
        }
        let mut action = None;
        egui::Panel::top("top").show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.strong("graylab");
                ui.separator();
                if ui
                    .button("Open…")
                    .on_hover_text("Ctrl+O. You can also drop a file on the window.")
                    .clicked()
                {
                    action = Some(TopBarAction::AskOpen);
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
                    session.open(self.path_field.trim().into());
                }
                ui.menu_button("Recent", |ui| {
                    if session.settings().recent.is_empty() {
                        ui.label("Nothing opened yet");
                    }
                    for path in session.settings().recent.clone() {
                        if ui.button(path.display().to_string()).clicked() {
                            self.set_path(&path);
                            session.open(path);
                            ui.close();
                        }
                    }
                });
                ui.separator();
                if ui.button("Export…").on_hover_text("Ctrl+S").clicked() {
                    action = Some(TopBarAction::Export);
                }
                ui.separator();
                if ui
                    .button("Size sweep…")
                    .on_hover_text("When is the GPU worth it? CPU vs GPU over image sizes")
                    .clicked()
                {
                    action = Some(TopBarAction::Sweep);
                }
                if ui.button("Parity…").on_hover_text("CPU output vs GPU output, pixel by pixel").clicked()
                {
                    action = Some(TopBarAction::Parity);
                }
                ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                    meter.ui(ui);
                    ui.separator();
                    status_ui(ui, session, waiting_for_dialog);
                });
            });
            session.toasts.ui(ui);
        });
        action
    }
}

fn status_ui(ui: &mut Ui, session: &Session, waiting_for_dialog: bool) {
    match session.activity() {
        Some((what, secs)) => {
            ui.label(format!("{what}… {secs:.1} s"));
            ui.spinner();
        }
        None if waiting_for_dialog => {
            ui.label("Waiting for the file dialog…");
        }
        None => {
            ui.label(RichText::new("Ready").weak());
        }
    }
}
