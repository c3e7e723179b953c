//! Operations per round trip, measured (the tutorial's "keep data on the GPU for multiple
//! operations"): for each count `n`, the GPU uploads the image once, runs `n` full passes of the
//! kernel over the kept input and downloads the result once (CPU clock; its passes on GPU
//! timestamps where the device has them), against the CPU's same `n` passes on every thread, at
//! the same formula and work per pixel. Each GPU result is checked against the CPU's byte for
//! byte. At each count the two sides run in turns through the sampling engine until the GPU's
//! speed-up per operation is decided (a [`Speedup`]); only decided wins say from which `n` the
//! GPU wins.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use image::DynamicImage;

use crate::engine::convert::{Prepared, prepare};
use crate::engine::estimate::{Lane, Pace};
use crate::engine::report::Stats;
use crate::engine::sampling::{Budget, rotation};
use crate::engine::sweep::compare::compare_rounds;
use crate::engine::sweep::result::{Speedup, Winner};
use crate::engine::{ConvertSettings, Engine, EngineError, WorkgroupSize};
use crate::gpu::GpuHostMemory;
use crate::gpu::GpuJob;
use crate::pixel::{Formula, Work};
use crate::system::units::duration;

/// The counts of operations per round trip measured by default.
pub const DEFAULT_PASSES: [u32; 5] = [1, 2, 4, 8, 16];

/// The most operations one round trip may carry (a front end's bound).
pub const MAX_PASSES: u32 = 1024;

/// One count of operations per round trip, on both backends.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RoundTripPoint {
    /// Operations (full passes of the kernel) between one upload and one download.
    pub passes: u32,
    /// The GPU's whole round trip: upload, `passes` passes, download (CPU clock), over the
    /// warm rounds.
    pub gpu_total_ns: Stats,
    /// Its median divided by `passes`: the GPU's time per operation, transfers shared out.
    pub gpu_per_op_ns: f64,
    /// The GPU's `passes` passes alone, start of the first to end of the last (GPU timestamps),
    /// where the device has them.
    pub gpu_kernel_ns: Option<Stats>,
    /// The CPU's `passes` passes on every thread (CPU clock).
    pub cpu_total_ns: Stats,
    /// Each CPU run divided by `passes`: the CPU's time per operation.
    pub cpu_per_op_ns: Stats,
    /// The GPU's round trip against the CPU's `passes` passes, in turns until decided: the
    /// GPU's speed-up per operation (CPU time over GPU time) with its 95% interval, and who won.
    #[serde(flatten)]
    pub comparison: Speedup,
    /// Whether every GPU download equals the CPU's result byte for byte.
    pub matches_cpu: bool,
    /// Whether the GPU is faster per operation, decided (a difference within the noise is no
    /// win).
    pub gpu_wins: bool,
}

/// The clock of each figure.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RoundTripClocks {
    /// Of `gpu_total_ns` and `gpu_per_op_ns`.
    pub gpu_total: String,
    /// Of `gpu_kernel_ns`, when measured.
    pub gpu_kernel: Option<String>,
    /// Of `cpu_total_ns` and `cpu_per_op_ns`.
    pub cpu: String,
}

/// Operations per round trip on one image at one work level.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RoundTripResult {
    /// graylab version.
    pub version: String,
    /// `release` or `debug`.
    pub build: String,
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// The formula.
    pub formula: Formula,
    /// The GPU's workgroup shape.
    pub workgroup: WorkgroupSize,
    /// CPU threads.
    pub cpu_threads: usize,
    /// Rounds of the synthetic work per pixel in every pass.
    pub work_rounds: u32,
    /// Whether the rounds ran only for odd gray values.
    pub divergent: bool,
    /// The work's mask (0: the image stays the exact grayscale).
    pub work_mask: u32,
    /// The fewest warm rounds per count (each one GPU round trip and the CPU's passes), after
    /// one cold GPU round trip and the warm-up rounds apart.
    pub min_rounds: usize,
    /// The most.
    pub max_rounds: usize,
    /// One per count, in increasing order.
    pub points: Vec<RoundTripPoint>,
    /// The smallest count from which the GPU wins, decided, at that count and every larger one
    /// measured.
    pub gpu_wins_from_passes: Option<u32>,
    /// The clocks.
    pub clocks: RoundTripClocks,
    /// The GPU adapter.
    pub adapter: String,
    /// Whether it is a software adapter (the "GPU" is the CPU's own cores).
    pub software_adapter: bool,
    /// What it means, in one sentence.
    pub verdict: String,
}

/// How the round trips run.
#[derive(Clone, Debug)]
pub struct RoundTripOptions<'a> {
    /// Counts of operations per round trip (sorted, repeats and 0 dropped).
    pub passes: Vec<u32>,
    /// How each count samples ([`round_trip_budget`]).
    pub budget: Budget,
    /// Checked between runs and between GPU submissions.
    pub cancel: Option<&'a AtomicBool>,
}

impl Default for RoundTripOptions<'_> {
    fn default() -> Self {
        Self { passes: DEFAULT_PASSES.to_vec(), budget: round_trip_budget(false, 1), cancel: None }
    }
}

/// The quick or the full set's budget ([`Budget::for_set`]) with at least `runs` warm rounds
/// per count.
#[must_use]
pub fn round_trip_budget(quick: bool, runs: usize) -> Budget {
    let set = Budget::for_set(quick);
    let min_rounds = runs.max(set.min_rounds);
    Budget { min_rounds, max_rounds: set.max_rounds.max(min_rounds), ..set }
}

/// One warm round of a count: the GPU's round trip and the CPU's passes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Round {
    /// The GPU's whole round trip (CPU clock).
    gpu_ns: u64,
    /// Its passes alone (GPU timestamps), where read.
    kernel_ns: Option<u64>,
    /// The CPU's passes (CPU clock).
    cpu_ns: u64,
    /// Whether the GPU's download equalled the CPU's result.
    matches_cpu: bool,
}

/// The point of `passes` operations per round trip: rounds of `measure` (the sides in the
/// order [`rotation`] gives) until the GPU's speed-up is decided or `budget` is spent.
fn sample_point(
    passes: u32,
    budget: &Budget,
    cancel: Option<&AtomicBool>,
    mut measure: impl FnMut(usize) -> Result<Round, EngineError>,
) -> Result<RoundTripPoint, EngineError> {
    let mut taken = Vec::new();
    let comparison = compare_rounds(None, budget, cancel, |round| {
        let r = measure(round)?;
        if round >= budget.warmup_rounds {
            taken.push(r);
        }
        Ok([r.cpu_ns as f64, r.gpu_ns as f64])
    })?;
    let n = u64::from(passes.max(1));
    let of = |part: fn(&Round) -> u64| taken.iter().map(part).collect::<Vec<u64>>();
    let (gpu, cpu) = (of(|r| r.gpu_ns), of(|r| r.cpu_ns));
    let per_op: Vec<u64> = cpu.iter().map(|ns| ns / n).collect();
    let (Some(gpu_total_ns), Some(cpu_total_ns), Some(cpu_per_op_ns)) =
        (Stats::of(&gpu), Stats::of(&cpu), Stats::of(&per_op))
    else {
        return Err(EngineError::Bug("a round trip measured nothing"));
    };
    let kernel: Option<Vec<u64>> = taken.iter().map(|r| r.kernel_ns).collect();
    Ok(RoundTripPoint {
        passes,
        gpu_total_ns,
        gpu_per_op_ns: gpu_total_ns.median_ns as f64 / n as f64,
        gpu_kernel_ns: kernel.as_deref().and_then(Stats::of),
        cpu_total_ns,
        cpu_per_op_ns,
        comparison,
        matches_cpu: taken.iter().all(|r| r.matches_cpu),
        gpu_wins: comparison.winner == Winner::GpuFaster,
    })
}

/// Bytes the round trips hold besides an already decoded input (`synthetic_input`: the input
/// too): the CPU's and the GPU's result, and what the GPU's runs hold in host memory (`gpu`: its
/// adapter's rule), the input kept on the device.
#[must_use]
pub fn round_trip_bytes(in_bytes: u64, out_bytes: u64, synthetic_input: bool, gpu: GpuHostMemory) -> u64 {
    let gpu = Some(gpu.keeping_input(true));
    crate::engine::bench_bytes(in_bytes, out_bytes, synthetic_input, gpu).saturating_add(out_bytes)
}

/// The smallest count from which the GPU wins, decided, at it and at every larger count in
/// `points` (a count within the noise is no win).
fn wins_from(points: &[RoundTripPoint]) -> Option<u32> {
    let losing_after = points.iter().rposition(|p| !p.gpu_wins);
    let first = losing_after.map_or(0, |i| i + 1);
    points.get(first).map(|p| p.passes)
}

/// Megapixels with the precision a reader needs.
fn megapixels(width: u32, height: u32) -> String {
    let mp = crate::system::units::megapixels(width, height);
    match mp {
        m if m >= 10.0 => format!("{m:.0} MP"),
        m if m >= 1.0 => format!("{m:.1} MP"),
        m if m >= 0.01 => format!("{m:.2} MP"),
        m => format!("{m:.4} MP"),
    }
}

/// "operation" or "operations".
fn ops(n: u32) -> &'static str {
    if n == 1 { "operation" } else { "operations" }
}

/// The verdict sentence.
fn verdict(r: &RoundTripResult) -> String {
    let divergent = if r.divergent { " divergent" } else { "" };
    let (mp, rounds) = (megapixels(r.width, r.height), r.work_rounds);
    let at = format!("At {mp} ({}x{}) and {rounds}{divergent} rounds per pixel", r.width, r.height);
    let figures = |p: &RoundTripPoint| {
        format!(
            "{} per operation on the GPU against the CPU's {}",
            duration(p.gpu_per_op_ns.round() as u64),
            duration(p.cpu_per_op_ns.median_ns)
        )
    };
    let mut text = match (r.gpu_wins_from_passes, r.points.last()) {
        (Some(n), _) => {
            let p = r.points.iter().find(|p| p.passes == n);
            let (figures, label) = p.map(|p| (figures(p), p.comparison.label())).unwrap_or_default();
            format!("{at} the GPU wins from {n} {} per round trip: {figures} there; {label}", ops(n))
        }
        (None, Some(last)) => format!(
            "{at} the GPU does not win up to {} {} per round trip: {} at {}; {}",
            last.passes,
            ops(last.passes),
            figures(last),
            last.passes,
            last.comparison.label()
        ),
        (None, None) => format!("{at} nothing was measured"),
    };
    let differ: Vec<String> =
        r.points.iter().filter(|p| !p.matches_cpu).map(|p| p.passes.to_string()).collect();
    if !differ.is_empty() {
        let _ = write!(
            text,
            "; but the GPU's result differed from the CPU's at n = {}, so these are not the same work",
            differ.join(", ")
        );
    }
    if r.software_adapter {
        text.push_str(" (on this software adapter the \"GPU\" is this CPU's own cores)");
    }
    text.push('.');
    text
}

/// The time (CPU clock) of `n` calls of `pass` in a row, checking `cancelled` between calls.
fn cpu_run(
    n: u32,
    cancelled: &dyn Fn() -> bool,
    pass: &mut dyn FnMut() -> Result<(), crate::cpu::CpuError>,
) -> Result<u64, EngineError> {
    let started = Instant::now();
    for _ in 0..n {
        if cancelled() {
            return Err(EngineError::Cancelled);
        }
        pass()?;
    }
    Ok(crate::system::clock::nanos_since(started))
}

/// Measures operations per round trip on `image` with `settings` (formula, workgroup, threads,
/// work per pixel; the backend is ignored: both run), each count sampled within
/// `options.budget`. `progress(passes, work_done, work_total)` is called before each count, the
/// work in passes run so far (the fewest rounds counted: a count that takes more is done when
/// it is done). The GPU must open.
pub fn round_trips(
    engine: &Engine,
    image: &DynamicImage,
    settings: &ConvertSettings,
    options: &RoundTripOptions<'_>,
    progress: &mut dyn FnMut(u32, f64, f64),
) -> Result<RoundTripResult, EngineError> {
    let converter = engine.gpu_converter()?;
    let gpu = converter.context();
    gpu.check_workgroup(settings.workgroup)?;
    let (width, height) = (image.width(), image.height());
    let (Prepared::Colour { kernel, bytes }, _) = prepare(image, settings.keep_alpha)? else {
        return Err(EngineError::UnsupportedPixels(format!(
            "{:?}: the image is already gray, so no kernel runs on it",
            image.color()
        )));
    };
    let mut passes: Vec<u32> = options.passes.iter().copied().filter(|&n| n > 0).collect();
    passes.sort_unstable();
    passes.dedup();
    let budget = options.budget;
    let threads = settings.threads.clamp(1, crate::cpu::available_threads());
    let (formula, work) = (settings.formula, settings.work);
    let out_len = width as usize * height as usize * kernel.out_bytes_per_pixel();
    let (mut cpu_out, mut gpu_out) = (crate::cpu::zeroed_buffer::<u8>(out_len), vec![0u8; out_len]);
    let cancelled = || options.cancel.is_some_and(|c| c.load(Ordering::Relaxed));
    let cpu_pass =
        |dst: &mut [u8]| crate::cpu::par_convert_with_work(kernel, formula, &bytes, dst, threads, work);
    // The CPU's result, which every GPU download must equal; it also warms the CPU up.
    cpu_pass(&mut cpu_out)?;
    // The buffers of earlier runs are freed: the round trips size the ring and the kept input
    // for their own plan, as a fresh process would find the device.
    converter.release_buffers()?;
    // Work in passes at the fewest rounds: the GPU's cold round trip and a round trip a round
    // (a pass each for the transfers), the CPU's passes a round.
    let rounds = (budget.warmup_rounds + budget.min_rounds) as f64;
    let cost = |n: u32| f64::from(n + 1) * (rounds + 1.0) + f64::from(n) * rounds;
    let work_total: f64 = passes.iter().map(|&n| cost(n)).sum();
    let mut work_done = 0.0;
    let mut points = Vec::new();
    let mut kernel_clock = true;
    for &n in &passes {
        if cancelled() {
            return Err(EngineError::Cancelled);
        }
        progress(n, work_done, work_total);
        let mut job =
            GpuJob::new(kernel, formula, settings.workgroup, &bytes, (width, height)).with_work(work);
        job.cancel = options.cancel;
        gpu_out.fill(0);
        engine.start_gpu_budget();
        let point = converter.with_warm_round_trip(&job, n, &mut gpu_out, |trip| {
            sample_point(n, &budget, options.cancel, |round| {
                let mut r = Round::default();
                for side in rotation(round, 2) {
                    if side == 0 {
                        r.cpu_ns = cpu_run(n, &cancelled, &mut || cpu_pass(&mut cpu_out))?;
                    } else {
                        let t = trip.once()?;
                        (r.gpu_ns, r.kernel_ns) = (t.wall_ns, t.kernel_ns);
                        r.matches_cpu = trip.output() == cpu_out.as_slice();
                    }
                }
                Ok(r)
            })
        })??;
        work_done += cost(n);
        kernel_clock &= point.gpu_kernel_ns.is_some();
        points.push(point);
    }
    progress(passes.last().copied().unwrap_or(0), work_total, work_total);
    if !kernel_clock {
        for p in &mut points {
            p.gpu_kernel_ns = None;
        }
    }
    let mut result = RoundTripResult {
        version: crate::system::host::VERSION.to_owned(),
        build: crate::system::host::BUILD.to_owned(),
        width,
        height,
        formula,
        workgroup: settings.workgroup,
        cpu_threads: threads,
        work_rounds: work.rounds,
        divergent: work.divergent,
        work_mask: work.mask,
        min_rounds: budget.min_rounds,
        max_rounds: budget.max_rounds,
        gpu_wins_from_passes: wins_from(&points),
        points,
        clocks: RoundTripClocks {
            gpu_total: "cpu-clock".to_owned(),
            gpu_kernel: (kernel_clock && !passes.is_empty()).then(|| "gpu-timestamp".to_owned()),
            cpu: "cpu-clock".to_owned(),
        },
        adapter: gpu.adapter_info().name.clone(),
        software_adapter: gpu.is_software(),
        verdict: String::new(),
    };
    result.verdict = verdict(&result);
    Ok(result)
}

/// Teaches `pace` the runs round trips timed, as a sweep teaches its medians: every count's
/// CPU pass (one conversion on the CPU's threads) and the GPU's round trip of one operation (one
/// conversion end to end: a round trip of more shares its transfers, which no run does). Feed
/// it before [`crate::engine::estimate::Pace::finished`]: untaught, the next round trips were
/// still "a guess from this machine's ceilings" after one was seen.
pub fn teach_pace(pace: &mut Pace, result: &RoundTripResult) {
    let megapixels = crate::system::units::megapixels(result.width, result.height);
    let cpu = Lane::of(&ConvertSettings {
        backend: crate::engine::Backend::Cpu,
        threads: result.cpu_threads,
        ..ConvertSettings::default()
    });
    for p in &result.points {
        pace.observe(cpu, megapixels, result.work_rounds, p.cpu_per_op_ns.median_ns as f64 / 1e9);
        if p.passes == 1 {
            pace.observe(Lane::Gpu, megapixels, result.work_rounds, p.gpu_total_ns.median_ns as f64 / 1e9);
        }
    }
}

impl RoundTripResult {
    /// The work per pixel these round trips ran.
    #[must_use]
    pub fn work(&self) -> Work {
        Work { rounds: self.work_rounds, mask: self.work_mask, divergent: self.divergent }
    }
}

#[cfg(test)]
mod tests;
