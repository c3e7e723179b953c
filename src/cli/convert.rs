//! `graylab convert`: files and folders, several files at once, progress, a summary, and each
//! error naming its file.

use std::collections::HashSet;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Instant;

use anyhow::Context as _;

use super::convert_args::ConvertArgs;
use super::out::{errln, outln};
use super::plan::{Plan, plan_outputs};
use super::progress::{Progress, ProgressMode, seconds};
use crate::engine::{
    Backend, BatchOptions, ConvertSettings, DecodeOptions, Engine, EngineError, ExportOptions, FileReport,
    JsonPath, available_threads, convert_batch, ms,
};

pub(super) fn run(args: &ConvertArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let plan = plan_outputs(args)?;
    if !args.json {
        for file in &plan.skipped {
            errln!("skipped ({}): {}", file.why, file.path.display());
        }
    }
    for dir in plan.items.iter().filter_map(|i| i.output.parent()).collect::<HashSet<_>>() {
        if !dir.as_os_str().is_empty() && !dir.exists() {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
    }
    let engine = Engine::new();
    if args.backend == Backend::Gpu {
        let gpu = engine.gpu()?;
        gpu.check_workgroup(args.workgroup.unwrap_or_default())?;
    }
    let files = plan.items.len();
    let jobs = args.jobs.map_or_else(|| available_threads().min(files).max(1), |j| j as usize);
    let options = BatchOptions {
        jobs,
        settings: ConvertSettings {
            backend: args.backend,
            formula: args.formula,
            workgroup: args.workgroup.unwrap_or_default(),
            threads: args.threads.unwrap_or(if jobs > 1 && files > 1 { 1 } else { available_threads() }),
            keep_alpha: !args.drop_alpha,
            work: args.work.work(),
        },
        decode: DecodeOptions {
            allow_truncated: args.allow_truncated,
            working_copies: if args.backend == Backend::Gpu { 2 } else { 0 },
            ..DecodeOptions::default()
        },
        export: ExportOptions {
            format: args.format,
            jpeg_quality: args.quality.unwrap_or(90),
            force_8bit: args.depth == 8,
            overwrite: args.overwrite,
        },
    };
    let sizes: Vec<u64> =
        plan.items.iter().map(|i| std::fs::metadata(&i.input).map_or(0, |m| m.len())).collect();
    let total_bytes = sizes.iter().sum();
    let mode = ProgressMode::choose(args.json, if plan.from_folder { files.max(2) } else { files });
    let progress = Mutex::new(Progress::new(mode, files, total_bytes));
    let on_done = |index: usize, result: &Result<FileReport, EngineError>| {
        let mut progress = progress.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        progress.file_done(sizes[index], result.is_ok(), || {
            if !args.json {
                match result {
                    Ok(report) => print_report(report),
                    Err(e) => errln!("error: {}", super::describe(e)),
                }
            }
        });
    };
    let results = convert_batch(&engine, &plan.items, &options, &on_done);
    progress.lock().unwrap_or_else(std::sync::PoisonError::into_inner).finish();
    let failures = results.iter().filter(|r| r.is_err()).count();
    if args.json {
        print_json(&plan, &results)?;
    } else {
        if let Some(w) = super::build_warning() {
            errln!("{w}");
        }
        // One summary, on stdout beside the reports; each failure was told on stderr.
        if files > 1 || plan.from_folder {
            let wall = started.elapsed();
            outln!(
                "{} of {files} files converted, {failures} failed, {} skipped, in {} ({:.2} images/s, {:.1} MB/s)",
                files - failures,
                plan.skipped.len(),
                seconds(wall),
                (files - failures) as f64 / wall.as_secs_f64().max(1e-9),
                total_bytes as f64 / 1e6 / wall.as_secs_f64().max(1e-9)
            );
        }
    }
    Ok(if failures > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

fn print_json(plan: &Plan, results: &[Result<FileReport, EngineError>]) -> anyhow::Result<()> {
    let mut json: Vec<serde_json::Value> = results
        .iter()
        .zip(&plan.items)
        .map(|(r, item)| match r {
            Ok(report) => serde_json::to_value(report),
            Err(e) => Ok(serde_json::json!({ "input": JsonPath(&item.input), "error": super::describe(e) })),
        })
        .collect::<Result<_, _>>()?;
    json.extend(
        plan.skipped.iter().map(|f| serde_json::json!({ "input": JsonPath(&f.path), "skipped": f.why })),
    );
    outln!("{}", serde_json::to_string_pretty(&json)?);
    Ok(())
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
    outln!("  {}", r.run.work.sentence());
    for note in &r.run.notes {
        outln!("  note: {note}");
    }
}
