//! The size sweep, and the work grid: when does the GPU beat the CPU, and why? For each image
//! size (and each work level of a grid) it measures the CPU (one thread and all threads), the
//! GPU end to end (upload + kernel + download), the GPU kernel alone (timestamps) and the GPU
//! with the data already resident, then hands the cells to the verdict, which finds the
//! crossover, the frontier and the roofline. What each cell costs is planned in `plan.rs`.
//!
//! A cell with an op (`--op`, or the blur's radius as the grid's axis) times it with the kernel:
//! each CPU series is its kernel plus its op, each warm run's sum; the GPU kernel series the
//! conversion's kernel plus the op's passes; the resident series adds the op's passes' median
//! to the resident kernel (the op stage's copies of the gray plane are end to end only).

use std::time::{Duration, Instant};

use image::DynamicImage;

use crate::engine::bench::bench;
use crate::engine::sweep::compare::{Sides, affordable, compare, fewest, point_budget};
use crate::system::clock::Clock;
use crate::system::load::CpuSnapshot;

use crate::engine::report::Stats;
use crate::engine::spans::Phase;
use crate::engine::sweep::cell_ops::CellOps;
use crate::engine::sweep::grid::{GridAxis, Series};
use crate::engine::sweep::plan::{CellPlan, GridEstimate, SweepOptions, calibrate, estimate_grid, size_for};
use crate::engine::sweep::result::{SweepPoint, SweepResult};
use crate::engine::{Backend, ConvertSettings, Engine, EngineError, available_threads, synthetic_rgb};
use crate::pixel::Op;

/// Runs a sweep. `source` is resized to each size (a photo), or `None` for synthetic images.
/// `progress` is called before each cell (each size at each work level) with (index, count,
/// megapixels); returning `false` cancels the sweep. A work grid first measures its calibration
/// ([`calibrate`]) and runs the cells as [`estimate_grid`] plans them; a plain sweep runs every
/// size with the runs asked.
pub fn sweep(
    engine: &Engine,
    options: &SweepOptions,
    source: Option<(&str, &DynamicImage)>,
    progress: &mut dyn FnMut(usize, usize, f64) -> bool,
) -> Result<SweepResult, EngineError> {
    let ops = CellOps::default();
    let calibration = if options.is_work_grid() { Some(calibrate(engine, options)?) } else { None };
    sweep_planned(
        engine,
        (options, &ops),
        &estimate_grid(options, &ops, calibration.as_ref()),
        source,
        progress,
    )
}

/// [`sweep()`] along a plan made beforehand with [`estimate_grid`] from the same `options` and
/// `ops` (the CLI prints the estimate before it starts), each cell running the op its plan
/// says. The cells are measured in the plan's order (each size once resized or generated, its
/// levels lowest first); the result's points are ordered by level, then size.
pub fn sweep_planned(
    engine: &Engine,
    (options, ops): (&SweepOptions, &CellOps),
    plan: &GridEstimate,
    source: Option<(&str, &DynamicImage)>,
    progress: &mut dyn FnMut(usize, usize, f64) -> bool,
) -> Result<SweepResult, EngineError> {
    let gpu = if options.gpu { Some(engine.gpu()?) } else { None };
    if let Some(g) = gpu {
        g.check_workgroup(options.workgroup)?;
    }
    let compute = compute_ceilings(engine, gpu.is_some());
    let whole_sweep = CpuSnapshot::now();
    let sizes = options.sizes();
    let base = ConvertSettings {
        formula: options.formula,
        workgroup: options.workgroup,
        ..ConvertSettings::default()
    };
    let mut points = Vec::new();
    let mut all_kernels_on_timestamps = true;
    let mut index = 0;
    for (i, &mp) in sizes.iter().enumerate() {
        let cells: Vec<&CellPlan> =
            plan.cells.iter().filter(|c| c.megapixels.total_cmp(&mp).is_eq()).collect();
        let mut image = None;
        for cell in cells {
            if !progress(index, plan.cells.len(), mp) {
                return Err(EngineError::Cancelled);
            }
            index += 1;
            let (w, h) = size_for(mp);
            let image = image.get_or_insert_with(|| match source {
                Some((_, img)) => DynamicImage::ImageRgb8(resized(img, w, h).to_rgb8()),
                None => synthetic_rgb(w, h, i as u64 + 1),
            });
            let settings = ConvertSettings { work: options.work(cell.work_rounds), op: cell.op, ..base };
            let before = CpuSnapshot::now();
            let (mut point, kernel_on_timestamps) =
                measure_point(engine, image, &settings, cell, (gpu.is_some(), options.keep_runs))?;
            point.busy = CpuSnapshot::busy_since(before);
            all_kernels_on_timestamps &= kernel_on_timestamps;
            points.push(point);
        }
    }
    let axis = ops.axis();
    points.sort_by(|a, b| a.level(axis).cmp(&b.level(axis)).then(a.megapixels.total_cmp(&b.megapixels)));
    let mut result = SweepResult {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        build: if cfg!(debug_assertions) { "debug" } else { "release" }.to_owned(),
        source: source.map_or_else(|| "synthetic".to_owned(), |(name, _)| name.to_owned()),
        adapter: gpu.map(|g| g.adapter_info().name.clone()),
        software_adapter: gpu.is_some_and(|g| g.is_software()),
        gpu_timestamps: gpu.is_some() && all_kernels_on_timestamps,
        cpu_threads: available_threads(),
        runs: options.runs.max(1),
        workgroup: options.workgroup,
        formula: options.formula,
        points,
        crossover_mp: None,
        resident_crossover_mp: None,
        dispatch_latency_ns: None,
        // The probe's fit; measured here only where the ceilings were cached before it fitted them.
        copy_latency: gpu.and_then(|_| engine.copy_latency()),
        transfer_share_at_8k: None,
        transfer_share_mp: None,
        ceilings: gpu.and_then(|_| engine.known_gpu_ceilings()).map(|k| Box::new(k.ceilings)),
        model: None,
        work_levels: if axis == GridAxis::WorkRounds { options.levels() } else { vec![0] },
        divergent: options.divergent && options.is_work_grid() && axis == GridAxis::WorkRounds,
        axis,
        op: if axis == GridAxis::WorkRounds { ops.op } else { Op::None },
        levels: ops.axis_levels(options),
        op_estimate_basis: plan.op_sentence(),
        compute,
        frontier: None,
        roofline: None,
        verdict: String::new(),
        busy: CpuSnapshot::busy_since(whole_sweep),
    };
    crate::engine::sweep::verdict::analyse(&mut result);
    Ok(result)
}

/// The compute ceilings the modelled frontier and the roofline use, known, cached or measured
/// now (a fraction of a second each): the GPU's only when the GPU is swept. A failed measurement
/// leaves them out, and the verdict says the modelled frontier is unknown.
fn compute_ceilings(engine: &Engine, with_gpu: bool) -> Option<crate::engine::ceilings::ComputeCeilings> {
    let measured = if with_gpu {
        engine.compute_ceilings()
    } else {
        engine.cpu_compute(false).map(|c| crate::engine::ceilings::compute_ceilings_of(&c, None))
    };
    measured.map_err(|e| log::warn!("no compute ceilings for the sweep: {e}")).ok()
}

/// A benchmark's cold run and its last warm run, named after `what`, for a trace.
fn traced(what: &str, r: &crate::engine::BenchResult) -> Vec<(String, crate::engine::RunReport)> {
    let mut runs = vec![(format!("{what} · cold"), r.cold.clone())];
    runs.extend(
        r.warm.last().map(|w| (format!("{what} · warm {} of {}", r.warm.len(), r.warm.len()), w.clone())),
    );
    runs
}

/// One cell, and whether its GPU kernel series came from timestamps.
fn measure_point(
    engine: &Engine,
    image: &DynamicImage,
    base: &ConvertSettings,
    cell: &CellPlan,
    (with_gpu, keep_runs): (bool, bool),
) -> Result<(SweepPoint, bool), EngineError> {
    let started = Instant::now();
    let (width, height) = (image.width(), image.height());
    let kernel_stats = |r: &crate::engine::BenchResult| kernel_and_op(r, base.op);
    let mut series = Vec::new();
    let cpu_runs = cell.cpu_runs.max(1);
    let mut traced_runs = Vec::new();
    if cell.single_thread {
        let cpu1 = bench(engine, image, &ConvertSettings { threads: 1, ..*base }, cpu_runs)?;
        series.extend(kernel_stats(&cpu1).map(|s| (Series::Cpu1, s)));
        traced_runs.extend(traced("1 thread", &cpu1));
    }
    let cpu_all = bench(engine, image, &ConvertSettings { threads: available_threads(), ..*base }, cpu_runs)?;
    series.extend(kernel_stats(&cpu_all).map(|s| (Series::CpuAll, s)));
    traced_runs.extend(traced("all threads", &cpu_all));
    let mut rates = cpu_all.rates.clone();
    let (mut upload_gb_per_s, mut download_gb_per_s) = (None, None);
    let mut kernel_on_timestamps = false;
    let mut end_to_end = None;
    if with_gpu {
        let runs = cell.gpu_runs.max(1);
        let converter = engine.gpu_converter()?;
        // Every cell starts from a device holding none of graylab's buffers, as a fresh
        // `graylab bench` process would: nothing kept, grown or left mapped from the last cell.
        converter.release_buffers()?;
        let r = bench(engine, image, &ConvertSettings { backend: Backend::Gpu, ..*base }, runs)?;
        // End to end on the CPU clock: robust whatever the timestamps do, and what a caller waits.
        series.push((Series::GpuTotal, r.total));
        traced_runs.extend(traced(&format!("workgroup {}", base.workgroup), &r));
        series.extend(kernel_stats(&r).map(|s| (Series::GpuKernel, s)));
        kernel_on_timestamps =
            r.phases.iter().any(|p| p.phase == Phase::Kernel && p.source == Clock::GpuTimestamp);
        rates.extend(r.rates.iter().copied());
        end_to_end = Some(compare_with_cpu(engine, image, base, &series, started.elapsed(), cell.gpu_runs)?);
        let median = |phase| r.phases.iter().find(|p| p.phase == phase).map(|p| p.stats.median_ns.max(1));
        let pixels = f64::from(width) * f64::from(height);
        upload_gb_per_s =
            median(Phase::Upload).map(|ns| pixels * r.kernel.in_bytes_per_pixel() as f64 / ns as f64);
        download_gb_per_s =
            median(Phase::Download).map(|ns| pixels * r.kernel.out_bytes_per_pixel() as f64 / ns as f64);
        // The resident buffers are allocated with the ring gone, and freed before returning.
        converter.release_buffers()?;
        let job = crate::gpu::GpuJob::new(
            r.kernel,
            base.formula,
            base.workgroup,
            image.as_bytes(),
            (width, height),
        )
        .with_work(base.work);
        engine.start_gpu_budget();
        let resident = converter.time_resident(&job, runs)?;
        // The op's passes on data that stays on the GPU: their median, added to each run.
        let op_ns = if base.op.is_none() { 0 } else { r.op.kernel_ns };
        let resident: Vec<u64> = resident.iter().map(|ns| ns + op_ns).collect();
        series.extend(Stats::of(&resident).map(|s| (Series::GpuResident, s)));
    }
    let point = SweepPoint {
        megapixels: crate::system::units::megapixels(width, height),
        width,
        height,
        series,
        upload_gb_per_s,
        download_gb_per_s,
        cpu_stream: cpu_all.cpu_stream_baseline,
        rates,
        modelled: None,
        work_rounds: base.work.rounds,
        op: base.op,
        end_to_end,
        busy: None,
        runs: if keep_runs { traced_runs } else { Vec::new() },
    };
    Ok((point, kernel_on_timestamps))
}

/// The kernel's statistics over `r`'s warm runs, with `op` each run's kernel plus its op (the
/// CPU's phase, the GPU's passes).
fn kernel_and_op(r: &crate::engine::BenchResult, op: Op) -> Option<Stats> {
    let kernel = r.phases.iter().find(|p| p.phase == Phase::Kernel).map(|p| p.stats);
    if op.is_none() {
        return kernel;
    }
    let sums: Vec<u64> = r
        .warm
        .iter()
        .map(|w| {
            let kernel_ns = w.phase(Phase::Kernel).map_or(0, |p| p.ns);
            let op_ns = match r.settings.backend {
                Backend::Cpu => w.phase(Phase::Op).map_or(0, |p| p.ns),
                Backend::Gpu => w.op.kernel_ns,
            };
            kernel_ns + op_ns
        })
        .collect();
    Stats::of(&sums)
}

/// The GPU end to end against the best CPU series measured so far (`series`), in turns through
/// the sampling engine, budgeted from `runs` and `measured` (the time the point's other series
/// took) as `compare.rs` says.
fn compare_with_cpu(
    engine: &Engine,
    image: &DynamicImage,
    base: &ConvertSettings,
    series: &[(Series, Stats)],
    measured: Duration,
    runs: usize,
) -> Result<crate::engine::sweep::Speedup, EngineError> {
    let median = |s: Series| series.iter().find(|(x, _)| *x == s).map(|(_, st)| st.median_ns);
    let cpu_series = [Series::CpuAll, Series::Cpu1]
        .into_iter()
        .filter_map(|s| Some((s, median(s)?)))
        .min_by_key(|(_, ns)| *ns)
        .map_or(Series::CpuAll, |(s, _)| s);
    let threads = if cpu_series == Series::Cpu1 { 1 } else { available_threads() };
    let budget = point_budget(runs, measured);
    let round_ns = median(cpu_series).unwrap_or(0) as f64 + median(Series::GpuTotal).unwrap_or(0) as f64;
    let budget = if affordable(&budget, round_ns, measured) {
        budget
    } else {
        log::info!(
            "the comparison at {}x{} takes its fewest rounds alone: one round takes {:.0} ms",
            image.width(),
            image.height(),
            round_ns / 1e6
        );
        fewest(&budget)
    };
    let cpu = ConvertSettings { threads, ..*base };
    let gpu = ConvertSettings { backend: Backend::Gpu, ..*base };
    let sides = Sides { cpu, gpu, cpu_series: Some(cpu_series) };
    compare(engine, image, &sides, &budget, None, &mut |_| {})
}

/// `img` resized to `w` x `h` with a float intermediate of at most 16 bytes a pixel of the
/// larger of the two images ([`crate::engine::sweep_bytes`] reserves that). `image` resizes
/// vertically first, through a `source width x h` intermediate: for a 65500x1 photo swept to
/// 16 MP that is 3.4 GB. A photo much wider than the result is resized horizontally first.
fn resized(img: &DynamicImage, w: u32, h: u32) -> DynamicImage {
    let filter = image::imageops::FilterType::Triangle;
    let (src_w, src_h) = (u64::from(img.width()), u64::from(img.height()));
    let vertical_first = src_w * u64::from(h);
    if vertical_first > (src_w * src_h).max(u64::from(w) * u64::from(h)) {
        img.resize_exact(w, img.height(), filter).resize_exact(w, h, filter)
    } else {
        img.resize_exact(w, h, filter)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_wide_photo_is_resized_horizontally_first_to_the_same_image() {
        use image::{DynamicImage, RgbImage};
        let wide = DynamicImage::ImageRgb8(RgbImage::from_fn(3000, 2, |x, y| {
            image::Rgb([(x / 12) as u8, (y * 90) as u8, 7])
        }));
        let direct = wide.resize_exact(300, 200, image::imageops::FilterType::Triangle).to_rgb8();
        let ours = super::resized(&wide, 300, 200).to_rgb8();
        assert_eq!(ours.dimensions(), (300, 200));
        // The same filter in the other order: equal but for the rounding between the passes.
        let most = direct.as_raw().iter().zip(ours.as_raw()).map(|(a, b)| a.abs_diff(*b)).max();
        assert!(most <= Some(1), "{most:?}");
    }
}
