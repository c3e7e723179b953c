//! `graylab bench`: every phase over repeated runs, per backend, workgroup size and thread count.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;

use crate::engine::{
    Backend, BenchResult, ConvertSettings, DecodeOptions, Engine, Formula, TimingMode, WorkgroupSize,
    available_threads, bench, ms, parse_size, simd_level, synthetic_rgb,
};

/// Arguments of `graylab bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// An image file to measure (default: a synthetic image, see --synthetic).
    #[arg(conflicts_with = "synthetic")]
    pub input: Option<PathBuf>,
    /// A synthetic RGB image: 4k, 8k, 16k or `WxH`.
    #[arg(long, default_value = "8k")]
    pub synthetic: String,
    /// cpu, gpu or all.
    #[arg(long, default_value = "all")]
    pub backend: String,
    /// GPU workgroup sizes: one (256, 16x16), a comma list, or all that the adapter allows.
    #[arg(long, default_value = "256")]
    pub workgroup: String,
    /// CPU thread counts: a number, a comma list (1,2) or all (default: every core).
    #[arg(long)]
    pub threads: Option<String>,
    /// bt601, bt709 or linear.
    #[arg(long, default_value = "bt601", value_parser = super::parse_formula)]
    pub formula: Formula,
    /// Warm runs measured after the one cold run.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub runs: u32,
    /// Time GPU phases with the CPU clock even where GPU timestamps exist.
    #[arg(long)]
    pub cpu_clock: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(serde::Serialize)]
struct BenchReport<'a> {
    version: &'static str,
    build: &'static str,
    image: String,
    cpu_simd: crate::engine::SimdLevel,
    cpu_threads: usize,
    adapter: Option<String>,
    software_adapter: Option<bool>,
    results: &'a [BenchResult],
}

fn thread_counts(spec: Option<&str>) -> anyhow::Result<Vec<usize>> {
    let all = available_threads();
    match spec {
        None => Ok(vec![all]),
        Some("all") => Ok((1..=all).collect()),
        Some(list) => list
            .split(',')
            .map(|t| {
                t.trim()
                    .parse::<usize>()
                    .ok()
                    .filter(|n| *n >= 1)
                    .context(format!("invalid thread count {t:?}"))
            })
            .collect(),
    }
}

pub(super) fn run(args: &BenchArgs) -> anyhow::Result<ExitCode> {
    let backends = match args.backend.as_str() {
        "all" => vec![Backend::Cpu, Backend::Gpu],
        other => vec![super::parse_backend(other).map_err(anyhow::Error::msg)?],
    };
    let image = if let Some(path) = &args.input {
        crate::io::decode_file(path, &DecodeOptions::default())?.image
    } else {
        let (w, h) = parse_size(&args.synthetic).map_err(anyhow::Error::msg)?;
        synthetic_rgb(w, h, 1)
    };
    let label = match &args.input {
        Some(p) => format!("{} ({}x{} {:?})", p.display(), image.width(), image.height(), image.color()),
        None => format!("synthetic {}x{} Rgb8", image.width(), image.height()),
    };
    let mut engine = Engine::new();
    if args.cpu_clock && backends.contains(&Backend::Gpu) {
        let ctx = std::sync::Arc::new(crate::gpu::GpuContext::new()?);
        let mut converter = crate::gpu::GpuConverter::new(ctx);
        converter.set_timing_mode(TimingMode::CpuClock);
        engine = Engine::with_converter(std::sync::Arc::new(converter));
    }
    let mut results = Vec::new();
    let mut adapter = None;
    for backend in backends {
        let base = ConvertSettings { backend, formula: args.formula, ..ConvertSettings::default() };
        match backend {
            Backend::Cpu => {
                for threads in thread_counts(args.threads.as_deref())? {
                    results.push(bench(
                        &engine,
                        &image,
                        &ConvertSettings { threads, ..base },
                        args.runs as usize,
                    )?);
                }
            }
            Backend::Gpu => {
                let gpu = engine.gpu()?;
                adapter = Some((gpu.adapter_info().name.clone(), gpu.is_software()));
                let sizes: Vec<WorkgroupSize> = if args.workgroup == "all" {
                    gpu.valid_workgroups()
                } else {
                    args.workgroup.split(',').map(str::parse).collect::<Result<_, _>>()?
                };
                for workgroup in sizes {
                    gpu.check_workgroup(workgroup)?;
                    results.push(bench(
                        &engine,
                        &image,
                        &ConvertSettings { workgroup, ..base },
                        args.runs as usize,
                    )?);
                }
            }
        }
    }
    let report = BenchReport {
        version: env!("CARGO_PKG_VERSION"),
        build: if cfg!(debug_assertions) { "debug" } else { "release" },
        image: label,
        cpu_simd: simd_level(),
        cpu_threads: available_threads(),
        adapter: adapter.as_ref().map(|a| a.0.clone()),
        software_adapter: adapter.as_ref().map(|a| a.1),
        results: &results,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_table(&report, args);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_table(report: &BenchReport<'_>, args: &BenchArgs) {
    println!("graylab bench: {}, {}, 1 cold run then {} warm runs", report.image, args.formula, args.runs);
    println!("CPU kernel: {:?}, {} threads available", report.cpu_simd, report.cpu_threads);
    if let Some(name) = &report.adapter {
        println!("GPU: {name}");
    }
    if report.software_adapter == Some(true) {
        println!(
            "warning: the GPU is a software rasteriser (runs on the CPU): its timings say nothing about GPUs"
        );
    }
    if let Some(w) = super::build_warning() {
        println!("{w}");
    }
    println!();
    println!(
        "{:<4} {:<11} {:<9} {:>10} {:>10} {:>10} {:>10}  clock",
        "", "setting", "phase", "min ms", "median ms", "max ms", "cold ms"
    );
    for r in report.results {
        let setting = match r.settings.backend {
            Backend::Cpu => format!("{} thr", r.cold.threads.unwrap_or(0)),
            Backend::Gpu => format!("wg {}", r.settings.workgroup),
        };
        for p in &r.phases {
            let cold = r.cold.phase(p.phase).map_or_else(String::new, |c| ms(c.ns));
            println!(
                "{:<4} {:<11} {:<9} {:>10} {:>10} {:>10} {:>10}  {}",
                r.settings.backend.name(),
                setting,
                p.phase.name(),
                ms(p.stats.min_ns),
                ms(p.stats.median_ns),
                ms(p.stats.max_ns),
                cold,
                p.source
            );
        }
        println!(
            "{:<4} {:<11} {:<9} {:>10} {:>10} {:>10} {:>10}  cpu-clock   kernel {:.0} MP/s, {:.2} GB/s{}",
            r.settings.backend.name(),
            setting,
            "total",
            ms(r.total.min_ns),
            ms(r.total.median_ns),
            ms(r.total.max_ns),
            ms(r.cold.total_ns),
            r.kernel_mpix_per_s,
            r.kernel_gb_per_s,
            r.cold.gpu.filter(|g| g.bands > 1).map_or_else(String::new, |g| format!(", {} bands", g.bands)),
        );
    }
}
