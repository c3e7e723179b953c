//! `graylab convert`: many files, all cores busy, each error naming its file.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::bail;
use clap::Args;
use rayon::prelude::*;

use crate::engine::{
    Backend, ConvertSettings, DecodeOptions, Engine, ExportFormat, ExportOptions, FileReport, Formula,
    WorkgroupSize, available_threads, convert_file, default_output_path, ms,
};

/// Arguments of `graylab convert`.
#[derive(Debug, Args)]
#[expect(clippy::struct_excessive_bools, reason = "one field per command-line switch")]
pub struct ConvertArgs {
    /// Input images (JPEG, PNG, TIFF, WebP, BMP).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Output file (one input only). Default: NAME.gray.png beside the input.
    #[arg(short, long, conflicts_with = "out_dir")]
    pub output: Option<PathBuf>,
    /// Folder for the outputs, named NAME.gray.EXT.
    #[arg(long)]
    pub out_dir: Option<PathBuf>,
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
    /// CPU threads per image. Default: all cores for one image; with several images, whole
    /// images run in parallel, one thread each.
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
    /// Print one JSON report for all files instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Output paths for every input, checked up front: no output may be an input or repeat.
fn plan_outputs(args: &ConvertArgs) -> anyhow::Result<Vec<(PathBuf, PathBuf)>> {
    if args.output.is_some() && args.inputs.len() > 1 {
        bail!("-o/--output takes one input; use --out-dir for {} inputs", args.inputs.len());
    }
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
    let format = args.format.unwrap_or_else(|| {
        args.output.as_deref().and_then(ExportFormat::from_path).unwrap_or(ExportFormat::Png)
    });
    let mut seen = HashSet::new();
    let mut plan = Vec::new();
    for input in &args.inputs {
        let output = match &args.output {
            Some(o) => o.clone(),
            None => default_output_path(input, args.out_dir.as_deref(), format),
        };
        if same_file(input, &output) {
            bail!("the output would replace its own input: {}", output.display());
        }
        if !seen.insert(output.clone()) {
            bail!("two inputs would write the same output: {}", output.display());
        }
        plan.push((input.clone(), output));
    }
    Ok(plan)
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

pub(super) fn run(args: &ConvertArgs) -> anyhow::Result<ExitCode> {
    let plan = plan_outputs(args)?;
    let engine = Engine::new();
    if args.backend == Backend::Gpu {
        let gpu = engine.gpu()?;
        gpu.check_workgroup(args.workgroup)?;
    }
    let many = plan.len() > 1;
    let settings = ConvertSettings {
        backend: args.backend,
        formula: args.formula,
        workgroup: args.workgroup,
        threads: args.threads.unwrap_or(if many { 1 } else { available_threads() }),
        keep_alpha: !args.drop_alpha,
    };
    let export = ExportOptions {
        format: args.format,
        jpeg_quality: args.quality,
        force_8bit: args.depth == 8,
        overwrite: args.overwrite,
    };
    let decode = DecodeOptions {
        allow_truncated: args.allow_truncated,
        working_copies: if args.backend == Backend::Gpu { 2 } else { 0 },
        ..DecodeOptions::default()
    };
    let results: Vec<Result<FileReport, String>> = plan
        .par_iter()
        .with_max_len(1)
        .map(|(input, output)| {
            convert_file(&engine, input, output, &settings, &decode, &export).map_err(|e| super::describe(&e))
        })
        .collect();
    let failures = results.iter().filter(|r| r.is_err()).count();
    if args.json {
        let json: Vec<serde_json::Value> = results
            .iter()
            .zip(&plan)
            .map(|(r, (input, _))| match r {
                Ok(report) => serde_json::to_value(report).unwrap_or_default(),
                Err(e) => serde_json::json!({ "input": input, "error": e }),
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        for r in &results {
            match r {
                Ok(report) => print_report(report),
                Err(e) => eprintln!("error: {e}"),
            }
        }
        if let Some(w) = super::build_warning() {
            eprintln!("{w}");
        }
    }
    if failures > 0 {
        if !args.json {
            eprintln!("{failures} of {} files failed", plan.len());
        }
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
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
