//! The worker thread: decoding, converting, sweeps, round trips, parity, the claims and exports,
//! off the UI thread. Jobs arrive on a channel and run one at a time; a newer load or conversion
//! supersedes an older one still waiting, a cancelled job stops at its next check (between
//! runs), and every job ends with [`Reply::Done`].

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, mpsc};

use eframe::egui_wgpu::RenderState;
use image::DynamicImage;

mod claims;
mod compare;
mod round_trips;
mod runs;

use crate::app::textures::DisplayImage;
use crate::app::work::error::WorkError;
use crate::app::work::gpu_device::{EngineMaker, GpuDevice};
use crate::app::work::jobs::{Answer, Job, Loaded, Reply, Ticket, file_name};
use crate::app::work::preload::{Preload, Preloaded, decode_for_display};
use crate::engine::{Engine, ImageKey};
use crate::io::DecodeOptions;

/// The handle the UI keeps.
pub struct Worker {
    jobs: Option<mpsc::Sender<(Ticket, Job)>>,
    replies: mpsc::Receiver<Reply>,
    /// Asks the worker to stop (the app is closing).
    stop: Arc<AtomicBool>,
    /// The job running now: cancelled when the app closes, so a GPU run stops at its next
    /// submission.
    running: Arc<Mutex<Option<Ticket>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Worker {
    /// Stops the worker and waits for it, so that no GPU work outlives the app's device (a
    /// driver torn down under a running thread can crash the process at exit).
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(ticket) = &*self.running.lock().unwrap_or_else(PoisonError::into_inner) {
            ticket.cancel();
            // A job a test held (and never let go, if it failed) must not keep the join waiting.
            ticket.pixels().hold().release();
        }
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Worker {
    /// Starts the worker thread, which makes its engine with `make_engine` on itself. On
    /// [`GpuDevice::Own`] that engine's GPU is a device of its own, and results are read back.
    pub fn start(
        make_engine: EngineMaker,
        gpu_device: GpuDevice,
        render_state: RenderState,
        ctx: egui::Context,
    ) -> std::io::Result<Self> {
        let (jobs, job_rx) = mpsc::channel();
        let (reply_tx, replies) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let running = Arc::new(Mutex::new(None));
        let (thread_stop, thread_running) = (Arc::clone(&stop), Arc::clone(&running));
        let thread = std::thread::Builder::new().name("graylab-worker".into()).spawn(move || {
            let state = WorkerState {
                engine: Arc::new(make_engine()),
                gpu_device,
                render_state,
                ctx,
                replies: reply_tx,
                stop: thread_stop,
                running: thread_running,
            };
            state.run(&job_rx);
        })?;
        Ok(Self { jobs: Some(jobs), replies, stop, running, thread: Some(thread) })
    }

    /// Queues a job with its ticket.
    pub fn send(&self, ticket: Ticket, job: Job) {
        // The worker only stops when the app does.
        if let Some(jobs) = &self.jobs {
            let _ = jobs.send((ticket, job));
        }
    }

    /// Replies that have arrived.
    pub fn poll(&self) -> Vec<Reply> {
        self.replies.try_iter().collect()
    }
}

pub(in crate::app) struct WorkerState {
    engine: Arc<Engine>,
    /// The device GPU work runs on, resolved: on [`GpuDevice::Own`] GPU results are read back.
    gpu_device: GpuDevice,
    render_state: RenderState,
    ctx: egui::Context,
    replies: mpsc::Sender<Reply>,
    stop: Arc<AtomicBool>,
    running: Arc<Mutex<Option<Ticket>>>,
}

/// Whether `job` is superseded by one queued `later`: a load by a newer load, a conversion by a
/// newer conversion or load; every other job runs.
fn superseded(job: &Job, later: &VecDeque<(Ticket, Job)>) -> bool {
    match job {
        Job::Load { .. } => later.iter().any(|(_, j)| matches!(j, Job::Load { .. })),
        Job::Convert { .. } => later.iter().any(|(_, j)| matches!(j, Job::Convert { .. } | Job::Load { .. })),
        _ => false,
    }
}

impl WorkerState {
    fn run(self, jobs: &mpsc::Receiver<(Ticket, Job)>) {
        let mut queue = VecDeque::new();
        while let Ok(sent) = jobs.recv() {
            queue.push_back(sent);
            while let Some((ticket, job)) = queue.pop_front() {
                if self.stop.load(Ordering::Relaxed) {
                    return;
                }
                queue.extend(jobs.try_iter());
                let id = ticket.id;
                if !superseded(&job, &queue) && !ticket.cancelled() {
                    *self.running.lock().unwrap_or_else(PoisonError::into_inner) = Some(ticket.clone());
                    // The app may have closed between the check above and now.
                    if self.stop.load(Ordering::Relaxed) {
                        ticket.cancel();
                    }
                    let cpu_compute = self.engine.held_cpu_compute();
                    self.handle(&ticket, job);
                    // A run of the job (a conversion, a sweep, a claim) that beat the CPU's compute
                    // ceiling raised it: the panels show the raised figure runs were held against.
                    if let Some(c) = self.engine.held_cpu_compute().filter(|c| Some(*c) != cpu_compute) {
                        self.reply(Reply::CpuCompute(Ok(c)));
                    }
                    *self.running.lock().unwrap_or_else(PoisonError::into_inner) = None;
                }
                self.reply(Reply::Done(id));
            }
        }
    }

    fn reply(&self, reply: Reply) {
        let _ = self.replies.send(reply);
        self.ctx.request_repaint();
    }

    fn stopped(&self, ticket: &Ticket) -> bool {
        ticket.cancelled() || self.stop.load(Ordering::Relaxed)
    }

    /// A sweep, weighted for its progress bar by its cells' expected cost (a grid calibrates
    /// first, about a second): the time left shown is its estimate.
    fn sweep(
        &self,
        ticket: &Ticket,
        options: &crate::engine::sweep::SweepOptions,
        source: Option<(&str, &image::DynamicImage)>,
        pace: &crate::engine::estimate::Pace,
    ) -> Result<crate::engine::sweep::SweepResult, crate::engine::EngineError> {
        let calibration = if options.is_grid() {
            ticket.set_doing("Sweep: calibrating (about a second)");
            Some(crate::engine::sweep::calibrate(&self.engine, options)?)
        } else {
            None
        };
        let plan = options.plan(calibration.as_ref(), pace);
        let spent_s = ticket.progress().map_or(0.0, |p| f64::from(p.elapsed_secs()));
        if let Some(whole) = plan.whole(spent_s).filter(|_| !pace.has_seen(options.task())) {
            // The calibration knows better than the estimate made before it, until a grid ran
            // to its end here: the pace then knows how long its comparisons take to decide.
            ticket.set_estimate(whole.seconds);
        }
        // A cell's weight: its estimate where calibrated, else its pixels (and a fixed part).
        let weights: Vec<f64> = plan
            .cells
            .iter()
            .map(|c| c.estimated_ns.map_or(c.megapixels + 0.5, |ns| ns as f64 / 1e9))
            .collect();
        let total: f64 = weights.iter().sum();
        let levels = options.is_grid();
        let mut progress = |i: usize, n: usize, mp: f64| {
            let done: f64 = weights.iter().take(i).sum();
            let cell = plan.cells.get(i);
            let what = if levels {
                // Short: the status bar adds the cells done, in a bar of fixed width.
                match cell.map(|c| (c.work_rounds, c.op)) {
                    Some((_, op)) if !op.is_none() => format!("Sweep: {mp} MP, {op}"),
                    rounds => format!("Sweep: {mp} MP, k = {}", rounds.map_or(0, |r| r.0)),
                }
            } else {
                format!("Sweep: {mp} MP")
            };
            ticket.set_progress(what, i as u64, n as u64, (done, total));
            !self.stopped(ticket)
        };
        // Stop lands inside a cell's comparison too; what a stopped sweep kept is not shown.
        let cancel = Some(ticket.flag());
        crate::engine::sweep::sweep_planned(&self.engine, options, &plan, source, &mut progress, cancel)
    }

    fn handle(&self, ticket: &Ticket, job: Job) {
        match job {
            Job::Load { path, preview_side, options, preloaded } => {
                self.load(ticket, path, preview_side, &options, preloaded);
            }
            Job::Convert { input, settings, runs, how } => {
                self.convert_runs(ticket, (&input, &settings), how, runs);
            }
            Job::CachedCeilings => self.cached_ceilings(ticket),
            Job::Ceilings { remeasure } => {
                let what = if remeasure { "Measuring" } else { "Reading or measuring" };
                ticket.set_doing(format!("{what} this GPU's ceilings"));
                self.reply(Reply::Ceilings(self.ceilings(ticket, remeasure)));
            }
            Job::Sweep { options, photo, pace } => {
                // The sweep models the crossover from the ceilings it finds known.
                ticket.set_doing("Sweep: this GPU's ceilings");
                if options.gpu {
                    let ceilings = self.ceilings(ticket, false);
                    if let Err(e) = &ceilings {
                        log::warn!("the sweep runs without the GPU's ceilings: {}", e.describe());
                    }
                    self.reply(Reply::Ceilings(ceilings));
                }
                let source = photo.as_ref().map(|p| (p.path.display().to_string(), p.image.as_ref()));
                let source = source.as_ref().map(|(name, image)| (name.as_str(), *image));
                let result = self.sweep(ticket, &options, source, &pace);
                if !self.stopped(ticket) {
                    self.reply(Reply::Answered(
                        ticket.id,
                        Answer::Swept(Box::new(result.map_err(WorkError::from))),
                    ));
                }
            }
            Job::Parity { input, settings } => {
                let mut progress = |i: usize, n: usize| {
                    ticket.set_progress("Parity: converting", i as u64, n as u64, (i as f64, n as f64));
                    !self.stopped(ticket)
                };
                let result = self
                    .engine
                    .parity_with_progress(&input.image, &settings, &mut progress)
                    .map_err(WorkError::from)
                    .and_then(|report| {
                        let difference = Arc::new(DynamicImage::ImageLuma8(report.difference.clone()));
                        let display = self.display_host(difference, 512)?;
                        Ok((report, display))
                    });
                if !self.stopped(ticket) {
                    self.reply(Reply::Answered(ticket.id, Answer::Parity(Box::new(result))));
                }
            }
            Job::Claims { quick } => {
                // The ceilings first (claim 5 measures them anyway, and a cache has them after
                // once): the session estimates the run again from them, not from a rough guess.
                ticket.set_doing("Claims: this machine's ceilings");
                self.reply(Reply::Ceilings(self.ceilings(ticket, false)));
                self.reply(Reply::Answered(ticket.id, Answer::Claims(self.claims(ticket, quick))));
            }
            job @ Job::RoundTrips { .. } => self.round_trips(ticket, job),
            job @ Job::Compare { .. } => self.compare(ticket, job),
            job @ Job::Workgroups { .. } => self.workgroups(ticket, job),
            Job::TransferPaths { largest_bytes } => {
                ticket.set_doing("Timing every transfer path");
                let result =
                    self.engine.transfer_paths(largest_bytes, Some(ticket.flag())).map_err(WorkError::from);
                self.reply(Reply::Answered(ticket.id, Answer::TransferPaths(result)));
            }
            Job::Export { input, pixels, settings, path, options } => {
                ticket.set_doing(format!("Exporting {}", file_name(&path)));
                let reply = match self.export(ticket, &input, pixels, &settings, &path, &options) {
                    Ok(exported) => Reply::Exported(Box::new(exported)),
                    Err(e) => Reply::ExportFailed(path, e),
                };
                self.reply(reply);
            }
        }
    }

    fn load(
        &self,
        ticket: &Ticket,
        path: PathBuf,
        preview_side: u32,
        options: &DecodeOptions,
        preloaded: Option<Preload>,
    ) {
        ticket.set_doing(format!("Opening {}…", file_name(&path)));
        let decoded = match preloaded.filter(|p| p.path() == path) {
            Some(p) => p.wait(),
            None => decode_for_display(&path, preview_side, options),
        };
        let loaded = decoded.and_then(|Preloaded { decoded: d, levels }| {
            let orientation_note = d.orientation_note();
            let rows_turned = d.rows_turned();
            let image = Arc::new(d.image);
            let display = DisplayImage::from_host(&self.render_state, Arc::clone(&image), &levels)
                .ok_or(WorkError::NoPixels)?;
            Ok(Loaded {
                id: ticket.id,
                path: path.clone(),
                image,
                format: crate::io::sniff_format(&path).map(crate::app::work::jobs::format_name),
                key: ImageKey::new(),
                decode_ns: d.decode_ns,
                orientation_note,
                rows_turned,
                warnings: d.warnings,
                stored_as: d.stored_as,
                density: d.density,
                metadata: d.metadata,
                display,
                memory: d.memory,
            })
        });
        self.reply(match loaded {
            Ok(loaded) => Reply::Loaded(ticket.id, Arc::new(loaded)),
            Err(e) => Reply::LoadFailed(ticket.id, path, e),
        });
    }
}
