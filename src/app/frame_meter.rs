//! How long the UI thread spends building each frame (CPU clock), shown in the top bar.

use std::collections::VecDeque;
use std::time::Instant;

use egui::{RichText, Ui};

/// Frames kept for the readout.
const FRAMES: usize = 120;

/// Build times of the last frames.
#[derive(Default)]
pub struct FrameMeter {
    build_ms: VecDeque<f32>,
}

impl FrameMeter {
    /// Records the time since `started` as one frame's build time.
    pub fn record(&mut self, started: Instant) {
        self.build_ms.push_back(started.elapsed().as_secs_f32() * 1e3);
        while self.build_ms.len() > FRAMES {
            self.build_ms.pop_front();
        }
    }

    /// The readout.
    pub fn ui(&self, ui: &mut Ui) {
        let worst = self.build_ms.iter().copied().fold(0.0f32, f32::max);
        let last = self.build_ms.back().copied().unwrap_or(0.0);
        ui.label(RichText::new(format!("UI {last:.1} ms/frame (max {worst:.1})")).small().weak())
            .on_hover_text("Time the UI thread spent building each frame (CPU clock), last 120 frames");
    }
}
