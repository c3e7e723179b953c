//! The dither on the CPU: Floyd–Steinberg as the one sequential loop it is, with two rows of
//! errors. The exact definition is [`crate::pixel::dither_reference`]'s.

use crate::pixel::dither_pixel;

/// Dithers a `width` x `height` gray plane to 0 or 255 per pixel.
#[must_use]
pub fn dither(src: &[u8], (width, height): (usize, usize)) -> Vec<u8> {
    let mut out = vec![0_u8; width * height];
    if width == 0 || src.len() != width * height {
        return out;
    }
    // Errors of the row above, with a zero on each side, and of the current row.
    let mut above = vec![0_i32; width + 2];
    let mut current = vec![0_i32; width + 2];
    for (row, out_row) in src.chunks_exact(width).zip(out.chunks_exact_mut(width)) {
        current[0] = 0;
        for (x, (&g, o)) in row.iter().zip(out_row.iter_mut()).enumerate() {
            let n = [current[x], above[x + 2], above[x + 1], above[x]];
            let (value, err) = dither_pixel(g, n);
            *o = value;
            current[x + 1] = err;
        }
        std::mem::swap(&mut above, &mut current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pixel::dither_reference;
    use crate::pixel::noise;

    #[test]
    fn every_shape_matches_the_reference() {
        for (w, h) in [(1, 1), (1, 37), (41, 1), (17, 13), (130, 9), (3, 200), (256, 256)] {
            let src = noise(w * h, (w * 7 + h) as u32);
            assert_eq!(dither(&src, (w, h)), dither_reference(&src, (w, h)), "{w}x{h}");
        }
        let ramp: Vec<u8> = (0..=255).collect();
        let d = dither(&ramp.repeat(16), (256, 16));
        assert_eq!((d[0], d[255]), (0, 255), "black stays black, white stays white");
    }
}
