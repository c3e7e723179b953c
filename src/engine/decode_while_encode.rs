//! File to file for a complete YCbCr JPEG streamed by libjpeg: its stored luma
//! (`--formula stored-luma`), or its colour converted by the CPU kernel chunk by chunk as soon as
//! libjpeg decodes it (every other formula, on the CPU). libjpeg decodes on a thread of its own
//! (one per band where restart intervals allow) while the encoder codes the stripes already
//! decoded on every core, so decode and encode overlap instead of following each other (a photo
//! EXIF turns is encoded once all is decoded), the RGB image is never held whole, and the two
//! spans say so.

use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use super::spans::{Span, Track};
use super::{ConvertSettings, EngineError, PixelProgress, RunReport};
use crate::io::{
    EncodeReport, ExportOptions, GrayLayout, IoError, LumaStream, StoredLuma, encode_rows_to_file,
};
use crate::pixel::Kernel;
use crate::system::clock::nanos_since;

/// One file's conversion, as the paths that convert it in one pass see it.
#[derive(Clone, Copy)]
pub(super) struct FileRun<'a> {
    pub input: &'a Path,
    pub output: &'a Path,
    pub settings: &'a ConvertSettings,
    pub export: &'a ExportOptions,
    pub progress: Option<&'a PixelProgress>,
    /// When the file began to be opened: the report's zero.
    pub started: Instant,
}

/// Why a chunk was not converted (it stops the decode).
type ToGrayError = Box<dyn std::error::Error + Send + Sync>;

/// Decodes `stream` on a thread of its own and encodes its rows into the file's output as they
/// come: the run's report with its spans, to be finished with the wall time that comes with it,
/// and the export's.
pub(super) fn convert_luma_stream(
    stream: &LumaStream,
    file: FileRun<'_>,
) -> Result<(RunReport, EncodeReport, u64), EngineError> {
    let FileRun { input, output, settings, export, progress, started } = file;
    let since = || nanos_since(started);
    let (width, height) = stream.dimensions();
    let pixels = u64::from(width) * u64::from(height);
    crate::cpu::prepare(settings.formula);
    if let Some(p) = progress {
        p.start(pixels);
    }
    let kernel = Kernel::Rgb8ToL8;
    // Each chunk's conversion, on the thread that decoded it.
    let kernel_spans = Mutex::new(Vec::new());
    let to_gray = |band: usize, rgb: &[u8], gray: &mut [u8]| -> Result<(), ToGrayError> {
        let start_ns = since();
        crate::cpu::convert_chunk(kernel, settings.formula, rgb, gray)?;
        crate::cpu::apply_work_to_output(kernel, gray, settings.work);
        let span = Span::cpu(Track::DecodeKernel { band }, start_ns, since());
        // A poisoned lock only loses this chunk's span, never its rows.
        if let Ok(mut spans) = kernel_spans.lock() {
            spans.push(span);
        }
        if let Some(p) = progress {
            p.add(gray.len() as u64);
        }
        Ok(())
    };
    let layout = GrayLayout { width, height, alpha: false, sixteen_bit: false };
    let ((decoded, decode_end_ns), written, encode_end_ns) = std::thread::scope(|scope| {
        let decoding = std::thread::Builder::new()
            .name("graylab-jpeg-decode".into())
            .spawn_scoped(scope, || (stream.decode(&to_gray), since()));
        let failed = |reason: &str| IoError::Decode { path: input.to_path_buf(), reason: reason.to_owned() };
        let Ok(decoding) = decoding else {
            return (
                (Err(failed("cannot start the decoding thread")), since()),
                Err(failed("not decoded")),
                since(),
            );
        };
        let written = encode_rows_to_file(layout, stream, output, export, &|_| ());
        let encode_end_ns = since();
        let decoded = decoding
            .join()
            .unwrap_or_else(|_| (Err(failed("the decoding thread stopped (an internal error)")), since()));
        (decoded, written, encode_end_ns)
    });
    // A failed decode is the cause: the encoder only saw its rows stop coming.
    decoded?;
    let written = written?;
    // The decode's span holds the file's opening and, on its threads, each chunk's conversion:
    // the kernel's spans lie within it.
    let encode_start_ns = encode_end_ns.saturating_sub(written.encode_ns);
    let mut run = RunReport::new(settings.backend, settings.formula, (width, height), Vec::new());
    run.spans = vec![
        Span::cpu(Track::Decode, 0, decode_end_ns),
        Span::cpu(Track::Encode, encode_start_ns, encode_end_ns),
    ];
    run.spans.extend(kernel_spans.into_inner().unwrap_or_default());
    let mut run = if stream.stored_luma() {
        // Colour counted its pixels chunk by chunk as it converted them; the stored luma here,
        // where no kernel ran: its figures say no rounds (`gray_passed` sets them).
        super::convert::gray_passed(settings, &mut run, (progress, pixels));
        run
    } else {
        run.kernel = Some(kernel);
        run.threads = Some(stream.bands());
        run.with_work(settings.work)
    };
    let orientation = stream.orientation();
    let turned = orientation != image::metadata::Orientation::NoTransforms;
    if turned {
        run.notes.push("EXIF orientation applied".to_owned());
    }
    let warning =
        |w: &crate::io::DecodeWarning| format!("{}{}", super::report::WARNING_NOTE, w.shown(orientation));
    run.notes.extend(stream.warnings().iter().map(warning));
    if stream.stored_luma() {
        run.notes.push(StoredLuma::Decoded.note());
    }
    let decoded_as = match stream.bands() {
        1 => "decoded by libjpeg on one thread".to_owned(),
        bands => format!(
            "decoded by libjpeg in {bands} bands at once (the file's restart intervals let each band decode on its \
             own)"
        ),
    };
    run.notes.push(if turned {
        format!(
            "{decoded_as}, each chunk of rows {} and placed as shown as soon as it was decoded; the encoder coded the \
             rows once the last was placed (the first row as shown may be the last as stored, or a column): the \
             colour image was never held whole",
            if stream.stored_luma() { "kept".to_owned() } else { format!("converted with {}", settings.formula) }
        )
    } else if stream.stored_luma() {
        format!("{decoded_as} while the encoder coded the rows already decoded: the decode and the encode overlap")
    } else {
        format!(
            "{decoded_as}, each chunk of rows converted with {} on the decoding thread as soon as it was decoded, \
             while the encoder coded the rows already converted: the decode, the kernel and the encode overlap (the \
             decode's time holds the kernel's), and the colour image was never held whole",
            settings.formula
        )
    });
    run.notes.extend(written.notes.iter().cloned());
    Ok((run, written, encode_end_ns.max(decode_end_ns)))
}
