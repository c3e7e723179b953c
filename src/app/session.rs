//! The state every panel shares: settings, the worker and its jobs, the open image and its
//! output, the run history and the messages. Panels read it and ask it to start or stop work; it
//! never draws anything and knows no panel.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use super::display::{DisplayImage, PREVIEW_MAX_SIDE};
use super::jobs::{Exported, Job, Loaded, Output, Progress, Reply, Ticket};
use super::preload::Preload;
use super::state::{RunKind, RunRecord, Settings};
use super::toasts::Toasts;
use super::worker::Worker;
use crate::engine::{
    Backend, ConvertSettings, Engine, GpuContext, GpuConverter, ParityReport, Phase, PhaseTiming, RunReport,
    SweepResult,
};

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
}

impl JobKind {
    /// Whether Stop (and Esc) cancels it.
    #[must_use]
    pub fn stoppable(self) -> bool {
        matches!(self, Self::Convert | Self::Sweep | Self::Parity)
    }
}

/// The shared state of the app.
pub struct Session {
    settings: Settings,
    gpu: Option<Arc<GpuContext>>,
    gpu_error: Option<String>,
    worker: Option<Worker>,
    /// Jobs sent and not done, oldest first (the first one runs).
    jobs: Vec<(JobKind, Ticket)>,
    input: Option<Arc<Loaded>>,
    output: Option<Output>,
    runs: Vec<RunRecord>,
    /// Settings already run once on an image (the first run of each is cold).
    seen: HashSet<String>,
    next_id: u64,
    latest_load: u64,
    latest_convert: u64,
    /// The latest conversion job was a comparison (every workgroup size): when it ends, the
    /// output is made again with the panel's settings, so caption and panel agree.
    comparing: bool,
    /// The settings of the latest conversion asked for.
    requested: Option<(ConvertSettings, bool)>,
    /// Re-run as soon as a run ends.
    pub continuous: bool,
    /// Longest side of preview levels, in pixels (about the screen's size).
    pub preview_side: u32,
    /// Errors and notes for the user.
    pub toasts: Toasts,
    last_export: Option<Exported>,
    sweep: Option<Arc<SweepResult>>,
    parity: Option<(ParityReport, DisplayImage)>,
    /// GPU runs stopped between their submissions by a cancel (Stop, Esc, a newer setting).
    runs_cut_short: usize,
}

impl Session {
    /// A session on eframe's wgpu device (or without one: then only errors are shown);
    /// `gpu_chunk_limit_bytes` fixes the input bytes of one GPU submission (tests), else the
    /// converter's learnt budget decides.
    pub fn new(
        cc: &eframe::CreationContext<'_>,
        settings: Settings,
        gpu_chunk_limit_bytes: Option<u64>,
    ) -> Self {
        let mut session = Self {
            settings,
            gpu: None,
            gpu_error: None,
            worker: None,
            jobs: Vec::new(),
            input: None,
            output: None,
            runs: Vec::new(),
            seen: HashSet::new(),
            next_id: 0,
            latest_load: 0,
            latest_convert: 0,
            comparing: false,
            requested: None,
            continuous: false,
            preview_side: PREVIEW_MAX_SIDE,
            toasts: Toasts::default(),
            last_export: None,
            sweep: None,
            parity: None,
            runs_cut_short: 0,
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
        let mut converter = GpuConverter::new(Arc::clone(&gpu));
        converter.set_chunk_limit_bytes(gpu_chunk_limit_bytes);
        let engine = Arc::new(Engine::with_converter(Arc::new(converter)));
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
        !self.jobs.is_empty()
    }

    /// The job running now, and its progress once it reported some.
    pub fn current_job(&self) -> Option<(JobKind, Option<Progress>)> {
        self.jobs.first().map(|(kind, t)| (*kind, t.progress()))
    }

    /// Jobs waiting behind the one running.
    pub fn queued_jobs(&self) -> usize {
        self.jobs.len().saturating_sub(1)
    }

    /// Whether a job that Stop would cancel is queued or running.
    pub fn stoppable(&self) -> bool {
        self.continuous || self.jobs.iter().any(|(k, t)| k.stoppable() && !t.cancelled())
    }

    /// Stops Continuous and cancels every conversion batch, sweep and parity check (each ends at
    /// its next check, between runs).
    pub fn stop(&mut self) {
        self.continuous = false;
        for (kind, ticket) in &self.jobs {
            if kind.stoppable() {
                ticket.cancel();
            }
        }
    }

    /// GPU runs stopped between their submissions by a cancel, so far.
    pub fn runs_cut_short(&self) -> usize {
        self.runs_cut_short
    }

    /// The last export.
    pub fn last_export(&self) -> Option<&Exported> {
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

    /// A fresh job id.
    pub fn next_job_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn ticket(&mut self) -> Ticket {
        Ticket::new(self.next_job_id())
    }

    /// Sends a job to the worker.
    pub fn send(&mut self, kind: JobKind, job: Job) {
        if let Some(w) = &self.worker {
            self.jobs.push((kind, job.ticket().clone()));
            w.send(job);
        }
    }

    /// Starts loading a file (or takes over a decode started earlier); the current image stays
    /// until the new one is ready.
    pub fn open(&mut self, path: PathBuf, preloaded: Option<Preload>) {
        // An absolute path, so that exports and saved sweeps land next to the photo whatever the
        // working folder is.
        let path = std::path::absolute(&path).unwrap_or(path);
        let ticket = self.ticket();
        self.latest_load = ticket.id;
        let preview_side = self.preview_side;
        let options = super::preload::decode_options(self.gpu_usable());
        self.send(JobKind::Load, Job::Load { ticket, path, preview_side, options, preloaded });
    }

    /// Queues `runs` conversions of the current image with the current settings.
    pub fn run_conversion(&mut self, runs: u32) {
        let settings = self.settings.convert;
        self.queue_conversion(vec![settings], runs);
    }

    /// Queues `runs` conversions for each of `list`, after cancelling conversions still queued
    /// or running (the newest request wins).
    pub fn queue_conversion(&mut self, list: Vec<ConvertSettings>, runs: u32) {
        let Some(input) = self.input.clone() else { return };
        for (kind, ticket) in &self.jobs {
            if *kind == JobKind::Convert {
                ticket.cancel();
            }
        }
        let ticket = self.ticket();
        self.latest_convert = ticket.id;
        self.comparing = list.iter().any(|s| *s != self.settings.convert);
        self.requested = Some((self.settings.convert, self.settings.round_trip));
        let (round_trip, preview_side) = (self.settings.round_trip, self.preview_side);
        self.send(
            JobKind::Convert,
            Job::Convert { ticket, input, settings: list, round_trip, runs, preview_side },
        );
    }

    /// Queues an export of the current output to `path` (replacing a file there only when
    /// `overwrite`).
    pub fn export_to(&mut self, path: PathBuf, overwrite: bool) {
        let Some(input) = self.input.clone() else { return };
        let settings = self.output.as_ref().map_or(self.settings.convert, |o| o.settings);
        let pixels = self.output.as_ref().and_then(|o| o.pixels.clone());
        let options = crate::engine::ExportOptions { overwrite, ..self.settings.export };
        self.settings.export_dir = path.parent().map(std::path::Path::to_path_buf);
        let ticket = self.ticket();
        self.send(JobKind::Export, Job::Export { ticket, input, pixels, settings, path, options });
    }

    /// Whether a conversion of the latest request is queued or running.
    fn converting(&self) -> bool {
        self.jobs.iter().any(|(_, t)| t.id == self.latest_convert)
    }

    /// Re-runs the conversion when a setting that changes the output or its timing changed
    /// (superseding the runs in flight), and keeps Continuous going.
    pub fn after_frame(&mut self) {
        let now = (self.settings.convert, self.settings.round_trip);
        if self.input.is_some() && self.requested.is_some_and(|r| r != now) {
            self.run_conversion(1);
        }
        if self.continuous && !self.converting() && self.input.is_some() {
            self.run_conversion(1);
        }
    }

    /// Takes the worker's answers into the state.
    pub fn handle_replies(&mut self) {
        let replies = self.worker.as_ref().map(Worker::poll).unwrap_or_default();
        for reply in replies {
            self.handle(reply);
        }
    }

    fn handle(&mut self, reply: Reply) {
        match reply {
            Reply::Loaded(id, loaded) if id == self.latest_load => {
                self.settings.remember(loaded.path.clone());
                self.toasts.clear_notes();
                if loaded.reoriented {
                    self.toasts.note("EXIF orientation applied".into());
                }
                for warning in &loaded.warnings {
                    self.toasts.warning(format!(
                        "{warning}; shown and converted as it is: {}",
                        loaded.path.display()
                    ));
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
            Reply::RunCancelled(id) => {
                log::debug!("job {id}: a GPU run stopped between its submissions");
                self.runs_cut_short += 1;
            }
            Reply::ConvertFailed(id, e) if id == self.latest_convert => {
                self.continuous = false;
                self.toasts.error(format!("Conversion failed: {e}"));
            }
            Reply::Swept(Ok(result)) => self.sweep = Some(Arc::new(result)),
            Reply::Swept(Err(e)) => self.toasts.error(format!("The sweep failed: {e}")),
            Reply::Parity(result) => match *result {
                Ok(r) => self.parity = Some(r),
                Err(e) => self.toasts.error(format!("The parity check failed: {e}")),
            },
            Reply::Exported(exported) => self.exported(*exported),
            Reply::ExportFailed(path, e) => {
                self.toasts.error(format!("Export to {} failed, nothing was written. {e}", path.display()));
            }
            Reply::Done(id) => {
                self.jobs.retain(|(_, t)| t.id != id);
                let shown = self.output.as_ref().map(|o| o.settings);
                if id == self.latest_convert && self.comparing && shown != Some(self.settings.convert) {
                    self.run_conversion(1);
                }
            }
            // Answers to superseded jobs.
            Reply::Loaded(..) | Reply::LoadFailed(..) | Reply::ConvertFailed(..) => {}
        }
    }

    fn record(&mut self, kind: RunKind, image_id: u64, settings: ConvertSettings, report: RunReport) {
        let downloaded = report.gpu.is_some_and(|g| g.downloaded);
        let cold =
            kind == RunKind::Convert && self.seen.insert(format!("{image_id}:{settings:?}:{downloaded}"));
        self.runs.push(RunRecord { seq: self.runs.len() + 1, kind, image_id, settings, report, cold });
    }

    fn converted(&mut self, id: u64, output: Output, report: RunReport) {
        if self.input.as_ref().map(|i| i.id) != Some(output.image_id) {
            return;
        }
        self.record(RunKind::Convert, output.image_id, output.settings, report);
        // A run of an older job still counts in the charts, but only the newest settings' output
        // is shown.
        if id == self.latest_convert || self.output.is_none() {
            self.output = Some(output);
        }
    }

    fn exported(&mut self, e: Exported) {
        let notes = if e.encode.notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", e.encode.notes.join("; "))
        };
        self.toasts.success(format!(
            "Exported {} ({}, {}, encode {} ms, cpu-clock){notes}",
            e.path.display(),
            e.encode.format,
            crate::io::human_bytes(e.encode.bytes),
            crate::engine::ms(e.encode.encode_ns)
        ));
        if let Some(input) = self.input.clone() {
            let settings = self.output.as_ref().map_or(self.settings.convert, |o| o.settings);
            let mut report = e.converted.clone().unwrap_or_else(|| {
                let size = (input.image.width(), input.image.height());
                RunReport::new(settings.backend, settings.formula, size, Vec::new())
            });
            report.phases.push(PhaseTiming {
                phase: Phase::Encode,
                ns: e.encode.encode_ns,
                source: crate::engine::ClockSource::CpuClock,
            });
            report.finish(e.wall_ns);
            self.record(RunKind::Export, input.id, settings, report);
        }
        self.last_export = Some(e);
    }
}
