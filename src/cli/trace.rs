//! `--trace FILE` of `bench`, `claims`, `convert` and `sweep`: their runs as a Chrome trace (open it in
//! ui.perfetto.dev), checked before any work and written atomically after it.

use std::path::Path;

use super::out::errln;
use crate::engine::sweep::SweepResult;
use crate::engine::{BatchItem, EngineError, FileReport, RunReport};

/// Refuses a trace path that cannot be written (or an existing file, unless `overwrite`)
/// before anything is measured.
pub(super) fn check(path: Option<&Path>, overwrite: bool) -> anyhow::Result<()> {
    match path {
        Some(path) => super::args::check_output_file(path, overwrite, "--trace"),
        None => Ok(()),
    }
}

/// [`check`], and refuses a trace that would replace one of the conversion's inputs or outputs
/// (a trace written over the photo would destroy it).
pub(super) fn check_convert(path: Option<&Path>, overwrite: bool, items: &[BatchItem]) -> anyhow::Result<()> {
    check(path, overwrite)?;
    let Some(trace) = path else { return Ok(()) };
    let canonical = std::fs::canonicalize(trace).ok();
    let same = |p: &Path| p == trace || canonical.is_some() && std::fs::canonicalize(p).ok() == canonical;
    match items.iter().flat_map(|i| [&i.input, &i.output]).find(|p| same(p)) {
        Some(clash) => {
            anyhow::bail!("--trace names a file this conversion reads or writes: {}", clash.display())
        }
        None => Ok(()),
    }
}

/// Writes the trace of each file converted, named by its path.
pub(super) fn write_files(
    path: &Path,
    overwrite: bool,
    results: &[Result<FileReport, EngineError>],
) -> anyhow::Result<()> {
    let runs: Vec<(String, &RunReport)> =
        results.iter().flatten().map(|r| (r.input.display().to_string(), &r.run)).collect();
    write(path, overwrite, "graylab convert", &runs)
}

/// Writes the trace of a sweep: each point's runs, named by its size and work level.
pub(super) fn write_sweep(path: &Path, overwrite: bool, result: &SweepResult) -> anyhow::Result<()> {
    let runs: Vec<(String, &RunReport)> = result
        .points
        .iter()
        .flat_map(|p| {
            let at = format!("{:.2} MP · {} rounds", p.megapixels, p.work_rounds);
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
