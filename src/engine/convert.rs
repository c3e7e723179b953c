//! One in-memory conversion: pick the kernel for the pixel type, run it on the chosen backend,
//! and report each phase with its clock.

use std::borrow::Cow;
use std::sync::atomic::AtomicBool;

use crate::system::progress::PixelProgress;
use std::time::Instant;

use image::{DynamicImage, ImageBuffer};

use super::options::RunOptions;
use super::report::{RunReport, add_gpu_timings};
use super::spans::Phase;
use super::spans::{Span, SpanClock, Track};
use super::{Backend, ConvertSettings, Engine, EngineError, Kernel, OpFigures};
use crate::gpu::{GpuJob, GpuTiles};
use crate::pixel::Op;
use crate::system::clock::nanos_since;
use crate::system::load::CpuSnapshot;

/// A converted image and its report.
#[derive(Clone, Debug)]
pub struct Converted {
    /// The gray (or gray + alpha) image: L8, LA8, L16 or LA16.
    pub image: DynamicImage,
    /// What was measured.
    pub report: RunReport,
}

/// How an input image enters a kernel: its kernel and packed bytes, or gray already.
pub enum Prepared<'a> {
    /// Colour pixels for `kernel`.
    Colour {
        /// The conversion.
        kernel: Kernel,
        /// Packed input pixels.
        bytes: Cow<'a, [u8]>,
    },
    /// Already gray: the output is the input (alpha dropped unless kept).
    Gray(DynamicImage),
}

fn colour(kernel: Kernel, bytes: &[u8]) -> Prepared<'_> {
    Prepared::Colour { kernel, bytes: Cow::Borrowed(bytes) }
}

/// The note on a run whose input was gray already.
pub(crate) const ALREADY_GRAY: &str = "the input is already gray: no conversion ran on it";

/// Whether `image` is gray already and is its own result as it is: gray, or gray + alpha where
/// the alpha is kept ([`prepare`] converts the rest).
pub(crate) fn gray_as_is(image: &DynamicImage, keep_alpha: bool) -> bool {
    match image {
        DynamicImage::ImageLuma8(_) | DynamicImage::ImageLuma16(_) => true,
        DynamicImage::ImageLumaA8(_) | DynamicImage::ImageLumaA16(_) => keep_alpha,
        _ => false,
    }
}

/// Chooses the kernel for an image's pixel type (float images are converted to 16-bit first).
pub fn prepare(image: &DynamicImage, keep_alpha: bool) -> Result<(Prepared<'_>, Vec<String>), EngineError> {
    let mut notes = Vec::new();
    let prepared = match image {
        DynamicImage::ImageRgb8(i) => colour(Kernel::Rgb8ToL8, i.as_raw()),
        DynamicImage::ImageRgba8(i) if keep_alpha => colour(Kernel::Rgba8ToLa8, i.as_raw()),
        DynamicImage::ImageRgba8(i) => colour(Kernel::Rgba8ToL8, i.as_raw()),
        DynamicImage::ImageRgb16(_) => colour(Kernel::Rgb16ToL16, image.as_bytes()),
        DynamicImage::ImageRgba16(_) if keep_alpha => colour(Kernel::Rgba16ToLa16, image.as_bytes()),
        DynamicImage::ImageRgba16(_) => colour(Kernel::Rgba16ToL16, image.as_bytes()),
        DynamicImage::ImageLuma8(_)
        | DynamicImage::ImageLuma16(_)
        | DynamicImage::ImageLumaA8(_)
        | DynamicImage::ImageLumaA16(_) => {
            // Not "unchanged": an op after the grayscale still runs on it.
            notes.push(ALREADY_GRAY.to_owned());
            Prepared::Gray(match image {
                DynamicImage::ImageLumaA8(_) if !keep_alpha => DynamicImage::ImageLuma8(image.to_luma8()),
                DynamicImage::ImageLumaA16(_) if !keep_alpha => DynamicImage::ImageLuma16(image.to_luma16()),
                _ => image.clone(),
            })
        }
        DynamicImage::ImageRgb32F(_) | DynamicImage::ImageRgba32F(_) => {
            notes.push("floating-point input converted to 16-bit before the kernel".to_owned());
            let alpha = keep_alpha && image.color().has_alpha();
            let (kernel, bytes) = if alpha {
                (Kernel::Rgba16ToLa16, bytemuck::cast_slice(image.to_rgba16().as_raw()).to_vec())
            } else {
                (Kernel::Rgb16ToL16, bytemuck::cast_slice(image.to_rgb16().as_raw()).to_vec())
            };
            Prepared::Colour { kernel, bytes: Cow::Owned(bytes) }
        }
        other => {
            return Err(EngineError::UnsupportedPixels(format!("{:?}", other.color())));
        }
    };
    Ok((prepared, notes))
}

/// Output buffer of the right sample width for a kernel, zeroed.
pub(crate) enum OutBuffer {
    /// 8-bit samples.
    U8(Vec<u8>),
    /// 16-bit samples.
    U16(Vec<u16>),
}

impl OutBuffer {
    pub(crate) fn new(kernel: Kernel, pixels: usize) -> Self {
        let bytes = pixels * kernel.out_bytes_per_pixel();
        if kernel.is_16bit() {
            Self::U16(crate::cpu::zeroed_buffer(bytes / 2))
        } else {
            Self::U8(crate::cpu::zeroed_buffer(bytes))
        }
    }

    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        match self {
            Self::U8(v) => v,
            Self::U16(v) => bytemuck::cast_slice_mut(v),
        }
    }

    pub(crate) fn into_image(self, kernel: Kernel, width: u32, height: u32) -> Option<DynamicImage> {
        Some(match (self, kernel) {
            (Self::U8(v), Kernel::Rgb8ToL8 | Kernel::Rgba8ToL8) => {
                DynamicImage::ImageLuma8(ImageBuffer::from_raw(width, height, v)?)
            }
            (Self::U8(v), _) => DynamicImage::ImageLumaA8(ImageBuffer::from_raw(width, height, v)?),
            (Self::U16(v), Kernel::Rgba16ToLa16) => {
                DynamicImage::ImageLumaA16(ImageBuffer::from_raw(width, height, v)?)
            }
            (Self::U16(v), _) => DynamicImage::ImageLuma16(ImageBuffer::from_raw(width, height, v)?),
        })
    }
}

/// A gray input runs no kernel: its `pixels` are all done at once (counted in `progress`), and
/// it gets no work on either backend (said when work was asked for).
pub(super) fn gray_passed(
    settings: &ConvertSettings,
    report: &mut RunReport,
    (progress, pixels): (Option<&PixelProgress>, u64),
) {
    if let Some(p) = progress {
        p.add(pixels);
    }
    if !settings.work.is_identity() {
        report.notes.push(
            "no kernel ran on the gray input, so the work per pixel was not applied (on either backend)"
                .to_owned(),
        );
        // The figures say what ran: no rounds.
        report.work = super::WorkFigures::default();
    }
}

/// A gray image the caller owns (a JPEG's stored luma), passed through as the result without a
/// copy: at 96 MP a copy is 96 MB more at the peak.
pub(crate) fn passed_through(
    image: DynamicImage,
    settings: &ConvertSettings,
    progress: Option<&PixelProgress>,
) -> Converted {
    let started = Instant::now();
    let pixels = u64::from(image.width()) * u64::from(image.height());
    let mut report =
        RunReport::new(settings.backend, settings.formula, (image.width(), image.height()), Vec::new())
            .with_work(settings.work);
    if let Some(p) = progress {
        p.start(pixels);
    }
    gray_passed(settings, &mut report, (progress, pixels));
    report.finish(nanos_since(started));
    Converted { image, report }
}

/// The settings `kernel` runs with, and whether `settings.op` is left to run after it: the
/// kernels with an 8-bit gray output run the op themselves; after a 16-bit one it runs on the
/// output narrowed to 8 bits ([`gray8_for_op`], [`narrowed_for_op`]), as on a `--depth 8` file.
pub(crate) fn split_op(kernel: Kernel, settings: &ConvertSettings) -> (ConvertSettings, bool) {
    let after = !settings.op.is_none() && !matches!(kernel, Kernel::Rgb8ToL8 | Kernel::Rgba8ToL8);
    (ConvertSettings { op: if after { Op::None } else { settings.op }, ..*settings }, after)
}

/// The 8-bit gray plane an op runs on: a 16-bit gray is narrowed as `--depth 8` writes it
/// (`image`'s rounding), and the report says so.
fn gray8_for_op(
    image: DynamicImage,
    settings: &ConvertSettings,
    report: &mut RunReport,
) -> Result<image::GrayImage, EngineError> {
    let (width, height) = (image.width(), image.height());
    Ok(match image {
        DynamicImage::ImageLuma8(gray) => gray,
        DynamicImage::ImageLuma16(wide) => {
            let gray = narrowed_for_op(wide.as_raw(), settings.op, report);
            image::GrayImage::from_raw(width, height, gray)
                .ok_or(EngineError::Bug("the narrowed plane does not match the image size"))?
        }
        other => {
            report.notes.push(narrowing_note(settings.op));
            other.to_luma8()
        }
    })
}

/// 16-bit gray samples narrowed to 8 bits on every thread for `op`, as `image` narrows them
/// (`(v + 128) / 257`, what `--depth 8` writes); the report says so.
pub(crate) fn narrowed_for_op(samples: &[u16], op: Op, report: &mut RunReport) -> Vec<u8> {
    use rayon::prelude::*;
    report.notes.push(narrowing_note(op));
    samples.par_iter().map(|&v| ((u32::from(v) + 128) / 257) as u8).collect()
}

/// What the report says when the op's gray plane is narrowed from 16 bits.
fn narrowing_note(op: Op) -> String {
    format!("16-bit gray narrowed to 8-bit: {op} runs on 8-bit gray")
}

impl Engine {
    /// Converts an image in memory, with the cancel flag, the count of pixels done and the input
    /// kept on the GPU that [`RunOptions`] may carry.
    pub fn convert(
        &self,
        image: &DynamicImage,
        settings: &ConvertSettings,
        options: RunOptions<'_>,
    ) -> Result<Converted, EngineError> {
        let started = Instant::now();
        let load = CpuSnapshot::now();
        let (width, height) = (image.width(), image.height());
        let pixels = u64::from(width) * u64::from(height);
        if let Some(p) = options.progress {
            p.start(pixels);
        }
        let (prepared, mut notes) = prepare(image, settings.keeps_alpha())?;
        if settings.keep_alpha && !settings.op.is_none() && image.color().has_alpha() {
            notes.push(format!("alpha dropped: {} runs on 8-bit gray", settings.op));
        }
        let mut report = RunReport::new(settings.backend, settings.formula, (width, height), notes)
            .with_work(settings.work);
        let (kernel, bytes) = match prepared {
            Prepared::Gray(mut image) => {
                gray_passed(settings, &mut report, (options.progress, pixels));
                if !settings.op.is_none() {
                    let mut gray = gray8_for_op(image, settings, &mut report)?;
                    self.run_op(
                        &mut gray,
                        (width, height),
                        settings,
                        options.cancel,
                        (&mut report, started),
                    )?;
                    image = DynamicImage::ImageLuma8(gray);
                }
                self.finish_report(&mut report, nanos_since(started));
                return Ok(Converted { image, report });
            }
            Prepared::Colour { kernel, bytes } => (kernel, bytes),
        };
        report.kernel = Some(kernel);
        let (kernel_settings, op_after) = split_op(kernel, settings);
        let mut out = OutBuffer::new(kernel, width as usize * height as usize);
        let job = job_of(kernel, &bytes, (width, height), &kernel_settings, &options);
        self.run_kernel(&job, out.bytes_mut(), &kernel_settings, (&mut report, started))?;
        let mut image = out
            .into_image(kernel, width, height)
            .ok_or(EngineError::Bug("the output buffer does not match the image size"))?;
        if op_after {
            let mut gray = gray8_for_op(image, settings, &mut report)?;
            self.run_op(&mut gray, (width, height), settings, options.cancel, (&mut report, started))?;
            image = DynamicImage::ImageLuma8(gray);
        }
        report.busy = CpuSnapshot::busy_of_a_run(load);
        self.finish_report(&mut report, nanos_since(started));
        Ok(Converted { image, report })
    }

    /// Converts on the GPU and keeps the result there for display in `tiles`, with its preview
    /// drawn (`Phase::Display`: the copies into the store and the preview); downloads it too with
    /// [`RunOptions::download_result`]. A gray input is stored from the host.
    pub fn convert_for_display(
        &self,
        image: &DynamicImage,
        settings: &ConvertSettings,
        tiles: &GpuTiles,
        options: RunOptions<'_>,
    ) -> Result<(Option<DynamicImage>, RunReport), EngineError> {
        let started = Instant::now();
        let load = CpuSnapshot::now();
        let converter = self.gpu_converter()?;
        let gpu = converter.context();
        let (width, height) = (image.width(), image.height());
        let pixels = u64::from(width) * u64::from(height);
        if let Some(p) = options.progress {
            p.start(pixels);
        }
        let (prepared, notes) = prepare(image, settings.keep_alpha)?;
        let mut report =
            RunReport::new(Backend::Gpu, settings.formula, (width, height), notes).with_work(settings.work);
        report.adapter = Some(gpu.adapter_info().name.clone());
        let (kernel, bytes) = match prepared {
            Prepared::Gray(gray) => {
                gray_passed(settings, &mut report, (options.progress, pixels));
                let shown = nanos_since(started);
                tiles.write_host(&gray);
                tiles.draw_preview(options.cancel)?;
                let drawn = nanos_since(started);
                report.add_cpu_step(Phase::Display, shown, drawn);
                self.finish_report(&mut report, nanos_since(started));
                return Ok((Some(gray), report));
            }
            Prepared::Colour { kernel, bytes } => (kernel, bytes),
        };
        report.kernel = Some(kernel);
        report.workgroup = Some(settings.workgroup);
        if !settings.op.is_none() {
            report.notes.push(format!(
                "{} is not applied on the display path (convert or bench run it)",
                settings.op
            ));
        }
        let job = job_of(kernel, &bytes, (width, height), settings, &options);
        let mut out =
            options.download_result.then(|| OutBuffer::new(kernel, width as usize * height as usize));
        let offset_ns = nanos_since(started);
        self.start_gpu_budget();
        let t = converter.convert_for_display(&job, tiles, out.as_mut().map(OutBuffer::bytes_mut))?;
        add_gpu_timings(&mut report, t, offset_ns);
        let pixels = out.and_then(|o| o.into_image(kernel, width, height));
        report.busy = CpuSnapshot::busy_of_a_run(load);
        self.finish_report(&mut report, nanos_since(started));
        Ok((pixels, report))
    }

    /// Runs `job` ([`job_of`]) on `settings.backend` into a caller-owned buffer and records its
    /// phases and spans in `report`, whose run started at `run_started` (the benchmark reuses
    /// `dst` across runs, as a real pipeline would).
    pub(crate) fn run_kernel(
        &self,
        job: &GpuJob<'_>,
        dst: &mut [u8],
        settings: &ConvertSettings,
        (report, run_started): (&mut RunReport, Instant),
    ) -> Result<(), EngineError> {
        let &GpuJob { kernel, src, width, height, cancel, progress, .. } = job;
        if split_op(kernel, settings).1 {
            return Err(EngineError::OpNeedsGray8 { op: settings.op.to_string(), kernel: kernel.name() });
        }
        match settings.backend {
            Backend::Cpu => {
                let threads = settings.threads.clamp(1, crate::cpu::available_threads());
                let stretches = crate::cpu::ThreadStretches::new(threads);
                let watch = crate::cpu::Watch { progress, stretches: Some(&stretches) };
                crate::cpu::prepare(settings.formula);
                let started = Instant::now();
                let start_ns = nanos_since(run_started);
                crate::cpu::par_convert_counted(
                    kernel,
                    settings.formula,
                    (src, dst),
                    threads,
                    settings.work,
                    watch,
                )?;
                let ns = nanos_since(started);
                report.threads = Some(threads);
                report.add_cpu_step(Phase::Kernel, start_ns, start_ns + ns);
                report.spans.extend(stretches.into_stretches().into_iter().map(|s| {
                    Span::between(Track::KernelThread { thread: s.thread }, run_started, (s.started, s.ended))
                }));
            }
            Backend::Gpu => {
                let converter = self.gpu_converter()?;
                self.start_gpu_budget();
                let offset_ns = nanos_since(run_started);
                report.workgroup = Some(settings.workgroup);
                report.adapter = Some(converter.context().adapter_info().name.clone());
                // With an op, the gray plane stays on the GPU where it fits one band.
                if let Some((t, op_t)) = converter.convert_then_op(job, settings.op, dst)? {
                    add_gpu_timings(report, t, offset_ns);
                    let end_ns = nanos_since(run_started);
                    record_gpu_op(report, settings.op, (width, height), &op_t, run_started);
                    report.add_cpu_step(Phase::Op, end_ns.saturating_sub(op_t.wall_ns), end_ns);
                    report.notes.push(format!(
                        "the gray plane stayed on the GPU for {}: no download and upload between the grayscale and the op",
                        settings.op
                    ));
                    return Ok(());
                }
                let t = converter.convert(job, dst)?;
                add_gpu_timings(report, t, offset_ns);
            }
        }
        self.run_op(dst, (width, height), settings, cancel, (report, run_started))
    }

    /// Applies `settings.op` to the `width` x `height` gray plane in place on the run's backend
    /// (nothing for no op), as phase [`Phase::Op`] on the CPU clock (on the GPU the whole stage;
    /// its passes on their own clock in [`RunReport::op`]) with its span.
    pub(crate) fn run_op(
        &self,
        plane: &mut [u8],
        (width, height): (u32, u32),
        settings: &ConvertSettings,
        cancel: Option<&AtomicBool>,
        (report, run_started): (&mut RunReport, Instant),
    ) -> Result<(), EngineError> {
        let op = settings.op;
        if op.is_none() {
            return Ok(());
        }
        let started = Instant::now();
        let start_ns = nanos_since(run_started);
        let pixels = u64::from(width) * u64::from(height);
        let (out, figures) = match settings.backend {
            Backend::Cpu => {
                let threads = settings.threads.clamp(1, crate::cpu::available_threads());
                let size = (width as usize, height as usize);
                let out = crate::cpu::ops::apply_op(op, plane, size, threads)?;
                (
                    out,
                    OpFigures::new(op, pixels, (nanos_since(started), crate::system::clock::Clock::CpuClock)),
                )
            }
            Backend::Gpu => {
                let (out, t) = self.gpu_converter()?.apply_op(op, plane, (width, height), cancel)?;
                record_gpu_op(report, op, (width, height), &t, run_started);
                (out, report.op)
            }
        };
        if out.len() != plane.len() {
            return Err(EngineError::Bug("the op's output does not match its input"));
        }
        plane.copy_from_slice(&out);
        report.add_cpu_step(Phase::Op, start_ns, start_ns + nanos_since(started));
        report.op = figures;
        Ok(())
    }
}

/// Records an op stage on the GPU in `report` (its figures, a span per submission of its
/// passes, a note when it ran in bands), for a run that started at `run_started`.
fn record_gpu_op(
    report: &mut RunReport,
    op: crate::pixel::Op,
    (width, height): (u32, u32),
    t: &crate::gpu::OpTimings,
    run_started: Instant,
) {
    for &(submit, done) in &t.submitted {
        let span = Span::between(Track::OpSubmission, run_started, (submit, done));
        report.spans.push(Span { clock: SpanClock::AroundSubmission, ..span });
    }
    if t.bands > 1 {
        report.notes.push(format!(
            "{op} ran in {} row bands (each within one GPU buffer and the grid's 16,384 rows)",
            t.bands
        ));
    }
    report.op = OpFigures::of_gpu(op, u64::from(width) * u64::from(height), t);
}

/// The job of `src`, `kernel`'s input at `size`, with `settings` and `options`: what
/// [`Engine::run_kernel`] runs on either backend.
pub(crate) fn job_of<'a>(
    kernel: Kernel,
    src: &'a [u8],
    size: (u32, u32),
    settings: &ConvertSettings,
    options: &RunOptions<'a>,
) -> GpuJob<'a> {
    GpuJob {
        cancel: options.cancel,
        progress: options.progress,
        keep_input: options.keep_input_on_gpu.map(super::ImageKey::get),
        ..GpuJob::new(kernel, settings.formula, settings.workgroup, src, size).with_work(settings.work)
    }
}

#[cfg(test)]
mod tests {
    /// Every 16-bit sample narrows to what `image` (and so `--depth 8`) gives it.
    #[test]
    fn narrowing_for_an_op_is_images_narrowing() {
        let samples: Vec<u16> = (0..=u16::MAX).collect();
        let mut report = super::RunReport::new(
            super::Backend::Cpu,
            crate::pixel::Formula::default(),
            (256, 256),
            Vec::new(),
        );
        let narrowed = super::narrowed_for_op(&samples, crate::pixel::Op::Dither, &mut report);
        let wide = image::ImageBuffer::from_fn(256, 256, |x, y| image::Luma([(y * 256 + x) as u16]));
        assert_eq!(narrowed, image::DynamicImage::ImageLuma16(wide).to_luma8().into_raw());
        assert_eq!(report.notes, ["16-bit gray narrowed to 8-bit: dither runs on 8-bit gray"]);
    }
}
