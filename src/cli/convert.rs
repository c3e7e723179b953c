//! `graylab convert`: files and folders, several files at once, a batch's estimate first, its
//! progress, a summary, and each error naming its file.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use std::io::IsTerminal as _;

use anyhow::Context as _;

use super::args::ConvertArgs;
use super::out::{errln, outln};
use super::pace::JobPace;
use super::plan::{Plan, plan_outputs};
use super::progress::{FileProgress, ProgressMode, SAID_AFTER, seconds};
use crate::engine::estimate::Task;
use crate::engine::{
    Backend, BatchOptions, ConvertSettings, Engine, EngineError, FileReport, available_threads, convert_batch,
};
use crate::io::{DecodeOptions, ExportOptions, JsonPath, WritingIn, remove_empty_folders};
use crate::system::signals::LastWordsGuard;
use crate::system::units::ms;

pub(super) fn run(args: &ConvertArgs) -> anyhow::Result<ExitCode> {
    let result = run_batch(args);
    // With --json, an error before any work is a JSON document too (stderr still tells it).
    if args.json
        && let Err(e) = &result
    {
        outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "error": super::describe(e.as_ref()) }))?
        );
    }
    result
}

/// Opens the GPU before any file is read: the workgroup shape checked, and the adapter that runs
/// every file said once, as `bench` and `sweep` say it.
fn open_gpu(engine: &Engine, args: &ConvertArgs) -> anyhow::Result<()> {
    let gpu = engine.gpu()?;
    gpu.check_workgroup(args.workgroup.unwrap_or_default())?;
    if !args.json {
        outln!("GPU: {}", gpu.adapter_info().name);
        super::print_software_warning(gpu.is_software());
    }
    Ok(())
}

fn run_batch(args: &ConvertArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let one_time_at = crate::system::one_time::OneTimeMark::now();
    // The trace and -o in one file: a usage error, said before what is on disk.
    let named: Vec<&Path> = args.output.as_deref().into_iter().collect();
    super::args::check_distinct(
        &super::trace::output(args.trace.as_deref()).into_iter().collect::<Vec<_>>(),
        &named,
    )?;
    let plan = plan_outputs(args)?;
    check_trace(args, &plan)?;
    if !args.json {
        for file in &plan.skipped {
            errln!("skipped ({}): {}", file.why, file.path.display());
        }
        // Inputs that clash are refused with one message between them.
        let mut told = HashSet::new();
        for refused in plan.refused.iter().filter(|r| told.insert(&r.why)) {
            errln!("error: {}", refused.why);
        }
    }
    let engine = Engine::new();
    if args.backend == Backend::Gpu && !plan.items.is_empty() {
        open_gpu(&engine, args)?;
    }
    // A CPU run with work per pixel is held against the CPU's compute ceiling: measured here (a
    // fraction of a second) where no cache holds one from a quiet machine, as `bench` and the
    // app measure it.
    if args.backend == Backend::Cpu && args.work.work().rounds > 0 && !plan.items.is_empty() {
        super::info::compute_for(&engine, false);
    }
    // Every check passed: the folders the outputs need (--out-dir too) are made now, and the
    // folder written in is locked, shared, so that no other run removes it.
    let created = create_output_folders(&plan)?;
    let written_in = args.out_dir.as_deref().or_else(|| args.output.as_deref().and_then(Path::parent));
    let writing =
        Arc::new(Mutex::new(Some(WritingIn::lock(written_in.filter(|d| !d.as_os_str().is_empty())))));
    let files = plan.items.len();
    let options = batch_options(args, files);
    let sizes: Vec<u64> =
        plan.items.iter().map(|i| std::fs::metadata(&i.input).map_or(0, |m| m.len())).collect();
    let total_bytes = sizes.iter().sum();
    let mode = ProgressMode::choose(args.json, if plan.from_folder { files.max(2) } else { files });
    let pace = batch_pace(&engine, &plan, &options, mode);
    let estimate_s = pace.as_ref().map(|p| p.estimate().seconds);
    let progress =
        Mutex::new(FileProgress::new(mode, (files, total_bytes), (started, one_time_at), estimate_s));
    let refused_files = plan.refused.iter().filter(|r| !r.folder).count();
    let all_files = files + refused_files;
    let tally = Arc::new(Tally::default());
    // A signal mid-batch: the empty folders made removed, and what is done said on stderr (with
    // --json too: its JSON, written at the end, never comes).
    let summary = (all_files > 1 || plan.from_folder).then_some(mode == ProgressMode::Bar);
    let _last_words = summary_on_signal(&tally, (all_files, refused_files), summary, (&created, &writing));
    let on_done = |index: usize, result: &Result<FileReport, EngineError>| {
        if result.is_err() {
            tally.failed.fetch_add(1, Ordering::Relaxed);
        }
        let mut progress = progress.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        progress.file_done(sizes[index], result.is_ok(), || {
            if !args.json {
                tell_done(result, &plan.items[index].input);
            }
        });
    };
    // One file on a terminal: the share of its pixels done, once it takes a while.
    let pixels = crate::engine::PixelProgress::new();
    let watched = (files == 1 && !args.json && std::io::stderr().is_terminal()).then_some(&pixels);
    let results = super::progress::watch_pixels(watched, || {
        convert_batch(&engine, &plan.items, &options, &on_done, watched)
    });
    // A batch whose every file was converted teaches the pace what such batches take.
    if let Some(pace) = pace.filter(|_| results.iter().all(Result::is_ok)) {
        pace.finished(&engine);
    }
    let mb_per_s = {
        let progress = progress.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        progress.clear();
        progress.mb_per_s()
    };
    unlock_and_tidy(&writing, &created);
    let unlisted_folders = plan.refused.len() - refused_files;
    let failures = results.iter().filter(|r| r.is_err()).count() + refused_files;
    // A trace that cannot be written fails the command, told on its own: the files converted
    // and their report (the JSON, the summary) are kept.
    let trace_failed =
        args.trace.as_ref().and_then(|path| super::trace::write_files(path, args.overwrite, &results).err());
    if let Some(e) = &trace_failed {
        errln!("error: the trace was not written: {}", super::describe(e.as_ref()));
    }
    if args.json {
        print_json(&plan, &results)?;
    } else {
        if let Some(w) = super::build_warning() {
            errln!("{w}");
        }
        // One summary, on stdout beside the reports; each failure was told on stderr.
        if all_files > 1 || plan.from_folder {
            let counts = Counts { all_files, failures, skipped: plan.skipped.len(), unlisted_folders };
            print_summary(&results, counts, started.elapsed(), mb_per_s);
        }
    }
    let failed = failures > 0 || unlisted_folders > 0 || trace_failed.is_some();
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// What a batch's summary counts: files in all (those refused before the work too), failed,
/// skipped, and folders that could not be listed.
#[derive(Clone, Copy)]
struct Counts {
    all_files: usize,
    failures: usize,
    skipped: usize,
    unlisted_folders: usize,
}

/// The summary of a batch of `results`, `wall` long, on stdout: files converted (with warnings),
/// failed, skipped, folders not listed, the time and the rates.
fn print_summary(results: &[Result<FileReport, EngineError>], counts: Counts, wall: Duration, mb_per_s: f64) {
    let Counts { all_files, failures, skipped, unlisted_folders } = counts;
    let folders = match unlisted_folders {
        0 => String::new(),
        1 => ", 1 folder not listed".to_owned(),
        n => format!(", {n} folders not listed"),
    };
    let warned = results.iter().filter(|r| r.as_ref().is_ok_and(|f| !f.warnings().is_empty())).count();
    let with_warnings = if warned > 0 { format!(" ({warned} with warnings)") } else { String::new() };
    // Under 0.1 s, "0.0 s" beside a rate reads as nothing done.
    let took = if wall.as_secs_f64() < 0.1 { format!("{} ms", wall.as_millis()) } else { seconds(wall) };
    outln!(
        "{} of {all_files} files converted{with_warnings}, {failures} failed, {skipped} skipped{folders}, in {took} ({:.2} images/s, {mb_per_s:.1} MB/s)",
        all_files - failures,
        (all_files - failures) as f64 / wall.as_secs_f64().max(1e-9),
    );
}

/// How a batch of `files` runs, as the arguments ask: with several in flight, one thread each.
fn batch_options(args: &ConvertArgs, files: usize) -> BatchOptions {
    let jobs = args.jobs.map_or_else(|| available_threads().min(files).max(1), |j| j as usize);
    BatchOptions {
        jobs,
        settings: ConvertSettings {
            backend: args.backend,
            formula: args.formula,
            workgroup: args.workgroup.unwrap_or_default(),
            threads: args.threads.unwrap_or(if jobs > 1 && files > 1 { 1 } else { available_threads() }),
            keep_alpha: !args.drop_alpha,
            work: args.work.work(),
            op: args.op,
        },
        decode: DecodeOptions { allow_truncated: args.allow_truncated, ..DecodeOptions::default() },
        export: export_options(args),
    }
}

/// A batch's pace (none for one file named, or none to convert), read before its first file:
/// its estimate is said on stderr where its progress is shown (not with `--json`) and it is
/// long enough to matter ([`SAID_AFTER`], as the pixels' line of one file), as the sweep and the
/// claims say theirs.
fn batch_pace(engine: &Engine, plan: &Plan, options: &BatchOptions, mode: ProgressMode) -> Option<JobPace> {
    let files = plan.items.len();
    if files == 0 || !(files > 1 || plan.from_folder) {
        return None;
    }
    let inputs: Vec<&Path> = plan.items.iter().map(|i| i.input.as_path()).collect();
    let (parts, megapixels, every) = super::pace::batch_parts(&inputs, &options.settings);
    let gpu = options.settings.backend == Backend::Gpu;
    let pace = JobPace::read(engine, gpu, Task::Batch, |_| parts);
    let estimate = pace.estimate();
    if mode != ProgressMode::Off && estimate.seconds >= SAID_AFTER.as_secs_f64() {
        let places = match megapixels {
            mp if mp >= 10.0 => 0,
            mp if mp >= 1.0 => 1,
            _ => 2,
        };
        errln!(
            "converting {} ({}{megapixels:.places$} MP): {}",
            crate::system::units::count(files, "file"),
            if every { "" } else { "about " },
            estimate.sentence()
        );
    }
    Some(pace)
}

/// Refuses a trace that would replace a file this conversion reads (an input named, a file of
/// a folder input, converted or not) or an image it writes.
fn check_trace(args: &ConvertArgs, plan: &Plan) -> anyhow::Result<()> {
    let Some(trace) = super::trace::output(args.trace.as_deref()) else { return Ok(()) };
    // A file of a folder input that is skipped (not an image: a trace of an earlier run) is
    // still the user's: refused, saying why it is not converted.
    if let Some(file) = plan.skipped.iter().find(|s| super::args::same_file(&s.path, trace.path)) {
        anyhow::bail!(
            "{} would replace a file of the input folder, which graylab skips ({}): {} (name a file outside it)",
            trace.flag,
            file.why,
            file.path.display()
        );
    }
    let inputs: Vec<&Path> = (args.inputs.iter().map(PathBuf::as_path))
        .chain(plan.items.iter().map(|i| i.input.as_path()))
        .chain(plan.refused.iter().map(|r| r.path.as_path()))
        .collect();
    let images: Vec<&Path> = plan.items.iter().map(|i| i.output.as_path()).collect();
    super::args::check_outputs(&[trace], &inputs, &images, args.overwrite)
}

/// Creates the folders the outputs need (`--out-dir` itself where it does not exist yet, as
/// `cp -r` makes its target, and a folder input's subfolders mirrored under it), returning the
/// ones created, parents first.
fn create_output_folders(plan: &Plan) -> anyhow::Result<Vec<PathBuf>> {
    let mut created = Vec::new();
    for dir in plan.items.iter().filter_map(|i| i.output.parent()).collect::<HashSet<_>>() {
        let missing: Vec<&Path> = dir
            .ancestors()
            .take_while(|d| !d.as_os_str().is_empty() && std::fs::symlink_metadata(d).is_err())
            .collect();
        for d in missing.into_iter().rev() {
            match std::fs::create_dir(d) {
                Ok(()) => {
                    log::info!("created the folder {}", d.display());
                    created.push(d.to_path_buf());
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && d.is_dir() => {}
                Err(e) => {
                    remove_empty_folders(&created);
                    return Err(e).with_context(|| format!("cannot create {}", d.display()));
                }
            }
        }
    }
    Ok(created)
}

/// Drops this run's locks on the folders it writes in, then removes the folders it made that
/// are still empty (every file in them failed), unless another run writes in them.
fn unlock_and_tidy(writing: &Mutex<Option<WritingIn>>, created: &[PathBuf]) {
    drop(writing.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take());
    remove_empty_folders(created);
}

/// If a signal ends the process mid-batch: removes the folders in `created` left empty (the
/// temporary files are gone by then), and with a `summary` says how many of `all_files` were
/// converted and how many failed (the `refused` ones too), after clearing the progress bar if
/// one is drawn (`Some(true)`).
fn summary_on_signal(
    tally: &Arc<Tally>,
    (all_files, refused): (usize, usize),
    summary: Option<bool>,
    (created, writing): (&[PathBuf], &Arc<Mutex<Option<WritingIn>>>),
) -> LastWordsGuard {
    let tally = Arc::clone(tally);
    // Each file is counted as it is put in place: a signal sees it in place and counted, or
    // neither (counted when its report is, one could be in place and not counted yet).
    let published_before = crate::system::temps::published_files();
    let created = created.to_vec();
    let writing = Arc::clone(writing);
    let clear = if summary == Some(true) { "\r\x1b[2K" } else { "" };
    crate::system::signals::say_on_signal(move |signal| {
        unlock_and_tidy(&writing, &created);
        if summary.is_none() {
            return String::new();
        }
        let converted = crate::system::temps::published_files() - published_before;
        let failed = tally.failed.load(Ordering::Relaxed) + refused;
        format!("{clear}{converted} of {all_files} files converted, {failed} failed, stopped by {signal}")
    })
}

/// Files of a batch that failed so far, counted from the workers, for the summary a signal
/// leaves.
#[derive(Default)]
struct Tally {
    failed: AtomicUsize,
}

fn print_json(plan: &Plan, results: &[Result<FileReport, EngineError>]) -> anyhow::Result<()> {
    let mut json: Vec<serde_json::Value> = results
        .iter()
        .zip(&plan.items)
        .map(|(r, item)| match r {
            Ok(report) => serde_json::to_value(report).map(|mut value| {
                if let Some(fields) = value.as_object_mut() {
                    fields.insert("warnings".to_owned(), serde_json::json!(report.warnings()));
                }
                value
            }),
            Err(e) => Ok(serde_json::json!({ "input": JsonPath(&item.input), "error": super::describe(e) })),
        })
        .collect::<Result<_, _>>()?;
    json.extend(
        plan.refused.iter().map(|r| serde_json::json!({ "input": JsonPath(&r.path), "error": r.why })),
    );
    json.extend(
        plan.skipped.iter().map(|f| serde_json::json!({ "input": JsonPath(&f.path), "skipped": f.why })),
    );
    outln!("{}", serde_json::to_string_pretty(&json)?);
    Ok(())
}

/// A file done: its report on stdout, each of its warnings and its error on stderr, naming it
/// (`input`, where the error is not the input's own I/O error, which names it: an op, a GPU
/// limit, or the output's error, which names the output).
fn tell_done(result: &Result<FileReport, EngineError>, input: &Path) {
    match result {
        Ok(report) => {
            print_report(report);
            // Converted, but not as a clean file would be: said where errors are said.
            for warning in report.warnings() {
                errln!("warning: {}: {warning}", report.input.display());
            }
        }
        Err(e) => {
            let text = super::describe(e);
            // By the error's own path, never by its text: `ox.png` holds the name `x.png`.
            let causes = crate::engine::causes::chain(e);
            if causes.filter_map(crate::engine::causes::io_error).any(|io| io.path() == input) {
                errln!("error: {text}");
            } else {
                errln!("error: {}: {text}", input.display());
            }
        }
    }
}

/// What `convert`'s arguments ask of the export: the dither's output as a 1-bit PNG, TIFF or BMP.
fn export_options(args: &ConvertArgs) -> ExportOptions {
    ExportOptions {
        format: args.format,
        jpeg_quality: args.quality.unwrap_or(90),
        force_8bit: args.depth == super::args::DepthArg::Eight,
        overwrite: args.overwrite,
        one_bit: args.op == crate::pixel::Op::Dither,
        // Each file's own, set as it is converted.
        density: None,
        metadata: None,
    }
}

fn print_report(r: &FileReport) {
    let phases: Vec<String> =
        r.run.phases.iter().map(|p| format!("{} {} ms ({})", p.phase, ms(p.ns), p.source)).collect();
    outln!(
        "{} -> {} ({}x{}, {}, {} bytes)",
        r.input.display(),
        r.output.display(),
        r.run.width,
        r.run.height,
        r.export.format,
        r.export.bytes
    );
    outln!("  {}", phases.join(", "));
    // A gray input ran no kernel: no work to describe (its note says so).
    if r.run.kernel.is_some() {
        outln!("  {}", r.run.work.sentence());
    }
    if let Some(op) = r.run.op.sentence() {
        outln!("  {op}");
    }
    // Warnings are told on stderr, naming the file (`tell_done`).
    for note in r.plain_notes() {
        outln!("  note: {note}");
    }
    if let Some(note) = r.run.busy_note() {
        outln!("  note: {note}");
    }
}
