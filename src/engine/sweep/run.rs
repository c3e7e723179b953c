//! The size sweep and the grid: at each size (and level) the CPU on one thread and on all, the
//! GPU end to end, its kernel alone and with the data resident, handed to the verdict. A cell's
//! op is timed with the kernel: each warm run's kernel plus its op (the CPU's phase, the GPU's
//! passes), the resident kernel plus the passes' median (the op's copies are end to end only).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use image::DynamicImage;

use crate::engine::bench::bench;
use crate::engine::ceilings::ComputeCeilings;
use crate::engine::sweep::compare::{Sides, affordable, compare, fewest, kernel_and_op_ns, point_budget};
use crate::system::clock::Clock;
use crate::system::load::CpuSnapshot;

use crate::engine::estimate::Pace;
use crate::engine::report::Stats;
use crate::engine::spans::Phase;
use crate::engine::sweep::grid::{CellNotRun, GridAxis, Series};
use crate::engine::sweep::plan::{CellPlan, GridEstimate, SweepOptions, calibrate, size_for};
use crate::engine::sweep::result::{SweepPoint, SweepResult};
use crate::engine::{Backend, ConvertSettings, Engine, EngineError, available_threads, synthetic_rgb};
use crate::gpu::GpuJob;
use crate::pixel::Op;

/// Runs a sweep on `source` resized to each size, or on synthetic images. `progress(index, count,
/// megapixels)` before each cell; `false` stops the sweep there ([`SweepResult::stopped`]: the
/// cells finished are kept, the rest not run). A grid first measures its calibration
/// ([`calibrate`]) and runs the cells as [`SweepOptions::plan`] plans them.
pub fn sweep(
    engine: &Engine,
    options: &SweepOptions,
    source: Option<(&str, &DynamicImage)>,
    progress: &mut dyn FnMut(usize, usize, f64) -> bool,
) -> Result<SweepResult, EngineError> {
    let calibration = if options.is_grid() { Some(calibrate(engine, options)?) } else { None };
    let plan = options.plan(calibration.as_ref(), &Pace::default());
    sweep_planned(engine, options, &plan, source, progress, None)
}

/// [`sweep()`] along a plan made beforehand from the same `options` (the CLI prints the estimate
/// before it starts), in the plan's order; the result's points by level, then size. Once
/// `cancel` is set (or `progress` says `false`) the sweep stops: inside the cell in flight where
/// it is comparing its sides in turns (that cell is then not run), else before the next cell;
/// the cells finished are kept, and analysed, as a stopped result.
pub fn sweep_planned(
    engine: &Engine,
    options: &SweepOptions,
    plan: &GridEstimate,
    source: Option<(&str, &DynamicImage)>,
    progress: &mut dyn FnMut(usize, usize, f64) -> bool,
    cancel: Option<&AtomicBool>,
) -> Result<SweepResult, EngineError> {
    let cancelled = || cancel.is_some_and(|c| c.load(Ordering::Relaxed));
    let gpu = if options.gpu { Some(engine.gpu()?) } else { None };
    if let Some(g) = gpu {
        g.check_workgroup(options.workgroup)?;
    }
    let compute = compute_ceilings(engine, gpu.is_some());
    let whole_sweep = CpuSnapshot::now();
    let base = options.settings();
    let mut points = Vec::new();
    let (mut not_run, mut stopped) = (Vec::new(), false);
    let mut all_kernels_on_timestamps = true;
    let mut index = 0;
    for (i, mp) in options.sizes().into_iter().enumerate() {
        let mut image = None;
        for cell in plan.cells.iter().filter(|c| c.megapixels.total_cmp(&mp).is_eq()) {
            let (w, h) = size_for(mp);
            let skipped = CellNotRun {
                megapixels: crate::system::units::megapixels(w, h),
                width: w,
                height: h,
                work_rounds: cell.work_rounds,
                op: cell.op,
            };
            // Once stopped, no cell is begun, nor its progress said.
            stopped = stopped || cancelled() || !progress(index, plan.cells.len(), mp);
            index += 1;
            if stopped {
                not_run.push(skipped);
                continue;
            }
            let image = image.get_or_insert_with(|| match source {
                Some((_, img)) => DynamicImage::ImageRgb8(resized(img, w, h).to_rgb8()),
                None => synthetic_rgb(w, h, i as u64 + 1),
            });
            let settings = ConvertSettings { work: options.work(cell.work_rounds), op: cell.op, ..base };
            let before = CpuSnapshot::now();
            let how = (gpu.is_some(), options.keep_runs);
            let (mut point, kernel_on_timestamps) =
                match measure_point(engine, image, &settings, cell, how, cancel) {
                    Ok(measured) => measured,
                    // Stopped inside this cell: it and the rest are not run, the finished ones kept.
                    Err(EngineError::Cancelled) if cancelled() => {
                        stopped = true;
                        not_run.push(skipped);
                        continue;
                    }
                    Err(e) => return Err(e),
                };
            // Not known over a point too short to tell (one tick of another process read 25%).
            point.busy = CpuSnapshot::busy_of_a_run(before);
            all_kernels_on_timestamps &= kernel_on_timestamps;
            points.push(point);
        }
    }
    // A cell's report raises the CPU's compute ceiling where its run beat it: the roofs and the
    // model are the ceilings as they stand after the cells, so no point is above its own roof.
    let compute = as_they_stand(compute, engine.known_compute_ceiling(Backend::Cpu));
    let axis = options.ops.axis();
    points.sort_by(|a, b| a.level(axis).cmp(&b.level(axis)).then(a.megapixels.total_cmp(&b.megapixels)));
    let mut result = SweepResult {
        version: crate::system::host::VERSION.to_owned(),
        build: crate::system::host::BUILD.to_owned(),
        source: source.map_or_else(|| "synthetic".to_owned(), |(name, _)| name.to_owned()),
        adapter: gpu.map(|g| g.adapter_info().name.clone()),
        software_adapter: gpu.is_some_and(|g| g.is_software()),
        gpu_timestamps: gpu.is_some() && all_kernels_on_timestamps,
        cpu_threads: available_threads(),
        runs: options.runs.max(1),
        workgroup: options.workgroup,
        formula: options.formula,
        points,
        stopped,
        not_run,
        // The probe's fit; measured here only where the ceilings were cached before it fitted them.
        copy_latency: gpu.and_then(|_| engine.copy_latency()),
        ceilings: gpu.and_then(|_| engine.known_gpu_ceilings()).map(|k| Box::new(k.ceilings)),
        work_levels: if axis == GridAxis::WorkRounds { options.levels() } else { vec![0] },
        divergent: options.divergent && options.is_work_grid() && axis == GridAxis::WorkRounds,
        axis,
        op: if axis == GridAxis::WorkRounds { options.ops.op } else { Op::None },
        levels: options.axis_levels(),
        op_estimate_basis: plan.op_sentence(),
        compute,
        busy: CpuSnapshot::busy_of_a_run(whole_sweep),
        held_against: engine.held_against(),
        // The crossovers, the model, the frontier and the verdict: `analyse` fills them.
        ..SweepResult::default()
    };
    crate::engine::sweep::verdict::analyse(&mut result);
    Ok(result)
}

/// The compute ceilings the modelled frontier and the roofline use, known, cached or measured
/// now (the GPU's only when it is swept); a failed measurement leaves them out.
fn compute_ceilings(engine: &Engine, with_gpu: bool) -> Option<ComputeCeilings> {
    let measured = if with_gpu {
        engine.compute_ceilings()
    } else {
        engine.cpu_compute(false).map(|c| crate::engine::ceilings::compute_ceilings_of(&c, None))
    };
    measured.map_err(|e| log::warn!("no compute ceilings for the sweep: {e}")).ok()
}

/// `before`, the compute ceilings read before the cells, with the CPU's as the engine knows it
/// after them (`cpu_ops_per_s_now`: [`Engine::finish_report`] raises it to a run that beat it);
/// never lowered.
fn as_they_stand(before: Option<ComputeCeilings>, cpu_ops_per_s_now: Option<f64>) -> Option<ComputeCeilings> {
    let mut c = before?;
    if let Some(now) = cpu_ops_per_s_now.filter(|v| v.is_finite() && *v > c.cpu_ops_per_s) {
        c.cpu_ops_per_s = now;
    }
    Some(c)
}

/// A benchmark's cold run and its last warm run, named after `what`, for a trace.
fn traced(what: &str, r: &crate::engine::BenchResult) -> Vec<(String, crate::engine::RunReport)> {
    let warm = r.warm.last().map(|w| (format!("{what} · warm {n} of {n}", n = r.warm.len()), w.clone()));
    std::iter::once((format!("{what} · cold"), r.cold.clone())).chain(warm).collect()
}

/// One cell, and whether its GPU kernel series came from timestamps; its comparison in turns
/// stops ([`EngineError::Cancelled`]) once `cancel` is set.
fn measure_point(
    engine: &Engine,
    image: &DynamicImage,
    base: &ConvertSettings,
    cell: &CellPlan,
    (with_gpu, keep_runs): (bool, bool),
    cancel: Option<&AtomicBool>,
) -> Result<(SweepPoint, bool), EngineError> {
    let started = Instant::now();
    let (width, height) = (image.width(), image.height());
    let kernel_stats = |r: &crate::engine::BenchResult| kernel_and_op(r, base.op);
    let (mut series, mut traced_runs) = (Vec::new(), Vec::new());
    let mut cpu = |threads, cpu_series, what| {
        let r = bench(engine, image, &ConvertSettings { threads, ..*base }, cell.cpu_runs.max(1))?;
        series.extend(kernel_stats(&r).map(|s| (cpu_series, s)));
        traced_runs.extend(traced(what, &r));
        Ok::<_, EngineError>(r)
    };
    if cell.single_thread {
        cpu(1, Series::Cpu1, "1 thread")?;
    }
    let cpu_all = cpu(available_threads(), Series::CpuAll, "all threads")?;
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
        let measured = (started.elapsed(), cell.gpu_runs);
        end_to_end = Some(compare_with_cpu(engine, image, base, &series, measured, cancel)?);
        let median = |phase| r.phases.iter().find(|p| p.phase == phase).map(|p| p.stats.median_ns.max(1));
        let pixels = f64::from(width) * f64::from(height);
        upload_gb_per_s =
            median(Phase::Upload).map(|ns| pixels * r.kernel.in_bytes_per_pixel() as f64 / ns as f64);
        download_gb_per_s =
            median(Phase::Download).map(|ns| pixels * r.kernel.out_bytes_per_pixel() as f64 / ns as f64);
        // The resident buffers are allocated with the ring gone, and freed before returning.
        converter.release_buffers()?;
        let job = GpuJob::new(r.kernel, base.formula, base.workgroup, image.as_bytes(), (width, height));
        let job = job.with_work(base.work);
        engine.start_gpu_budget();
        let resident = converter.time_resident_passes(&job, runs, false)?;
        // The op's passes on data that stays on the GPU: their median, added to each run.
        let op_ns = if base.op.is_none() { 0 } else { r.op.kernel_ns };
        let resident: Vec<u64> = resident.iter().map(|p| p.wall_ns + op_ns).collect();
        // Submit and wait on the CPU clock, with the op's passes on their own where there are any.
        let clock =
            if op_ns == 0 || op_clock(&r) == Clock::CpuClock { Clock::CpuClock } else { Clock::Mixed };
        series.extend(Stats::of(&resident).map(|s| (Series::GpuResident, s.on(clock))));
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
        work_rounds: base.work.rounds,
        op: base.op,
        end_to_end,
        runs: if keep_runs { traced_runs } else { Vec::new() },
        ..SweepPoint::default()
    };
    Ok((point, kernel_on_timestamps))
}

/// The kernel's statistics over `r`'s warm runs, with `op` each run's [`kernel_and_op_ns`], on
/// the clock (or clocks) that timed them.
fn kernel_and_op(r: &crate::engine::BenchResult, op: Op) -> Option<Stats> {
    let kernel = r.phases.iter().find(|p| p.phase == Phase::Kernel)?;
    if op.is_none() {
        return Some(kernel.stats.on(kernel.source));
    }
    let both = if op_clock(r) == kernel.source { kernel.source } else { Clock::Mixed };
    Stats::of(&r.warm.iter().filter_map(kernel_and_op_ns).collect::<Vec<u64>>()).map(|s| s.on(both))
}

/// The clock of the op's time in [`kernel_and_op_ns`]: the CPU's op phase, the GPU's passes.
fn op_clock(r: &crate::engine::BenchResult) -> Clock {
    match r.settings.backend {
        Backend::Cpu => Clock::CpuClock,
        Backend::Gpu => r.op.kernel_clock,
    }
}

/// The GPU end to end against the best CPU series of `series`, in turns, budgeted from `runs` and
/// `measured` (the time the point's other series took) as `compare.rs` says, until decided or
/// `cancel` is set.
fn compare_with_cpu(
    engine: &Engine,
    image: &DynamicImage,
    base: &ConvertSettings,
    series: &[(Series, Stats)],
    (measured, runs): (Duration, usize),
    cancel: Option<&AtomicBool>,
) -> Result<crate::engine::sweep::Speedup, EngineError> {
    let median = |s: Series| series.iter().find(|(x, _)| *x == s).map(|(_, st)| st.median_ns);
    let faster = [Series::CpuAll, Series::Cpu1].into_iter().min_by_key(|&s| median(s).unwrap_or(u64::MAX));
    let cpu_series = faster.unwrap_or(Series::CpuAll);
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
    compare(engine, image, &sides, &budget, cancel, &mut |_| {})
}

/// `img` resized to `w` x `h` with a float intermediate of at most 16 bytes a pixel of the larger
/// image ([`crate::engine::sweep_bytes`]): `image` resizes vertically first, through a `source
/// width x h` intermediate (3.4 GB for a 65500x1 photo swept to 16 MP), so a photo much wider
/// than the result is resized horizontally first.
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
    fn the_sweep_keeps_the_cpu_compute_ceiling_a_cell_raised() {
        use crate::engine::ceilings::ComputeCeilings;
        let before = ComputeCeilings {
            cpu_ops_per_s: 100e9,
            cpu_threads: 2,
            gpu_ops_per_s: Some(500e9),
            gpu_clock: None,
        };
        // A cell at 256 rounds ran at 132 Gop/s and raised the engine's ceiling to it.
        let after = super::as_they_stand(Some(before), Some(132e9)).expect("ceilings");
        assert!((after.cpu_ops_per_s - 132e9).abs() < 1.0, "{after:?}");
        assert_eq!((after.cpu_threads, after.gpu_ops_per_s), (2, Some(500e9)));
        // Never lowered, nothing made up where none was read before.
        assert_eq!(super::as_they_stand(Some(before), Some(90e9)), Some(before));
        assert_eq!(super::as_they_stand(Some(before), None), Some(before));
        assert_eq!(super::as_they_stand(None, Some(132e9)), None);
    }

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
