//! The work the UI asks of the worker thread, and the worker's answers. Every job is sent with a
//! [`Ticket`] (its id, a cancel flag the worker checks between runs, and its progress); every
//! answer carries the id of the job it answers, so the UI can drop answers to superseded jobs.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use image::DynamicImage;

use crate::app::textures::DisplayImage;
use crate::app::work::error::WorkError;
use crate::engine::ceilings::{KnownCeilings, PhaseRate};
use crate::engine::claims::ClaimsReport;
use crate::engine::round_trip::RoundTripResult;
use crate::engine::sweep::{Speedup, SweepOptions, SweepResult, WorkgroupRace};
use crate::engine::{ConvertSettings, CpuCompute, ImageKey, ParityReport, RunReport};
use crate::io::{EncodeReport, ExportOptions};

/// A decoded image and its on-screen textures.
pub struct Loaded {
    /// Load counter: identifies the image in run records.
    pub id: u64,
    /// The file.
    pub path: PathBuf,
    /// The pixels (EXIF orientation applied).
    pub image: Arc<DynamicImage>,
    /// The file's format as sniffed from its content ("PNG", "JPEG"), when known.
    pub format: Option<&'static str>,
    /// The image's identity, for keeping it on the GPU between runs.
    pub key: ImageKey,
    /// Decode time (CPU clock).
    pub decode_ns: u64,
    /// Whether its orientation (EXIF's, or a TIFF's tag) rotated or flipped it, said as the CLI
    /// says it ("EXIF orientation applied"); `None` where it did not.
    pub orientation_note: Option<&'static str>,
    /// Whether that orientation moved the rows as stored off the top (a turn, a vertical flip;
    /// not a mirror): then a truncated file's rows are said as stored.
    pub rows_turned: bool,
    /// What the decoder warned about (a truncated file kept, …); shown as a warning that stays
    /// until dismissed.
    pub warnings: Vec<crate::io::DecodeWarning>,
    /// The colour model the file stores when the decoder converted it ("CMYK", shown as RGB;
    /// "4-bit gray", shown as 8-bit gray).
    pub stored_as: Option<&'static str>,
    /// The file's pixel density, which its exports keep.
    pub density: Option<crate::io::Density>,
    /// The file's EXIF tags and XMP properties that its exports keep.
    pub metadata: Option<Arc<crate::io::KeptMetadata>>,
    /// The input as shown.
    pub display: DisplayImage,
    /// The memory reserved for the image and its conversions and exports, held while it is open.
    #[expect(dead_code, reason = "held, never read: dropping the image releases the reservation")]
    pub memory: crate::system::memory_budget::Reservation,
}

impl Loaded {
    /// The input's caption: "Original · PNG · 16-bit RGB", and what is missing from a truncated
    /// file kept.
    #[must_use]
    pub fn caption(&self) -> String {
        let kind = match self.stored_as {
            Some(stored) => format!("{} (from {stored})", pixel_kind(&self.image)),
            None => pixel_kind(&self.image),
        };
        let what = match self.format {
            Some(format) => format!("Original · {format} · {kind}"),
            None => format!("Original · {kind}"),
        };
        match self.warnings.first() {
            Some(warning) => format!("{what}: {}", warning_note(warning, self.rows_turned)),
            None => what,
        }
    }
}

/// What a decode warning leaves missing, in a caption's words. The rows are the file's as
/// stored: when its orientation moved them off the top (`rows_turned`), the caption says so,
/// since the gray part shown is then columns, or the top rows (a truncated file turned 90° is
/// gray in its left columns, not its bottom rows).
fn warning_note(warning: &crate::io::DecodeWarning, rows_turned: bool) -> String {
    use crate::io::{DecodeWarning, TruncatedAt};
    let stored = if rows_turned { " stored" } else { "" };
    let turned = if rows_turned { " (before its rotation)" } else { "" };
    match warning {
        DecodeWarning::Truncated(TruncatedAt::Row { rows, height }) => {
            format!("truncated file, {rows} of {height}{stored} rows decoded{turned}, the rest gray")
        }
        DecodeWarning::Truncated(_) => "truncated file, partly decoded".to_owned(),
        DecodeWarning::DamagedRestart { rows: (first, end), height, .. } => {
            format!("damaged file,{stored} rows {first} to {end} of {height} lost{turned}")
        }
        DecodeWarning::RestartRenumbered { .. } => "a restart marker renumbered, no row lost".to_owned(),
        DecodeWarning::ExtraneousBytes { .. } => "corrupt bytes skipped".to_owned(),
        DecodeWarning::ScansMissing => "scans missing".to_owned(),
        DecodeWarning::EndMarkerMissing => "no end marker".to_owned(),
        DecodeWarning::LongerThanHeader { .. } => "more bytes than its header says".to_owned(),
        DecodeWarning::Damaged { .. } => "damaged data".to_owned(),
        DecodeWarning::FirstFrameOnly(n) => n.read(),
    }
}

/// The bit depth and channels of an image: "8-bit RGB", "16-bit gray + alpha".
#[must_use]
pub fn pixel_kind(image: &DynamicImage) -> String {
    let colour = image.color();
    let channels = match (colour.has_color(), colour.has_alpha()) {
        (true, true) => "RGBA",
        (true, false) => "RGB",
        (false, true) => "gray + alpha",
        (false, false) => "gray",
    };
    let bits = u32::from(colour.bits_per_pixel()) / u32::from(colour.channel_count().max(1));
    let float = matches!(image, DynamicImage::ImageRgb32F(_) | DynamicImage::ImageRgba32F(_));
    format!("{bits}-bit{} {channels}", if float { " float" } else { "" })
}

/// The name of a sniffed format, as users know it.
#[must_use]
pub fn format_name(format: image::ImageFormat) -> &'static str {
    match format {
        image::ImageFormat::Jpeg => "JPEG",
        image::ImageFormat::Png => "PNG",
        image::ImageFormat::Tiff => "TIFF",
        image::ImageFormat::Bmp => "BMP",
        image::ImageFormat::WebP => "WebP",
        image::ImageFormat::Gif => "GIF",
        _ => "image",
    }
}

/// The file name of `path`, for labels.
pub(in crate::app) fn file_name(path: &std::path::Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
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
    /// Whether it is the luma the JPEG stores, decoded alone (no conversion ran).
    pub stored_luma: bool,
}

/// How far a job is: runs done of all, and the work done of all (for the ETA, e.g. megapixels).
#[derive(Clone, Debug)]
pub struct Progress {
    /// What is being done, for the status line.
    pub what: String,
    /// When the job started.
    pub started: Instant,
    /// The process's one-time work when the job started (what it did since is not its pace).
    pub one_time_at: crate::system::one_time::OneTimeMark,
    /// Runs (or steps) done and in all; `total == 0` for work of unknown length.
    pub done: u64,
    /// Runs (or steps) in all.
    pub total: u64,
    /// Work done and in all, in any unit proportional to time.
    pub work_done: f64,
    /// Work in all.
    pub work_total: f64,
    /// When `work_done` last moved: a step in progress says nothing new of the pace.
    pub work_moved_at: Instant,
    /// What the job was estimated to take before it started, seconds.
    pub estimate_s: Option<f64>,
    /// Whether the work is the pixels of one conversion, counted as it runs.
    pub of_pixels: bool,
}

impl Progress {
    /// Seconds since the job started.
    #[must_use]
    pub fn elapsed_secs(&self) -> f32 {
        self.started.elapsed().as_secs_f32()
    }

    /// Seconds of one-time work (the GPU opened, pipelines compiled, ceilings measured) done
    /// since the job started: part of its wall time, not of its pace.
    #[must_use]
    pub fn one_time_s(&self) -> f64 {
        self.one_time_at.since_s()
    }

    /// Estimated seconds left, with what they rest on ("from the pace so far", …): what remains
    /// of the estimate, corrected by the pace seen so far in this job, one-time work left out
    /// ([`crate::engine::estimate::Standing`]).
    #[must_use]
    pub fn eta(&self) -> Option<(f32, &'static str)> {
        let standing = crate::engine::estimate::Standing {
            estimate_s: self.estimate_s,
            elapsed_s: f64::from(self.elapsed_secs()),
            one_time_s: self.one_time_s(),
            done: (self.work_total > 0.0).then(|| self.work_done / self.work_total),
            since_done_s: self.work_moved_at.elapsed().as_secs_f64(),
        };
        standing.left().map(|(s, basis)| (s as f32, basis))
    }

    /// What is left, in words, with what it rests on: "about 12.7 s left (from the pace so
    /// far)"; "longer than estimated" once an estimate (corrected by the pace) is overrun, not
    /// the whole estimate said again; `None` when nothing says.
    #[must_use]
    pub fn left_text(&self) -> Option<String> {
        match self.eta() {
            Some((s, basis)) => {
                Some(format!("about {} left ({basis})", crate::system::units::elapsed_text(f64::from(s))))
            }
            None if self.estimate_s.is_some_and(|e| e > 0.0) || self.work_done > 0.0 => {
                Some("longer than estimated".to_owned())
            }
            None => None,
        }
    }

    /// Done as a fraction, when the total is known.
    #[must_use]
    pub fn fraction(&self) -> Option<f32> {
        (self.work_total > 0.0).then(|| (self.work_done / self.work_total).clamp(0.0, 1.0) as f32)
    }
}

/// A job's handle, shared by the UI (to cancel it, to show its progress) and the worker.
#[derive(Clone, Default)]
pub struct Ticket {
    /// Job id.
    pub id: u64,
    cancel: Arc<AtomicBool>,
    progress: Arc<Mutex<Option<Progress>>>,
    estimate_s: Arc<Mutex<Option<f64>>>,
    step_weights: Arc<Mutex<Vec<f64>>>,
    pixels: Arc<crate::engine::PixelProgress>,
}

impl Ticket {
    /// A ticket for job `id`.
    #[must_use]
    pub fn new(id: u64) -> Self {
        Self { id, ..Self::default() }
    }

    /// Asks the worker to stop this job at the next check (between runs, and between a GPU
    /// run's submissions).
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// Whether the job was cancelled.
    #[must_use]
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// The cancel flag itself, for work that checks it as it goes (a GPU job).
    #[must_use]
    pub fn flag(&self) -> &AtomicBool {
        &self.cancel
    }

    /// Sets the job's progress (the worker, as it goes).
    pub fn set_progress(&self, what: impl Into<String>, done: u64, total: u64, work: (f64, f64)) {
        let mut p = self.progress.lock().unwrap_or_else(PoisonError::into_inner);
        let (work_done, work_total) = work;
        let now = Instant::now();
        let (started, one_time_at, work_moved_at) = p.as_ref().map_or_else(
            || (now, crate::system::one_time::OneTimeMark::now(), now),
            |p| {
                let same = (p.work_done - work_done).abs() < f64::EPSILON;
                (p.started, p.one_time_at, if same { p.work_moved_at } else { now })
            },
        );
        *p = Some(Progress {
            what: what.into(),
            started,
            one_time_at,
            done,
            total,
            work_done,
            work_total,
            work_moved_at,
            estimate_s: None,
            of_pixels: false,
        });
        drop(p);
        self.pixels.hold().point(crate::system::progress::HoldAt::Step);
    }

    /// Sets what the job is doing, work of unknown length.
    pub fn set_doing(&self, what: impl Into<String>) {
        self.set_progress(what, 0, 0, (0.0, 0.0));
    }

    /// The count of pixels done that a conversion of this job adds to as it runs.
    #[must_use]
    pub fn pixels(&self) -> &crate::engine::PixelProgress {
        &self.pixels
    }

    /// Sets what the job is estimated to take, seconds (before it starts, or once it knows better).
    pub fn set_estimate(&self, seconds: f64) {
        *self.estimate_s.lock().unwrap_or_else(PoisonError::into_inner) = Some(seconds);
    }

    /// Weighs a job of steps (the claims) by what each step is estimated to take, seconds, so
    /// that its progress counts time, not steps: a job reporting `k` of `weights.len()` steps
    /// done is the first `k` weights' share done.
    pub fn set_step_weights(&self, weights: Vec<f64>) {
        *self.step_weights.lock().unwrap_or_else(PoisonError::into_inner) = weights;
    }

    /// The job's progress, once it started.
    #[must_use]
    pub fn progress(&self) -> Option<Progress> {
        let estimate_s = *self.estimate_s.lock().unwrap_or_else(PoisonError::into_inner);
        let mut p = self.progress.lock().unwrap_or_else(PoisonError::into_inner).clone()?;
        p.estimate_s = estimate_s;
        let weights = self.step_weights.lock().unwrap_or_else(PoisonError::into_inner);
        if !weights.is_empty() && (weights.len() as f64 - p.work_total).abs() < 0.5 {
            let done = (p.work_done.max(0.0) as usize).min(weights.len());
            // `+ 0.0`: an empty sum is -0.0, which would read "-0%".
            (p.work_done, p.work_total) = (weights[..done].iter().sum::<f64>() + 0.0, weights.iter().sum());
        }
        drop(weights);
        // One conversion: its share of the pixels done is the job's.
        if p.total == 1
            && let Some(fraction) = self.pixels.fraction()
        {
            (p.work_done, p.work_total, p.of_pixels) = (fraction, 1.0, true);
            // Counted as they run: the pace is now's.
            p.work_moved_at = Instant::now();
        }
        Some(p)
    }
}

/// Work for the worker.
pub enum Job {
    /// Decode a file (or take the result of a decode started before the window opened).
    Load {
        /// The file.
        path: PathBuf,
        /// Longest side of the preview level, in pixels.
        preview_side: u32,
        /// How to decode (truncated files, memory reserved for GPU work).
        options: crate::io::DecodeOptions,
        /// A decode started earlier for this file, if any.
        preloaded: Option<crate::app::work::preload::Preload>,
    },
    /// Convert the current image `runs` times with each of `settings` (each run is reported).
    Convert {
        /// The image.
        input: Arc<Loaded>,
        /// How; several for a comparison (e.g. every workgroup size).
        settings: Vec<ConvertSettings>,
        /// How many runs of each.
        runs: u32,
        /// The download, the input kept, the preview's size.
        how: RunHow,
    },
    /// Measure the size sweep (on the open photo, resized, or synthetic images).
    Sweep {
        /// Sizes, runs, workgroup, formula, what each cell runs after the grayscale.
        options: SweepOptions,
        /// The photo to resize, if any.
        photo: Option<Arc<Loaded>>,
        /// What this machine was seen to take, to plan a work grid by.
        pace: Box<crate::engine::estimate::Pace>,
    },
    /// Compare CPU and GPU output (and the formulas) for the open image.
    Parity {
        /// The image.
        input: Arc<Loaded>,
        /// How.
        settings: ConvertSettings,
    },
    /// Read this GPU's ceilings from the cache, or measure them (always, with `remeasure`).
    Ceilings {
        /// Measure even when cached.
        remeasure: bool,
    },
    /// Read this GPU's ceilings from the cache only (at launch, so that the first run is held
    /// against them); nothing is measured, and without a cache there is no answer.
    CachedCeilings,
    /// Measure operations per round trip on the open image; answered with [`Answer::RoundTrips`].
    RoundTrips {
        /// The image.
        input: Arc<Loaded>,
        /// Formula, workgroup, threads and work per pixel.
        settings: ConvertSettings,
        /// The counts of operations per round trip, and warm runs of each.
        passes: (Vec<u32>, u32),
    },
    /// Run the image on the CPU and the GPU in turns until one is decided faster, or they are
    /// within the noise; answered with [`Answer::Compared`].
    Compare {
        /// The image.
        input: Arc<Loaded>,
        /// The two sides (CPU, GPU), otherwise the panel's settings.
        settings: [ConvertSettings; 2],
    },
    /// Race every workgroup shape on the open image in turns until the fastest is decided;
    /// answered with [`Answer::Raced`].
    Workgroups {
        /// The image.
        input: Arc<Loaded>,
        /// The panel's settings (the shape is raced, the backend is the GPU).
        settings: ConvertSettings,
    },
    /// Time every transfer path from 4 KiB to `largest_bytes`; answered with
    /// [`Answer::TransferPaths`].
    TransferPaths {
        /// The largest size timed.
        largest_bytes: u64,
    },
    /// Test the tutorial's claims on this machine (the quick set, or all of them).
    Claims {
        /// Smaller images and fewer runs.
        quick: bool,
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

/// How a conversion job runs, beyond its settings.
#[derive(Clone, Copy, Debug)]
pub struct RunHow {
    /// GPU: download the result too.
    pub round_trip: bool,
    /// GPU: keep the input on the GPU for the next run of this image (else free a kept one).
    pub keep_input: bool,
    /// Longest side of the preview level, in pixels.
    pub preview_side: u32,
}

/// Kinds of job, for progress and Stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobKind {
    /// Decoding a file.
    Load,
    /// Conversions (one, Run ×N, or every workgroup size).
    Convert,
    /// The size sweep.
    Sweep,
    /// The parity check.
    Parity,
    /// An export.
    Export,
    /// Measuring (or reading the cache of) the GPU's ceilings.
    Ceilings,
    /// Testing the tutorial's claims.
    Claims,
    /// Measuring operations per round trip.
    RoundTrips,
    /// The CPU and the GPU in turns on the open image.
    Compare,
    /// Every workgroup shape in turns on the open image.
    Workgroups,
    /// Timing every transfer path.
    TransferPaths,
}

impl JobKind {
    /// Whether Stop (and Esc) cancels it.
    #[must_use]
    pub fn stoppable(self) -> bool {
        matches!(
            self,
            Self::Convert
                | Self::Sweep
                | Self::Parity
                | Self::Claims
                | Self::RoundTrips
                | Self::Compare
                | Self::Workgroups
                | Self::TransferPaths
                | Self::Ceilings
        )
    }
}

impl Job {
    /// What kind of job this is (for progress and Stop).
    #[must_use]
    pub fn kind(&self) -> JobKind {
        match self {
            Self::Load { .. } => JobKind::Load,
            Self::Convert { .. } => JobKind::Convert,
            Self::Sweep { .. } => JobKind::Sweep,
            Self::Parity { .. } => JobKind::Parity,
            Self::Export { .. } => JobKind::Export,
            Self::Claims { .. } => JobKind::Claims,
            Self::RoundTrips { .. } => JobKind::RoundTrips,
            Self::Compare { .. } => JobKind::Compare,
            Self::Workgroups { .. } => JobKind::Workgroups,
            Self::TransferPaths { .. } => JobKind::TransferPaths,
            Self::Ceilings { .. } | Self::CachedCeilings => JobKind::Ceilings,
        }
    }
}

/// What an export measured.
pub struct Exported {
    /// The file written.
    pub path: PathBuf,
    /// The encoder's report.
    pub encode: EncodeReport,
    /// The conversion it needed first (a GPU result that stayed on the GPU), if any.
    pub converted: Option<RunReport>,
    /// The whole export, CPU clock.
    pub wall_ns: u64,
    /// The settings of the result written.
    pub settings: ConvertSettings,
}

/// What one run measured: its phases, and each as a rate against this machine's ceiling.
pub struct Measured {
    /// The phases, finished with the run's wall time.
    pub report: RunReport,
    /// [`crate::engine::Engine::phase_rates`] of `report`.
    pub rates: Vec<PhaseRate>,
}

/// How a run of the tutorial's claims ended.
pub enum ClaimsEnd {
    /// Every claim was tested.
    Finished(Box<ClaimsReport>),
    /// Stop (or Esc) ended it after `done` of `total` claims; nothing was kept.
    Stopped {
        /// Claims tested before it stopped.
        done: u64,
        /// Claims in the set.
        total: u64,
    },
    /// An experiment failed.
    Failed(WorkError),
}

/// The result of an experiment a window or panel asked for (or why there is none): the one
/// way every experiment comes back, kept by the session until the one that asked takes it by
/// the job's id (`Session::take_answer`) and owns it.
pub enum Answer {
    /// Operations per round trip.
    RoundTrips(Result<RoundTripResult, WorkError>),
    /// CPU vs GPU in turns.
    Compared(Result<Speedup, WorkError>),
    /// Every workgroup shape in turns.
    Raced(Result<WorkgroupRace, WorkError>),
    /// Every transfer path, fitted.
    TransferPaths(Result<Vec<crate::engine::ceilings::TransferPath>, WorkError>),
    /// A size sweep or work grid.
    Swept(Box<Result<SweepResult, WorkError>>),
    /// The parity check and its difference image.
    Parity(Box<Result<(ParityReport, DisplayImage), WorkError>>),
    /// How a run of the tutorial's claims ended.
    Claims(ClaimsEnd),
}

/// Answers from the worker; each names the job it answers.
pub enum Reply {
    /// A file was decoded.
    Loaded(u64, Arc<Loaded>),
    /// Decoding failed; nothing else changed.
    LoadFailed(u64, PathBuf, WorkError),
    /// One run finished.
    Converted(u64, Box<Output>, Box<Measured>),
    /// A conversion failed.
    ConvertFailed(u64, WorkError),
    /// A run in flight was cut short by its cancel flag (between GPU submissions).
    RunCancelled(u64),
    /// A job ended (every run done, or cancelled, or superseded).
    Done(u64),
    /// An export finished.
    Exported(Box<Exported>),
    /// An export failed; nothing was written.
    ExportFailed(PathBuf, WorkError),
    /// The GPU's ceilings (or why they could not be had).
    Ceilings(Result<KnownCeilings, WorkError>),
    /// The CPU's compute ceiling (or why it could not be measured).
    CpuCompute(Result<CpuCompute, WorkError>),
    /// An experiment a window or panel asked for ended, with its answer.
    Answered(u64, Answer),
}
