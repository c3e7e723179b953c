//! The size-sweep window's other tabs, the roofline and the map of who wins, with the choice of
//! which sweep they show (this machine's or one loaded to compare, one at a time, labelled), the
//! work-levels field's words and parsing, and the last sweep with the sizes and levels it was
//! asked for, kept between launches. The charts themselves are in `crate::app::charts`.

use std::sync::Arc;

use egui::{RichText, Ui};

use crate::app::charts::{map_levels, roofline_ui, win_map_ui};
use crate::engine::sweep::SweepResult;
use crate::pixel::{MAX_BLUR_RADIUS, MAX_WORK_ROUNDS, MIN_BLUR_RADIUS};

/// The least height the sweep's charts and maps scroll in, in points.
pub(super) const MIN_CHART_ROOM: f32 = 120.0;

/// Which view of the sweep the window shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum View {
    /// Time against size for every series (the first chart of the window).
    #[default]
    Sizes,
    /// Operations per second against operations per byte, under this machine's roofs.
    Roofline,
    /// The GPU's speed-up over the best CPU at each size and work level.
    WhoWins,
}

/// The work levels of a plain sweep: the grayscale alone.
const PLAIN_LEVELS: &str = "0";

/// The work-per-pixel field of the sweep window.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub(super) struct WorkField {
    /// The levels, rounds per pixel, as typed.
    pub levels: String,
    /// The divergent variant (rounds only for odd gray values).
    pub divergent: bool,
}

/// The work levels that draw the map of who wins.
pub(super) const MAP_LEVELS: &str = "0, 16, 256, 4096";

/// The hover of the button that sets the map's grid.
/// The button that sets the map's grid, naming both what it sets: "Use 0, 16, 256, 4096 at 0.25,
/// 1, 2 MP" (it changed sizes typed by hand, and only its hover said so).
fn use_map_label() -> String {
    let sizes = crate::engine::sweep::DEFAULT_WORK_SIZES_MP.map(|mp| mp.to_string()).join(", ");
    format!("Use {MAP_LEVELS} at {sizes} MP")
}

const USE_MAP_HOVER: &str =
    "Sets the work per pixel above, and the sizes to a work grid's (0.25, 1 and 2 MP); then run the sweep";

/// The hover of the work-levels field.
pub(super) const WORK_HOVER: &str = "Synthetic work per pixel, like mixbench's kernel: after the formula each pixel \
     runs k rounds of a hash of 3 integer operations (shift, xor, multiply), a knob on the operations per byte \
     moved. 0 is the plain grayscale. Every size is measured at every level: 0, 16, 256, 4096 draws the map of who \
     wins.";

/// The hover of the divergent checkbox.
pub(super) const DIVERGENT_HOVER: &str = "Run the rounds only for pixels whose gray value is odd: a branch that \
     diverges inside a GPU workgroup (compare with half the rounds for every pixel).";

/// A field of whole numbers, as typed, that does not read or is out of its range.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(super) enum BadField {
    /// The work levels.
    #[error(
        "Work per pixel must be whole rounds from 0 to {MAX_WORK_ROUNDS} separated by commas, not {0:?}."
    )]
    WorkLevels(String),
    /// The blur radii.
    #[error(
        "Blur radii must be whole pixels from {MIN_BLUR_RADIUS} to {MAX_BLUR_RADIUS} separated by commas, not {0:?}."
    )]
    Radii(String),
}

/// The levels typed in the field, lowest first, each once.
pub(super) fn parse_work_levels(text: &str) -> Result<Vec<u32>, BadField> {
    parse_whole(text, 0..=MAX_WORK_ROUNDS).ok_or_else(|| BadField::WorkLevels(text.to_owned()))
}

/// The whole numbers in `text`, separated by commas, if there are some and all are in `range`:
/// lowest first, each once.
fn parse_whole(text: &str, range: std::ops::RangeInclusive<u32>) -> Option<Vec<u32>> {
    let numbers: Result<Vec<u32>, _> =
        text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::parse::<u32>).collect();
    let mut v = numbers.ok().filter(|v| !v.is_empty() && v.iter().all(|k| range.contains(k)))?;
    v.sort_unstable();
    v.dedup();
    Some(v)
}

/// The hover of the op the work axis's cells run after their rounds.
pub(super) const OP_HOVER: &str = "The Operation chosen beside the formula runs after the rounds in every \
     cell, on both backends, as `graylab sweep --op` does; choose \"none\" for the grayscale alone.";

/// The blur radii the radius axis starts with.
pub(super) const MAP_RADII: &str = "1, 4, 16, 64";

/// The hover of the blur-radius field.
pub(super) const RADII_HOVER: &str = "The map's second axis is the blur's radius instead of the work rounds: each \
     cell runs blur:R on its backend at 0 rounds, 4 (2R + 1) integer operations per pixel, timed with the kernel.";

/// The blur radii typed in the field (each 1 to 64), lowest first, each once.
pub(super) fn parse_radii(text: &str) -> Result<Vec<u32>, BadField> {
    parse_whole(text, MIN_BLUR_RADIUS..=MAX_BLUR_RADIUS).ok_or_else(|| BadField::Radii(text.to_owned()))
}

/// Where the last sweep is kept between launches (egui's persisted memory, which eframe saves
/// with the app's settings).
const KEPT_ID: &str = "graylab last sweep";

impl Default for WorkField {
    fn default() -> Self {
        Self { levels: PLAIN_LEVELS.to_owned(), divergent: false }
    }
}

/// The sweep the window's fields ask for: sizes, runs and work levels, as typed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub(super) struct Asked {
    /// Sizes in megapixels, as typed.
    pub sizes: String,
    /// Warm runs per point.
    pub runs: u32,
    /// The work levels and the divergent variant.
    pub work: WorkField,
    /// The map's second axis: work rounds or the blur's radius.
    pub axis: crate::engine::sweep::GridAxis,
    /// The blur radii, as typed.
    pub radii: String,
}

impl Default for Asked {
    fn default() -> Self {
        // The engine's default sizes, as `graylab sweep` runs them.
        let sizes = crate::engine::sweep::DEFAULT_SIZES_MP.map(|mp| mp.to_string()).join(", ");
        Self {
            sizes,
            runs: 5,
            work: WorkField::default(),
            axis: crate::engine::sweep::GridAxis::WorkRounds,
            radii: MAP_RADII.to_owned(),
        }
    }
}

/// What is kept between launches: the fields of the latest sweep started, and the latest sweep
/// that finished.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(default)]
struct KeptSweep {
    asked: Option<Asked>,
    result: Option<SweepResult>,
}

/// The sweep window's side of keeping its last sweep between launches.
#[derive(Default)]
pub(super) struct Kept {
    /// What is kept now (`None` until read on the first frame).
    now: Option<KeptSweep>,
    /// The sweep last kept, to keep the next one that arrives.
    result: Option<Arc<SweepResult>>,
    /// Whether the sweep shown is one an earlier launch kept.
    pub restored: bool,
}

impl Kept {
    /// On the first frame puts back what an earlier launch kept (the fields, and its sweep into
    /// `shown` when this launch has none yet); later, keeps each sweep `shown` gets.
    pub fn track(&mut self, ctx: &egui::Context, shown: &mut Option<Arc<SweepResult>>, asked: &mut Asked) {
        let id = egui::Id::unique(KEPT_ID);
        if self.now.is_none() {
            let kept: KeptSweep = ctx
                .data_mut(|d| d.get_persisted::<String>(id))
                .and_then(|json| serde_json::from_str(&json).ok())
                .unwrap_or_default();
            if let Some(a) = &kept.asked {
                asked.clone_from(a);
                asked.runs = asked.runs.clamp(1, 100);
            }
            if let Some(r) = &kept.result
                && shown.is_none()
            {
                *shown = Some(Arc::new(r.clone()));
                self.restored = true;
            }
            self.result.clone_from(shown);
            self.now = Some(kept);
        }
        let Some(r) = shown.as_ref() else { return };
        if self.result.as_ref().is_some_and(|k| Arc::ptr_eq(k, r)) {
            return;
        }
        self.result = Some(Arc::clone(r));
        self.restored = false;
        if let Some(kept) = &mut self.now {
            kept.result = Some((**r).clone());
            kept.keep(ctx);
        }
    }

    /// Keeps the fields of a sweep just started.
    pub fn started(&mut self, ctx: &egui::Context, asked: &Asked) {
        let kept = self.now.get_or_insert_with(KeptSweep::default);
        kept.asked = Some(asked.clone());
        kept.keep(ctx);
    }
}

impl KeptSweep {
    /// Keeps it for the next launch, as JSON text: egui finds a persisted value by its type's
    /// `TypeId`, which another build of graylab may give its own types, but not a `String`.
    fn keep(&self, ctx: &egui::Context) {
        match serde_json::to_string(self) {
            Ok(json) => ctx.data_mut(|d| d.insert_persisted(egui::Id::unique(KEPT_ID), json)),
            Err(e) => log::warn!("the last sweep is not kept for the next launch: {e}"),
        }
    }
}

/// The roofline or the map of who wins, of this machine's sweep (`own`) or of one loaded to
/// compare (`shown`: its index; `None`: this machine's, else the first loaded when there is none).
/// The charts end near `bottom_y`, the lowest the window may reach (a window sized to its
/// contents reports little room of its own). Returns `true` when the user asked for the map's
/// work levels.
pub(super) fn views_ui(
    ui: &mut Ui,
    view: View,
    bottom_y: f32,
    own: Option<&SweepResult>,
    compare: &[(String, SweepResult)],
    shown: &mut Option<usize>,
) -> bool {
    let current = match *shown {
        Some(i) if i < compare.len() => Some(i),
        _ if own.is_some() => None,
        _ if !compare.is_empty() => Some(0),
        _ => {
            ui.label("No sweep yet: run one, or load a saved one to compare.");
            // The map and the roofline need several work levels: offer them before the first.
            return ui.button(use_map_label()).on_hover_text(USE_MAP_HOVER).clicked();
        }
    };
    let own_name = |r: &SweepResult| format!("this machine · {}", r.adapter.as_deref().unwrap_or("CPU only"));
    if compare.len() + usize::from(own.is_some()) > 1 {
        ui.horizontal_wrapped(|ui| {
            ui.label("Show:");
            if let Some(r) = own
                && ui.selectable_label(current.is_none(), own_name(r)).clicked()
            {
                *shown = None;
            }
            for (i, (name, _)) in compare.iter().enumerate() {
                if ui.selectable_label(current == Some(i), format!("loaded: {name}")).clicked() {
                    *shown = Some(i);
                }
            }
        });
    }
    let (name, r, mine) = match current.and_then(|i| compare.get(i)) {
        Some((name, r)) => (format!("Loaded: {name}"), r, false),
        None => match own {
            Some(r) => (format!("Showing {}", own_name(r)), r, true),
            None => return false,
        },
    };
    ui.label(RichText::new(name).small());
    let verdict = if mine { r.verdict.clone() } else { loaded_verdict(&r.verdict) };
    super::verdict_ui(ui, &verdict, r.software_adapter);
    match view {
        View::Sizes => false,
        View::Roofline => {
            roofline_ui(ui, r, bottom_y, mine);
            false
        }
        View::WhoWins if map_levels(r).len() < 2 => {
            ui.label("Sweep more than one work level (or blur radius) to see the map.");
            ui.button(use_map_label()).on_hover_text(USE_MAP_HOVER).clicked()
        }
        View::WhoWins => {
            // As the sizes chart: what the maps' least height cannot fit above `bottom_y` (their
            // legend and notes, wrapped on a 1024-px screen) scrolls, never runs off the screen.
            let room = (bottom_y - ui.cursor().top()).max(MIN_CHART_ROOM);
            egui::ScrollArea::vertical()
                .id_salt("who wins")
                .max_height(room)
                .min_scrolled_height(room)
                .auto_shrink([false, true])
                .show(ui, |ui| {
                    let bottom_y = ui.cursor().top() + room;
                    win_map_ui(ui, r, bottom_y);
                });
            false
        }
    }
}

/// A loaded sweep's verdict, written on the machine it ran on: its "this machine" is not this one.
fn loaded_verdict(verdict: &str) -> String {
    verdict.replace("this machine", "that machine")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loaded_verdict_speaks_of_that_machine() {
        assert_eq!(
            loaded_verdict(
                "On this machine (NVIDIA H200) the GPU wins above 0.25 MP. From this machine's ceilings the GPU \
                 end to end never wins."
            ),
            "On that machine (NVIDIA H200) the GPU wins above 0.25 MP. From that machine's ceilings the GPU end \
             to end never wins."
        );
    }

    #[test]
    fn radii_are_whole_pixels_within_the_blur_sorted_once_each() {
        assert_eq!(parse_radii(MAP_RADII), Ok(vec![1, 4, 16, 64]));
        assert_eq!(parse_radii(" 8, 1 ,8,"), Ok(vec![1, 8]));
        assert!(parse_radii("0").is_err());
        assert!(parse_radii("65").is_err_and(|e| e.to_string().contains("1 to 64")));
        assert!(parse_radii("").is_err());
    }

    #[test]
    fn work_levels_are_whole_rounds_sorted_once_each() {
        assert_eq!(parse_work_levels("0"), Ok(vec![0]));
        assert_eq!(parse_work_levels(MAP_LEVELS), Ok(vec![0, 16, 256, 4096]));
        assert_eq!(parse_work_levels(" 256,0 , 16, 16,"), Ok(vec![0, 16, 256]));
        assert!(parse_work_levels("").is_err());
        assert!(parse_work_levels("1.5").is_err());
        assert!(parse_work_levels("-1").is_err());
        assert!(parse_work_levels("70000").is_err_and(|e| e.to_string().contains("65536")));
    }
}
