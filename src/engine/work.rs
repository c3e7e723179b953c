//! The work level of a run ([`WorkFigures`]): the synthetic rounds per pixel it asked for, the
//! integer operations per byte the kernel moved, and the operations per second it achieved,
//! beside the bandwidth figures.

use super::{Kernel, Work};

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
    /// `ops_per_pixel` over the bytes the kernel reads and writes per pixel (RGB8 to L8: 4).
    pub ops_per_byte: f64,
    /// Operations per second over the kernel phase (all pixels' `ops_per_pixel` over the kernel
    /// time); `None` without a kernel phase or without work.
    pub kernel_ops_per_s: Option<f64>,
}

impl WorkFigures {
    /// The figures of `work` on a `pixels` px run of `kernel` (none for a gray input passed
    /// through), whose kernel phase took `kernel_ns`.
    #[must_use]
    pub fn new(work: Work, kernel: Option<Kernel>, pixels: u64, kernel_ns: Option<u64>) -> Self {
        let ops_per_pixel = work.ops_per_pixel();
        let ops_per_byte = kernel.map_or(0.0, |k| {
            ops_per_pixel as f64 / (k.in_bytes_per_pixel() + k.out_bytes_per_pixel()) as f64
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
        }
    }

    /// The work these figures describe.
    #[must_use]
    pub fn work(&self) -> Work {
        Work { rounds: self.work_rounds, mask: self.work_mask, divergent: self.divergent }
    }

    /// One line for text reports, e.g. `work 256 rounds/px (synthetic), 192.00 ops/byte, 12.3
    /// Gop/s in the kernel`.
    #[must_use]
    pub fn sentence(&self) -> String {
        let variant = if self.divergent { ", divergent: odd grays only" } else { "" };
        let rate = self
            .kernel_ops_per_s
            .map_or_else(String::new, |r| format!(", {:.2} Gop/s in the kernel", r / 1e9));
        format!(
            "work {} rounds/px (synthetic{variant}), {} ops/px, {:.2} ops/byte{rate}",
            self.work_rounds, self.ops_per_pixel, self.ops_per_byte
        )
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
        assert!((f.ops_per_byte - 192.0).abs() < 1e-9);
        assert_eq!(f.kernel_ops_per_s.map(f64::round), Some(768e6));
        assert_eq!(f.work(), work);
        // RGBA16 to LA16: 8 + 4 bytes per pixel.
        let f = WorkFigures::new(Work { rounds: 4, ..work }, Some(Kernel::Rgba16ToLa16), 10, None);
        assert!((f.ops_per_byte - 1.0).abs() < 1e-9);
        assert_eq!(f.kernel_ops_per_s, None);
        // No kernel (gray passed through), no work: no rate.
        assert!(WorkFigures::new(work, None, 10, Some(5)).ops_per_byte.abs() < f64::EPSILON);
        assert_eq!(WorkFigures::new(Work::NONE, Some(Kernel::Rgb8ToL8), 10, Some(5)).kernel_ops_per_s, None);
    }
}
