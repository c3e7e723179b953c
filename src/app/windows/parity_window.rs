//! The parity window: the open image converted on the CPU and on the GPU, every sample compared,
//! the formulas compared with each other, and the difference image.

use egui::{Color32, Ui};

use crate::app::look::thousands;
use crate::app::session::Session;
use crate::app::session::pace::convert_parts;
use crate::app::textures::{DisplayImage, Placement, TileBudget};
use crate::app::work::jobs::{Answer, Job};
use crate::engine::estimate::Task;
use crate::engine::{Backend, ConvertSettings, DIFF_GAIN, DiffStats, ParityReport};
use crate::pixel::Formula;

/// The parity window's state.
#[derive(Default)]
pub struct ParityWindow {
    /// Whether the window is open.
    pub open: bool,
    /// The latest parity report and its difference image.
    result: Option<(ParityReport, DisplayImage)>,
    /// The job id of the check in flight, whose answer this window takes.
    pending: Option<u64>,
    /// The image (its load id and file name) of the check in flight, then of `result`.
    checked: super::ImageOf,
    /// The image `result` is of.
    result_of: super::ImageOf,
}

impl ParityWindow {
    /// The latest parity report, if any.
    #[must_use]
    pub fn report(&self) -> Option<&ParityReport> {
        self.result.as_ref().map(|(r, _)| r)
    }

    /// Shows the window when open; takes its check's answer every frame, open or not.
    pub fn show(&mut self, ctx: &egui::Context, room: super::Room, session: &mut Session) {
        if let Some(Answer::Parity(answer)) = self.pending.and_then(|id| session.take_answer(id)) {
            self.pending = None;
            match *answer {
                Ok(result) => {
                    self.result = Some(result);
                    self.result_of = self.checked.take();
                }
                Err(e) => session.toasts.error(format!("The parity check failed: {}", e.describe())),
            }
        }
        let window = room.window("CPU / GPU parity", super::PARITY_ID, egui::Align2::LEFT_BOTTOM);
        self.open = super::show(ctx, window.default_width(520.0), self.open, |ui| self.ui(ui, session));
    }

    fn ui(&mut self, ui: &mut Ui, session: &mut Session) {
        ui.label(
            "Converts the open image on the CPU and on the GPU with the current settings and compares every \
             sample.",
        );
        // What the check will take, said before it starts (a worked GPU run on a software
        // adapter takes seconds): a CPU conversion per formula and one on the GPU.
        let estimate = session.input().map(|input| {
            let size = (input.image.width(), input.image.height());
            let settings = session.settings().convert;
            let cpu = ConvertSettings { backend: Backend::Cpu, ..settings };
            let gpu = ConvertSettings { backend: Backend::Gpu, ..settings };
            let formulas = Formula::COMPUTED.len() as u32;
            let mut parts = convert_parts(&[cpu], formulas, size);
            parts.extend(convert_parts(&[gpu], 1, size));
            session.pace().job(Task::Convert, &parts)
        });
        if let Some(e) = estimate.filter(|_| self.pending.is_none()) {
            ui.label(egui::RichText::new(format!("Takes {}.", e.sentence())).weak());
        }
        if ui.add_enabled(session.input().is_some(), egui::Button::new("Check the open image")).clicked()
            && let Some(input) = session.input().cloned()
        {
            let settings = session.settings().convert;
            self.checked = super::image_of(session);
            let ticket = session.send(Job::Parity { input, settings });
            self.pending = Some(ticket.id);
            // For the status bar's ETA; a check teaches no conversion's pace (its formulas and
            // its difference image are not a run's).
            if let Some(e) = estimate {
                ticket.set_estimate(e.seconds);
            }
        }
        let Some((report, difference)) = &self.result else { return };
        // Results of an image opened before stay, named, until the open one is checked.
        super::opened_before_ui(ui, session, &self.result_of, "check");
        egui::Grid::new("parity").striped(true).show(ui, |ui| {
            ui.strong("compared");
            ui.strong("differing pixels");
            ui.strong("max difference");
            ui.end_row();
            match (&report.cpu_vs_gpu, &report.gpu_error) {
                (Some(d), _) => {
                    ui.label("CPU vs GPU (same formula)");
                    let text = format!("{} of {}", thousands(d.differing), thousands(d.pixels));
                    let good = d.differing == 0;
                    ui.colored_label(
                        if good { Color32::LIGHT_GREEN } else { ui.visuals().error_fg_color },
                        text,
                    );
                    ui.label(levels(d));
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
                ui.label(format!(
                    "{} of {} ({:.1}%)",
                    thousands(d.differing),
                    thousands(d.pixels),
                    d.differing as f64 * 100.0 / d.pixels.max(1) as f64
                ));
                ui.label(levels(d));
                ui.end_row();
            }
        });
        ui.label(format!("Difference image |CPU - GPU| x {DIFF_GAIN}: all black when they agree."));
        let size = egui::vec2(difference.size[0] as f32, difference.size[1] as f32);
        let scale = (480.0 / size.x).min(270.0 / size.y);
        let (rect, _) = ui.allocate_exact_size(size * scale, egui::Sense::hover());
        let place = Placement {
            pane_center: rect.center(),
            center: (size / 2.0).to_pos2(),
            zoom: scale,
            pixels_per_point: ui.ctx().pixels_per_point(),
        };
        difference.paint(&ui.painter_at(rect), &place, &mut TileBudget::new(2));
        ui.painter().rect_stroke(rect, 0.0, egui::Stroke::new(1.0, Color32::GRAY), egui::StrokeKind::Outside);
    }
}

/// The largest difference of `d` on the scale of its outputs' depth ("6297 of 65535 levels"), or
/// that the outputs could not be compared sample by sample.
fn levels(d: &DiffStats) -> String {
    if d.max_diff == u32::MAX {
        "outputs of another size or type".to_owned()
    } else {
        format!("{} of {} levels", d.max_diff, d.top_level)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_difference_is_said_on_its_outputs_scale() {
        let d = DiffStats { pixels: 4, differing: 1, max_diff: 6297, top_level: 65535 };
        assert_eq!(levels(&d), "6297 of 65535 levels");
        assert_eq!(levels(&DiffStats { max_diff: 3, top_level: 255, ..d }), "3 of 255 levels");
        assert_eq!(levels(&DiffStats { max_diff: u32::MAX, ..d }), "outputs of another size or type");
    }
}
