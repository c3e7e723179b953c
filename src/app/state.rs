//! What the app remembers: settings (persisted between runs) and the history of measured runs.

use std::path::PathBuf;

use crate::engine::ceilings::PhaseRate;
use crate::engine::{ConvertSettings, RunReport};
use crate::io::ExportOptions;
use crate::pixel::{Formula, Work};

/// How input and output are shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ViewMode {
    /// Input left, output right, one shared pan/zoom.
    #[default]
    SideBySide,
    /// One image: input left of the wipe line, output right of it.
    Wipe,
    /// One image, flipped between input and output with the B key.
    Flip,
}

/// Everything the user chose that outlives the session.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Backend, formula, workgroup, threads, alpha.
    pub convert: ConvertSettings,
    /// GPU: also download the result each run (the full round trip), not only show it.
    pub round_trip: bool,
    /// GPU: keep the input on the GPU between runs of the same image, so that another formula
    /// or workgroup size uploads nothing.
    pub keep_input_on_gpu: bool,
    /// How the two images are shown.
    pub view: ViewMode,
    /// Runs queued by the "Run" button.
    pub repeat: u32,
    /// Recently opened files, newest first.
    pub recent: Vec<PathBuf>,
    /// Export format, quality, depth.
    pub export: ExportOptions,
    /// The folder of the last export.
    pub export_dir: Option<PathBuf>,
    /// Light, dark, or the system's theme (View menu).
    pub theme: egui::ThemePreference,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            convert: ConvertSettings::default(),
            round_trip: false,
            keep_input_on_gpu: false,
            view: ViewMode::SideBySide,
            repeat: 10,
            recent: Vec::new(),
            export: ExportOptions::default(),
            export_dir: None,
            theme: egui::ThemePreference::System,
        }
    }
}

impl Settings {
    /// Puts `path` first in the recent list (at most 10 kept).
    pub fn remember(&mut self, path: PathBuf) {
        self.recent.retain(|p| p != &path);
        self.recent.insert(0, path);
        self.recent.truncate(10);
    }
}

/// The runs of a saved `graylab bench --json` set beside this image's on the runs chart: one
/// record per setting, its warm medians (see [`crate::engine::SavedBench`]).
#[derive(Clone, Debug)]
pub struct ComparedRuns {
    /// Its file's name ("b.json").
    pub file: String,
    /// Its file's name, the image and the adapter it ran on ("b.json · synthetic 7680x4320 Rgb8 ·
    /// NVIDIA H200").
    pub label: String,
    /// One record per setting, each named `label` and on no image of this session.
    pub runs: Vec<RunRecord>,
}

impl ComparedRuns {
    /// The image id of compared runs: none of this session's images.
    pub const IMAGE: u64 = u64::MAX;

    /// Whether `path` names a saved bench (a `.json` file) to compare with, not an image to open.
    #[must_use]
    pub fn is_saved_bench(path: &std::path::Path) -> bool {
        path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"))
    }

    /// The records of `saved`, read from the file named `file`.
    #[must_use]
    pub fn of(file: &str, saved: &crate::engine::SavedBench) -> Self {
        let adapter = saved.adapter.as_deref().unwrap_or("no GPU run");
        let label = format!("{file} · {} · {adapter}", saved.image);
        let runs = saved
            .results
            .iter()
            .enumerate()
            .map(|(i, r)| RunRecord {
                seq: i + 1,
                image_id: Self::IMAGE,
                image_name: label.clone(),
                settings: r.settings,
                report: r.median_run(),
                rates: Vec::new(),
                cold: false,
            })
            .collect();
        Self { file: file.to_owned(), label, runs }
    }
}

/// One measured conversion, as the charts need it. Exports are not runs: they are
/// [`ExportRecord`]s, listed apart.
#[derive(Clone, Debug)]
pub struct RunRecord {
    /// Run number in this session, from 1: the same in the Last run panel, the chart's hover and
    /// its x axis.
    pub seq: usize,
    /// Which image (load counter) it ran on.
    pub image_id: u64,
    /// That image's file name.
    pub image_name: String,
    /// The settings it ran with.
    pub settings: ConvertSettings,
    /// What was measured, phase by phase, `display` included (the engine's on the GPU, the app's
    /// preview of a CPU result), finished with the wall time the app waited for the run: its
    /// phases − `overlap_ns` + `other_ns` = `total_ns`.
    pub report: RunReport,
    /// Its phases as rates against this machine's ceilings.
    pub rates: Vec<PhaseRate>,
    /// The first run of this setting on this image (pipeline compilation, allocation).
    pub cold: bool,
}

impl RunRecord {
    /// The series the run belongs to: its formula and work per pixel.
    #[must_use]
    pub fn series(&self) -> RunSeries {
        RunSeries { formula: self.settings.formula, work: self.settings.work }
    }

    /// The whole run as the app waited for it (CPU clock).
    #[must_use]
    pub fn wall_ns(&self) -> u64 {
        self.report.total_ns
    }

    /// The wall time no phase accounts for (waiting, submitting, bookkeeping).
    #[must_use]
    pub fn other_ns(&self) -> u64 {
        self.report.other_ns
    }

    /// How much the phases add up to more than the wall time: steps that ran at once.
    #[must_use]
    pub fn overlap_ns(&self) -> u64 {
        self.report.overlap_ns
    }
}

#[cfg(test)]
impl RunRecord {
    /// A warm GPU run `seq` of a 4x4 image 1 ("a.png") made of `spans`, finished at `wall_ns`.
    pub(crate) fn of_spans(seq: usize, spans: Vec<crate::engine::Span>, wall_ns: u64) -> Self {
        let mut report = RunReport::new(crate::engine::Backend::Gpu, Formula::default(), (4, 4), Vec::new());
        report.spans = spans;
        report.finish(wall_ns);
        let (image_name, settings) = ("a.png".to_owned(), ConvertSettings::default());
        Self { seq, image_id: 1, image_name, settings, report, rates: Vec::new(), cold: false }
    }
}

/// Runs that chart together: the same formula and the same work per pixel (runs at another
/// work level are another series, as runs of another formula are).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunSeries {
    /// The gray formula.
    pub formula: Formula,
    /// The synthetic work per pixel.
    pub work: Work,
}

impl RunSeries {
    /// "bt601", "bt601 · 256 rounds/px", "bt601 · 4 rounds/px, odd grays only".
    #[must_use]
    pub fn label(self) -> String {
        match work_label(self.work) {
            Some(work) => format!("{} · {work}", self.formula.name()),
            None => self.formula.name().to_owned(),
        }
    }
}

/// The work of a series of runs, short: "256 rounds/px", "256 rounds/px, odd grays only";
/// `None` for the plain grayscale.
#[must_use]
pub fn work_label(work: Work) -> Option<String> {
    (work.rounds > 0).then(|| {
        let odd = if work.divergent { ", odd grays only" } else { "" };
        format!("{} rounds/px{odd}", work.rounds)
    })
}

/// One export: the file, what encoding it took, and the conversion it needed first, if any.
#[derive(Clone, Debug)]
pub struct ExportRecord {
    /// Export number in this session, from 1 (counted apart from the runs).
    pub seq: usize,
    /// The open image it was exported from (`None`: none was open).
    pub image_id: Option<u64>,
    /// The file written.
    pub path: PathBuf,
    /// The format written ("PNG", …).
    pub format: String,
    /// The file's size in bytes.
    pub bytes: u64,
    /// Encoding and writing the file (CPU clock).
    pub encode_ns: u64,
    /// The GPU result converted again to be read back, when it stayed on the GPU (CPU clock).
    pub convert_ns: Option<u64>,
    /// The whole export as the app waited for it (CPU clock).
    pub wall_ns: u64,
    /// What the result written is: "GPU, bt601 · 256 rounds/px, blur:8".
    pub what: String,
}

/// What a result of `settings` is, short: "GPU, bt601 · 256 rounds/px", "CPU, bt709, blur:8".
#[must_use]
pub fn result_label(settings: &crate::engine::ConvertSettings) -> String {
    let series = RunSeries { formula: settings.formula, work: settings.work }.label();
    let op = if settings.op.is_none() { String::new() } else { format!(", {}", settings.op) };
    format!("{}, {series}{op}", settings.backend)
}

#[cfg(test)]
mod tests {
    use super::Settings;
    use egui::ThemePreference;

    #[test]
    fn the_theme_is_kept_with_the_settings_and_an_older_file_follows_the_system() {
        // As eframe keeps them: RON, in `app.ron`.
        let light = Settings { theme: ThemePreference::Light, ..Settings::default() };
        let text = ron::to_string(&light).expect("written");
        let read: Settings = ron::from_str(&text).expect("read back");
        assert_eq!(read.theme, ThemePreference::Light, "{text}");
        // Settings written before the theme was one of them.
        let older = text.replace("theme:Light", "").replace(",,", ",").replace(",)", ")");
        assert!(!older.contains("theme"), "{older}");
        let read: Settings = ron::from_str(&older).expect("an older file reads");
        assert_eq!(read.theme, ThemePreference::System);
        assert_eq!(read.repeat, light.repeat, "and the rest as it was");
    }
}
