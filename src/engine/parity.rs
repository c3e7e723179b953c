//! Parity: the CPU and the GPU output for one image, compared sample by sample, beside the
//! differences between the formulas, so that "identical" is seen next to what a real difference
//! looks like.

use image::{DynamicImage, GrayImage};

use super::{Backend, ConvertSettings, Engine, EngineError, Formula, RunOptions};

/// How two outputs differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DiffStats {
    /// Pixels compared.
    pub pixels: u64,
    /// Pixels where any sample differs.
    pub differing: u64,
    /// The largest difference of one sample, in the output's levels.
    pub max_diff: u32,
    /// The highest level a sample of the compared outputs has: 255 at 8 bits, 65535 at 16.
    pub top_level: u32,
}

/// The parity of one image.
#[derive(Clone, Debug)]
pub struct ParityReport {
    /// CPU vs GPU with the same settings (`None` when the GPU could not run).
    pub cpu_vs_gpu: Option<DiffStats>,
    /// Why the GPU side is missing, if it is.
    pub gpu_error: Option<String>,
    /// Each pair of formulas on the CPU.
    pub formulas: Vec<(Formula, Formula, DiffStats)>,
    /// |CPU - GPU| of the gray sample, times [`DIFF_GAIN`], clamped: all black when they agree.
    pub difference: GrayImage,
}

/// How much the difference image amplifies each level of difference.
pub const DIFF_GAIN: u8 = 16;

/// Compares two gray outputs of the same size and type, sample by sample.
#[must_use]
pub fn diff(left: &DynamicImage, right: &DynamicImage) -> (DiffStats, GrayImage) {
    let (w, h) = (left.width(), left.height());
    let mut image = GrayImage::new(w, h);
    let channels = usize::from(left.color().channel_count()).max(1);
    let wide = left.color().bytes_per_pixel() as usize / channels == 2;
    let samples = |img: &DynamicImage| -> Vec<u32> {
        if wide {
            img.as_bytes().chunks_exact(2).map(|c| u32::from(u16::from_ne_bytes([c[0], c[1]]))).collect()
        } else {
            img.as_bytes().iter().map(|&v| u32::from(v)).collect()
        }
    };
    let (sa, sb) = (samples(left), samples(right));
    let same_shape =
        (w, h) == (right.width(), right.height()) && left.color() == right.color() && sa.len() == sb.len();
    let top_level = if wide { u32::from(u16::MAX) } else { u32::from(u8::MAX) };
    let mut stats = DiffStats { pixels: u64::from(w) * u64::from(h), differing: 0, max_diff: 0, top_level };
    if !same_shape {
        stats.differing = stats.pixels;
        stats.max_diff = u32::MAX;
        return (stats, image);
    }
    for ((pa, pb), out) in sa.chunks_exact(channels).zip(sb.chunks_exact(channels)).zip(image.pixels_mut()) {
        let d = pa.iter().zip(pb).map(|(x, y)| x.abs_diff(*y)).max().unwrap_or(0);
        if d > 0 {
            stats.differing += 1;
            stats.max_diff = stats.max_diff.max(d);
        }
        let gray = pa[0].abs_diff(pb[0]) >> if wide { 8 } else { 0 };
        out.0[0] = (gray.saturating_mul(u32::from(DIFF_GAIN))).min(255) as u8;
    }
    (stats, image)
}

impl Engine {
    /// Converts `image` on the CPU and on the GPU with `settings` and compares them, and compares
    /// every pair of formulas on the CPU, calling `progress(step, steps)` before each conversion;
    /// returning `false` cancels it.
    pub fn parity_with_progress(
        &self,
        image: &DynamicImage,
        settings: &ConvertSettings,
        progress: &mut dyn FnMut(usize, usize) -> bool,
    ) -> Result<ParityReport, EngineError> {
        // The CPU, the GPU, and the other formulas on the CPU.
        let steps = 1 + Formula::COMPUTED.len();
        let mut done = 0;
        let mut step = || {
            let go = progress(done, steps);
            done += 1;
            if go { Ok(()) } else { Err(EngineError::Cancelled) }
        };
        let on = |backend, formula| {
            self.convert(image, &ConvertSettings { backend, formula, ..*settings }, RunOptions::default())
        };
        step()?;
        let cpu = on(Backend::Cpu, settings.formula)?.image;
        step()?;
        let (cpu_vs_gpu, gpu_error, difference) = match on(Backend::Gpu, settings.formula) {
            Ok(gpu) => {
                let (stats, difference) = diff(&cpu, &gpu.image);
                (Some(stats), None, difference)
            }
            Err(e) => (None, Some(format!("{e:#}")), GrayImage::new(image.width(), image.height())),
        };
        let mut by_formula = Vec::new();
        for f in Formula::COMPUTED {
            let out = if f == settings.formula.computed() {
                cpu.clone()
            } else {
                step()?;
                on(Backend::Cpu, f)?.image
            };
            by_formula.push((f, out));
        }
        let mut formulas = Vec::new();
        for (i, (fa, a)) in by_formula.iter().enumerate() {
            for (fb, b) in &by_formula[i + 1..] {
                formulas.push((*fa, *fb, diff(a, b).0));
            }
        }
        Ok(ParityReport { cpu_vs_gpu, gpu_error, formulas, difference })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_counts_pixels_and_levels() {
        let a = DynamicImage::ImageLuma8(GrayImage::from_raw(3, 1, vec![10, 20, 30]).expect("size"));
        let b = DynamicImage::ImageLuma8(GrayImage::from_raw(3, 1, vec![10, 25, 29]).expect("size"));
        let (s, img) = diff(&a, &b);
        assert_eq!(s, DiffStats { pixels: 3, differing: 2, max_diff: 5, top_level: 255 });
        assert_eq!(img.as_raw(), &vec![0, 80, 16]);
        let (same, black) = diff(&a, &a);
        assert_eq!(same.differing, 0);
        assert!(black.as_raw().iter().all(|&v| v == 0));
    }

    #[test]
    fn diff_of_16_bit_outputs_counts_levels_of_65535() {
        let a =
            DynamicImage::ImageLuma16(image::ImageBuffer::from_raw(2, 1, vec![1000, 60000]).expect("size"));
        let b =
            DynamicImage::ImageLuma16(image::ImageBuffer::from_raw(2, 1, vec![1000, 53703]).expect("size"));
        let (s, img) = diff(&a, &b);
        assert_eq!(s, DiffStats { pixels: 2, differing: 1, max_diff: 6297, top_level: 65535 });
        // 6297 >> 8 = 24 levels of 8 bits, times the gain, clamped.
        assert_eq!(img.as_raw(), &vec![0, 255]);
    }
}
