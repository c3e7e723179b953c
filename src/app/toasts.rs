//! Messages for the user: errors (red, kept until dismissed) and notes.

use egui::{RichText, Ui};

/// One message.
struct Message {
    text: String,
    error: bool,
}

/// The message shown under the top bar.
#[derive(Default)]
pub struct Toasts {
    message: Option<Message>,
}

impl Toasts {
    /// Shows an error.
    pub fn error(&mut self, text: String) {
        self.message = Some(Message { text, error: true });
    }

    /// Shows a note.
    pub fn note(&mut self, text: String) {
        self.message = Some(Message { text, error: false });
    }

    /// Removes a note (errors stay).
    pub fn clear_notes(&mut self) {
        if self.message.as_ref().is_some_and(|m| !m.error) {
            self.message = None;
        }
    }

    /// The newest message and whether it is an error.
    pub fn latest(&self) -> Option<(&str, bool)> {
        self.message.as_ref().map(|m| (m.text.as_str(), m.error))
    }

    /// Draws the message with a Dismiss button.
    pub fn ui(&mut self, ui: &mut Ui) {
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
}
