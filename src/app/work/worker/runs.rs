//! One conversion and one export on the worker: the engine's run, the output made ready to show
//! (a preview from host pixels, or the GPU's own display), the rates against the ceilings, and
//! the encoder with its progress.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use image::DynamicImage;

use crate::app::textures::{DisplayImage, preview_levels, preview_size};
use crate::app::work::error::WorkError;
use crate::app::work::gpu_device::GpuDevice;
use crate::app::work::jobs::{Exported, Loaded, Measured, Output, Reply, RunHow, Ticket, file_name};
use crate::app::work::worker::WorkerState;
use crate::engine::{
    Backend, ConvertSettings, Converted, EngineError, PROBE_HOLD_BYTES, Phase, RunOptions, RunReport,
};
use crate::io::{DecodeOptions, DecodeWarning, ExportOptions, StoredLuma};
use crate::pixel::{Formula, Kernel};
use crate::system::clock::nanos_since;

/// How long a run waits at most for the window's threads to go quiet before it starts
/// ([`crate::system::load::settle_own_threads`]): a frame on a software renderer, with room.
const SETTLE_AT_MOST: std::time::Duration = std::time::Duration::from_millis(150);

/// A run's result as the UI gets it: host pixels (if they were read back), what to draw, and
/// the report.
type Shown = (Option<Arc<DynamicImage>>, DisplayImage, RunReport);

impl WorkerState {
    /// This GPU's ceilings (cached, else measured, or measured again), with the probe's memory
    /// reserved from the budget; the compute ceilings with them: the GPU's where the cache was
    /// written before it existed, and the CPU's (sent to the session on its own). Stop (the
    /// `ticket`'s) ends a measurement between its steps.
    pub(crate) fn ceilings(
        &self,
        ticket: &Ticket,
        remeasure: bool,
    ) -> Result<crate::engine::ceilings::KnownCeilings, WorkError> {
        let known = match self.engine.known_gpu_ceilings().or_else(|| self.engine.cached_gpu_ceilings()) {
            Some(k) if !remeasure => k,
            _ => {
                let _memory = crate::system::memory_budget::budget()
                    .try_reserve(PROBE_HOLD_BYTES)
                    .map_err(WorkError::NoProbeMemory)?;
                self.engine.gpu_ceilings(remeasure, Some(ticket.flag()))?
            }
        };
        // The CPU's compute ceiling with them (a fraction of a second), so that runs with work
        // per pixel are held against it on either backend.
        self.cpu_compute(remeasure);
        if known.ceilings.compute.is_some() {
            return Ok(known);
        }
        if let Err(e) = self.engine.gpu_compute() {
            log::warn!("the GPU's compute ceiling could not be measured: {e}");
        }
        Ok(self.engine.known_gpu_ceilings().unwrap_or(known))
    }

    /// This CPU's compute ceiling (known, cached, else measured now: a fraction of a second;
    /// always measured with `remeasure`), sent to the session.
    pub(crate) fn cpu_compute(&self, remeasure: bool) {
        let result = self.engine.cpu_compute(remeasure).map_err(WorkError::from);
        if let Err(e) = &result {
            log::warn!("the CPU's compute ceiling could not be measured: {}", e.describe());
        }
        self.reply(Reply::CpuCompute(result));
    }

    /// Before runs with work per pixel: the compute ceiling of their backend, measured once if
    /// no cache has it (the CPU's in a fraction of a second; the GPU's with the GPU's other
    /// ceilings), so that every such run is held against it.
    pub(crate) fn compute_ceiling_for(&self, ticket: &Ticket, settings: &[ConvertSettings]) {
        for backend in [Backend::Cpu, Backend::Gpu] {
            let wanted = settings.iter().any(|s| s.backend == backend && s.work.rounds > 0);
            if !wanted || self.stopped(ticket) || self.engine.known_compute_ceiling(backend).is_some() {
                continue;
            }
            ticket.set_doing("Measuring this machine's compute ceiling (once)");
            match backend {
                Backend::Cpu => self.cpu_compute(false),
                Backend::Gpu => self.reply(Reply::Ceilings(self.ceilings(ticket, false))),
            }
        }
    }

    /// Answers with this GPU's cached ceilings, if a cache holds them, and this CPU's cached
    /// compute ceiling; measures nothing.
    pub(crate) fn cached_ceilings(&self, ticket: &Ticket) {
        ticket.set_doing("Reading this GPU's ceilings");
        if let Some(known) = self.engine.cached_gpu_ceilings() {
            self.reply(Reply::Ceilings(Ok(known)));
        }
        if let Some(compute) = self.engine.known_cpu_compute() {
            self.reply(Reply::CpuCompute(Ok(compute)));
        }
    }

    /// Host pixels to a display image (preview level made here, in parallel).
    pub(crate) fn display_host(
        &self,
        image: Arc<DynamicImage>,
        preview_side: u32,
    ) -> Result<DisplayImage, WorkError> {
        let levels = preview_levels(&image, preview_side);
        DisplayImage::from_host(&self.render_state, image, &levels).ok_or(WorkError::NoPixels)
    }

    /// A conversion job: every setting of `settings`, `runs` times over, each run's result and
    /// report sent as it ends; the first failure or a stop ends the job.
    pub(crate) fn convert_runs(
        &self,
        ticket: &Ticket,
        (input, settings): (&Loaded, &[ConvertSettings]),
        how: RunHow,
        runs: u32,
    ) {
        self.compute_ceiling_for(ticket, settings);
        let total = (settings.len() * runs.max(1) as usize) as u64;
        let list = (0..runs.max(1)).flat_map(|_| settings.iter());
        for (n, settings) in list.enumerate() {
            if self.stopped(ticket) {
                break;
            }
            // The status bar shows the count beside a progress bar.
            let what = if total > 1 { "Runs done" } else { "Converting" };
            ticket.set_progress(what, n as u64, total, (n as f64, total as f64));
            // Not timed beside the window's drawing of the run before (or of the click).
            let (waited, quiet) = crate::system::load::settle_own_threads(SETTLE_AT_MOST);
            log::debug!("waited {waited:?} for the window's threads before a run (quiet: {quiet})");
            match self.convert(ticket, input, settings, how) {
                Ok(Some((output, mut report))) => {
                    if !quiet {
                        report.notes.push(format!(
                            "the app's other threads were still busy after {} ms (the window drawing, a \
                             load): this run shared the cores with them",
                            SETTLE_AT_MOST.as_millis()
                        ));
                    }
                    // Against this machine's ceilings (the CPU's memory-stream baseline is
                    // measured here the first time a size is run: quiet, as the run was; a GPU
                    // run's ceilings are known already, nothing is measured for it).
                    if report.backend == Backend::Cpu {
                        let _ = crate::system::load::settle_own_threads(SETTLE_AT_MOST);
                    }
                    let rates = self.engine.phase_rates(&report);
                    let measured = Box::new(Measured { report, rates });
                    self.reply(Reply::Converted(ticket.id, Box::new(output), measured));
                }
                Ok(None) => break,
                Err(e) => {
                    self.reply(Reply::ConvertFailed(ticket.id, e));
                    break;
                }
            }
        }
    }

    /// One run; `None` when it was cancelled before its result was drawn. The report gets the
    /// display phase once (the engine's for a result shown from GPU memory, else the preview made
    /// here) and the whole run's wall time, so phases − overlap + other = wall.
    pub(crate) fn convert(
        &self,
        ticket: &Ticket,
        input: &Loaded,
        settings: &ConvertSettings,
        how: RunHow,
    ) -> Result<Option<(Output, RunReport)>, WorkError> {
        let RunHow { round_trip, keep_input, preview_side } = how;
        let started = Instant::now();
        // Stored luma: a YCbCr JPEG's Y plane, decoded again alone, is the result on either
        // backend; any other file is converted with bt601 and its report says why.
        let mut luma_note = None;
        if settings.formula == Formula::StoredLuma {
            match self.stored_luma(ticket, input, settings, (preview_side, started))? {
                Ok(Some(shown)) => {
                    let (mut output, report) = self.finished(input, settings, shown, started);
                    output.stored_luma = true;
                    return Ok(Some((output, report)));
                }
                Ok(None) => return Ok(None),
                Err(why) => luma_note = Some(why.note()),
            }
        }
        // An op's own planes on its backend, reserved for the run (the open image reserved
        // itself, its gray result and the GPU's copies): refused now rather than run short.
        let _op_memory = if settings.op.is_none() {
            None
        } else {
            let gpu =
                if settings.backend == Backend::Cpu { None } else { Some(self.engine.gpu_host_memory()?) };
            let pixels = u64::from(input.image.width()) * u64::from(input.image.height());
            let bytes = crate::engine::op_copies(settings.op, gpu).bytes(pixels);
            let reserved = crate::system::memory_budget::budget().try_reserve(bytes);
            Some(reserved.map_err(|source| WorkError::OpMemory { op: settings.op.to_string(), source })?)
        };
        // On the GPU a cancelled ticket (Stop, Esc, a changed setting) stops the run between its
        // bounded submissions.
        let gpu_options = |download_result| RunOptions {
            cancel: Some(ticket.flag()),
            progress: Some(ticket.pixels()),
            keep_input_on_gpu: keep_input.then_some(input.key),
            download_result,
        };
        // On a device of its own (a software adapter), or with an operation after the grayscale
        // (a stage of its own on the gray plane), a GPU result is read back, whatever the
        // round-trip setting, and shown like a CPU result.
        let cpu = settings.backend == Backend::Cpu;
        let mut shown = if cpu || self.gpu_device == GpuDevice::Own || !settings.op.is_none() {
            let options = if cpu {
                if !keep_input {
                    // Unticked: the input kept on the GPU by an earlier run is freed now.
                    self.engine.release_kept_input()?;
                }
                RunOptions { progress: Some(ticket.pixels()), ..RunOptions::default() }
            } else {
                gpu_options(true)
            };
            match self.shown_from_host(ticket, input, settings, options, (preview_side, started))? {
                Some(shown) => shown,
                None => return Ok(None),
            }
        } else {
            let converter = self.engine.gpu_converter()?;
            let (width, height) = (input.image.width(), input.image.height());
            let tiles =
                converter.create_display((width, height), preview_size(width, height, preview_side))?;
            let options = gpu_options(round_trip);
            let offset_ns = nanos_since(started);
            let result = self.engine.convert_for_display(&input.image, settings, &tiles, options);
            let Some((pixels, mut report)) = self.unless_stopped(ticket, result)? else {
                return Ok(None);
            };
            let alpha = pixels
                .as_ref()
                .map_or(matches!(report.kernel, Some(Kernel::Rgba8ToLa8 | Kernel::Rgba16ToLa16)), |p| {
                    p.color().has_alpha()
                });
            let display = DisplayImage::from_gpu(&self.render_state, tiles, alpha);
            // The engine's spans count from its own start, a little after ours.
            report.shift_spans(offset_ns);
            (pixels.map(Arc::new), display, report)
        };
        shown.2.notes.extend(luma_note);
        Ok(Some(self.finished(input, settings, shown, started)))
    }

    /// A run's output and its report, finished with the wall time of the whole run.
    fn finished(
        &self,
        input: &Loaded,
        settings: &ConvertSettings,
        (pixels, display, mut report): Shown,
        started: Instant,
    ) -> (Output, RunReport) {
        self.engine.finish_report(&mut report, nanos_since(started));
        (Output { image_id: input.id, pixels, display, settings: *settings, stored_luma: false }, report)
    }

    /// The luma the open JPEG stores, decoded again alone, shown as the result (`None` when
    /// the run was stopped). `Ok(Err(why))` when there is none to decode (another format, a
    /// JPEG of CMYK or RGB, a file that changed or no memory for it now): the caller converts
    /// the colour it holds with bt601, and its report says why.
    fn stored_luma(
        &self,
        ticket: &Ticket,
        input: &Loaded,
        settings: &ConvertSettings,
        (preview_side, started): (u32, Instant),
    ) -> Result<Result<Option<Shown>, NoStoredLuma>, WorkError> {
        if input.format != Some("JPEG") {
            return Ok(Err(NoStoredLuma::Fallback(StoredLuma::Fallback("not a JPEG"))));
        }
        // A truncated or damaged file kept at its load is read as leniently again.
        let kept = |w: &DecodeWarning| {
            matches!(w, DecodeWarning::Truncated(_) | DecodeWarning::DamagedRestart { .. })
        };
        let decode =
            DecodeOptions { allow_truncated: input.warnings.iter().any(kept), ..DecodeOptions::default() };
        // The open image holds its memory: with a reservation held here too, a decode that
        // does not fit is refused at once instead of waiting for that image to close.
        let _refuse_not_wait = crate::system::memory_budget::budget().try_reserve(0);
        let offset_ns = nanos_since(started);
        let converted =
            match crate::engine::convert_stored_luma(&input.path, settings, &decode, Some(ticket.pixels())) {
                Ok(Ok(converted)) => converted,
                Ok(Err(fallback)) => return Ok(Err(NoStoredLuma::Fallback(fallback))),
                Err(e) => return Ok(Err(NoStoredLuma::Failed(e))),
            };
        if self.stopped(ticket) {
            return Ok(Ok(None));
        }
        // The other formulas' runs start from the colour decoded at the open, not in their bars.
        let mut converted = converted;
        converted.report.notes.push(format!(
            "to compare: the colour decode when the photo was opened took {}, before any formula's run",
            crate::system::units::duration(input.decode_ns)
        ));
        self.show_converted(converted, offset_ns, (preview_side, started)).map(|shown| Ok(Some(shown)))
    }

    /// A run whose result comes back to host memory (the CPU's, or a GPU's on a device of its
    /// own), and its preview, timed as the display phase. `None` when it was cancelled.
    fn shown_from_host(
        &self,
        ticket: &Ticket,
        input: &Loaded,
        settings: &ConvertSettings,
        options: RunOptions<'_>,
        shown: (u32, Instant),
    ) -> Result<Option<Shown>, WorkError> {
        let offset_ns = nanos_since(shown.1);
        let converted = self.engine.convert(&input.image, settings, options);
        let Some(converted) = self.unless_stopped(ticket, converted)? else { return Ok(None) };
        self.show_converted(converted, offset_ns, shown).map(Some)
    }

    /// A run's result, or `None` when it was cancelled (said to the session) or the job was
    /// stopped meanwhile.
    fn unless_stopped<T>(
        &self,
        ticket: &Ticket,
        result: Result<T, EngineError>,
    ) -> Result<Option<T>, WorkError> {
        match result {
            Err(EngineError::Cancelled) => {
                self.reply(Reply::RunCancelled(ticket.id));
                Ok(None)
            }
            other => Ok(Some(other?).filter(|_| !self.stopped(ticket))),
        }
    }

    /// Host pixels made ready to show: the preview, timed as the display phase; the engine's
    /// spans, which count from `offset_ns` into the run, moved onto the run's timeline.
    fn show_converted(
        &self,
        converted: Converted,
        offset_ns: u64,
        (preview_side, started): (u32, Instant),
    ) -> Result<Shown, WorkError> {
        let shown_ns = nanos_since(started);
        let pixels = Arc::new(converted.image);
        let display = self.display_host(Arc::clone(&pixels), preview_side)?;
        let shown_until_ns = nanos_since(started);
        let mut report = converted.report;
        report.shift_spans(offset_ns);
        report.add_cpu_step(Phase::Display, shown_ns, shown_until_ns);
        Ok((Some(pixels), display, report))
    }

    pub(crate) fn export(
        &self,
        ticket: &Ticket,
        input: &Loaded,
        pixels: Option<Arc<DynamicImage>>,
        settings: &ConvertSettings,
        path: &Path,
        options: &ExportOptions,
    ) -> Result<Exported, WorkError> {
        // The window refuses it too; a path typed through a link it did not see is refused here.
        if crate::io::same_file(&input.path, path) {
            return Err(WorkError::WouldReplaceInput(path.to_path_buf()));
        }
        let started = Instant::now();
        let (pixels, converted): (Arc<DynamicImage>, Option<RunReport>) = if let Some(p) = pixels {
            (p, None)
        } else {
            // The GPU result stayed on the GPU: convert again with the download.
            ticket.set_doing("Export: downloading the GPU result");
            let c = self.engine.convert(&input.image, settings, RunOptions::default())?;
            (Arc::new(c.image), Some(c.report))
        };
        // The encoders report the share of rows encoded, from their threads (WebP's only once
        // done: it shows no bar until then).
        let name = file_name(path);
        let rows = u64::from(pixels.height());
        let progress = |fraction: f32| {
            let done = (f64::from(fraction) * rows as f64).round() as u64;
            let what = format!("Exporting {name}, {done} of {rows} rows encoded");
            ticket.set_progress(what, 0, 0, (f64::from(fraction), 1.0));
        };
        if options.format.or_else(|| crate::io::ExportFormat::from_path(path))
            == Some(crate::io::ExportFormat::Webp)
        {
            let what = format!("Exporting {name} (the WebP encoder tells its progress only once done)");
            ticket.set_doing(what);
        } else {
            progress(0.0);
        }
        // The input's density and EXIF tags, as a `convert` of the file keeps them.
        let options =
            ExportOptions { density: input.density, metadata: input.metadata.clone(), ..options.clone() };
        let encode = crate::io::encode_file_with_progress(&pixels, path, &options, &progress)?;
        let wall_ns = nanos_since(started);
        Ok(Exported { path: path.to_path_buf(), encode, converted, wall_ns, settings: *settings })
    }
}

/// Why the stored luma is not the result, so that the colour is converted with bt601 instead.
enum NoStoredLuma {
    /// There is none to decode (another format, a JPEG of CMYK or RGB, a changed file).
    Fallback(StoredLuma),
    /// Its decode failed.
    Failed(EngineError),
}

impl NoStoredLuma {
    /// The report's note.
    fn note(self) -> String {
        match self {
            Self::Fallback(fallback) => fallback.note(),
            Self::Failed(e) => {
                let why = crate::app::advice::describe(&e);
                format!("stored luma not decoded ({why}), so its colour was converted with bt601")
            }
        }
    }
}
