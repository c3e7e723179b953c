//! The worker thread: decoding, converting and exporting, off the UI thread. Jobs arrive on a
//! channel; a newer load or conversion supersedes an older one still waiting (the newest
//! settings win); every reply carries the id of the job it answers, and the UI drops stale ones.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};

use eframe::egui_wgpu::RenderState;
use image::DynamicImage;

use super::jobs::{Activity, Job, Loaded, Output, Reply};
use super::textures::DisplayImage;
use crate::engine::{Backend, ConvertSettings, DecodeOptions, Engine, ExportOptions, RunReport};
use crate::io::{EncodeReport, decode_file, encode_file};

/// The handle the UI keeps.
pub struct Worker {
    jobs: Option<mpsc::Sender<Job>>,
    replies: mpsc::Receiver<Reply>,
    /// What it is doing now.
    pub activity: Activity,
    /// Asks the worker to stop after the run in progress.
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Worker {
    /// Stops the worker and waits for it, so that no GPU work outlives the app's device (a
    /// driver torn down under a running thread can crash the process at exit).
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Worker {
    /// Starts the worker thread.
    pub fn start(
        engine: Arc<Engine>,
        render_state: RenderState,
        ctx: egui::Context,
    ) -> std::io::Result<Self> {
        let (jobs, job_rx) = mpsc::channel();
        let (reply_tx, replies) = mpsc::channel();
        let activity = Activity::default();
        let stop = Arc::new(AtomicBool::new(false));
        let state = WorkerState {
            engine,
            render_state,
            ctx,
            replies: reply_tx,
            activity: activity.clone(),
            stop: Arc::clone(&stop),
        };
        let thread =
            std::thread::Builder::new().name("graylab-worker".into()).spawn(move || state.run(&job_rx))?;
        Ok(Self { jobs: Some(jobs), replies, activity, stop, thread: Some(thread) })
    }

    /// Queues a job.
    pub fn send(&self, job: Job) {
        // The worker only stops when the app does.
        if let Some(jobs) = &self.jobs {
            let _ = jobs.send(job);
        }
    }

    /// Replies that have arrived.
    pub fn poll(&self) -> Vec<Reply> {
        self.replies.try_iter().collect()
    }
}

struct WorkerState {
    engine: Arc<Engine>,
    render_state: RenderState,
    ctx: egui::Context,
    replies: mpsc::Sender<Reply>,
    activity: Activity,
    stop: Arc<AtomicBool>,
}

fn superseded(job: &Job, later: &VecDeque<Job>) -> bool {
    match job {
        Job::Load { .. } => later.iter().any(|j| matches!(j, Job::Load { .. })),
        Job::Convert { .. } => later.iter().any(|j| matches!(j, Job::Convert { .. } | Job::Load { .. })),
        Job::Export { .. } | Job::Sweep { .. } | Job::Parity { .. } => false,
    }
}

impl WorkerState {
    fn run(self, jobs: &mpsc::Receiver<Job>) {
        let mut queue = VecDeque::new();
        while let Ok(job) = jobs.recv() {
            queue.push_back(job);
            while let Some(job) = queue.pop_front() {
                if self.stop.load(Ordering::Relaxed) {
                    return;
                }
                queue.extend(jobs.try_iter());
                if superseded(&job, &queue) {
                    self.reply(Reply::Skipped);
                    continue;
                }
                self.handle(job);
                self.activity.set(None);
                self.ctx.request_repaint();
            }
        }
    }

    fn reply(&self, reply: Reply) {
        let _ = self.replies.send(reply);
        self.ctx.request_repaint();
    }

    fn handle(&self, job: Job) {
        match job {
            Job::Load { id, path } => self.load(id, path),
            Job::Convert { id, input, settings, round_trip, runs } => {
                let total = settings.len() * runs.max(1) as usize;
                let runs = (0..runs.max(1)).flat_map(|_| settings.iter());
                for (n, settings) in runs.enumerate() {
                    if self.stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let what = if total > 1 {
                        format!("Converting (run {} of {total})", n + 1)
                    } else {
                        "Converting".into()
                    };
                    self.activity.set(Some(what));
                    match self.convert(&input, settings, round_trip) {
                        Ok((output, report)) => self.reply(Reply::Converted(id, Box::new(output), report)),
                        Err(e) => {
                            self.reply(Reply::ConvertFailed(id, e));
                            break;
                        }
                    }
                }
                self.reply(Reply::ConvertDone(id));
            }
            Job::Sweep { options, photo } => {
                let activity = self.activity.clone();
                let stop = Arc::clone(&self.stop);
                let mut progress = |i: usize, n: usize, mp: f64| {
                    activity.set(Some(format!("Sweep: {mp} MP ({} of {n})", i + 1)));
                    !stop.load(Ordering::Relaxed)
                };
                let source = photo.as_ref().map(|p| (p.path.display().to_string(), &p.image));
                let result = crate::engine::sweep(
                    &self.engine,
                    &options,
                    source.as_ref().map(|(name, image)| (name.as_str(), *image)),
                    &mut progress,
                );
                self.reply(Reply::Swept(result.map_err(|e| format!("{e:#}"))));
            }
            Job::Parity { input, settings } => {
                self.activity.set(Some("Comparing CPU and GPU output".into()));
                let result =
                    self.engine.parity(&input.image, &settings).map_err(|e| format!("{e:#}")).and_then(
                        |report| {
                            let display = self
                                .display_host(&image::DynamicImage::ImageLuma8(report.difference.clone()))?;
                            Ok((report, display))
                        },
                    );
                self.reply(Reply::Parity(Box::new(result)));
            }
            Job::Export { input, pixels, settings, path, options } => {
                self.activity.set(Some(format!("Exporting {}", path.display())));
                let result = self.export(&input, pixels, &settings, &path, options);
                self.reply(match result {
                    Ok(report) => Reply::Exported(path, report),
                    Err(e) => Reply::ExportFailed(path, e),
                });
            }
        }
    }

    fn load(&self, id: u64, path: PathBuf) {
        let name =
            path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        self.activity.set(Some(format!("Decoding {name}")));
        let decoded = match decode_file(&path, &DecodeOptions::default()) {
            Ok(d) => d,
            Err(e) => return self.reply(Reply::LoadFailed(id, path, format!("{e:#}"))),
        };
        self.activity.set(Some(format!("Uploading {name} for display")));
        let display = match self.display_host(&decoded.image) {
            Ok(d) => d,
            Err(e) => return self.reply(Reply::LoadFailed(id, path, e)),
        };
        let loaded = Loaded {
            id,
            path,
            image: decoded.image,
            decode_ns: decoded.decode_ns,
            reoriented: decoded.reoriented,
            display,
        };
        self.reply(Reply::Loaded(id, Arc::new(loaded)));
    }

    /// Host pixels to display tiles.
    fn display_host(&self, image: &DynamicImage) -> Result<DisplayImage, String> {
        let gpu = self.engine.gpu().map_err(|e| format!("{e:#}"))?;
        let tiles = gpu.create_tiles(image.width(), image.height()).map_err(|e| format!("{e:#}"))?;
        gpu.write_tiles(&tiles, image);
        Ok(DisplayImage::register(&self.render_state, tiles))
    }

    fn convert(
        &self,
        input: &Loaded,
        settings: &ConvertSettings,
        round_trip: bool,
    ) -> Result<(Output, RunReport), String> {
        let err = |e: crate::engine::EngineError| format!("{e:#}");
        let (pixels, display, report) = match settings.backend {
            Backend::Cpu => {
                let converted = self.engine.convert(&input.image, settings).map_err(err)?;
                let display = self.display_host(&converted.image)?;
                (Some(Arc::new(converted.image)), display, converted.report)
            }
            Backend::Gpu => {
                let gpu = self.engine.gpu().map_err(err)?;
                let tiles =
                    gpu.create_tiles(input.image.width(), input.image.height()).map_err(|e| e.to_string())?;
                let (pixels, report) = self
                    .engine
                    .convert_for_display(&input.image, settings, &tiles, round_trip)
                    .map_err(err)?;
                let display = DisplayImage::register(&self.render_state, tiles);
                (pixels.map(Arc::new), display, report)
            }
        };
        Ok((Output { image_id: input.id, pixels, display, settings: *settings }, report))
    }

    fn export(
        &self,
        input: &Loaded,
        pixels: Option<Arc<DynamicImage>>,
        settings: &ConvertSettings,
        path: &std::path::Path,
        options: ExportOptions,
    ) -> Result<EncodeReport, String> {
        let pixels = if let Some(p) = pixels {
            p
        } else {
            // The GPU result stayed on the GPU: convert again with the download.
            self.activity.set(Some("Downloading the GPU result for export".into()));
            Arc::new(self.engine.convert(&input.image, settings).map_err(|e| format!("{e:#}"))?.image)
        };
        self.activity.set(Some(format!("Encoding {}", path.display())));
        encode_file(&pixels, path, &options).map_err(|e| format!("{e:#}"))
    }
}
