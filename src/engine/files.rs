//! File to file: decode, convert, encode, with all five phases in one report.

use std::path::{Path, PathBuf};

use super::report::{ClockSource, Phase, PhaseTiming};
use super::{ConvertSettings, Engine, EngineError, RunReport};
use crate::io::{DecodeOptions, EncodeReport, ExportFormat, ExportOptions, decode_file, encode_file};

/// What converting one file did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct FileReport {
    /// The input file.
    pub input: PathBuf,
    /// The written file.
    pub output: PathBuf,
    /// The conversion, with decode and encode added to its phases.
    pub run: RunReport,
    /// What the export did.
    pub export: EncodeReport,
}

/// Where an output goes when only a folder (or nothing) is given:
/// `DIR/NAME.gray.EXT`, with `DIR` the input's folder when `out_dir` is `None`.
#[must_use]
pub fn default_output_path(input: &Path, out_dir: Option<&Path>, format: ExportFormat) -> PathBuf {
    let stem = input.file_stem().map_or_else(|| "image".into(), |s| s.to_string_lossy().into_owned());
    let dir =
        out_dir.map(Path::to_path_buf).or_else(|| input.parent().map(Path::to_path_buf)).unwrap_or_default();
    dir.join(format!("{stem}.gray.{}", format.extension()))
}

/// Decodes `input`, converts it and writes `output` atomically.
pub fn convert_file(
    engine: &Engine,
    input: &Path,
    output: &Path,
    settings: &ConvertSettings,
    decode: &DecodeOptions,
    export: &ExportOptions,
) -> Result<FileReport, EngineError> {
    // Refuse early, before the expensive decode, when the output exists.
    if !export.overwrite && output.exists() {
        return Err(crate::io::IoError::Exists { path: output.to_path_buf() }.into());
    }
    let decoded = decode_file(input, decode)?;
    let converted = engine.convert(&decoded.image, settings)?;
    drop(decoded.image);
    let written = encode_file(&converted.image, output, export)?;
    let mut run = converted.report;
    run.phases.insert(
        0,
        PhaseTiming { phase: Phase::Decode, ns: decoded.decode_ns, source: ClockSource::CpuClock },
    );
    run.phases.push(PhaseTiming {
        phase: Phase::Encode,
        ns: written.encode_ns,
        source: ClockSource::CpuClock,
    });
    if decoded.reoriented {
        run.notes.push("EXIF orientation applied".to_owned());
    }
    run.notes.extend(decoded.warnings.iter().map(|w| format!("warning: {w}")));
    run.notes.extend(written.notes.iter().cloned());
    Ok(FileReport { input: input.to_path_buf(), output: output.to_path_buf(), run, export: written })
}
