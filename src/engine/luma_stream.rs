//! File to file for a JPEG's stored luma (`--formula stored-luma`): libjpeg decodes the Y plane
//! on a thread of its own while the encoder codes the stripes already decoded on every core, so
//! decode and encode overlap instead of following each other, and the two spans say so.

use std::path::Path;
use std::time::Instant;

use super::report::{Phase, PhaseTiming};
use super::spans::{Lane, Span};
use super::{ConvertSettings, EngineError, PixelProgress, RunReport};
use crate::io::{
    EncodeReport, ExportOptions, GrayLayout, IoError, LumaStream, StoredLuma, encode_rows_to_file,
};
use crate::system::clock::Clock;

/// Decodes `stream` on a thread of its own and encodes its rows into `output` as they come;
/// `started` is when the file began to be opened (the report's zero). The run's report, decode
/// and encode in its phases, and the export's.
pub(super) fn convert_luma_stream(
    stream: &LumaStream,
    (input, output): (&Path, &Path),
    settings: &ConvertSettings,
    export: ExportOptions,
    progress: Option<&PixelProgress>,
    started: Instant,
) -> Result<(RunReport, EncodeReport), EngineError> {
    let since = || u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    let (width, height) = stream.dimensions();
    let pixels = u64::from(width) * u64::from(height);
    if let Some(p) = progress {
        p.start(pixels);
    }
    let layout = GrayLayout { width, height, alpha: false, sixteen_bit: false };
    let decode_start_ns = since();
    let ((decoded, decode_end_ns), written, encode_end_ns) = std::thread::scope(|scope| {
        let decoding = scope.spawn(|| (stream.decode(), since()));
        let written = encode_rows_to_file(layout, stream, output, &export, &|_| ());
        let encode_end_ns = since();
        let decoded = decoding.join().unwrap_or_else(|_| {
            let reason = "the decoding thread stopped (an internal error)".to_owned();
            (Err(IoError::Decode { path: input.to_path_buf(), reason }), since())
        });
        (decoded, written, encode_end_ns)
    });
    // A failed decode is the cause: the encoder only saw its rows stop coming.
    decoded?;
    let written = written?;
    if let Some(p) = progress {
        p.add(pixels);
    }
    let decode_ns = stream.open_ns() + decode_end_ns.saturating_sub(decode_start_ns);
    let encode_start_ns = encode_end_ns.saturating_sub(written.encode_ns);
    let mut run = RunReport::new(settings.backend, settings.formula, (width, height), Vec::new())
        .with_work(settings.work);
    super::convert::gray_work_note(settings, &mut run);
    run.spans = vec![
        Span::cpu(Lane::Decode, 0, decode_end_ns),
        Span::cpu(Lane::Encode, encode_start_ns, encode_end_ns),
    ];
    run.phases = vec![
        PhaseTiming { phase: Phase::Decode, ns: decode_ns, source: Clock::CpuClock },
        PhaseTiming { phase: Phase::Encode, ns: written.encode_ns, source: Clock::CpuClock },
    ];
    run.notes.extend(stream.warnings().iter().map(|w| format!("warning: {w}")));
    run.notes.push(StoredLuma::Decoded.note());
    run.notes.push(match stream.bands() {
        1 => "decoded by libjpeg on one thread while the encoder coded the rows already decoded: the decode and \
              the encode overlap"
            .to_owned(),
        bands => format!(
            "decoded by libjpeg in {bands} bands at once (the file's restart intervals let each band decode on \
             its own) while the encoder coded the rows already decoded: the decode and the encode overlap"
        ),
    });
    run.notes.extend(written.notes.iter().cloned());
    run.finish(encode_end_ns.max(decode_end_ns));
    Ok((run, written))
}
