//! How much work one submission may carry: at most [`SUBMISSION_BUDGET_NS`] of GPU time, so a
//! render thread sharing the queue (eframe's, in the app) gets its frames in between, and a stop
//! lands within the budget.
//!
//! The GPU's speed is learnt per device from what earlier submissions measured, starting from
//! its measured ceilings ([`CeilingRates`], at [`START_MARGIN`]) or, without them, from
//! [`GpuRates::CONSERVATIVE`]. A slower timestamp reading is believed at once; a faster one
//! moves the estimate at most [`GROWTH`] times, so submissions grow geometrically and one reading
//! too fast to be true costs one submission. The CPU clock around a submit-and-wait also counts
//! the wait behind other work on the queue (eframe's frames, as long as a chunk on a software
//! adapter), so it may lower the estimate but never raise it: believed, it would shrink the
//! chunks after every wait, down to one row per submission.
//!
//! The kernel's cost is learnt per work level (4096 rounds cost a thousand times the plain
//! grayscale). A level not run yet is predicted as the plain grayscale's cost plus `rounds` times
//! the dearest cost per round learnt so far (twice it for a divergent level, where half the
//! pixels run), else the compute ceiling's, else [`CONSERVATIVE_NS_PER_BYTE_ROUND`]; so a heavy
//! run leaves the plain grayscale's cost alone.

use std::sync::{Mutex, PoisonError};

use crate::pixel::{Kernel, OPS_PER_ROUND, Work};

/// The GPU time one submission should stay under, in nanoseconds.
pub const SUBMISSION_BUDGET_NS: u64 = 8_000_000;

/// Where learning of a work level's cost per round starts, before any level was learnt and
/// without a compute ceiling: GPU nanoseconds per input byte per round, slower than a software
/// rasteriser on two cores (about 0.6 there).
pub const CONSERVATIVE_NS_PER_BYTE_ROUND: f64 = 1.0;

/// How many times its ceiling's time a step is first planned at: a ceiling is the best run of a
/// size that fills the GPU; a real submission also pays its dispatch and its memory traffic
/// (measured on an H200: the upload's GPU copy at 2.3 times its ceiling's time, the kernel at
/// 4096 rounds 1.06 times).
pub const START_MARGIN: f64 = 2.0;

/// The most a faster reading speeds an estimate up at once: a submission grows at most this many
/// times from one reading to the next.
pub const GROWTH: f64 = 4.0;

/// Work levels whose kernel cost is kept (the oldest is forgotten first).
const LEVELS: usize = 16;

/// The GPU's cost per byte of each step, as learnt so far.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct GpuRates {
    /// Upload copy (staging to input buffer), per input byte.
    pub upload_ns_per_byte: f64,
    /// Kernel, per input byte (of the plain grayscale; the budget keeps each work level's).
    pub kernel_ns_per_byte: f64,
    /// Drawing into display textures, per output byte.
    pub display_ns_per_byte: f64,
    /// Download copy (output buffer to staging), per output byte.
    pub download_ns_per_byte: f64,
}

impl GpuRates {
    /// Where learning starts without ceilings: slower than a software rasteriser on two cores, so
    /// the first submissions are small everywhere.
    pub const CONSERVATIVE: Self = Self {
        upload_ns_per_byte: 0.5,
        kernel_ns_per_byte: 3.0,
        display_ns_per_byte: 6.0,
        download_ns_per_byte: 0.5,
    };

    /// Predicted GPU nanoseconds per input byte of `kernel`, for the steps a run has.
    #[must_use]
    pub fn ns_per_input_byte(&self, kernel: Kernel, display: bool, download: bool) -> f64 {
        let out_per_in = kernel.out_bytes_per_pixel() as f64 / kernel.in_bytes_per_pixel() as f64;
        let mut ns = self.upload_ns_per_byte + self.kernel_ns_per_byte;
        if display {
            ns += self.display_ns_per_byte * out_per_in;
        }
        if download {
            ns += self.download_ns_per_byte * out_per_in;
        }
        ns
    }

    /// Every rate times `factor`.
    fn times(self, factor: f64) -> Self {
        Self {
            upload_ns_per_byte: self.upload_ns_per_byte * factor,
            kernel_ns_per_byte: self.kernel_ns_per_byte * factor,
            display_ns_per_byte: self.display_ns_per_byte * factor,
            download_ns_per_byte: self.download_ns_per_byte * factor,
        }
    }
}

/// The plain kernel's integer operations per pixel, as the compute ceiling counts them: three
/// bytes unpacked (6), the weighted sum (3 multiplies, 3 adds, a shift), the work's branch and
/// the gray's packing (4), and its share of its word's index, bounds check, loads and store
/// (about 4). Where a GPU computes slower than it moves bytes (a software rasteriser's cores),
/// this bounds the plain kernel's cost, not the device copy.
pub const PLAIN_OPS_PER_PIXEL: f64 = 24.0;

/// What a device's measured ceilings say each step costs at best: where its budget starts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CeilingRates {
    /// Each step at its ceiling.
    pub rates: GpuRates,
    /// GPU nanoseconds per input byte and round of the synthetic work at the compute ceiling
    /// (`None`: not measured).
    pub ns_per_byte_round: Option<f64>,
}

impl CeilingRates {
    /// The steps at a device's ceilings, each in ns per byte: the upload and download at their
    /// GPU copies' (`upload`, `download`); the display copy at two bytes of device copy per
    /// byte (one read, one written: `device_copy` counts both); the plain kernel at the slower of
    /// that and `PLAIN_OPS_PER_PIXEL` at the compute ceiling `ops_per_s`; the work's rounds at
    /// [`OPS_PER_ROUND`] operations per pixel and round over the fewest input bytes a pixel has
    /// (RGB8's 3, the most rounds per byte).
    #[must_use]
    pub fn new(upload: f64, device_copy: f64, download: f64, ops_per_s: Option<f64>) -> Self {
        let bytes_per_pixel = Kernel::ALL.iter().map(|k| k.in_bytes_per_pixel()).min().unwrap_or(3) as f64;
        let ns_per_op = ops_per_s.filter(|o| *o > 0.0 && o.is_finite()).map(|o| 1e9 / o);
        let ns_per_byte_round = ns_per_op.map(|ns| ns * f64::from(OPS_PER_ROUND) / bytes_per_pixel);
        let plain_compute = ns_per_op.map_or(0.0, |ns| ns * PLAIN_OPS_PER_PIXEL / bytes_per_pixel);
        Self {
            rates: GpuRates {
                upload_ns_per_byte: upload,
                kernel_ns_per_byte: (2.0 * device_copy).max(plain_compute),
                display_ns_per_byte: 2.0 * device_copy,
                download_ns_per_byte: download,
            },
            ns_per_byte_round,
        }
    }

    /// The same, the plain kernel at `ns_per_in_byte` where it was measured (the kernel itself,
    /// not the model: lavapipe's streams at a tenth of its copy command).
    #[must_use]
    pub fn with_measured_kernel(mut self, ns_per_in_byte: Option<f64>) -> Self {
        if let Some(ns) = ns_per_in_byte.filter(|ns| ns.is_finite() && *ns > 0.0) {
            self.rates.kernel_ns_per_byte = ns;
        }
        self
    }
}

/// What one submission measured.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Sample {
    /// Input bytes of the chunk.
    pub in_bytes: u64,
    /// Output bytes of the chunk.
    pub out_bytes: u64,
    /// Upload copy time, if the chunk was uploaded (not when its input was already resident).
    pub upload_ns: Option<u64>,
    /// Kernel time.
    pub kernel_ns: u64,
    /// Display time, if the chunk was drawn.
    pub display_ns: Option<u64>,
    /// Download copy time, if the chunk was downloaded.
    pub download_ns: Option<u64>,
    /// The times are the CPU clock around a submit-and-wait: upper bounds of the GPU's time.
    pub upper_bounds: bool,
}

#[cfg(test)]
impl Sample {
    /// A timestamped chunk of `in_bytes` in and a third of that out, whose kernel alone took
    /// `kernel_ns`.
    pub(crate) fn kernel_only(in_bytes: u64, kernel_ns: u64) -> Self {
        Self { in_bytes, out_bytes: in_bytes / 3, kernel_ns, ..Self::default() }
    }
}

/// `rounds` rounds of uniform, unmasked work: the tests' work levels.
#[cfg(test)]
pub(crate) fn rounds(rounds: u32) -> Work {
    Work { rounds, ..Work::NONE }
}

/// The learnt kernel cost of one work level.
#[derive(Clone, Copy, Debug, PartialEq)]
struct LevelCost {
    rounds: u32,
    divergent: bool,
    kernel_ns_per_byte: f64,
}

/// What one device has learnt.
struct Learnt {
    rates: GpuRates,
    levels: Vec<LevelCost>,
    /// A level's cost per round before any level was learnt.
    ns_per_byte_round: f64,
    /// Whether a reading was learnt: from then on, ceilings no longer move the rates.
    read: bool,
}

impl Learnt {
    /// The learnt level of `work`, if it was run.
    fn level(&self, work: Work) -> Option<usize> {
        self.levels.iter().position(|l| l.rounds == work.rounds && l.divergent == work.divergent)
    }

    /// The kernel's cost per input byte at `work`: learnt, or predicted (see the module doc).
    fn kernel_ns_per_byte(&self, work: Work) -> f64 {
        if work.rounds == 0 {
            return self.rates.kernel_ns_per_byte;
        }
        match self.level(work) {
            Some(i) => self.levels[i].kernel_ns_per_byte,
            None => self.predicted(work.rounds),
        }
    }

    /// `base + per_round * rounds` from the levels learnt so far.
    fn predicted(&self, rounds: u32) -> f64 {
        let per_round = self
            .levels
            .iter()
            .map(|l| l.kernel_ns_per_byte / f64::from(l.rounds.max(1)) * if l.divergent { 2.0 } else { 1.0 })
            .reduce(f64::max)
            .unwrap_or(self.ns_per_byte_round);
        self.rates.kernel_ns_per_byte + per_round * f64::from(rounds)
    }

    /// The estimate of `work`'s kernel cost to update: a new level starts from its prediction.
    fn kernel_estimate(&mut self, work: Work) -> &mut f64 {
        if work.rounds == 0 {
            return &mut self.rates.kernel_ns_per_byte;
        }
        let i = if let Some(i) = self.level(work) {
            i
        } else {
            let kernel_ns_per_byte = self.predicted(work.rounds);
            if self.levels.len() >= LEVELS {
                self.levels.remove(0);
            }
            self.levels.push(LevelCost {
                rounds: work.rounds,
                divergent: work.divergent,
                kernel_ns_per_byte,
            });
            self.levels.len() - 1
        };
        &mut self.levels[i].kernel_ns_per_byte
    }
}

/// The learnt rates of one device.
pub(crate) struct LearntRates {
    learnt: Mutex<Learnt>,
}

impl LearntRates {
    /// Starts from [`GpuRates::CONSERVATIVE`] and no work level learnt.
    pub(crate) fn new() -> Self {
        Self {
            learnt: Mutex::new(Learnt {
                rates: GpuRates::CONSERVATIVE,
                levels: Vec::new(),
                ns_per_byte_round: CONSERVATIVE_NS_PER_BYTE_ROUND,
                read: false,
            }),
        }
    }

    /// Starts from what the device's ceilings say, [`START_MARGIN`] times their time: the rates
    /// unless a reading came first (what a run measured is closer to what the next one does),
    /// and the cost per round of a level not learnt yet.
    pub(crate) fn start_from(&self, ceilings: &CeilingRates) {
        let mut learnt = self.learnt.lock().unwrap_or_else(PoisonError::into_inner);
        let usable = |ns: f64| ns.is_finite() && ns > 0.0;
        let r = ceilings.rates;
        if !learnt.read
            && [r.upload_ns_per_byte, r.kernel_ns_per_byte, r.display_ns_per_byte, r.download_ns_per_byte]
                .into_iter()
                .all(usable)
        {
            learnt.rates = r.times(START_MARGIN);
        }
        if let Some(ns) = ceilings.ns_per_byte_round.filter(|ns| usable(*ns)) {
            learnt.ns_per_byte_round = ns * START_MARGIN;
        }
    }

    /// The rates learnt so far, the kernel's for the plain grayscale.
    pub(crate) fn rates(&self) -> GpuRates {
        self.rates_for(Work::NONE)
    }

    /// The rates learnt so far, the kernel's for `work` (learnt, or predicted).
    pub(crate) fn rates_for(&self, work: Work) -> GpuRates {
        let learnt = self.learnt.lock().unwrap_or_else(PoisonError::into_inner);
        GpuRates { kernel_ns_per_byte: learnt.kernel_ns_per_byte(work), ..learnt.rates }
    }

    /// Input bytes one submission may carry for these steps at `work`, rounded down to a power
    /// of two so that small changes in the learnt rates do not resize the staging buffers every
    /// run.
    pub(crate) fn chunk_in_bytes(&self, kernel: Kernel, work: Work, display: bool, download: bool) -> u64 {
        let ns = self.rates_for(work).ns_per_input_byte(kernel, display, download).max(1e-6);
        let bytes = ((SUBMISSION_BUDGET_NS as f64 / ns) as u64).max(1);
        1 << bytes.ilog2()
    }

    /// Input bytes of one chunk and of one slice of a run at `work` (see
    /// [`crate::gpu::plan::run_plan::RunPlan`]): the chunk as the plain grayscale's at any work,
    /// so that a heavy kernel cuts its slices and not its copies (each copy has a fixed cost),
    /// and the slice within the budget at `work`.
    pub(crate) fn chunk_and_slice_bytes(
        &self,
        kernel: Kernel,
        work: Work,
        display: bool,
        download: bool,
    ) -> (u64, u64) {
        let chunk = self.chunk_in_bytes(kernel, Work::NONE, display, download);
        (chunk, self.chunk_in_bytes(kernel, work, display, download))
    }

    /// Learns from one submission of a run at `work`.
    pub(crate) fn learn(&self, work: Work, s: &Sample) {
        if s.in_bytes == 0 || s.out_bytes == 0 {
            return;
        }
        let mut learnt = self.learnt.lock().unwrap_or_else(PoisonError::into_inner);
        learnt.read = true;
        let per = |ns: u64, bytes: u64| ns as f64 / bytes as f64;
        let update = |estimate: &mut f64, observed: f64| update(estimate, observed, s.upper_bounds);
        update(learnt.kernel_estimate(work), per(s.kernel_ns, s.in_bytes));
        let rates = &mut learnt.rates;
        if let Some(ns) = s.upload_ns {
            update(&mut rates.upload_ns_per_byte, per(ns, s.in_bytes));
        }
        if let Some(ns) = s.display_ns {
            update(&mut rates.display_ns_per_byte, per(ns, s.out_bytes));
        }
        if let Some(ns) = s.download_ns {
            update(&mut rates.download_ns_per_byte, per(ns, s.out_bytes));
        }
    }
}

/// A faster reading is believed up to [`GROWTH`] times faster than the estimate; a slower one
/// replaces it, unless it is only an upper bound, which says nothing about a slower GPU.
fn update(estimate: &mut f64, observed: f64, upper_bound: bool) {
    if !observed.is_finite() || observed < 0.0 {
        return;
    }
    if observed <= *estimate {
        *estimate = observed.max(*estimate / GROWTH);
    } else if !upper_bound {
        *estimate = observed;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slower_readings_count_at_once_faster_ones_grow_geometrically() {
        let budget = LearntRates::new();
        let start = budget.chunk_in_bytes(Kernel::Rgb8ToL8, Work::NONE, false, true);
        // 3.5 + 0.5 / 3 ns per input byte: about 2.2 MB per 8 ms submission, rounded down.
        assert_eq!(start, 2 << 20);
        let fast = Sample {
            upload_ns: Some(30_000),
            download_ns: Some(10_000),
            ..Sample::kernel_only(3_000_000, 30_000)
        };
        // 0.01 ns per byte, 300 times faster than believed: believed 4 times faster at once.
        budget.learn(Work::NONE, &fast);
        let r = budget.rates();
        assert!((r.kernel_ns_per_byte - 3.0 / GROWTH).abs() < 1e-12, "{r:?}");
        assert!((r.upload_ns_per_byte - 0.5 / GROWTH).abs() < 1e-12, "{r:?}");
        assert_eq!(budget.chunk_in_bytes(Kernel::Rgb8ToL8, Work::NONE, false, true), 8 << 20);
        // Four readings later the estimates are the readings: 0.01 + 0.01 + 0.01 / 3 ns per
        // byte, 343 MB per submission, rounded down.
        for _ in 0..4 {
            budget.learn(Work::NONE, &fast);
        }
        assert!((budget.rates().kernel_ns_per_byte - 0.01).abs() < 1e-12);
        assert_eq!(budget.chunk_in_bytes(Kernel::Rgb8ToL8, Work::NONE, false, true), 256 << 20);
        let slow = Sample { kernel_ns: 30_000_000, ..fast };
        budget.learn(Work::NONE, &slow);
        assert!((budget.rates().kernel_ns_per_byte - 10.0).abs() < 1e-9);
        assert_eq!(budget.chunk_in_bytes(Kernel::Rgb8ToL8, Work::NONE, false, true), 512 << 10);
        // A display step is only planned (and learnt) when a run draws.
        assert!(
            (budget.rates().display_ns_per_byte - GpuRates::CONSERVATIVE.display_ns_per_byte).abs() < 1e-12
        );
    }

    #[test]
    fn cpu_clock_readings_only_lower_the_estimate() {
        let budget = LearntRates::new();
        // A submit-and-wait that waited behind a frame: 30 ms for 3 MB. Only an upper bound.
        let waited = Sample {
            upload_ns: Some(30_000_000),
            display_ns: Some(30_000_000),
            upper_bounds: true,
            ..Sample::kernel_only(3_000_000, 30_000_000)
        };
        for _ in 0..20 {
            budget.learn(Work::NONE, &waited);
        }
        assert_eq!(budget.rates(), GpuRates::CONSERVATIVE, "slow upper bounds change nothing");
        // 0.5 + 3 + 6 / 3 ns per input byte: about 1.45 MB per 8 ms submission, rounded down.
        assert_eq!(budget.chunk_in_bytes(Kernel::Rgb8ToL8, Work::NONE, true, false), 1 << 20);
        // A fast one still proves the GPU faster than estimated.
        let quick = Sample { kernel_ns: 300_000, ..waited };
        budget.learn(Work::NONE, &quick);
        let r = budget.rates();
        assert!((r.kernel_ns_per_byte - 3.0 / GROWTH).abs() < 1e-12, "{r:?}");
        assert!((r.upload_ns_per_byte - GpuRates::CONSERVATIVE.upload_ns_per_byte).abs() < 1e-12);
    }

    #[test]
    fn each_work_level_keeps_its_own_kernel_cost() {
        let budget = LearntRates::new();
        // The plain grayscale at 0.01 ns per input byte, learnt over a few chunks.
        for _ in 0..10 {
            budget.learn(Work::NONE, &Sample::kernel_only(3_000_000, 30_000));
        }
        let plain = budget.rates().kernel_ns_per_byte;
        assert!((plain - 0.01).abs() < 1e-12, "{plain}");
        // A first run at 4096 rounds is not sized from the plain grayscale's speed: without a
        // compute ceiling and before any level is learnt, 1 ns per byte and round.
        let heavy = rounds(4096);
        let predicted = budget.rates_for(heavy).kernel_ns_per_byte;
        assert!((predicted - (plain + 4096.0)).abs() < 1e-9, "{predicted}");
        // It measures 30 ms for 3 MB (10 ns per byte), faster than predicted: the estimate
        // becomes a quarter of the prediction, then the reading.
        budget.learn(heavy, &Sample::kernel_only(3_000_000, 30_000_000));
        let learnt = budget.rates_for(heavy).kernel_ns_per_byte;
        assert!((learnt - (plain + 4096.0) / GROWTH).abs() < 1e-9, "{learnt}");
        for _ in 0..4 {
            budget.learn(heavy, &Sample::kernel_only(3_000_000, 30_000_000));
        }
        let learnt = budget.rates_for(heavy).kernel_ns_per_byte;
        assert!((learnt - 10.0).abs() < 1e-12, "{learnt}");
        // 8 ms at 10 ns per byte (+ 0.5 upload): about 762 KB, rounded down to 512 KiB.
        assert_eq!(budget.chunk_in_bytes(Kernel::Rgb8ToL8, heavy, false, false), 512 << 10);
        // The heavy run left the plain grayscale's cost alone: its chunks stay large.
        assert!((budget.rates().kernel_ns_per_byte - plain).abs() < 1e-12);
        assert_eq!(budget.chunk_in_bytes(Kernel::Rgb8ToL8, Work::NONE, false, false), 8 << 20);
        // A level not run yet is predicted from the learnt one's cost per round: 1024 rounds at
        // 10 / 4096 ns per byte and round, plus the plain grayscale.
        let predicted = budget.rates_for(rounds(1024)).kernel_ns_per_byte;
        assert!((predicted - (plain + 10.0 / 4.0)).abs() < 1e-9, "{predicted}");
        // A slower reading at one level is believed at once, and only there.
        budget.learn(rounds(16), &Sample::kernel_only(3_000_000, 3_000_000));
        assert!((budget.rates_for(rounds(16)).kernel_ns_per_byte - 1.0).abs() < 1e-9);
        assert!((budget.rates_for(heavy).kernel_ns_per_byte - learnt).abs() < 1e-12);
        // The divergent variant is a level of its own, predicted from the dearest cost per round
        // learnt so far (16 rounds at 1 ns per byte: 1/16 per round).
        let divergent = Work { rounds: 4096, mask: 0, divergent: true };
        let predicted = budget.rates_for(divergent).kernel_ns_per_byte;
        assert!((predicted - (plain + 4096.0 / 16.0)).abs() < 1e-9, "{predicted}");
    }

    #[test]
    fn cpu_clock_readings_of_a_new_level_only_lower_its_prediction() {
        let budget = LearntRates::new();
        let heavy = rounds(256);
        let waited = Sample { upper_bounds: true, ..Sample::kernel_only(3_000_000, 3_000_000_000) };
        budget.learn(heavy, &waited);
        let predicted = GpuRates::CONSERVATIVE.kernel_ns_per_byte + 256.0 * CONSERVATIVE_NS_PER_BYTE_ROUND;
        assert!((budget.rates_for(heavy).kernel_ns_per_byte - predicted).abs() < 1e-9);
        // Only the most recent levels are kept.
        for r in 1..=(LEVELS as u32 + 4) {
            budget.learn(rounds(r), &Sample::kernel_only(3_000_000, 3_000_000));
        }
        assert_eq!(budget.learnt.lock().map_or(0, |l| l.levels.len()), LEVELS);
    }
}
