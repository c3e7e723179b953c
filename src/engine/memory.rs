//! What `bench` and `sweep` will hold in memory, so the CLI can check a size against the
//! process-wide budget ([`crate::system::memory_budget`]) before anything is allocated.

/// Bytes of a synthetic RGB8 image of `width` x `height` and of its gray (L8) result.
#[must_use]
pub fn synthetic_bytes(width: u32, height: u32) -> (u64, u64) {
    let pixels = u64::from(width) * u64::from(height);
    (pixels.saturating_mul(3), pixels)
}

/// Bytes `bench` holds besides an already decoded input: the input when it is synthetic, the
/// reused output buffer, and with the GPU a host-visible copy of both (staging and, on a
/// software adapter, the device buffers too).
#[must_use]
pub fn bench_bytes(in_bytes: u64, out_bytes: u64, synthetic_input: bool, gpu: bool) -> u64 {
    let host = if synthetic_input { in_bytes } else { 0 }.saturating_add(out_bytes);
    let device = if gpu { in_bytes.saturating_add(out_bytes).saturating_mul(2) } else { 0 };
    host.saturating_add(device)
}

/// Bytes a sweep holds at its largest size of `pixels` (RGB8 in, L8 out): the image, `bench`'s
/// buffers and, with the GPU, the resident timing's input and output on the device. With
/// `source_pixels`, resizing that photo takes a float intermediate of up to 16 bytes a pixel.
#[must_use]
pub fn sweep_bytes(pixels: u64, source_pixels: Option<u64>, gpu: bool) -> u64 {
    let (in_bytes, out_bytes) = (pixels.saturating_mul(3), pixels);
    let mut total = bench_bytes(in_bytes, out_bytes, true, gpu);
    if gpu {
        total = total.saturating_add(in_bytes).saturating_add(out_bytes);
    }
    if let Some(src) = source_pixels {
        total = total.saturating_add(src.max(pixels).saturating_mul(16)).saturating_add(in_bytes);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_never_overflow() {
        let (i, o) = synthetic_bytes(u32::MAX, u32::MAX);
        assert_eq!(o, u64::from(u32::MAX) * u64::from(u32::MAX));
        assert_eq!(i, u64::MAX);
        assert_eq!(bench_bytes(i, o, true, true), u64::MAX);
        assert_eq!(sweep_bytes(u64::MAX / 2, Some(u64::MAX), true), u64::MAX);
        // On the CPU: 3 bytes in, 1 out.
        assert_eq!(bench_bytes(300, 100, true, false), 400);
        assert_eq!(bench_bytes(300, 100, false, true), 100 + 800);
    }
}
