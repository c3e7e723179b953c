//! Associated (premultiplied) alpha made straight, as Pillow and `ImageMagick` read it, the alpha
//! kept. An 8-bit colour sample becomes floor(c * 255 / alpha), as both give; a 16-bit one
//! round(c * 65535 / alpha), as `ImageMagick` gives (Pillow reads 8 bits). Both are clamped to
//! the largest sample, and 0 where alpha is 0. Floating-point samples are divided (c / alpha).

use image::{ColorType, ImageDecoder, ImageResult};

/// Divides the colour samples of a decoded buffer by its alpha, in place; colour types without
/// alpha are left as they are.
pub(super) fn unpremultiply(color_type: ColorType, buf: &mut [u8]) {
    let channels = usize::from(color_type.channel_count());
    match color_type {
        ColorType::La8 | ColorType::Rgba8 => {
            for pixel in buf.chunks_exact_mut(channels) {
                let (colour, alpha) = pixel.split_at_mut(channels - 1);
                let a = u32::from(alpha[0]);
                for c in colour {
                    *c = straight(u32::from(*c), a, u32::from(u8::MAX), Rounding::Down)
                        .try_into()
                        .unwrap_or(u8::MAX);
                }
            }
        }
        ColorType::La16 | ColorType::Rgba16 => {
            for pixel in buf.chunks_exact_mut(2 * channels) {
                let (colour, alpha) = pixel.split_at_mut(2 * (channels - 1));
                let a = u32::from(u16::from_ne_bytes([alpha[0], alpha[1]]));
                for c in colour.chunks_exact_mut(2) {
                    let c16 = u32::from(u16::from_ne_bytes([c[0], c[1]]));
                    let v = straight(c16, a, u32::from(u16::MAX), Rounding::Nearest);
                    c.copy_from_slice(&u16::try_from(v).unwrap_or(u16::MAX).to_ne_bytes());
                }
            }
        }
        ColorType::Rgba32F => {
            for pixel in buf.chunks_exact_mut(4 * channels) {
                let (colour, alpha) = pixel.split_at_mut(4 * (channels - 1));
                let a = f32::from_ne_bytes([alpha[0], alpha[1], alpha[2], alpha[3]]);
                for c in colour.chunks_exact_mut(4) {
                    let v = f32::from_ne_bytes([c[0], c[1], c[2], c[3]]);
                    c.copy_from_slice(&straight_f32(v, a).to_ne_bytes());
                }
            }
        }
        _ => {}
    }
}

/// How a quotient becomes an integer sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rounding {
    /// Toward zero (Pillow and `ImageMagick` at 8 bits).
    Down,
    /// To the nearest, halves up (`ImageMagick` at 16 bits).
    Nearest,
}

/// One integer sample made straight: c * max / a, at most max; 0 where a is 0.
pub(super) fn straight(c: u32, a: u32, max: u32, rounding: Rounding) -> u32 {
    if a == 0 {
        return 0;
    }
    let half = if rounding == Rounding::Nearest { u64::from(a / 2) } else { 0 };
    let v = (u64::from(c) * u64::from(max) + half) / u64::from(a);
    u32::try_from(v).unwrap_or(max).min(max)
}

/// One floating-point sample made straight: c / a; 0 where a is not above 0.
pub(super) fn straight_f32(c: f32, a: f32) -> f32 {
    if a > 0.0 { c / a } else { 0.0 }
}

/// An `image` decoder whose output has its associated alpha made straight.
pub(super) struct Straightened<D>(pub(super) D);

impl<D: ImageDecoder> ImageDecoder for Straightened<D> {
    fn dimensions(&self) -> (u32, u32) {
        self.0.dimensions()
    }

    fn color_type(&self) -> ColorType {
        self.0.color_type()
    }

    fn orientation(&mut self) -> ImageResult<image::metadata::Orientation> {
        self.0.orientation()
    }

    fn set_limits(&mut self, limits: image::Limits) -> ImageResult<()> {
        self.0.set_limits(limits)
    }

    fn read_image(self, buf: &mut [u8]) -> ImageResult<()> {
        let color = self.0.color_type();
        self.0.read_image(buf)?;
        unpremultiply(color, buf);
        Ok(())
    }

    fn read_image_boxed(self: Box<Self>, buf: &mut [u8]) -> ImageResult<()> {
        (*self).read_image(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::Rounding::{Down, Nearest};
    use super::{straight, straight_f32};

    #[test]
    fn samples_are_divided_by_alpha_rounded_and_clamped() {
        assert_eq!(straight(64, 128, 255, Down), 127);
        // 50 * 255 / 128 = 99.6: Pillow and ImageMagick give 99.
        assert_eq!(straight(50, 128, 255, Down), 99);
        assert_eq!(straight(1, 3, 255, Down), 85);
        // A colour above its alpha (damaged data) is clamped.
        assert_eq!(straight(200, 100, 255, Down), 255);
        assert_eq!(straight(7, 0, 255, Down), 0);
        assert_eq!(straight(65535, 65535, 65535, Nearest), 65535);
        assert_eq!(straight(32768, 65535, 65535, Nearest), 32768);
        // 20000 * 65535 / 40000 = 32767.5: ImageMagick gives 32768.
        assert_eq!(straight(20000, 40000, 65535, Nearest), 32768);
        assert_eq!(straight(70000, 1, 65535, Nearest), 65535);
        assert!((straight_f32(0.25, 0.5) - 0.5).abs() < f32::EPSILON);
        assert!(straight_f32(0.25, 0.0).abs() < f32::EPSILON);
    }
}
