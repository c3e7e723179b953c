//! What the app remembers: settings (persisted between runs) and the history of measured runs.

use std::path::PathBuf;

use crate::engine::{ConvertSettings, ExportOptions, RunReport, WorkgroupSize};

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
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            convert: ConvertSettings::default(),
            round_trip: false,
            view: ViewMode::SideBySide,
            repeat: 10,
            recent: Vec::new(),
            export: ExportOptions::default(),
            export_dir: None,
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

/// One measured conversion, as the charts need it.
#[derive(Clone, Debug)]
pub struct RunRecord {
    /// Run number in this session, from 1.
    pub seq: usize,
    /// Which image (load counter) it ran on.
    pub image_id: u64,
    /// The settings it ran with.
    pub settings: ConvertSettings,
    /// What was measured.
    pub report: RunReport,
    /// The first run of this setting on this image (pipeline compilation, allocation).
    pub cold: bool,
}

impl RunRecord {
    /// The workgroup size, for GPU runs.
    #[must_use]
    pub fn workgroup(&self) -> Option<WorkgroupSize> {
        self.report.workgroup
    }
}
