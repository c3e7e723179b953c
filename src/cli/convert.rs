//! `graylab convert`: files and folders, several files at once, progress, a summary, and each
//! error naming its file.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{Context as _, bail};
use clap::Args;

use super::progress::{Progress, ProgressMode, seconds};
use crate::engine::{
    Backend, BatchItem, BatchOptions, ConvertSettings, DecodeOptions, Engine, EngineError, ExportFormat,
    ExportOptions, FileReport, Formula, WorkgroupSize, available_threads, convert_batch, default_output_path,
    ms, sniff_format,
};

/// Arguments of `graylab convert`.
#[derive(Debug, Args)]
#[expect(clippy::struct_excessive_bools, reason = "one field per command-line switch")]
pub struct ConvertArgs {
    /// Input images (JPEG, PNG, TIFF, WebP, BMP, GIF, PNM, TGA, ICO, QOI) or folders of them
    /// (folders need --out-dir; files in them that are not images are skipped with a note).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Output file (one input only). Default: NAME.gray.png beside the input.
    #[arg(short, long, conflicts_with = "out_dir")]
    pub output: Option<PathBuf>,
    /// Folder for the outputs, named NAME.gray.EXT (a folder input's subfolders are mirrored).
    #[arg(long)]
    pub out_dir: Option<PathBuf>,
    /// Also convert the images in subfolders of folder inputs.
    #[arg(short, long)]
    pub recursive: bool,
    /// Files converted at the same time. Default: one per core; a file waits while the ones in
    /// flight would exceed the memory budget.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub jobs: Option<u32>,
    /// Where to convert: `cpu` (the default: file to file the kernel is about 2% of the time, and
    /// the CPU avoids the transfers) or `gpu`.
    #[arg(long, default_value = "cpu", value_parser = super::args::backend())]
    pub backend: Backend,
    /// `bt601` (exactly `OpenCV`'s `cvtColor` `RGB2GRAY`, the default), `bt709` or `linear`.
    #[arg(long, default_value = "bt601", value_parser = super::args::formula())]
    pub formula: Formula,
    /// GPU workgroup size: 64…1024 or a 2-D shape like 16x16 (see `graylab info`).
    #[arg(long, default_value = "256", value_parser = super::args::workgroup)]
    pub workgroup: WorkgroupSize,
    /// CPU threads per image. Default: all cores for one file at a time; with several files in
    /// flight, one thread each (the encoders still use all cores).
    #[arg(long, value_parser = super::args::threads)]
    pub threads: Option<usize>,
    /// Output format. Default: from -o's extension, else png.
    #[arg(long, value_parser = super::args::format())]
    pub format: Option<ExportFormat>,
    /// JPEG quality, 1-100.
    #[arg(long, default_value_t = 90, value_parser = clap::value_parser!(u8).range(1..=100))]
    pub quality: u8,
    /// Sample depth of the output: 16 keeps 16-bit inputs 16-bit (PNG, TIFF); 8 always writes 8-bit.
    #[arg(long, default_value = "16", value_parser = super::args::depth())]
    pub depth: u8,
    /// Drop the alpha channel instead of writing gray + alpha.
    #[arg(long)]
    pub drop_alpha: bool,
    /// Replace existing output files.
    #[arg(long)]
    pub overwrite: bool,
    /// Keep what a truncated JPEG holds (the missing rows gray), with a warning, instead of
    /// refusing it.
    #[arg(long)]
    pub allow_truncated: bool,
    /// Print one JSON report for all files instead of text (no progress, no summary).
    #[arg(long)]
    pub json: bool,
}

/// The work: files to convert, and files of folder inputs that were skipped.
struct Plan {
    items: Vec<BatchItem>,
    skipped: Vec<PathBuf>,
    from_folder: bool,
}

/// Output paths for every input, checked up front: no output may be an input or repeat.
fn plan_outputs(args: &ConvertArgs) -> anyhow::Result<Plan> {
    let format = args.format.unwrap_or_else(|| {
        args.output.as_deref().and_then(ExportFormat::from_path).unwrap_or(ExportFormat::Png)
    });
    // Output paths are checked before anything is decoded.
    if let Some(o) = &args.output {
        if o.is_dir() {
            bail!("-o/--output names a folder: {} (use --out-dir for a folder)", o.display());
        }
        if args.format.is_none() && ExportFormat::from_path(o).is_none() {
            bail!(
                "-o/--output: unknown format in {} (use .png, .jpg, .tif, .bmp or .webp, or --format)",
                o.display()
            );
        }
        super::args::check_output_file(o, args.overwrite, "-o/--output")?;
    }
    if let Some(dir) = &args.out_dir {
        super::args::check_output_dir(dir, "--out-dir")?;
    }
    let mut plan = Plan { items: Vec::new(), skipped: Vec::new(), from_folder: false };
    let mut seen = HashSet::new();
    for input in &args.inputs {
        if input.is_dir() {
            let Some(out_dir) = args.out_dir.as_deref() else {
                bail!("a folder input needs --out-dir: {}", input.display());
            };
            plan.from_folder = true;
            for file in list_folder(input, args.recursive, out_dir)? {
                if sniff_format(&file).is_none() {
                    plan.skipped.push(file);
                    continue;
                }
                let sub = file.parent().and_then(|p| p.strip_prefix(input).ok()).unwrap_or(Path::new(""));
                let output = default_output_path(&file, Some(&out_dir.join(sub)), format);
                push_item(&mut plan, &mut seen, file, output)?;
            }
        } else {
            let output = match &args.output {
                Some(o) => o.clone(),
                None => default_output_path(input, args.out_dir.as_deref(), format),
            };
            push_item(&mut plan, &mut seen, input.clone(), output)?;
        }
    }
    if args.output.is_some() && plan.items.len() > 1 {
        bail!("-o/--output takes one input; use --out-dir for {} inputs", plan.items.len());
    }
    Ok(plan)
}

fn push_item(
    plan: &mut Plan,
    seen: &mut HashSet<PathBuf>,
    input: PathBuf,
    output: PathBuf,
) -> anyhow::Result<()> {
    if same_file(&input, &output) {
        bail!("the output would replace its own input: {}", output.display());
    }
    if !seen.insert(output.clone()) {
        bail!("two inputs would write the same output: {}", output.display());
    }
    plan.items.push(BatchItem { input, output });
    Ok(())
}

/// The files of a folder (and its subfolders when `recursive`), sorted, leaving out the output
/// folder so a second run does not convert its own results.
fn list_folder(dir: &Path, recursive: bool, out_dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let skip = out_dir.canonicalize().ok();
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let entries =
            std::fs::read_dir(&folder).with_context(|| format!("cannot list {}", folder.display()))?;
        for entry in entries {
            let path = entry.with_context(|| format!("cannot list {}", folder.display()))?.path();
            if path.is_dir() {
                if recursive && path.canonicalize().ok() != skip {
                    pending.push(path);
                }
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

pub(super) fn run(args: &ConvertArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let plan = plan_outputs(args)?;
    if !args.json {
        for file in &plan.skipped {
            eprintln!("skipped (not an image): {}", file.display());
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
        gpu.check_workgroup(args.workgroup)?;
    }
    let files = plan.items.len();
    let jobs = args.jobs.map_or_else(|| available_threads().min(files).max(1), |j| j as usize);
    let options = BatchOptions {
        jobs,
        settings: ConvertSettings {
            backend: args.backend,
            formula: args.formula,
            workgroup: args.workgroup,
            threads: args.threads.unwrap_or(if jobs > 1 && files > 1 { 1 } else { available_threads() }),
            keep_alpha: !args.drop_alpha,
        },
        decode: DecodeOptions {
            allow_truncated: args.allow_truncated,
            working_copies: if args.backend == Backend::Gpu { 2 } else { 0 },
            ..DecodeOptions::default()
        },
        export: ExportOptions {
            format: args.format,
            jpeg_quality: args.quality,
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
                    Err(e) => eprintln!("error: {}", super::describe(e)),
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
            eprintln!("{w}");
        }
        if failures > 0 {
            eprintln!("{failures} of {files} files failed");
        }
        if files > 1 || plan.from_folder {
            let wall = started.elapsed();
            println!(
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
            Ok(report) => serde_json::to_value(report).unwrap_or_default(),
            Err(e) => serde_json::json!({ "input": item.input, "error": super::describe(e) }),
        })
        .collect();
    json.extend(plan.skipped.iter().map(|f| serde_json::json!({ "input": f, "skipped": "not an image" })));
    println!("{}", serde_json::to_string_pretty(&json)?);
    Ok(())
}

fn print_report(r: &FileReport) {
    let phases: Vec<String> =
        r.run.phases.iter().map(|p| format!("{} {} ms ({})", p.phase, ms(p.ns), p.source)).collect();
    println!(
        "{} -> {} ({}x{}, {}, {} bytes)",
        r.input.display(),
        r.output.display(),
        r.run.width,
        r.run.height,
        r.export.format,
        r.export.bytes
    );
    println!("  {}", phases.join(", "));
    for note in &r.run.notes {
        println!("  note: {note}");
    }
}
