//! File to file: decode, convert, encode, with all five phases in one report; the output keeps
//! the input's pixel density and EXIF tags ([`crate::io::KeptMetadata`]).
//!
//! On the CPU, when the format takes the kernel's output as it is (PNG, or JPEG of 8-bit gray),
//! conversion and encoding overlap: each encoder stripe converts its own rows just before
//! encoding them, on all cores, and no full-size gray image is made.

use std::borrow::Cow;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Instant;

use image::DynamicImage;

use super::convert::{Prepared, prepare};
use super::decode_while_encode::{FileRun, convert_luma_stream};
use super::spans::Phase;
use super::spans::{Span, Track};
use super::{
    Backend, ConvertSettings, Engine, EngineError, Formula, Kernel, PixelProgress, RunOptions, RunReport,
};
use crate::io::{
    DecodeOptions, Decoded, EncodeReport, ExportFormat, ExportOptions, FrameCount, GrayLayout, Opened,
    RowSource, StoredLuma, decode_file, decode_or_stream, encode_file, encode_rows_to_file, encodes_rows,
    export_format, header_dimensions,
};
use crate::system::clock::nanos_since;

/// What converting one file did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct FileReport {
    /// The input file (in JSON as [`crate::io::JsonPath`] writes it).
    #[serde(serialize_with = "crate::io::serialize_path")]
    pub input: PathBuf,
    /// The written file (in JSON as [`crate::io::JsonPath`] writes it).
    #[serde(serialize_with = "crate::io::serialize_path")]
    pub output: PathBuf,
    /// The conversion, with decode and encode added to its phases.
    pub run: RunReport,
    /// What the export did.
    pub export: EncodeReport,
    /// Frames (or pages) in the input when it holds more than one; only the first is converted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames: Option<FrameCount>,
}

impl FileReport {
    /// What the user must be told about the input (the decode's warnings: damage libjpeg found,
    /// a truncated file kept, frames left unread), each once, without its "warning: " prefix.
    #[must_use]
    pub fn warnings(&self) -> Vec<&str> {
        self.run.notes.iter().filter_map(|n| n.strip_prefix(super::report::WARNING_NOTE)).collect()
    }

    /// The notes that are not [`FileReport::warnings`]: a front end that tells warnings where
    /// errors go tells these beside the report, so that each is said once.
    pub fn plain_notes(&self) -> impl Iterator<Item = &String> {
        self.run.notes.iter().filter(|n| !n.starts_with(super::report::WARNING_NOTE))
    }
}

impl FileRun<'_> {
    /// The file's report of `run`, written as `export` says.
    fn report(&self, run: RunReport, export: EncodeReport, frames: Option<FrameCount>) -> FileReport {
        FileReport { input: self.input.to_path_buf(), output: self.output.to_path_buf(), run, export, frames }
    }
}

/// Where an output goes when only a folder (or nothing) is given:
/// `DIR/NAME.gray.EXT`, with `DIR` the input's folder when `out_dir` is `None`. The name keeps
/// the input's exact bytes, valid UTF-8 or not.
#[must_use]
pub fn default_output_path(input: &Path, out_dir: Option<&Path>, format: ExportFormat) -> PathBuf {
    let mut name = input.file_stem().map_or_else(|| "image".into(), std::ffi::OsStr::to_os_string);
    name.push(".gray.");
    name.push(format.extension());
    out_dir.or(input.parent()).unwrap_or(Path::new("")).join(name)
}

/// Decodes `input`, converts it and writes `output` atomically; the conversion counts its pixels
/// done in `progress`, when given (started once the file is decoded).
pub fn convert_file(
    engine: &Engine,
    (input, output): (&Path, &Path),
    settings: &ConvertSettings,
    (decode, export): (&DecodeOptions, &ExportOptions),
    progress: Option<&PixelProgress>,
) -> Result<FileReport, EngineError> {
    // Refuse early, before the expensive decode, what the write would refuse.
    crate::io::check_output(output, export.overwrite)?;
    // What the export would refuse after the decode (a side too large for JPEG or WebP) is
    // refused before it, from the input's header; other formats have no side limit, and their
    // files are not opened an extra time for it.
    let format = export.format.or_else(|| ExportFormat::from_path(output));
    if matches!(format, Some(ExportFormat::Jpeg | ExportFormat::Webp))
        && let Some(dimensions) = header_dimensions(input)
    {
        export_format(output, export, dimensions)?;
    }
    // The file's timeline: the decode, the conversion and the encode where they ran.
    let started = Instant::now();
    let since = || nanos_since(started);
    let file = FileRun { input, output, settings, export, progress, started };
    // Stored luma: a YCbCr JPEG's Y plane is decoded alone, and that gray plane is the result.
    let mut decode = DecodeOptions { stored_luma: settings.formula == Formula::StoredLuma, ..*decode };
    // A GPU conversion reserves what its run holds in host memory: one band staged, and on a
    // software or integrated GPU its buffers too (the app's loads reserve by the same rule);
    // an op, its own planes on its backend.
    let gpu = if settings.backend == Backend::Gpu { Some(engine.gpu_host_memory()?) } else { None };
    decode = super::memory::gpu_decode_options(decode, gpu);
    decode.op_copies = super::memory::op_copies(settings.op, gpu);
    let decode = &decode;
    // A complete YCbCr JPEG into a format that takes gray rows: decoded while encoded, its
    // stored luma as it is, its colour converted on the CPU as it is decoded.
    let gray_rows = GrayLayout { width: 0, height: 0, alpha: false, sixteen_bit: false };
    let streams = (decode.stored_luma || settings.backend == Backend::Cpu) && settings.op.is_none();
    let decoded = if streams && encodes_rows(gray_rows, output, export) {
        match decode_or_stream(input, decode)? {
            Opened::Decoded(decoded) => decoded,
            Opened::LumaRows(stream) => {
                let export = ExportOptions {
                    density: stream.density(),
                    metadata: stream.metadata(),
                    ..export.clone()
                };
                let file = FileRun { export: &export, ..file };
                let (mut run, export, end_ns) = convert_luma_stream(&stream, file)?;
                engine.finish_report(&mut run, end_ns);
                return Ok(file.report(run, export, None));
            }
        }
    } else {
        decode_file(input, decode)?
    };
    let decoded_at_ns = since();
    let decode_from_ns = decoded_at_ns.saturating_sub(decoded.decode_ns);
    let export =
        ExportOptions { density: decoded.density, metadata: decoded.metadata.clone(), ..export.clone() };
    let file = FileRun { export: &export, ..file };
    if let Some(mut report) = convert_streamed(&decoded, file)? {
        let end_ns = since();
        report.run.add_cpu_step(Phase::Decode, decode_from_ns, decoded_at_ns);
        engine.finish_report(&mut report.run, end_ns);
        return Ok(report);
    }
    let convert_at_ns = since();
    let mut decoded = decoded;
    // A gray input kept as it is (its alpha too, where kept) is the result: moved, not copied.
    let gray_as_is = super::convert::gray_as_is(&decoded.image, settings.keeps_alpha());
    let stored_luma = decoded.stored_luma == Some(StoredLuma::Decoded);
    let converted = if (stored_luma || gray_as_is) && settings.op.is_none() {
        // The stored luma is said by the decode's note; a gray input by the same note a
        // conversion in memory gives it.
        let gray = std::mem::replace(&mut decoded.image, DynamicImage::new_luma8(0, 0));
        let mut converted = super::convert::passed_through(gray, settings, progress);
        if !stored_luma {
            converted.report.notes.insert(0, super::convert::ALREADY_GRAY.to_owned());
        }
        converted
    } else {
        engine.convert(&decoded.image, settings, RunOptions { progress, ..RunOptions::default() })?
    };
    let notes = decode_notes(&decoded);
    let frames = decoded.frames;
    drop(decoded.image);
    let written = encode_file(&converted.image, output, file.export)?;
    let end_ns = since();
    let mut run = converted.report;
    run.shift_spans(convert_at_ns);
    run.add_cpu_step(Phase::Decode, decode_from_ns, decoded_at_ns);
    run.add_cpu_step(Phase::Encode, end_ns.saturating_sub(written.encode_ns), end_ns);
    run.notes.extend(notes);
    run.notes.extend(written.notes.iter().cloned());
    // The wall is now the file's, decode to encode; the conversion's remainders are recounted.
    engine.finish_report(&mut run, end_ns);
    Ok(file.report(run, written, frames))
}

/// A run of [`Formula::StoredLuma`] on a file already shown in colour (the app's): a YCbCr
/// JPEG's Y plane, decoded alone, is the result, timed as the run's decode phase; no kernel
/// runs and nothing goes to a GPU. `Ok(Err(why))` when the file stores no luma (`why` as
/// [`StoredLuma::note`] says it): the caller converts the colour it holds with bt601.
pub fn convert_stored_luma(
    path: &Path,
    settings: &ConvertSettings,
    decode: &DecodeOptions,
    progress: Option<&PixelProgress>,
) -> Result<Result<super::Converted, StoredLuma>, EngineError> {
    let decoded = decode_file(path, &DecodeOptions { stored_luma: true, ..*decode })?;
    match decoded.stored_luma {
        Some(StoredLuma::Decoded) => {}
        Some(fallback) => return Ok(Err(fallback)),
        None => return Ok(Err(StoredLuma::Fallback("not a JPEG"))),
    }
    let notes = decode_notes(&decoded);
    let decode_ns = decoded.decode_ns;
    let mut converted = super::convert::passed_through(decoded.image, settings, progress);
    let run = &mut converted.report;
    run.shift_spans(decode_ns);
    run.add_cpu_step(Phase::Decode, 0, decode_ns);
    run.notes.extend(notes);
    run.finish(decode_ns.saturating_add(run.total_ns));
    Ok(Ok(converted))
}

/// What the reader of a report must know about the decode: the colour model stored where it
/// was converted (as the app's caption says "from CMYK"), orientation applied (and from where),
/// warnings (a truncated file's end said in the image as shown).
fn decode_notes(decoded: &Decoded) -> Vec<String> {
    let read_as = if decoded.image.color().has_color() { "RGB" } else { "8-bit gray" };
    let stored = decoded.stored_as.map(|model| format!("the file stores {model}: read as {read_as}"));
    let reoriented = decoded.orientation_note().map(str::to_owned);
    let warnings = decoded
        .warnings
        .iter()
        .map(|w| format!("{}{}", super::report::WARNING_NOTE, w.shown(decoded.orientation)));
    let luma = decoded.stored_luma.map(StoredLuma::note);
    stored.into_iter().chain(reoriented).chain(warnings).chain(luma).collect()
}

/// Rows converted by the CPU kernel on demand, for an encoder's stripes.
struct KernelRows<'a> {
    kernel: Kernel,
    formula: crate::pixel::Formula,
    work: crate::pixel::Work,
    src: &'a [u8],
    width: usize,
    progress: Option<&'a PixelProgress>,
    /// When the file's run started, and each stripe's kernel span since then.
    spans: (Instant, std::sync::Mutex<Vec<Span>>),
}

impl RowSource for KernelRows<'_> {
    fn rows(&self, rows: Range<usize>) -> Cow<'_, [u8]> {
        let started = Instant::now();
        let in_row = self.width * self.kernel.in_bytes_per_pixel();
        let src = self.src.get(rows.start * in_row..rows.end * in_row).unwrap_or(&[]);
        let mut out = vec![0u8; rows.len() * self.width * self.kernel.out_bytes_per_pixel()];
        // A size mismatch leaves `out` empty; the encoder then reports it.
        if crate::cpu::convert_chunk(self.kernel, self.formula, src, &mut out).is_err() {
            out.clear();
        }
        crate::cpu::apply_work_to_output(self.kernel, &mut out, self.work);
        if let Some(p) = self.progress {
            p.add((rows.len() * self.width) as u64);
        }
        let ended = Instant::now();
        self.record(|thread| Track::KernelStripe { thread }, started, ended);
        Cow::Owned(out)
    }

    fn coded(&self, _: Range<usize>, started: Instant) {
        self.record(|thread| Track::EncodeStripe { thread }, started, Instant::now());
    }
}

impl KernelRows<'_> {
    /// Keeps a span from `started` to `ended` on this thread's `lane`.
    fn record(&self, lane: fn(Option<usize>) -> Track, started: Instant, ended: Instant) {
        let (origin, spans) = &self.spans;
        let lane = lane(rayon::current_thread_index());
        let span = Span::between(lane, *origin, (started, ended));
        // A poisoned lock only loses this stripe's span, never its rows.
        if let Ok(mut spans) = spans.lock() {
            spans.push(span);
        }
    }
}

/// Converts and encodes in one pass when that is possible (CPU backend, an 8-bit colour input,
/// a format that stores the kernel's output as it is); `None` when it is not.
fn convert_streamed(decoded: &Decoded, file: FileRun<'_>) -> Result<Option<FileReport>, EngineError> {
    let FileRun { output, settings, export, progress, started, .. } = file;
    if settings.backend != Backend::Cpu || !settings.op.is_none() {
        return Ok(None);
    }
    let image = &decoded.image;
    // Only 8-bit colour streams; a gray image is not even prepared (that copies it).
    if !matches!(image, DynamicImage::ImageRgb8(_) | DynamicImage::ImageRgba8(_)) {
        return Ok(None);
    }
    let (prepared, notes) = prepare(image, settings.keep_alpha)?;
    let Prepared::Colour { kernel, bytes } = prepared else { return Ok(None) };
    if !matches!(kernel, Kernel::Rgb8ToL8 | Kernel::Rgba8ToL8 | Kernel::Rgba8ToLa8) {
        return Ok(None);
    }
    let (width, height) = (image.width(), image.height());
    let layout = GrayLayout { width, height, alpha: kernel == Kernel::Rgba8ToLa8, sixteen_bit: false };
    if !encodes_rows(layout, output, export) {
        return Ok(None);
    }
    let source = KernelRows {
        kernel,
        formula: settings.formula,
        work: settings.work,
        src: &bytes,
        width: width as usize,
        progress,
        spans: (started, std::sync::Mutex::new(Vec::new())),
    };
    if let Some(p) = progress {
        p.start(u64::from(width) * u64::from(height));
    }
    // The stripes run on the pool of the threads asked for (`--threads`), as a kernel alone does.
    // The encode's span starts where the call does on that pool (files converted side by side
    // share it, and one may wait for it), before its own clock, so before any stripe, and lasts
    // its encode time: after its last stripe the encode still writes and syncs.
    let threads = settings.threads.clamp(1, crate::cpu::available_threads());
    let pool = crate::cpu::pool(threads)?;
    let (encode_from_ns, written) = pool.install(|| {
        let from_ns = nanos_since(started);
        (from_ns, encode_rows_to_file(layout, &source, output, export, &|_| ()))
    });
    let written = written?;
    let mut run = RunReport::new(Backend::Cpu, settings.formula, (width, height), notes);
    run.kernel = Some(kernel);
    run.threads = Some(threads);
    run.total_ns = written.encode_ns;
    run.spans = source.spans.1.into_inner().unwrap_or_default();
    run.work = super::WorkFigures::new(settings.work, Some(kernel), run.pixels(), None);
    // The kernel ran inside the encode's stripes: its phase is CPU time summed over their spans
    // (on the stripes' tracks), not one span of its own. The caller adds the decode.
    run.add_cpu_step(Phase::Encode, encode_from_ns, encode_from_ns + written.encode_ns);
    run.notes.extend(decode_notes(decoded));
    run.notes.extend(written.notes.iter().cloned());
    run.notes.push(format!(
        "converted stripe by stripe inside the encode on {}: the kernel figure is CPU time summed over \
         stripes, and the encode's wall time includes it",
        crate::system::units::count(threads, "thread")
    ));
    Ok(Some(file.report(run, written, decoded.frames)))
}
