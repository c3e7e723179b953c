//! `graylab bench`: every phase over repeated runs, per backend, workgroup size and thread count.

use super::out::{errln, outln};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;

use super::arg_error::ArgError;
use super::args::{BenchBackend, parse_size};

use image::DynamicImage;

use crate::engine::ceilings::{KnownCeilings, PhasePart};
use crate::engine::round_trip::MAX_PASSES;
use crate::engine::{
    Backend, BenchOptions, BenchResult, ConvertSettings, Engine, GpuHostMemory, WorkgroupSize,
    available_threads, bench_bytes, bench_with, simd_level, synthetic_bytes, synthetic_rgb,
};
use crate::io::DecodeOptions;
use crate::pixel::Formula;
use crate::system::memory_budget::{Reservation, budget};
use crate::system::units::ms;

/// Arguments of `graylab bench`.
#[derive(Debug, Args)]
#[expect(clippy::struct_excessive_bools, reason = "clap flags, each one independent")]
pub struct BenchArgs {
    /// An image file to measure (default: a synthetic image, see --synthetic).
    #[arg(conflicts_with = "synthetic", value_parser = super::args::input_file)]
    pub input: Option<PathBuf>,
    /// A synthetic RGB image: 4k, 8k, 16k or `WxH` (checked against the memory budget).
    #[arg(long, default_value = "8k", value_parser = parse_size)]
    pub synthetic: (u32, u32),
    /// Where to measure.
    #[arg(long, default_value = "all", value_parser = super::args::backends())]
    pub backend: BenchBackend,
    /// GPU workgroup sizes, with --backend gpu or all: one (256, the default, or 16x16), a comma
    /// list, or all that the adapter allows.
    #[arg(long, value_parser = parse_workgroups)]
    pub workgroup: Option<ListOrAll<WorkgroupSize>>,
    /// CPU thread counts: a number, a comma list (1,2) or all (default: every core).
    #[arg(long, value_parser = parse_threads)]
    pub threads: Option<ListOrAll<usize>>,
    /// The gray formula.
    #[arg(long, default_value = "bt601", value_parser = super::args::timed_formula())]
    pub formula: Formula,
    /// Warm runs measured after the one cold run.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub runs: u32,
    /// The synthetic work per pixel.
    #[command(flatten)]
    pub work: super::args::WorkArgs,
    /// An operation on the gray plane after the grayscale, on each backend: none, blur:R
    /// (R = 1..64) or dither; timed as the phase "op". 16-bit samples are narrowed for it first, as
    /// `convert` narrows them.
    #[arg(long, default_value = "none", value_parser = super::args::op)]
    pub op: crate::pixel::Op,
    /// Time GPU phases with the CPU clock even where GPU timestamps exist.
    #[arg(long)]
    pub cpu_clock: bool,
    /// GPU: keep the input on the GPU, so only the cold run uploads it (the warm runs show a
    /// re-run with another setting on an image already there: no upload phase).
    #[arg(long)]
    pub keep_input_on_gpu: bool,
    /// Operations per round trip instead: for each count N (a comma list, e.g. 1,2,4,8,16), one
    /// upload, N full kernel passes over the kept input and one download, against N CPU passes
    /// (one workgroup shape and thread count; both backends run).
    #[arg(long, value_name = "N,N,..", value_parser = parse_passes,
          conflicts_with_all = ["backend", "keep_input_on_gpu", "op"])]
    pub passes: Option<Passes>,
    /// Which workgroup shape is fastest instead: every shape the adapter allows, in turns on the
    /// GPU, until the 95% interval of the runner-up's kernel time over the fastest's clears 1
    /// (or 42 rounds, or 6 s once 6 rounds are in, are spent).
    #[arg(long, conflicts_with_all = ["backend", "workgroup", "threads", "keep_input_on_gpu", "passes", "op", "runs"])]
    pub fastest_workgroup: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Also write every run (cold and warm) as a Chrome trace, a track per lane: open it in
    /// ui.perfetto.dev.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["passes", "fastest_workgroup"])]
    pub trace: Option<PathBuf>,
    /// Replace the --trace file if it exists.
    #[arg(long, requires = "trace")]
    pub overwrite: bool,
}

/// `bench --workgroup` or `--threads`: a list, or `all` (every size the adapter allows, every
/// count from 1 to all cores).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListOrAll<T> {
    /// These values.
    List(Vec<T>),
    /// All of them.
    All,
}

impl<T: Copy> ListOrAll<T> {
    /// The one value of a list of one, else `None`.
    pub(super) fn only(&self) -> Option<T> {
        match self {
            Self::List(list) if list.len() == 1 => list.first().copied(),
            _ => None,
        }
    }
}

/// `bench --passes`: the counts of operations per round trip.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Passes(pub Vec<u32>);

/// Parses `1,2,4,8,16`: each count from 1 to [`MAX_PASSES`].
fn parse_passes(s: &str) -> Result<Passes, ArgError> {
    let counts = s
        .split(',')
        .map(|n| match n.trim().parse::<u32>() {
            Ok(n) if (1..=MAX_PASSES).contains(&n) => Ok(n),
            _ => Err(ArgError::Passes { given: n.to_owned(), max: MAX_PASSES }),
        })
        .collect::<Result<Vec<u32>, ArgError>>()?;
    Ok(Passes(counts))
}

/// Parses `all`, or a comma list of values each parsed by `one`, each measured once (a value
/// given twice is kept where it first stands).
fn list_or_all<T: PartialEq>(
    s: &str,
    one: impl Fn(&str) -> Result<T, ArgError>,
) -> Result<ListOrAll<T>, ArgError> {
    if s.trim() == "all" {
        return Ok(ListOrAll::All);
    }
    let mut list: Vec<T> = Vec::new();
    for value in s.split(',').map(one) {
        let value = value?;
        if !list.contains(&value) {
            list.push(value);
        }
    }
    Ok(ListOrAll::List(list))
}

fn parse_workgroups(s: &str) -> Result<ListOrAll<WorkgroupSize>, ArgError> {
    list_or_all(s, |w| super::args::workgroup(w.trim()))
}

fn parse_threads(s: &str) -> Result<ListOrAll<usize>, ArgError> {
    list_or_all(s, super::args::threads)
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
    /// The GPU ceilings the percentages are of (cached per adapter, or measured by this run).
    ceilings: Option<KnownCeilings>,
    /// Whether a run beat a one-step ceiling measured before, which `ceilings` then holds as
    /// raised by that run.
    ceilings_raised: bool,
    /// With work per pixel: the CPU compute ceiling the runs were held against, and where it
    /// came from (measured now or cached, when, on a busy machine or not).
    #[serde(skip_serializing_if = "Option::is_none")]
    cpu_compute: Option<crate::engine::ceilings::KnownCpuCompute>,
    results: &'a [BenchResult],
    /// How busy the machine was while the runs were measured (other processes' CPU time), where
    /// the system says.
    #[serde(skip_serializing_if = "Option::is_none")]
    busy: Option<crate::system::load::Busy>,
}

/// The image `bench` measures (the file, else a synthetic one) and its label, with the memory
/// `held(input bytes, output bytes, synthetic)` reserved before anything is allocated (held
/// until the reservations are dropped).
pub(super) fn bench_image(
    args: &BenchArgs,
    held: impl Fn(u64, u64, bool) -> anyhow::Result<u64>,
) -> anyhow::Result<(DynamicImage, String, Vec<Reservation>)> {
    // Refused before any decode or measurement: stored luma, then a gray file.
    if let Some(e) = crate::engine::nothing_to_time(args.formula, true) {
        return Err(e.into());
    }
    if let Some(path) = &args.input {
        let decoded = crate::io::decode_file(path, &DecodeOptions::default())?;
        let i = &decoded.image;
        if let Some(e) = crate::engine::nothing_to_time(args.formula, i.color().has_color()) {
            return Err(anyhow::Error::new(e).context(path.display().to_string()));
        }
        let label = format!("{} ({}x{} {:?})", path.display(), i.width(), i.height(), i.color());
        let out_bytes = u64::from(i.width()) * u64::from(i.height()) * 4;
        let extra = budget()
            .try_reserve(held(i.as_bytes().len() as u64, out_bytes, false)?)
            .with_context(|| format!("cannot bench {label}"))?;
        return Ok((decoded.image, label, vec![decoded.memory, extra]));
    }
    let (w, h) = args.synthetic;
    let (in_bytes, out_bytes) = synthetic_bytes(w, h);
    let memory = budget()
        .try_reserve(held(in_bytes, out_bytes, true)?)
        .with_context(|| format!("cannot bench a synthetic {w}x{h} image"))?;
    Ok((synthetic_rgb(w, h, 1), format!("synthetic {w}x{h} Rgb8"), vec![memory]))
}

/// Refuses settings that would do nothing (usage errors): GPU settings with `--backend cpu`,
/// `--threads` with `--backend gpu`, `--divergent` without rounds.
fn refuse_settings_that_do_nothing(args: &BenchArgs) -> anyhow::Result<()> {
    if args.backend == BenchBackend::One(Backend::Cpu) {
        // GPU settings do nothing on the CPU alone: refused, not ignored.
        if args.workgroup.is_some() {
            anyhow::bail!(super::UsageError(super::args::WORKGROUP_ON_CPU.to_owned()));
        }
        for (given, flag) in
            [(args.keep_input_on_gpu, "--keep-input-on-gpu"), (args.cpu_clock, "--cpu-clock")]
        {
            if given {
                anyhow::bail!(super::UsageError(format!(
                    "{flag} sets how the GPU runs, and does nothing with --backend cpu"
                )));
            }
        }
    }
    if args.backend == BenchBackend::One(Backend::Gpu) && args.threads.is_some() {
        anyhow::bail!(super::UsageError(super::args::THREADS_ON_GPU.to_owned()));
    }
    args.work.check()?;
    Ok(())
}

/// Bytes a bench of `args` holds besides a decoded input of `in_bytes` (none when `synthetic`)
/// with an output of `out_bytes`: its runs' buffers (`gpu`: with the GPU, its adapter's rule)
/// and the op's planes.
fn held_bytes(
    args: &BenchArgs,
    gpu: Option<GpuHostMemory>,
    (in_bytes, out_bytes, synthetic): (u64, u64, bool),
) -> u64 {
    let kept = gpu.map(|g| g.keeping_input(args.keep_input_on_gpu));
    let op = crate::engine::op_copies(args.op, gpu).bytes(out_bytes);
    bench_bytes(in_bytes, out_bytes, synthetic, kept).saturating_add(op)
}

pub(super) fn run(args: &BenchArgs) -> anyhow::Result<ExitCode> {
    refuse_settings_that_do_nothing(args)?;
    let backends = match args.backend {
        BenchBackend::All => Backend::ALL.to_vec(),
        BenchBackend::One(backend) => vec![backend],
    };
    let with_gpu = backends.contains(&Backend::Gpu);
    // The trace is never written over the photo measured (also through a link).
    let outputs: Vec<_> = super::trace::output(args.trace.as_deref()).into_iter().collect();
    let inputs: Vec<_> = args.input.as_deref().into_iter().collect();
    super::args::check_outputs(&outputs, &inputs, &[], args.overwrite)?;
    let engine = if args.cpu_clock && with_gpu { Engine::on_cpu_clock()? } else { Engine::new() };
    // What a GPU run holds in host memory, by its adapter (opened once the image is known), and
    // an op its own planes (on the GPU more than on the CPU).
    let (image, label, _memory) = bench_image(args, |in_bytes, out_bytes, synthetic| {
        let gpu = with_gpu.then(|| engine.gpu_host_memory()).transpose()?;
        Ok(held_bytes(args, gpu, (in_bytes, out_bytes, synthetic)))
    })?;
    // Every GPU setting is checked before anything is measured.
    let (gpu_sizes, adapter) = if with_gpu {
        let gpu = engine.gpu()?;
        let sizes = match &args.workgroup {
            Some(ListOrAll::All) => gpu.valid_workgroups(),
            Some(ListOrAll::List(list)) => list.clone(),
            None => vec![WorkgroupSize::default()],
        };
        for workgroup in &sizes {
            gpu.check_workgroup(*workgroup)?;
        }
        // An image whose rows do not fit the GPU's buffers is refused now, not after the CPU runs.
        engine.check_fits_gpu(&image)?;
        (sizes, Some((gpu.adapter_info().name.clone(), gpu.is_software())))
    } else {
        (Vec::new(), None)
    };
    let ceilings = if with_gpu { super::info::ceilings_for(&engine) } else { None };
    if args.work.work().rounds > 0 {
        super::info::compute_for(&engine, ceilings.is_some());
    }
    let options = BenchOptions { runs: args.runs as usize, keep_input_on_gpu: args.keep_input_on_gpu };
    let mut results = Vec::new();
    let before = crate::system::load::CpuSnapshot::now();
    for backend in backends {
        let base = ConvertSettings {
            backend,
            formula: args.formula,
            work: args.work.work(),
            op: args.op,
            ..ConvertSettings::default()
        };
        let settings: Vec<ConvertSettings> = match backend {
            Backend::Cpu => match &args.threads {
                None => vec![available_threads()],
                Some(ListOrAll::All) => (1..=available_threads()).collect(),
                Some(ListOrAll::List(list)) => threads_here(list),
            }
            .into_iter()
            .map(|threads| ConvertSettings { threads, ..base })
            .collect(),
            Backend::Gpu => {
                gpu_sizes.iter().map(|&workgroup| ConvertSettings { workgroup, ..base }).collect()
            }
        };
        for s in settings {
            results.push(bench_with(&engine, &image, &s, &options)?);
        }
    }
    // The ceilings as the runs left them: a run that beat a one-step ceiling raised it, and the
    // rates after it (the whole upload's and download's too) are of the raised ones.
    let (before_runs, ceilings) = (ceilings.clone(), ceilings.and_then(|_| engine.known_gpu_ceilings()));
    let ceilings_raised = before_runs.zip(ceilings.as_ref()).is_some_and(|(b, n)| b.ceilings != n.ceilings);
    let report = BenchReport {
        version: crate::system::host::VERSION,
        build: crate::system::host::BUILD,
        image: label,
        cpu_simd: simd_level(),
        cpu_threads: available_threads(),
        adapter: adapter.as_ref().map(|a| a.0.clone()),
        software_adapter: adapter.as_ref().map(|a| a.1),
        ceilings,
        ceilings_raised,
        cpu_compute: (args.work.work().rounds > 0).then(|| engine.held_known_cpu_compute()).flatten(),
        results: &results,
        busy: crate::system::load::CpuSnapshot::busy_of_a_run(before),
    };
    // A trace that cannot be written loses the trace, not the figures: they are printed first.
    let trace = args.trace.as_ref().map(|path| write_trace(path, args.overwrite, &report));
    // On stderr, so with --json too.
    if let Some(busy) = report.busy.filter(crate::system::load::Busy::is_busy) {
        errln!(
            "warning: {} while this ran: the figures are noisier than on a quiet machine",
            busy.shares_text()
        );
    }
    if args.json {
        outln!("{}", crate::io::stamped_json(crate::io::ResultKind::Bench, &engine.provenance(), &report)?);
    } else {
        print_table(&report, args);
    }
    trace.transpose()?;
    Ok(ExitCode::SUCCESS)
}

/// Every run of `report`, cold and warm, as a trace at `path`.
fn write_trace(path: &std::path::Path, overwrite: bool, report: &BenchReport<'_>) -> anyhow::Result<()> {
    let mut runs = Vec::new();
    for r in report.results {
        let what = r.settings.parallelism();
        runs.push((format!("{what} · cold"), &r.cold));
        let n = r.warm.len();
        runs.extend(r.warm.iter().enumerate().map(|(i, w)| (format!("{what} · warm {} of {n}", i + 1), w)));
    }
    super::trace::write(path, overwrite, &format!("graylab bench: {}", report.image), &runs)
}

fn print_table(report: &BenchReport<'_>, args: &BenchArgs) {
    let runs = crate::system::units::count(args.runs as usize, "warm run");
    outln!("graylab bench: {}, {}, 1 cold run then {runs}", report.image, args.formula);
    let threads = crate::system::units::count(report.cpu_threads, "thread");
    outln!("CPU kernel: {:?}, {threads} available", report.cpu_simd);
    if let Some(name) = &report.adapter {
        outln!("GPU: {name}");
    }
    super::print_timing_warnings(report.software_adapter == Some(true));
    if let Some(k) = &report.ceilings {
        outln!("{}", super::info::ceilings_lines(k).join("\n"));
        if report.ceilings_raised {
            outln!("(as raised by these runs, which beat a ceiling measured before: see \"raised now\")");
        }
    }
    if report.cpu_compute.is_some() {
        outln!(
            "{}",
            super::info::compute_lines(report.cpu_compute.as_ref(), report.ceilings.as_ref()).join("\n")
        );
    }
    outln!();
    outln!(
        "{:<4} {:<11} {:<9} {:>10} {:>10} {:>10} {:>10}  clock",
        "",
        "setting",
        "phase",
        "min ms",
        "median ms",
        "max ms",
        "cold ms"
    );
    outln!("(each row is its own median over the warm runs; run by run, phases - overlap + other = total)");
    for r in report.results {
        let setting = match r.settings.backend {
            Backend::Cpu => format!("{} thr", r.cold.threads.unwrap_or(0)),
            Backend::Gpu => format!("wg {}", r.settings.workgroup),
        };
        let row = |what: &str, st: &crate::engine::Stats, cold: String, tail: &str| {
            let (min, median, max) = (ms(st.min_ns), ms(st.median_ns), ms(st.max_ns));
            let backend = r.settings.backend.name();
            outln!(
                "{backend:<4} {setting:<11} {what:<9} {min:>10} {median:>10} {max:>10} {cold:>10}  {tail}"
            );
        };
        for p in &r.phases {
            let cold = r.cold.phase(p.phase).map_or_else(String::new, |c| ms(c.ns));
            row(p.phase.name(), &p.stats, cold, &p.source.to_string());
        }
        // A phase of the cold run alone (the upload of an input then kept on the GPU): its row
        // has no warm figures, and the cold column still adds up.
        for c in r.cold.phases.iter().filter(|c| !r.phases.iter().any(|p| p.phase == c.phase)) {
            let (backend, what, cold) = (r.settings.backend.name(), c.phase.name(), ms(c.ns));
            outln!(
                "{backend:<4} {setting:<11} {what:<9} {:>10} {:>10} {:>10} {cold:>10}  {} (cold run only)",
                "-",
                "-",
                "-",
                c.source
            );
        }
        // Phases that ran at once overlap (subtracted once), and time no phase covers is other:
        // phases - overlap + other = total, run by run.
        let rows: [(&str, RunFigure); 2] = [("- overlap", |w| w.overlap_ns), ("+ other", |w| w.other_ns)];
        for (name, of) in rows {
            let values: Vec<u64> = r.warm.iter().map(of).collect();
            if let Some(st) = crate::engine::Stats::of(&values).filter(|st| st.max_ns > 0 || of(&r.cold) > 0)
            {
                row(name, &st, ms(of(&r.cold)), "cpu-clock");
            }
        }
        let gpu = r.cold.gpu.as_ref();
        let bands = gpu.filter(|g| g.bands > 1).map_or_else(String::new, |g| format!(", {} bands", g.bands));
        let (mpix, gbs) = (r.kernel_mpix_per_s, r.kernel_gb_per_s);
        let tail = format!("cpu-clock   kernel {mpix:.0} MP/s, {gbs:.2} GB/s{bands}");
        row("total", &r.total, ms(r.cold.total_ns), &tail);
        outln!("{:<16} {}", "", r.work.sentence());
        if let Some(op) = r.op.sentence() {
            outln!("{:<16} {op}", "");
        }
        for note in &r.cold.notes {
            outln!("{:<16} note: {note}", "");
        }
        print_rates(r);
    }
}

/// One figure of a run, in nanoseconds.
type RunFigure = fn(&crate::engine::RunReport) -> u64;

/// Each phase at its median against its ceiling, the copies of a phase indented under it.
fn print_rates(r: &BenchResult) {
    if let Some(s) = r.cpu_stream_baseline {
        let clock = s.clock.unwrap_or_default().label();
        outln!(
            "{:<16} memory-stream baseline, same size and threads: median {} ms ({clock})",
            "",
            ms(s.median_ns)
        );
    }
    if r.input_kept_on_gpu {
        outln!("{:<16} input kept on the GPU: only the cold run uploaded it", "");
    }
    for rate in &r.rates {
        let indent = if rate.part == PhasePart::Whole { "" } else { "  " };
        outln!("{:<16} {indent}{}", "", rate.sentence());
    }
}

/// The thread counts of `--threads` this machine has: a count above its threads is measured
/// at all of them, once, and said (the run's settings then say what ran).
fn threads_here(asked: &[usize]) -> Vec<usize> {
    let here = available_threads();
    let over: Vec<String> = asked.iter().filter(|&&n| n > here).map(usize::to_string).collect();
    if !over.is_empty() {
        let verb = if over.len() == 1 { "is" } else { "are" };
        errln!(
            "note: --threads {} {verb} more than the {here} threads here: measured at {here}",
            over.join(", ")
        );
    }
    let mut counts: Vec<usize> = Vec::new();
    for n in asked.iter().map(|&n| n.min(here)) {
        if !counts.contains(&n) {
            counts.push(n);
        }
    }
    counts
}
