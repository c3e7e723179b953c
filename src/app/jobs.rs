//! The work the UI asks of the worker thread, and the worker's answers. Every answer carries the
//! id of the job it answers, so the UI can drop answers to superseded jobs.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use image::DynamicImage;

use super::textures::DisplayImage;
use crate::engine::{ConvertSettings, ExportOptions, RunReport};
use crate::io::EncodeReport;

/// A decoded image and its on-screen textures.
pub struct Loaded {
    /// Load counter: identifies the image in run records.
    pub id: u64,
    /// The file.
    pub path: PathBuf,
    /// The pixels (EXIF orientation applied).
    pub image: DynamicImage,
    /// Decode time (CPU clock).
    pub decode_ns: u64,
    /// Whether EXIF orientation rotated or flipped it.
    pub reoriented: bool,
    /// The input as shown.
    pub display: DisplayImage,
}

/// A converted image: on screen always, on the host when it was computed or downloaded there.
pub struct Output {
    /// The image it came from.
    pub image_id: u64,
    /// The gray pixels on the host, or `None` when a GPU result stayed on the GPU.
    pub pixels: Option<Arc<DynamicImage>>,
    /// The output as shown.
    pub display: DisplayImage,
    /// The settings that made it.
    pub settings: ConvertSettings,
}

/// Work for the worker.
pub enum Job {
    /// Decode a file.
    Load {
        /// Job id.
        id: u64,
        /// The file.
        path: PathBuf,
    },
    /// Convert the current image `runs` times with each of `settings` (each run is reported).
    Convert {
        /// Job id.
        id: u64,
        /// The image.
        input: Arc<Loaded>,
        /// How; several for a comparison (e.g. every workgroup size).
        settings: Vec<ConvertSettings>,
        /// GPU: download the result too.
        round_trip: bool,
        /// How many runs.
        runs: u32,
    },
    /// Measure the size sweep (on the open photo, resized, or synthetic images).
    Sweep {
        /// Sizes, runs, workgroup, formula.
        options: crate::engine::SweepOptions,
        /// The photo to resize, if any.
        photo: Option<Arc<Loaded>>,
    },
    /// Compare CPU and GPU output (and the formulas) for the open image.
    Parity {
        /// The image.
        input: Arc<Loaded>,
        /// How.
        settings: ConvertSettings,
    },
    /// Write the output of `settings` for `input` to a file (converting first when the current
    /// output is not on the host).
    Export {
        /// The image.
        input: Arc<Loaded>,
        /// The host pixels of the current output, if any.
        pixels: Option<Arc<DynamicImage>>,
        /// How the output is made.
        settings: ConvertSettings,
        /// The file.
        path: PathBuf,
        /// Format, quality, overwrite.
        options: ExportOptions,
    },
}

/// Answers from the worker.
pub enum Reply {
    /// A file was decoded.
    Loaded(u64, Arc<Loaded>),
    /// Decoding failed; nothing else changed.
    LoadFailed(u64, PathBuf, String),
    /// One run finished.
    Converted(u64, Box<Output>, RunReport),
    /// A conversion failed.
    ConvertFailed(u64, String),
    /// Every run of a conversion job is done.
    ConvertDone(u64),
    /// An export finished.
    Exported(PathBuf, EncodeReport),
    /// An export failed; nothing was written.
    ExportFailed(PathBuf, String),
    /// A job was dropped because a newer one superseded it.
    Skipped,
    /// A sweep finished (or failed).
    Swept(Result<crate::engine::SweepResult, String>),
    /// A parity check finished (or failed).
    Parity(Box<Result<(crate::engine::ParityReport, DisplayImage), String>>),
}

/// What the worker is doing, for the progress line.
#[derive(Clone, Default)]
pub struct Activity(Arc<Mutex<Option<(String, Instant)>>>);

impl Activity {
    /// Sets (or clears) the current task.
    pub fn set(&self, what: Option<String>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = what.map(|w| (w, Instant::now()));
    }

    /// The current task and how long it has run.
    #[must_use]
    pub fn current(&self) -> Option<(String, f32)> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map(|(w, t)| (w.clone(), t.elapsed().as_secs_f32()))
    }
}

impl Reply {
    /// Whether this answer ends a job (the UI counts jobs in flight).
    #[must_use]
    pub fn ends_job(&self) -> bool {
        !matches!(self, Self::Converted(..) | Self::ConvertFailed(..))
    }
}
