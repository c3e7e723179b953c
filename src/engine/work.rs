//! The work level of a run ([`WorkFigures`]): the synthetic rounds per pixel it asked for, the
//! integer operations per byte the kernel moved, and the operations per second it achieved,
//! beside the bandwidth figures, held against the backend's compute ceiling when it is known.

use super::{Backend, Kernel, Op, Work};
use crate::gpu::{DitherWavefront, OpTimings};
use crate::system::clock::Clock;

/// What a run's synthetic work per pixel was, and what the kernel achieved with it.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct WorkFigures {
    /// Hash rounds per pixel (0: the plain grayscale).
    pub work_rounds: u32,
    /// Whether only odd gray values ran the rounds.
    pub divergent: bool,
    /// The mask the hash was `AND`ed with before it was `XOR`ed into the gray (0: the image is
    /// the exact grayscale although the rounds ran).
    pub work_mask: u32,
    /// Integer operations asked of each pixel: 3 per round (the divergent variant is counted the
    /// same: the work asked for, which only odd gray values do).
    pub ops_per_pixel: u64,
    /// The kernel's operations per byte, the roofline's x: `ops_per_pixel` plus the gray
    /// formula's ([`crate::pixel::FORMULA_OPS_PER_PIXEL`]), over the bytes the kernel
    /// reads and writes per pixel (RGB8 to L8: 4; 256 rounds: (768 + 7) / 4 = 193.75).
    pub ops_per_byte: f64,
    /// Operations per second over the kernel phase (all pixels' `ops_per_pixel` over the kernel
    /// time); `None` without a kernel phase or without work.
    pub kernel_ops_per_s: Option<f64>,
    /// The compute ceiling of the run's backend, operations per second (see
    /// [`crate::engine::ceilings::ComputeCeilings`]), when it was known: never measured for one run.
    pub compute_ceiling_ops_per_s: Option<f64>,
    /// `kernel_ops_per_s` over `compute_ceiling_ops_per_s` (1.0 = the ceiling).
    pub compute_share: Option<f64>,
    /// The ceiling before this run (or these runs) beat it and raised it to what they did, when
    /// they did: the best the machine did is its ceiling.
    pub compute_ceiling_raised_from_ops_per_s: Option<f64>,
    /// The backend whose ceiling it is, for the sentence.
    #[serde(skip)]
    pub compute_backend: Option<Backend>,
}

impl WorkFigures {
    /// The figures of `work` on a `pixels` px run of `kernel` (none for a gray input passed
    /// through), whose kernel phase took `kernel_ns`.
    #[must_use]
    pub fn new(work: Work, kernel: Option<Kernel>, pixels: u64, kernel_ns: Option<u64>) -> Self {
        let ops_per_pixel = work.ops_per_pixel();
        // The formula's operations counted too, as the roofline counts them: one intensity for
        // the run's ridge test and the sweep's roofline (4 rounds is 4.75 ops/byte on both).
        let ops_per_byte = kernel.map_or(0.0, |k| {
            (ops_per_pixel + crate::pixel::FORMULA_OPS_PER_PIXEL) as f64
                / (k.in_bytes_per_pixel() + k.out_bytes_per_pixel()) as f64
        });
        let kernel_ops_per_s = kernel
            .zip(kernel_ns)
            .filter(|&(_, ns)| ns > 0 && ops_per_pixel > 0)
            .map(|(_, ns)| ops_per_pixel as f64 * pixels as f64 / ns as f64 * 1e9);
        Self {
            work_rounds: work.rounds,
            divergent: work.divergent,
            work_mask: work.mask,
            ops_per_pixel,
            ops_per_byte,
            kernel_ops_per_s,
            ..Self::default()
        }
    }

    /// The same figures held against `backend`'s compute ceiling of `ceiling_ops_per_s` (none
    /// without a ceiling or without a kernel rate).
    #[must_use]
    pub fn held_against(mut self, backend: Backend, ceiling_ops_per_s: Option<f64>) -> Self {
        let ceiling = ceiling_ops_per_s.filter(|c| c.is_finite() && *c > 0.0);
        self.compute_share = self.kernel_ops_per_s.zip(ceiling).map(|(r, c)| r / c);
        self.compute_ceiling_ops_per_s = ceiling.filter(|_| self.compute_share.is_some());
        self.compute_backend = self.compute_share.map(|_| backend);
        self
    }

    /// The same figures held against the ceiling `now`, which was `before` the run: said as
    /// raised where it rose.
    #[must_use]
    pub fn held_against_raised(self, backend: Backend, (before, now): (Option<f64>, Option<f64>)) -> Self {
        let mut held = self.held_against(backend, now);
        held.compute_ceiling_raised_from_ops_per_s =
            before.filter(|b| now.is_some_and(|n| n > *b) && held.compute_share.is_some());
        held
    }

    /// The work these figures describe.
    #[must_use]
    pub fn work(&self) -> Work {
        Work { rounds: self.work_rounds, mask: self.work_mask, divergent: self.divergent }
    }

    /// One line for text reports, e.g. `work 256 rounds/px (synthetic), 768 ops/px, 193.75
    /// ops/byte with the formula's, 12.30 Gop/s in the kernel, 75% of this machine's CPU compute ceiling (16.40
    /// Gop/s)`.
    #[must_use]
    pub fn sentence(&self) -> String {
        let variant = if self.divergent { ", divergent: odd grays only" } else { "" };
        let share = match (self.compute_share, self.compute_ceiling_ops_per_s, self.compute_backend) {
            (Some(share), Some(ceiling), Some(backend)) => format!(
                ", {} of this machine's {} compute ceiling ({:.2} Gop/s{})",
                crate::system::units::share_label(share * 100.0),
                backend.name().to_uppercase(),
                ceiling / 1e9,
                self.compute_ceiling_raised_from_ops_per_s.map_or_else(String::new, |from| format!(
                    ", raised now from {:.2}: a run beat it",
                    from / 1e9
                ))
            ),
            _ if self.kernel_ops_per_s.is_some() => {
                " (no compute ceiling measured: graylab info --probe)".to_owned()
            }
            _ => String::new(),
        };
        let rate = self
            .kernel_ops_per_s
            .map_or_else(String::new, |r| format!(", {:.2} Gop/s in the kernel{share}", r / 1e9));
        format!(
            "work {} rounds/px (synthetic{variant}), {} ops/px, {:.2} ops/byte with the formula's{rate}",
            self.work_rounds, self.ops_per_pixel, self.ops_per_byte
        )
    }
}

/// The op on the gray plane after the grayscale, and what its passes achieved.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct OpFigures {
    /// The op (`none`: none ran).
    pub op: Op,
    /// Its integer operations per pixel ([`Op::ops_per_pixel`]).
    pub ops_per_pixel: u64,
    /// The op's passes alone, ns: on the CPU the op itself; on the GPU its passes (GPU
    /// timestamps where the device has them).
    pub kernel_ns: u64,
    /// The clock of `kernel_ns`.
    pub kernel_clock: Clock,
    /// GPU: the op stage's upload (the plane handed to the queue, CPU clock), ns.
    pub upload_ns: u64,
    /// GPU: the op stage's readback (waiting for it and copying out, CPU clock), ns.
    pub download_ns: u64,
    /// GPU: the op stage's row bands.
    pub bands: u32,
    /// GPU: one-time setup within the op phase, CPU clock, ns: its pipelines compiled and, for
    /// a first dither, its wavefront chosen by timing both (hundreds of ms on lavapipe, once a
    /// process).
    #[serde(default)]
    pub setup_ns: u64,
    /// GPU: how the dither's wavefront ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wavefront: Option<DitherWavefront>,
    /// Operations per second over `kernel_ns`.
    pub op_ops_per_s: Option<f64>,
    /// The compute ceiling of the run's backend (the synthetic hash's), operations per second.
    pub op_compute_ceiling_ops_per_s: Option<f64>,
    /// `op_ops_per_s` over the compute ceiling (1.0 = the ceiling).
    pub op_compute_share: Option<f64>,
}

impl OpFigures {
    /// The figures of `op` over `pixels` px whose passes took `kernel_ns` on `kernel_clock`.
    #[must_use]
    pub fn new(op: Op, pixels: u64, (kernel_ns, kernel_clock): (u64, Clock)) -> Self {
        let ops_per_pixel = op.ops_per_pixel();
        let op_ops_per_s = (kernel_ns > 0 && ops_per_pixel > 0)
            .then(|| ops_per_pixel as f64 * pixels as f64 / kernel_ns as f64 * 1e9);
        Self { op, ops_per_pixel, kernel_ns, kernel_clock, op_ops_per_s, ..Self::default() }
    }

    /// The figures of a GPU op stage over `pixels` px.
    #[must_use]
    pub fn of_gpu(op: Op, pixels: u64, t: &OpTimings) -> Self {
        Self {
            upload_ns: t.upload.ns,
            download_ns: t.download.ns,
            bands: t.bands,
            wavefront: t.wavefront,
            setup_ns: t.setup_ns,
            ..Self::new(op, pixels, (t.kernel.ns, t.kernel.clock))
        }
    }

    /// The same figures held against a compute ceiling of `ceiling_ops_per_s`.
    #[must_use]
    pub fn held_against(mut self, ceiling_ops_per_s: Option<f64>) -> Self {
        let ceiling = ceiling_ops_per_s.filter(|c| c.is_finite() && *c > 0.0);
        self.op_compute_share = self.op_ops_per_s.zip(ceiling).map(|(r, c)| r / c);
        self.op_compute_ceiling_ops_per_s = ceiling.filter(|_| self.op_compute_share.is_some());
        self
    }

    /// One line for text reports, e.g. `op blur:8, 68 ops/px, 12.3 ms of passes (cpu-clock),
    /// 3.1 Gop/s, 20% of the compute ceiling`; `None` when no op ran.
    #[must_use]
    pub fn sentence(&self) -> Option<String> {
        if self.op.is_none() {
            return None;
        }
        // Below 1 Gop/s in Mop/s: a 3x5 image's dither is no "0.00 Gop/s".
        let rate = self
            .op_ops_per_s
            .map_or_else(String::new, |r| format!(", {}", crate::system::units::ops_per_s(r)));
        let share = self.op_compute_share.map_or_else(String::new, |s| {
            format!(", {} of the compute ceiling", crate::system::units::share_label(s * 100.0))
        });
        // A first run's setup is most of its op phase: said, not hidden in it.
        let setup = if self.setup_ns >= 1_000_000 {
            format!(
                "; the op phase holds {:.1} ms of one-time setup (cpu-clock: pipelines{})",
                self.setup_ns as f64 / 1e6,
                if self.op == Op::Dither { ", the wavefront chosen" } else { "" }
            )
        } else {
            String::new()
        };
        Some(format!(
            "op {}, {} ops/px, {:.2} ms of passes ({}){rate}{share}{setup}",
            self.op,
            self.ops_per_pixel,
            self.kernel_ns as f64 / 1e6,
            self.kernel_clock
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rgb8_moves_four_bytes_per_pixel() {
        let work = Work { rounds: 256, mask: 0, divergent: false };
        let f = WorkFigures::new(work, Some(Kernel::Rgb8ToL8), 1_000_000, Some(1_000_000_000));
        assert_eq!(f.ops_per_pixel, 768);
        assert!((f.ops_per_byte - 193.75).abs() < 1e-9, "(768 + 7) / 4");
        assert_eq!(f.kernel_ops_per_s.map(f64::round), Some(768e6));
        assert_eq!(f.work(), work);
        // RGBA16 to LA16: 8 + 4 bytes per pixel.
        let f = WorkFigures::new(Work { rounds: 4, ..work }, Some(Kernel::Rgba16ToLa16), 10, None);
        assert!((f.ops_per_byte - 19.0 / 12.0).abs() < 1e-9, "(12 + 7) / 12");
        assert_eq!(f.kernel_ops_per_s, None);
        // No kernel (gray passed through), no work: no rate.
        assert!(WorkFigures::new(work, None, 10, Some(5)).ops_per_byte.abs() < f64::EPSILON);
        assert_eq!(WorkFigures::new(Work::NONE, Some(Kernel::Rgb8ToL8), 10, Some(5)).kernel_ops_per_s, None);
    }

    #[test]
    fn an_op_counts_its_operations_and_rate() {
        let f = OpFigures::new(Op::Blur { radius: 8 }, 1_000_000, (68_000_000, Clock::CpuClock));
        assert_eq!(f.ops_per_pixel, 68);
        assert_eq!(f.op_ops_per_s.map(f64::round), Some(1e9));
        let held = f.held_against(Some(4e9));
        assert_eq!(held.op_compute_share, Some(0.25));
        assert_eq!(
            held.sentence().as_deref(),
            Some(
                "op blur:8, 68 ops/px, 68.00 ms of passes (cpu-clock), 1.0 Gop/s, 25% of the compute ceiling"
            )
        );
        assert_eq!(OpFigures::default().sentence(), None);
        let json = serde_json::to_value(held).expect("json");
        assert_eq!(json["op"], "blur:8");
    }

    #[test]
    fn the_kernel_rate_is_held_against_the_compute_ceiling() {
        let work = Work { rounds: 256, mask: 0, divergent: false };
        // 768 ops/px x 1e6 px in 0.0625 s: 12.288 Gop/s, against 16.384: 75%.
        let f = WorkFigures::new(work, Some(Kernel::Rgb8ToL8), 1_000_000, Some(62_500_000));
        let held = f.held_against(Backend::Cpu, Some(16.384e9));
        assert_eq!(held.compute_share.map(|s| (s * 1e6).round() / 1e6), Some(0.75));
        assert_eq!(held.compute_ceiling_ops_per_s, Some(16.384e9));
        assert!(
            held.sentence().ends_with(
                "12.29 Gop/s in the kernel, 75% of this machine's CPU compute ceiling (16.38 Gop/s)"
            ),
            "{}",
            held.sentence()
        );
        let json = serde_json::to_value(held).expect("json");
        assert_eq!(json["compute_share"].as_f64().map(|s| (s * 1e6).round() / 1e6), Some(0.75));
        assert!(json.get("compute_backend").is_none());
        // Unknown ceiling, or no kernel rate: no share.
        let bare = f.held_against(Backend::Gpu, None);
        assert_eq!((bare.compute_share, bare.compute_ceiling_ops_per_s), (None, None));
        assert!(bare.sentence().ends_with("(no compute ceiling measured: graylab info --probe)"));
        let none = WorkFigures::new(Work::NONE, Some(Kernel::Rgb8ToL8), 10, Some(5));
        assert_eq!(none.held_against(Backend::Cpu, Some(1e9)).compute_share, None);
    }
}
