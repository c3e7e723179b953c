//! Messages for the user as toasts over the viewer: they never move the layout. Errors and
//! warnings stay until dismissed; successes and notes fade after a few seconds.

use std::time::{Duration, Instant};

use egui::{Align2, Color32, RichText};

use crate::app::look;

/// How long a success or a note stays.
const FADE_AFTER: Duration = Duration::from_secs(6);

/// At most this many toasts at once (the oldest fading ones go first).
const MAX_TOASTS: usize = 5;

/// How serious a message is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    Error,
    Warning,
    Success,
    Note,
}

/// One message.
struct Toast {
    text: String,
    level: Level,
    shown: Instant,
}

impl Toast {
    fn stays(&self) -> bool {
        matches!(self.level, Level::Error | Level::Warning)
    }
}

/// The messages on screen, oldest first.
#[derive(Default)]
pub struct Toasts {
    list: Vec<Toast>,
}

impl Toasts {
    fn push(&mut self, text: String, level: Level) {
        // Messages from wgpu draw source excerpts with box-drawing characters, which the UI font
        // does not have.
        let box_drawing = |c: char| ('\u{2500}'..='\u{257F}').contains(&c);
        let text = if text.contains(box_drawing) { text.replace(box_drawing, "|") } else { text };
        self.list.retain(|t| t.text != text);
        self.list.push(Toast { text, level, shown: Instant::now() });
        while self.list.len() > MAX_TOASTS {
            let oldest = self.list.iter().position(|t| !t.stays()).unwrap_or(0);
            self.list.remove(oldest);
        }
    }

    /// An error: stays until dismissed.
    pub fn error(&mut self, text: String) {
        self.push(text, Level::Error);
    }

    /// A warning (e.g. an image decoded with a warning): stays until dismissed.
    pub fn warning(&mut self, text: String) {
        self.push(text, Level::Warning);
    }

    /// Something worked (an export): fades.
    pub fn success(&mut self, text: String) {
        self.push(text, Level::Success);
    }

    /// A note: fades.
    pub fn note(&mut self, text: String) {
        self.push(text, Level::Note);
    }

    /// Removes the notes and successes (errors and warnings stay).
    pub fn clear_notes(&mut self) {
        self.list.retain(Toast::stays);
    }

    /// The newest message and whether it is an error.
    #[must_use]
    pub fn latest(&self) -> Option<(&str, bool)> {
        self.list.last().map(|t| (t.text.as_str(), t.level == Level::Error))
    }

    /// The warnings on screen, oldest first.
    #[must_use]
    pub fn warnings(&self) -> Vec<&str> {
        self.list.iter().filter(|t| t.level == Level::Warning).map(|t| t.text.as_str()).collect()
    }

    /// Draws the toasts in the top-right corner of `area`, newest at the bottom.
    pub fn ui(&mut self, ctx: &egui::Context, area: egui::Rect) {
        let now = Instant::now();
        self.list.retain(|t| t.stays() || now - t.shown < FADE_AFTER);
        if let Some(next) = self.list.iter().filter(|t| !t.stays()).map(|t| t.shown + FADE_AFTER).min() {
            ctx.request_repaint_after(next.saturating_duration_since(now));
        }
        if self.list.is_empty() {
            return;
        }
        let mut dismissed = None;
        egui::Area::new(egui::Id::unique("graylab toasts"))
            .order(egui::Order::Foreground)
            .anchor(
                Align2::RIGHT_TOP,
                egui::vec2(area.max.x - ctx.content_rect().max.x - 8.0, area.min.y + 8.0),
            )
            .interactable(true)
            .show(ctx, |ui| {
                ui.set_max_width((area.width() * 0.6).clamp(240.0, 560.0));
                for (i, toast) in self.list.iter().enumerate() {
                    let (colour, mark) = match toast.level {
                        Level::Error => (ui.visuals().error_fg_color, "Error"),
                        Level::Warning => (look::WARNING, "Warning"),
                        Level::Success => (Color32::from_rgb(120, 200, 120), "Done"),
                        Level::Note => (ui.visuals().text_color(), "Note"),
                    };
                    egui::Frame::popup(ui.style()).stroke(egui::Stroke::new(1.0, colour)).show(ui, |ui| {
                        ui.horizontal(|ui| {
                            if ui.small_button("×").on_hover_text("Dismiss").clicked() {
                                dismissed = Some(i);
                            }
                            ui.label(RichText::new(mark).color(colour).strong());
                            ui.add(egui::Label::new(RichText::new(&toast.text).color(colour)).wrap());
                        });
                    });
                }
            });
        if let Some(i) = dismissed {
            self.list.remove(i);
        }
    }
}
