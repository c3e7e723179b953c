//! The state every panel shares: settings, the worker and its jobs, the open image and its
//! output, the run history and the messages. Panels read it and ask it to start or stop work; it
//! never draws anything and knows no panel.

mod ceilings;
mod conversions;
mod folder;
mod history;
pub mod pace;
mod replies;
pub(in crate::app) use crate::app::work::jobs::file_name;
pub(in crate::app) mod toasts;

use std::path::PathBuf;
use std::sync::Arc;

use super::state::Settings;
use crate::app::session::toasts::Toasts;
use crate::app::textures::PREVIEW_MAX_SIDE;
use crate::app::work::gpu_device::{GpuDevice, engine_maker};
pub use crate::app::work::jobs::JobKind;
use crate::app::work::jobs::{Job, Loaded, Output, Progress, Ticket};
use crate::app::work::preload::Preload;
use crate::app::work::worker::Worker;
use crate::engine::{Backend, GpuContext};

/// The session's job bookkeeping: the jobs sent and not done, the latest of each kind (so that
/// answers to superseded jobs are dropped), and how a stopped job ended.
#[derive(Default)]
struct JobBook {
    /// Jobs sent and not done, oldest first (the first one runs).
    pub sent: Vec<(JobKind, Ticket)>,
    /// The last job id given out.
    pub next_id: u64,
    /// The latest load asked for: answers to older ones are dropped.
    pub latest_load: u64,
    /// The latest conversion job asked for.
    pub latest_convert: u64,
    /// Runs the latest conversion job asked for.
    pub latest_convert_runs: u64,
    /// The latest conversion job was a comparison (every workgroup size): when it ends, the
    /// output is made again with the panel's settings, so caption and panel agree.
    pub comparing: bool,
    /// The settings of the latest conversion asked for.
    pub requested: Option<conversions::Requested>,
    /// How the last stopped job ended ("Stopped after 5 of 10"), shown until the next job.
    pub stopped: Option<String>,
    /// Jobs the user stopped (Stop or Esc), told apart from those a newer request superseded.
    pub stopped_by_user: std::collections::HashSet<u64>,
    /// GPU runs stopped between their submissions by a cancel (Stop, Esc, a newer setting).
    pub runs_cut_short: usize,
    /// Where the next job sent waits for a test to let it go (tests only; see `hold_next_job`).
    pub hold_next: Option<crate::system::progress::HoldAt>,
}

/// The shared state of the app.
#[derive(Default)]
pub struct Session {
    settings: Settings,
    gpu: Option<Arc<GpuContext>>,
    gpu_error: Option<String>,
    /// The device GPU work runs on, resolved (`Window` or `Own`; see `gpu_device.rs`).
    gpu_device: GpuDevice,
    worker: Option<Worker>,
    /// Jobs sent and how they ended.
    book: JobBook,
    input: Option<Arc<Loaded>>,
    /// The file being opened (the latest load asked for), until it is open or failed.
    opening: Option<PathBuf>,
    /// Opens that failed so far (the path field then shows the file on screen again).
    failed_opens: u64,
    /// The file whose open by ← or → failed last, until another opens: they step on from it (a
    /// file typed or dropped that fails leaves them stepping from the image shown).
    failed_open: Option<PathBuf>,
    /// The file ← or → asked to open last.
    stepped_to: Option<PathBuf>,
    output: Option<Output>,
    /// Where the open image is among the images of its folder, from 1.
    folder_place: Option<(usize, usize)>,
    /// Every run and export.
    history: history::RunHistory,
    /// The answers to experiments a window or panel asked for, each with its job's id and the
    /// seconds the job had run when it came, until the one that asked takes it (one of each
    /// kind: a newer one supersedes an older).
    answers: Vec<(u64, crate::app::work::jobs::Answer, Option<f64>)>,
    /// Re-run as soon as a run ends.
    pub continuous: bool,
    /// Longest side of preview levels, in pixels (about the screen's size).
    pub preview_side: u32,
    /// Errors and notes for the user.
    pub toasts: Toasts,
    /// This GPU's ceilings, as far as the session knows them.
    ceilings: ceilings::CeilingsState,
    /// This CPU's compute ceiling, as far as the session knows it.
    cpu_compute: ceilings::CpuComputeState,
    /// The one estimator's pace of this machine, and the jobs it learns from.
    pace: pace::KeptPace,
}

impl Session {
    /// A session on eframe's wgpu device (or without one: then only errors are shown);
    /// `options.gpu_chunk_limit_bytes` fixes the input bytes of one GPU submission (tests), else
    /// the converter's learnt budget decides; with `options.fresh_settings` nothing measured is
    /// read from or kept in the cache folder.
    pub fn new(cc: &eframe::CreationContext<'_>, settings: Settings, options: &super::AppOptions) -> Self {
        let mut session = Self {
            settings,
            gpu_device: GpuDevice::Window,
            preview_side: PREVIEW_MAX_SIDE,
            pace: pace::KeptPace::new(!options.fresh_settings),
            ..Self::default()
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
        session.gpu_device = options.gpu_device.resolve(gpu.is_software());
        let engine =
            engine_maker(rs, &gpu, session.gpu_device, options.gpu_chunk_limit_bytes, options.fresh_settings);
        match Worker::start(engine, session.gpu_device, rs.clone(), cc.egui_ctx.clone()) {
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
        // Ceilings cached by an earlier launch hold the very first run against them.
        if session.gpu_usable() {
            session.send(Job::CachedCeilings);
        }
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

    /// Whether GPU work runs on a device of its own (a software adapter's), so that every GPU
    /// result is read back to be shown.
    pub fn own_gpu_device(&self) -> bool {
        self.gpu_device == GpuDevice::Own
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

    /// Whether the worker has work in flight.
    pub fn is_busy(&self) -> bool {
        !self.book.sent.is_empty()
    }

    /// The job running now, and its progress once it reported some.
    pub fn current_job(&self) -> Option<(JobKind, Option<Progress>)> {
        self.book.sent.first().map(|(kind, t)| (*kind, t.progress()))
    }

    /// Whether the job running now was stopped (Stop, Esc) and is winding down: a GPU run ends at
    /// its next submission, a CPU run or a claim at its end.
    #[must_use]
    pub fn stopping(&self) -> bool {
        self.book.sent.first().is_some_and(|(_, t)| t.cancelled())
    }

    /// Makes the next job sent wait at its first point `at` until [`Self::release_job`]: how a
    /// test lands Stop, Esc or a new setting inside a run without racing it.
    pub fn hold_next_job(&mut self, at: crate::system::progress::HoldAt) {
        self.book.hold_next = Some(at);
    }

    /// Whether the job running now waits at its hold.
    pub fn job_held(&self) -> bool {
        self.book.sent.first().is_some_and(|(_, t)| t.pixels().hold().is_holding())
    }

    /// Lets every held job go on.
    pub fn release_job(&self) {
        for (_, t) in &self.book.sent {
            t.pixels().hold().release();
        }
    }

    /// Jobs waiting behind the one running.
    pub fn queued_jobs(&self) -> usize {
        self.book.sent.len().saturating_sub(1)
    }

    /// Whether a job that Stop would cancel is queued or running.
    pub fn stoppable(&self) -> bool {
        self.continuous || self.book.sent.iter().any(|(k, t)| k.stoppable() && !t.cancelled())
    }

    /// Stops Continuous and cancels every conversion batch, sweep and parity check (each ends at
    /// its next check, between runs).
    pub fn stop(&mut self) {
        self.continuous = false;
        for (kind, ticket) in &self.book.sent {
            if kind.stoppable() && !ticket.cancelled() {
                ticket.cancel();
                self.book.stopped_by_user.insert(ticket.id);
            }
        }
    }

    /// GPU runs stopped between their submissions by a cancel, so far.
    pub fn runs_cut_short(&self) -> usize {
        self.book.runs_cut_short
    }

    /// The answer to job `id` (a window's or a panel's), once it has arrived; taken, so a second
    /// call returns `None`.
    pub fn take_answer(&mut self, id: u64) -> Option<crate::app::work::jobs::Answer> {
        self.take_timed_answer(id).map(|(answer, _)| answer)
    }

    /// [`Self::take_answer`], with the seconds its job had run when it came (what a saved
    /// result says it took, as the CLI's does).
    pub fn take_timed_answer(&mut self, id: u64) -> Option<(crate::app::work::jobs::Answer, Option<f64>)> {
        let at = self.answers.iter().position(|(job, ..)| *job == id)?;
        let (_, answer, took_s) = self.answers.swap_remove(at);
        Some((answer, took_s))
    }

    /// Sends a job to the worker with a ticket of a fresh id, and returns that ticket.
    pub fn send(&mut self, job: Job) -> Ticket {
        self.send_with(job, |_| ())
    }

    /// [`Self::send`], `prepare` given the ticket before the worker can see it (an estimate, the
    /// steps' weights).
    pub(super) fn send_with(&mut self, job: Job, prepare: impl FnOnce(&Ticket)) -> Ticket {
        self.book.next_id += 1;
        let ticket = Ticket::new(self.book.next_id);
        prepare(&ticket);
        if let Some(w) = &self.worker {
            if let Some(at) = self.book.hold_next.take() {
                ticket.pixels().hold().arm(at);
            }
            self.book.stopped = None;
            self.book.sent.push((job.kind(), ticket.clone()));
            w.send(ticket.clone(), job);
        }
        ticket
    }

    /// Starts loading a file (or takes over a decode started earlier); the current image stays
    /// until the new one is ready.
    pub fn open(&mut self, path: PathBuf, preloaded: Option<Preload>) {
        // A JSON file is a saved bench to set beside the runs, not an image: the image stays.
        if crate::app::state::ComparedRuns::is_saved_bench(&path) {
            self.compare_runs_with(&path);
            return;
        }
        // An absolute path, so that exports and saved sweeps land next to the photo whatever the
        // working folder is.
        let path = std::path::absolute(&path).unwrap_or(path);
        // A step (← or →) says so once this returns.
        self.stepped_to = None;
        self.opening = Some(path.clone());
        // The old image's conversions in flight (a Run ×N) give way to the new image, as they do
        // to newer settings; a sweep or the claims run on and the image opens after them.
        for (kind, ticket) in &self.book.sent {
            if *kind == JobKind::Convert {
                ticket.cancel();
            }
        }
        let preview_side = self.preview_side;
        let gpu = self.gpu.as_deref().filter(|_| self.gpu_usable()).map(crate::engine::GpuHostMemory::of);
        let options = crate::app::work::preload::decode_options(gpu);
        self.book.latest_load = self.send(Job::Load { path, preview_side, options, preloaded }).id;
    }

    /// Takes the worker's answers into the state.
    pub fn handle_replies(&mut self) {
        let replies = self.worker.as_ref().map(Worker::poll).unwrap_or_default();
        for reply in replies {
            self.handle(reply);
        }
    }
}
