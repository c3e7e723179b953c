//! `--trace FILE` of `bench`, `claims`, `convert` and `sweep`: their runs as a Chrome trace (open it in
//! ui.perfetto.dev), checked before any work with the command's other outputs
//! ([`super::args::check_outputs`]) and written atomically after it.

use std::path::Path;

use super::args::{Holds, OutputFile};
use super::out::errln;
use crate::engine::sweep::SweepResult;
use crate::engine::{EngineError, FileReport, RunReport};

/// `--trace` as one of a command's outputs, for [`super::args::check_outputs`].
pub(super) fn output(path: Option<&Path>) -> Option<OutputFile<'_>> {
    OutputFile::of("--trace", path, Holds::Trace)
}

/// Writes the trace of each file converted, named by its path. Where none was converted there
/// is no run to trace: no file is written (none is left behind after an error), and stderr
/// says so.
pub(super) fn write_files(
    path: &Path,
    overwrite: bool,
    results: &[Result<FileReport, EngineError>],
) -> anyhow::Result<()> {
    let runs: Vec<(String, &RunReport)> =
        results.iter().flatten().map(|r| (r.input.display().to_string(), &r.run)).collect();
    if runs.is_empty() {
        errln!("trace: not written, no file was converted (nothing to trace): {}", path.display());
        return Ok(());
    }
    write(path, overwrite, "graylab convert", &runs)
}

/// Writes the trace of a sweep: each point's runs, named by its size (the trace adds the work
/// level and the op a run had).
pub(super) fn write_sweep(path: &Path, overwrite: bool, result: &SweepResult) -> anyhow::Result<()> {
    let runs: Vec<(String, &RunReport)> = result
        .points
        .iter()
        .flat_map(|p| {
            let at = format!("{:.2} MP", p.megapixels);
            p.runs.iter().map(move |(name, run)| (format!("{at} · {name}"), run))
        })
        .collect();
    write(path, overwrite, &format!("graylab sweep: {}", result.source), &runs)
}

/// Writes the trace of `runs` (each with its name) to `path`, and says so on stderr.
pub(super) fn write(
    path: &Path,
    overwrite: bool,
    title: &str,
    runs: &[(String, &RunReport)],
) -> anyhow::Result<()> {
    crate::engine::trace::write_trace(path, overwrite, title, runs)?;
    let events = runs.iter().map(|(_, r)| r.spans.len() + 1).sum::<usize>();
    errln!("trace: {} ({events} events; open it in ui.perfetto.dev)", path.display());
    Ok(())
}
