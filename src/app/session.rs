//! The state every panel shares: settings, the engine and worker, the open image and its
//! output, the run history and the messages. Panels read it and ask it to start work; it never
//! draws anything and knows no panel.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use super::jobs::{Job, Loaded, Output, Reply};
use super::state::{RunRecord, Settings};
use super::textures::DisplayImage;
use super::toasts::Toasts;
use super::worker::Worker;
use crate::engine::{Backend, ConvertSettings, Engine, GpuContext, ParityReport, RunReport, SweepResult};
use crate::io::EncodeReport;

/// The shared state of the app.
pub struct Session {
    settings: Settings,
    gpu: Option<Arc<GpuContext>>,
    gpu_error: Option<String>,
    worker: Option<Worker>,
    input: Option<Arc<Loaded>>,
    output: Option<Output>,
    runs: Vec<RunRecord>,
    /// Settings already run once on an image (the first run of each is cold).
    seen: HashSet<String>,
    next_id: u64,
    latest_load: u64,
    latest_convert: u64,
    converting: bool,
    /// Jobs sent to the worker and not answered yet.
    in_flight: usize,
    /// The settings of the latest conversion asked for.
    requested: Option<(ConvertSettings, bool)>,
    /// Re-run as soon as a run ends.
    pub continuous: bool,
    /// Errors and notes for the user.
    pub toasts: Toasts,
    last_export: Option<(PathBuf, EncodeReport)>,
    sweep: Option<Arc<SweepResult>>,
    parity: Option<(ParityReport, DisplayImage)>,
}

impl Session {
    /// A session on eframe's wgpu device (or without one: then only errors are shown).
    pub fn new(cc: &eframe::CreationContext<'_>, settings: Settings) -> Self {
        let mut session = Self {
            settings,
            gpu: None,
            gpu_error: None,
            worker: None,
            input: None,
            output: None,
            runs: Vec::new(),
            seen: HashSet::new(),
            next_id: 0,
            latest_load: 0,
            latest_convert: 0,
            converting: false,
            in_flight: 0,
            requested: None,
            continuous: false,
            toasts: Toasts::default(),
            last_export: None,
            sweep: None,
            parity: None,
        };
        let Some(rs) = &cc.wgpu_render_state else {
            session.toasts.error("graylab needs the wgpu renderer, which could not start".into());
            return session;
        };
        let gpu =
            Arc::new(GpuContext::from_device(rs.device.clone(), rs.queue.clone(), rs.adapter.get_info()));
        let compute =
            rs.adapter.get_downlevel_capabilities().flags.contains(wgpu::DownlevelFlags::COMPUTE_SHADERS);
        if !compute {
            session.gpu_error = Some(format!("{} cannot run compute shaders", rs.adapter.get_info().name));
        }
        let engine = Arc::new(Engine::with_gpu(Arc::clone(&gpu)));
        match Worker::start(engine, rs.clone(), cc.egui_ctx.clone()) {
            Ok(w) => session.worker = Some(w),
            Err(e) => session.toasts.error(format!("cannot start the worker thread: {e}")),
        }
        if session.gpu_error.is_some() && session.settings.convert.backend == Backend::Gpu {
            session.settings.convert.backend = Backend::Cpu;
        }
        // A saved workgroup size this adapter cannot run falls back to the default.
        if !gpu.valid_workgroups().contains(&session.settings.convert.workgroup) {
            session.settings.convert.workgroup = crate::engine::WorkgroupSize::DEFAULT;
        }
        session.gpu = Some(gpu);
        session
    }

    /// The settings in force.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The settings, to change.
    pub fn settings_mut(&mut self) -> &mut Settings {
        &mut self.settings
    }

    /// The GPU context (eframe's device), if the renderer started.
    pub fn gpu(&self) -> Option<&Arc<GpuContext>> {
        self.gpu.as_ref()
    }

    /// Why the GPU backend cannot be used, if it cannot.
    pub fn gpu_error(&self) -> Option<&str> {
        self.gpu_error.as_deref()
    }

    /// Whether the GPU backend can be used.
    pub fn gpu_usable(&self) -> bool {
        self.gpu.is_some() && self.gpu_error.is_none()
    }

    /// The open image.
    pub fn input(&self) -> Option<&Arc<Loaded>> {
        self.input.as_ref()
    }

    /// The latest output shown.
    pub fn output(&self) -> Option<&Output> {
        self.output.as_ref()
    }

    /// Every measured run.
    pub fn runs(&self) -> &[RunRecord] {
        &self.runs
    }

    /// Forgets every measured run.
    pub fn clear_runs(&mut self) {
        self.runs.clear();
    }

    /// Whether the worker has work in flight.
    pub fn is_busy(&self) -> bool {
        self.in_flight > 0
    }

    /// What the worker is doing now and for how long, in seconds.
    pub fn activity(&self) -> Option<(String, f32)> {
        self.worker.as_ref().and_then(|w| w.activity.current())
    }

    /// The last export and its report.
    pub fn last_export(&self) -> Option<&(PathBuf, EncodeReport)> {
        self.last_export.as_ref()
    }

    /// The latest finished sweep.
    pub fn sweep(&self) -> Option<&Arc<SweepResult>> {
        self.sweep.as_ref()
    }

    /// The latest parity report and its difference image.
    pub fn parity(&self) -> Option<&(ParityReport, DisplayImage)> {
        self.parity.as_ref()
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Sends a job to the worker and counts it as in flight.
    pub fn send(&mut self, job: Job) {
        if let Some(w) = &self.worker {
            w.send(job);
            self.in_flight += 1;
        }
    }

    /// Starts loading a file; the current image stays until the new one is ready.
    pub fn open(&mut self, path: PathBuf) {
        let id = self.id();
        self.latest_load = id;
        self.send(Job::Load { id, path });
    }

    /// Queues `runs` conversions of the current image with the current settings.
    pub fn run_conversion(&mut self, runs: u32) {
        let settings = self.settings.convert;
        self.queue_conversion(vec![settings], runs);
    }

    /// Queues `runs` conversions for each of `list`.
    pub fn queue_conversion(&mut self, list: Vec<ConvertSettings>, runs: u32) {
        let Some(input) = self.input.clone() else { return };
        let id = self.id();
        self.latest_convert = id;
        self.converting = true;
        self.requested = Some((self.settings.convert, self.settings.round_trip));
        let round_trip = self.settings.round_trip;
        self.send(Job::Convert { id, input, settings: list, round_trip, runs });
    }

    /// Queues an export of the current output to `path` (replacing a file there only when
    /// `overwrite`).
    pub fn export_to(&mut self, path: PathBuf, overwrite: bool) {
        let Some(input) = self.input.clone() else { return };
        let settings = self.output.as_ref().map_or(self.settings.convert, |o| o.settings);
        let pixels = self.output.as_ref().and_then(|o| o.pixels.clone());
        let options = crate::engine::ExportOptions { overwrite, ..self.settings.export };
        self.settings.export_dir = path.parent().map(std::path::Path::to_path_buf);
        self.send(Job::Export { input, pixels, settings, path, options });
    }

    /// Re-runs the conversion when a setting that changes the output or its timing changed, and
    /// keeps Continuous going.
    pub fn after_frame(&mut self) {
        let now = (self.settings.convert, self.settings.round_trip);
        if self.input.is_some() && self.requested.is_some_and(|r| r != now) {
            self.run_conversion(1);
        }
        if self.continuous && !self.converting && self.input.is_some() {
            self.run_conversion(1);
        }
    }

    /// Takes the worker's answers into the state.
    pub fn handle_replies(&mut self) {
        let replies = self.worker.as_ref().map(Worker::poll).unwrap_or_default();
        for reply in replies {
            if reply.ends_job() {
                self.in_flight = self.in_flight.saturating_sub(1);
            }
            self.handle(reply);
        }
    }

    fn handle(&mut self, reply: Reply) {
        match reply {
            Reply::Loaded(id, loaded) if id == self.latest_load => {
                self.settings.remember(loaded.path.clone());
                if loaded.reoriented {
                    self.toasts.note("EXIF orientation applied".into());
                } else {
                    self.toasts.clear_notes();
                }
                self.input = Some(loaded);
                self.output = None;
                self.run_conversion(1);
            }
            Reply::LoadFailed(id, path, e) if id == self.latest_load => {
                self.settings.recent.retain(|p| p != &path);
                self.toasts.error(format!("Could not open the image. {e}"));
            }
            Reply::Converted(id, output, report) => self.converted(id, *output, report),
            Reply::Swept(Ok(result)) => self.sweep = Some(Arc::new(result)),
            Reply::Swept(Err(e)) => self.toasts.error(format!("The sweep failed: {e}")),
            Reply::Parity(result) => match *result {
                Ok(r) => self.parity = Some(r),
                Err(e) => self.toasts.error(format!("The parity check failed: {e}")),
            },
            Reply::ConvertDone(id) if id == self.latest_convert => {
                self.converting = false;
                if self.continuous {
                    self.run_conversion(1);
                }
            }
            Reply::ConvertFailed(id, e) if id == self.latest_convert => {
                self.converting = false;
                self.continuous = false;
                self.toasts.error(format!("Conversion failed: {e}"));
            }
            Reply::Exported(path, report) => {
                let notes = if report.notes.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", report.notes.join("; "))
                };
                self.toasts.note(format!(
                    "Exported {} ({}, {}, encode {} ms, cpu-clock){notes}",
                    path.display(),
                    report.format,
                    crate::io::human_bytes(report.bytes),
                    crate::engine::ms(report.encode_ns)
                ));
                self.last_export = Some((path, report));
            }
            Reply::ExportFailed(path, e) => {
                self.toasts.error(format!("Export to {} failed, nothing was written. {e}", path.display()));
            }
            // Answers to superseded jobs.
            Reply::Loaded(..)
            | Reply::LoadFailed(..)
            | Reply::ConvertFailed(..)
            | Reply::ConvertDone(..)
            | Reply::Skipped => {}
        }
    }

    fn converted(&mut self, id: u64, output: Output, report: RunReport) {
        if self.input.as_ref().map(|i| i.id) != Some(output.image_id) {
            return;
        }
        let key =
            format!("{}:{:?}:{}", output.image_id, output.settings, report.gpu.is_some_and(|g| g.downloaded));
        let cold = self.seen.insert(key);
        self.runs.push(RunRecord {
            seq: self.runs.len() + 1,
            image_id: output.image_id,
            settings: output.settings,
            report,
            cold,
        });
        // A run of an older job still counts in the charts, but only the newest settings' output
        // is shown.
        if id == self.latest_convert || self.output.is_none() {
            self.output = Some(output);
        }
    }
}
