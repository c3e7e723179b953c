//! `graylab bench --passes 1,2,4,8,16`: operations per round trip, measured. A table of the
//! GPU's whole round trip and its time per operation against the CPU's, each with its clock,
//! the GPU's speed-up at each count with its 95% interval and who is faster (or that it is
//! within the noise), and the verdict; or every point as JSON.

use std::process::ExitCode;

use super::bench::{BenchArgs, bench_image};
use super::out::{errln, outln};
use crate::engine::estimate::{Lane, Task, Timed, round_trip_parts};
use crate::engine::round_trip::{
    RoundTripOptions, RoundTripResult, round_trip_budget, round_trip_bytes, round_trips,
};
use crate::engine::{ConvertSettings, Engine, WorkgroupSize, available_threads};
use crate::system::units::ms;

#[derive(serde::Serialize)]
struct Report<'a> {
    image: &'a str,
    #[serde(flatten)]
    result: &'a RoundTripResult,
}

/// Runs the round trips `args` ask for with `--passes` (one workgroup shape, one thread count).
pub(super) fn run(args: &BenchArgs) -> anyhow::Result<ExitCode> {
    let Some(passes) = &args.passes else { anyhow::bail!("bench without --passes measures no round trips") };
    let only = |what: &str| super::UsageError(format!("--passes measures one {what}"));
    let workgroup = match &args.workgroup {
        None => WorkgroupSize::DEFAULT,
        Some(list) => list.only().ok_or_else(|| only("workgroup shape: give --workgroup one size"))?,
    };
    let threads = match &args.threads {
        None => available_threads(),
        Some(list) => list.only().ok_or_else(|| only("thread count: give --threads one number"))?,
    };
    let engine = if args.cpu_clock { Engine::on_cpu_clock()? } else { Engine::new() };
    let (image, label, _memory) = bench_image(args, |in_bytes, out_bytes, synthetic| {
        Ok(round_trip_bytes(in_bytes, out_bytes, synthetic, engine.gpu_host_memory()?))
    })?;
    let gpu = engine.gpu()?;
    gpu.check_workgroup(workgroup)?;
    engine.check_fits_gpu(&image)?;
    let settings = ConvertSettings {
        formula: args.formula,
        workgroup,
        threads,
        work: args.work.work(),
        ..Default::default()
    };
    let budget = round_trip_budget(false, args.runs as usize);
    let options = RoundTripOptions { passes: passes.0.clone(), budget, cancel: None };
    let megapixels = crate::system::units::megapixels(image.width(), image.height());
    let cpu = Lane::of(&settings);
    let rounds = budget.warmup_rounds + budget.min_rounds;
    let parts = round_trip_parts(&options.passes, rounds, cpu, megapixels, settings.work.rounds);
    let mut pace = super::pace::JobPace::read(&engine, true, Task::RoundTrips, |_| parts);
    let estimate = pace.estimate();
    errln!("estimate: {}", estimate.sentence());
    let result = round_trips(&engine, &image, &settings, &options, &mut |_, _, _| {})?;
    let took_s = pace.took_s();
    // Its runs first, so that its overhead is learned over them.
    let taught = result.clone();
    pace.learn(move |p| crate::engine::round_trip::teach_pace(p, &taught));
    pace.finished(&engine);
    if args.json {
        let report = Report { image: &label, result: &result };
        let timed = Timed::new(&report, estimate, Some(took_s));
        outln!(
            "{}",
            crate::io::stamped_json(crate::io::ResultKind::RoundTrips, &engine.provenance(), &timed)?
        );
    } else {
        print_table(&label, &result, args.cpu_clock);
    }
    Ok(ExitCode::SUCCESS)
}

/// The table of `r`; `cpu_clock`: `--cpu-clock` asked for the CPU clock alone (no GPU
/// timestamps read).
fn print_table(label: &str, r: &RoundTripResult, cpu_clock: bool) {
    let variant = if r.divergent { ", divergent: odd grays only" } else { "" };
    outln!(
        "graylab bench --passes: {label}, {}, work {} rounds/px (synthetic{variant}), per count: the GPU \
         and the CPU in turns, {} to {} warm rounds until decided",
        r.formula,
        r.work_rounds,
        r.min_rounds,
        r.max_rounds
    );
    let threads = crate::system::units::count(r.cpu_threads, "thread");
    outln!("CPU: {threads}; GPU: {} (workgroup {})", r.adapter, r.workgroup);
    super::print_timing_warnings(r.software_adapter);
    outln!();
    let kernel_clock = r.clocks.gpu_kernel.as_deref();
    outln!(
        "{:>5}  {:>14}  {:>14}  {:>14}  {:>14}  {:>6}  GPU speed-up per op (95% interval)",
        "n",
        "GPU total ms",
        "GPU per op ms",
        "GPU passes ms",
        "CPU per op ms",
        "rounds"
    );
    for p in &r.points {
        let passes = p.gpu_kernel_ns.map_or_else(|| "-".to_owned(), |s| ms(s.median_ns));
        outln!(
            "{:>5}  {:>14}  {:>14}  {:>14}  {:>14}  {:>6}  {}",
            p.passes,
            ms(p.gpu_total_ns.median_ns),
            ms(p.gpu_per_op_ns.round() as u64),
            passes,
            ms(p.cpu_per_op_ns.median_ns),
            p.comparison.rounds,
            p.comparison.label()
        );
    }
    outln!();
    outln!("clocks (medians of the warm rounds):");
    outln!(
        "  GPU total, GPU per op: {}, from the upload's first host copy to the result in host memory",
        r.clocks.gpu_total
    );
    match kernel_clock {
        Some(clock) => {
            outln!("  GPU passes: {clock}, from the start of the first pass to the end of the last");
        }
        None if cpu_clock => {
            outln!(
                "  GPU passes: not measured (--cpu-clock asks for the CPU clock only, so no GPU timestamps are read)"
            );
        }
        None => outln!("  GPU passes: not measured (no GPU timestamps read in place on this device)"),
    }
    let threads = crate::system::units::count(r.cpu_threads, "thread");
    outln!("  CPU per op: {}, n passes on {threads}, divided by n", r.clocks.cpu);
    outln!(
        "  speed-up: CPU per op / GPU per op, the median of the rounds' ratios with its 95% interval; \
         decided when the interval lies clear of 1, else within the noise (no win)"
    );
    let differ: Vec<String> =
        r.points.iter().filter(|p| !p.matches_cpu).map(|p| p.passes.to_string()).collect();
    if differ.is_empty() {
        outln!("every GPU result equals the CPU's byte for byte");
    } else {
        errln!("warning: the GPU's result differed from the CPU's at n = {}", differ.join(", "));
    }
    outln!("verdict: {}", r.verdict);
}
