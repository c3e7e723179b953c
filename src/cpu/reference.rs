//! The scalar reference: one pixel at a time, straight from [`Formula::luma8`] /
//! [`Formula::luma16`]. Slow and obviously right; every other path is tested against it.

use super::{CpuError, check_lengths};
use crate::pixel::{Formula, Kernel};

/// Converts `src` into `dst` one pixel at a time.
pub fn convert_reference(
    kernel: Kernel,
    formula: Formula,
    src: &[u8],
    dst: &mut [u8],
) -> Result<(), CpuError> {
    check_lengths(kernel, src, dst)?;
    let inb = kernel.in_bytes_per_pixel();
    let outb = kernel.out_bytes_per_pixel();
    let u16_at = |p: &[u8], i: usize| u16::from_ne_bytes([p[2 * i], p[2 * i + 1]]);
    for (s, d) in src.chunks_exact(inb).zip(dst.chunks_exact_mut(outb)) {
        match kernel {
            Kernel::Rgb8ToL8 | Kernel::Rgba8ToL8 => d[0] = formula.luma8(s[0], s[1], s[2]),
            Kernel::Rgba8ToLa8 => {
                d[0] = formula.luma8(s[0], s[1], s[2]);
                d[1] = s[3];
            }
            Kernel::Rgb16ToL16 | Kernel::Rgba16ToL16 => {
                let y = formula.luma16(u16_at(s, 0), u16_at(s, 1), u16_at(s, 2));
                d.copy_from_slice(&y.to_ne_bytes());
            }
            Kernel::Rgba16ToLa16 => {
                let y = formula.luma16(u16_at(s, 0), u16_at(s, 1), u16_at(s, 2));
                d[..2].copy_from_slice(&y.to_ne_bytes());
                d[2..].copy_from_slice(&s[6..8]);
            }
        }
    }
    Ok(())
}
