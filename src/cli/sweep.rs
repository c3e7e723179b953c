//! `graylab sweep`: when is the GPU worth it on this machine?

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use clap::Args;

use crate::engine::{
    DEFAULT_SIZES_MP, DecodeOptions, Engine, Formula, Series, SweepOptions, SweepResult, WorkgroupSize,
    sweep, to_csv,
};

/// Arguments of `graylab sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Image sizes in megapixels, comma separated.
    #[arg(long, value_delimiter = ',', default_values_t = DEFAULT_SIZES_MP.to_vec())]
    pub sizes: Vec<f64>,
    /// Resize this photo to each size instead of using synthetic images.
    #[arg(long)]
    pub from_image: Option<PathBuf>,
    /// Warm runs per size and series (after one cold run).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub runs: u32,
    /// GPU workgroup size.
    #[arg(long, default_value = "256", value_parser = super::parse_workgroup)]
    pub workgroup: WorkgroupSize,
    /// `bt601`, `bt709` or `linear`.
    #[arg(long, default_value = "bt601", value_parser = super::parse_formula)]
    pub formula: Formula,
    /// Measure the CPU only (no GPU series).
    #[arg(long)]
    pub cpu_only: bool,
    /// Write the whole result as JSON to this file (`-` for standard output).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write one CSV row per size and series to this file.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Replace existing JSON/CSV files.
    #[arg(long)]
    pub overwrite: bool,
}

fn write_report(path: &Path, text: &str, overwrite: bool) -> anyhow::Result<()> {
    if !overwrite && path.exists() {
        bail!("the file exists (pass --overwrite to replace it): {}", path.display());
    }
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or_else(|| Path::new("."));
    let mut tmp =
        tempfile::NamedTempFile::new_in(dir).with_context(|| format!("cannot write in {}", dir.display()))?;
    tmp.write_all(text.as_bytes())?;
    tmp.persist(path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

pub(super) fn run(args: &SweepArgs) -> anyhow::Result<ExitCode> {
    for path in [&args.json, &args.csv].into_iter().flatten() {
        if path.as_os_str() != "-" && !args.overwrite && path.exists() {
            bail!("the file exists (pass --overwrite to replace it): {}", path.display());
        }
    }
    if args.sizes.iter().any(|s| !s.is_finite() || *s <= 0.0) {
        bail!("sizes must be positive megapixel counts, e.g. --sizes 0.5,1,8");
    }
    let engine = Engine::new();
    let gpu = !args.cpu_only && engine.gpu().is_ok();
    if !args.cpu_only && !gpu {
        eprintln!(
            "note: no GPU adapter, measuring the CPU only ({})",
            engine.gpu().err().map(|e| e.to_string()).unwrap_or_default()
        );
    }
    let source = match &args.from_image {
        Some(path) => {
            Some((path.display().to_string(), crate::io::decode_file(path, &DecodeOptions::default())?.image))
        }
        None => None,
    };
    let options = SweepOptions {
        sizes_mp: args.sizes.clone(),
        runs: args.runs as usize,
        workgroup: args.workgroup,
        formula: args.formula,
        gpu,
    };
    let quiet = args.json.as_deref().is_some_and(|p| p.as_os_str() == "-");
    let mut progress = |i: usize, n: usize, mp: f64| {
        if !quiet {
            eprintln!("measuring {mp} MP ({} of {n})…", i + 1);
        }
        true
    };
    let result = sweep(&engine, &options, source.as_ref().map(|(n, i)| (n.as_str(), i)), &mut progress)?;
    if let Some(path) = &args.json {
        let json = serde_json::to_string_pretty(&result)?;
        if path.as_os_str() == "-" {
            println!("{json}");
        } else {
            write_report(path, &json, args.overwrite)?;
        }
    }
    if let Some(path) = &args.csv {
        write_report(path, &to_csv(&result), args.overwrite)?;
    }
    if !quiet {
        print_table(&result);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_table(r: &SweepResult) {
    println!("graylab sweep: {} images, {}, {} warm runs per point, median ms", r.source, r.formula, r.runs);
    if let Some(a) = &r.adapter {
        println!(
            "GPU: {a}, workgroup {}{}",
            r.workgroup,
            if r.gpu_timestamps { "" } else { " (no timestamps: CPU clock)" }
        );
    }
    println!(
        "{:>8} {:>12} {:>10} {:>10} {:>11} {:>11} {:>11} {:>9} {:>9}",
        "MP",
        "size",
        "cpu 1 thr",
        format!("cpu {} thr", r.cpu_threads),
        "gpu total",
        "gpu kernel",
        "gpu resid.",
        "up GB/s",
        "down GB/s"
    );
    for p in &r.points {
        let cell =
            |s: Series| p.median_ns(s).map_or_else(|| "-".to_owned(), |ns| format!("{:.3}", ns as f64 / 1e6));
        let rate = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |g| format!("{g:.2}"));
        println!(
            "{:>8.2} {:>12} {:>10} {:>10} {:>11} {:>11} {:>11} {:>9} {:>9}",
            p.megapixels,
            format!("{}x{}", p.width, p.height),
            cell(Series::Cpu1),
            cell(Series::CpuAll),
            cell(Series::GpuTotal),
            cell(Series::GpuKernel),
            cell(Series::GpuResident),
            rate(p.upload_gb_per_s),
            rate(p.download_gb_per_s),
        );
    }
    if let Some(ns) = r.dispatch_latency_ns {
        println!("dispatch latency (resident, smallest size): {:.3} ms", ns as f64 / 1e6);
    }
    match r.crossover_mp {
        Some(mp) => println!("crossover: the GPU end to end beats the CPU from {mp:.2} MP"),
        None => println!("crossover: the GPU end to end never beats the CPU at these sizes"),
    }
    println!("{}", r.verdict);
}
