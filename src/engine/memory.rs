//! What the front ends reserve from the process-wide budget
//! ([`crate::system::memory_budget`]) before anything is allocated: `bench`'s and `sweep`'s
//! buffers, and a decode's working copies for the GPU. A GPU run counts what it allocates in
//! host memory by one rule, [`GpuHostMemory`]: its staging, and on a software or integrated GPU
//! its device buffers too, one band of each.

use crate::gpu::GpuHostMemory;
use crate::io::DecodeOptions;
use crate::pixel::Op;
use crate::system::memory_budget::OpCopies;

/// Bytes of a synthetic RGB8 image of `width` x `height` and of its gray (L8) result.
#[must_use]
pub fn synthetic_bytes(width: u32, height: u32) -> (u64, u64) {
    let pixels = u64::from(width) * u64::from(height);
    (pixels.saturating_mul(3), pixels)
}

/// `options` with the working copies a GPU conversion holds in host memory reserved with the
/// decode (`gpu`: the adapter's rule), or none without GPU work. The CLI's `convert` and the
/// app's loads both decode with it.
#[must_use]
pub fn gpu_decode_options(options: DecodeOptions, gpu: Option<GpuHostMemory>) -> DecodeOptions {
    DecodeOptions {
        working_copies: gpu.map_or(0, GpuHostMemory::copies),
        working_copy_bytes: gpu.map(|g| g.band_limit_bytes),
        ..options
    }
}

/// What `op` after the grayscale holds besides the image and its gray plane: on the CPU its
/// output plane, on the GPU (`gpu`: its adapter's rule) that and its bands' buffers
/// ([`GpuHostMemory::op_copies`]). The CLI's `convert` reserves it with the decode, the app
/// before each run with an op.
#[must_use]
pub fn op_copies(op: Op, gpu: Option<GpuHostMemory>) -> OpCopies {
    match gpu {
        Some(g) => g.op_copies(op),
        None if op.is_none() => OpCopies::default(),
        None => OpCopies { whole: 1, ..OpCopies::default() },
    }
}

/// Bytes `bench` holds besides an already decoded input: the input when it is synthetic, the
/// reused output buffer, and with the GPU (`gpu`: its adapter's rule) what a run holds in host
/// memory.
#[must_use]
pub fn bench_bytes(in_bytes: u64, out_bytes: u64, synthetic_input: bool, gpu: Option<GpuHostMemory>) -> u64 {
    let host = if synthetic_input { in_bytes } else { 0 }.saturating_add(out_bytes);
    host.saturating_add(gpu.map_or(0, |g| g.run_bytes(in_bytes, out_bytes)))
}

/// Bytes a sweep holds at its largest size of `pixels` (RGB8 in, L8 out): the image, `bench`'s
/// buffers and, with the GPU, the resident timing's: one band's input copied on the host, the
/// whole input staged by the queue's writes (held until the first submit), and on a software or
/// integrated GPU its whole input and output.
/// With `source_pixels`, resizing that photo takes a float intermediate of up to 16 bytes a pixel.
#[must_use]
pub fn sweep_bytes(pixels: u64, source_pixels: Option<u64>, gpu: Option<GpuHostMemory>) -> u64 {
    let (in_bytes, out_bytes) = (pixels.saturating_mul(3), pixels);
    let mut total = bench_bytes(in_bytes, out_bytes, true, gpu);
    if let Some(g) = gpu {
        let band_in = in_bytes.min(g.band_limit_bytes);
        let device = if g.device_on_host { in_bytes.saturating_add(out_bytes) } else { 0 };
        total = total.saturating_add(band_in).saturating_add(in_bytes).saturating_add(device);
    }
    if let Some(src) = source_pixels {
        total = total.saturating_add(src.max(pixels).saturating_mul(16)).saturating_add(in_bytes);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    /// lavapipe's binding and a discrete GPU's (an H200's, just under 4 GiB).
    fn software() -> GpuHostMemory {
        GpuHostMemory::new(wgpu::DeviceType::Cpu, 128 << 20)
    }

    fn discrete() -> GpuHostMemory {
        GpuHostMemory::new(wgpu::DeviceType::DiscreteGpu, (1 << 32) - 256)
    }

    #[test]
    fn sizes_never_overflow() {
        let (i, o) = synthetic_bytes(u32::MAX, u32::MAX);
        assert_eq!(o, u64::from(u32::MAX) * u64::from(u32::MAX));
        assert_eq!(i, u64::MAX);
        assert_eq!(bench_bytes(i, o, true, Some(software())), u64::MAX);
        assert_eq!(sweep_bytes(u64::MAX / 2, Some(u64::MAX), Some(software())), u64::MAX);
        // On the CPU: 3 bytes in, 1 out.
        assert_eq!(bench_bytes(300, 100, true, None), 400);
    }

    #[test]
    fn bench_counts_one_band_staged_and_on_a_software_gpu_its_buffers() {
        // 12000x10000: 360 MB in, 120 MB out; a band of 128 MiB and its 44,739,243 bytes of gray.
        let (i, o) = synthetic_bytes(12_000, 10_000);
        let band = (128 << 20) + 44_739_243;
        assert_eq!(bench_bytes(i, o, true, Some(software())), i + o + 2 * band);
        // A discrete GPU's band holds the whole image: its staging, once.
        assert_eq!(bench_bytes(i, o, true, Some(discrete())), 2 * (i + o));
        // Within 1.1 GiB (the budget the CLI's convert fitted in) on lavapipe; not with the
        // whole copies counted before (2 x (in + out) more).
        assert!(bench_bytes(i, o, true, Some(software())) <= 1_181_116_006);
        assert!(i + o + 2 * (i + o) > 1_181_116_006);
        // The sweep's resident timing: a band copied, the whole input staged, and on lavapipe
        // its buffers.
        let sweep = sweep_bytes(120_000_000, None, Some(software()));
        assert_eq!(sweep, i + o + 2 * band + (128 << 20) + i + i + o);
        assert_eq!(sweep_bytes(120_000_000, None, Some(discrete())), 2 * (i + o) + 2 * i);
    }

    #[test]
    fn an_op_on_the_cpu_holds_its_output_and_on_the_gpu_its_bands_too() {
        let gray = 33_177_600;
        assert_eq!(op_copies(Op::Dither, None).bytes(gray), gray);
        assert_eq!(op_copies(Op::None, None).bytes(gray), 0);
        assert_eq!(op_copies(Op::Blur { radius: 3 }, Some(discrete())).bytes(gray), 3 * gray);
        assert_eq!(op_copies(Op::Blur { radius: 3 }, Some(software())).bytes(gray), 9 * gray);
    }

    #[test]
    fn a_gpu_decode_reserves_the_adapters_copies_of_a_band() {
        let cli = DecodeOptions { allow_truncated: false, ..DecodeOptions::default() };
        let on = |gpu| gpu_decode_options(cli, gpu);
        assert_eq!((on(Some(software())).working_copies, on(Some(discrete())).working_copies), (2, 1));
        assert_eq!(on(Some(software())).working_copy_bytes, Some(128 << 20));
        assert_eq!(on(None), DecodeOptions { working_copies: 0, working_copy_bytes: None, ..cli });
    }
}
