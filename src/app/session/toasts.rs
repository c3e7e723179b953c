//! Messages for the user as toasts in the bottom-right corner of the image viewer, above its
//! pixel readout: over the image's corner, never over the charts, and under any window the user
//! brings forward (a toast over the claims window hid its verdicts); they never move the layout;
//! at most three at once. Successes and notes fade
//! after a few seconds, errors after half a minute; the warnings about the open image stay until
//! dismissed or another image opens. A message about opening a file goes once one opens.

use std::time::{Duration, Instant};

use egui::{Align2, RichText};

use crate::app::look;

/// How long a success or a note stays.
const FADE_AFTER: Duration = Duration::from_secs(6);

/// How long an error stays, unless dismissed first.
const ERROR_FADES_AFTER: Duration = Duration::from_secs(30);

/// Room left under the toasts for the viewer's pixel readout, points.
const READOUT_ROOM: f32 = 30.0;

/// At most this many toasts at once (the oldest fading ones go first).
const MAX_TOASTS: usize = 3;

/// What a message is about, when a later event makes it moot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Topic {
    /// Opening a file (a dialog that could not be shown, a file that did not open, the warnings
    /// about the image open): moot once a file opens.
    Opening,
}

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
    topic: Option<Topic>,
}

impl Toast {
    /// Whether it stays until dismissed (or made moot).
    fn stays(&self) -> bool {
        self.level == Level::Warning
    }

    /// When it goes by itself, if it does.
    fn fades_at(&self) -> Option<Instant> {
        match self.level {
            Level::Warning => None,
            Level::Error => Some(self.shown + ERROR_FADES_AFTER),
            Level::Success | Level::Note => Some(self.shown + FADE_AFTER),
        }
    }
}

/// The messages on screen, oldest first.
#[derive(Default)]
pub struct Toasts {
    list: Vec<Toast>,
}

impl Toasts {
    fn push(&mut self, text: String, level: Level, topic: Option<Topic>) {
        // Messages from wgpu draw source excerpts with box-drawing characters, which the UI font
        // does not have.
        let box_drawing = |c: char| ('\u{2500}'..='\u{257F}').contains(&c);
        let text = if text.contains(box_drawing) { text.replace(box_drawing, "|") } else { text };
        self.list.retain(|t| t.text != text);
        self.list.push(Toast { text, level, shown: Instant::now(), topic });
        while self.list.len() > MAX_TOASTS {
            let oldest = self.list.iter().position(|t| !t.stays()).unwrap_or(0);
            self.list.remove(oldest);
        }
    }

    /// An error: fades after half a minute, unless dismissed first.
    pub fn error(&mut self, text: String) {
        self.push(text, Level::Error, None);
    }

    /// An error about `topic`: also goes when the topic is [`Toasts::resolved`].
    pub fn error_about(&mut self, topic: Topic, text: String) {
        self.push(text, Level::Error, Some(topic));
    }

    /// A warning about `topic` (e.g. the open image, decoded with a warning): stays until
    /// dismissed or the topic is [`Toasts::resolved`].
    pub fn warning_about(&mut self, topic: Topic, text: String) {
        self.push(text, Level::Warning, Some(topic));
    }

    /// Something worked (an export): fades.
    pub fn success(&mut self, text: String) {
        self.push(text, Level::Success, None);
    }

    /// A note: fades.
    pub fn note(&mut self, text: String) {
        self.push(text, Level::Note, None);
    }

    /// Removes the messages about `topic`, which a later event made moot (a file opened).
    pub fn resolved(&mut self, topic: Topic) {
        self.list.retain(|t| t.topic != Some(topic));
    }

    /// Removes the notes and successes (errors and warnings stay).
    pub fn clear_notes(&mut self) {
        self.list.retain(|t| matches!(t.level, Level::Error | Level::Warning));
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

    /// Draws the toasts in the bottom-right corner of `area` (the image viewer), above its pixel
    /// readout, newest at the bottom.
    pub fn ui(&mut self, ctx: &egui::Context, area: egui::Rect) {
        let now = Instant::now();
        self.list.retain(|t| t.fades_at().is_none_or(|at| now < at));
        if let Some(next) = self.list.iter().filter_map(Toast::fades_at).min() {
            ctx.request_repaint_after(next.saturating_duration_since(now));
        }
        if self.list.is_empty() {
            return;
        }
        let mut dismissed = None;
        egui::Area::new(egui::Id::unique("graylab toasts"))
            .order(egui::Order::Middle)
            .anchor(Align2::RIGHT_BOTTOM, area.max - ctx.content_rect().max - egui::vec2(8.0, READOUT_ROOM))
            .interactable(true)
            .show(ctx, |ui| {
                ui.set_max_width((area.width() * 0.45).clamp(240.0, 460.0));
                for (i, toast) in self.list.iter().enumerate() {
                    let (colour, mark) = match toast.level {
                        Level::Error => (ui.visuals().error_fg_color, "Error"),
                        Level::Warning => (look::warning(ui.visuals()), "Warning"),
                        Level::Success => (look::success(ui.visuals()), "Done"),
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
