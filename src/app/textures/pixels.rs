//! Host pixels for display: a gray image as one byte a pixel, any other read as premultiplied
//! 8-bit RGBA, box-filtered into a preview level with its mipmaps (rayon, on the worker), or cut
//! into full-resolution tiles. Nothing here touches the GPU.

use image::DynamicImage;
use rayon::prelude::*;

/// One level of 8-bit pixels: gray, or RGBA premultiplied by alpha.
pub struct Level {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// One byte a pixel (an 8-bit gray image: a quarter of the bytes to upload and keep), else
    /// four.
    pub gray: bool,
    /// `width * height * channels` bytes.
    pub bytes: Vec<u8>,
}

impl Level {
    /// Bytes per pixel.
    #[must_use]
    pub fn channels(&self) -> usize {
        if self.gray { 1 } else { 4 }
    }
}

/// Work done on an image's pixels, read as RGBA in 0..=255 (not premultiplied) by index.
trait Visit {
    /// What the work gives.
    type Out;
    /// Does the work with `px(i)` = pixel `i` (row-major); compiled once per pixel type.
    fn visit(self, px: impl Fn(usize) -> [u32; 4] + Sync) -> Self::Out;
}

/// Runs `work` on `image`, with a pixel reader specialised for its pixel type.
fn read<V: Visit>(image: &DynamicImage, work: V) -> V::Out {
    let b = u32::from;
    let w = |v: u16| u32::from(v >> 8);
    match image {
        DynamicImage::ImageRgb8(i) => work.visit(reader::<_, 3>(i.as_raw(), b)),
        DynamicImage::ImageRgba8(i) => work.visit(reader::<_, 4>(i.as_raw(), b)),
        DynamicImage::ImageLuma8(i) => work.visit(reader::<_, 1>(i.as_raw(), b)),
        DynamicImage::ImageLumaA8(i) => work.visit(reader::<_, 2>(i.as_raw(), b)),
        DynamicImage::ImageRgb16(i) => work.visit(reader::<_, 3>(i.as_raw(), w)),
        DynamicImage::ImageRgba16(i) => work.visit(reader::<_, 4>(i.as_raw(), w)),
        DynamicImage::ImageLuma16(i) => work.visit(reader::<_, 1>(i.as_raw(), w)),
        DynamicImage::ImageLumaA16(i) => work.visit(reader::<_, 2>(i.as_raw(), w)),
        other => work.visit(reader::<_, 4>(other.to_rgba8().as_raw(), b)),
    }
}

/// Pixel `k` of `p` as RGBA in 0..=255, from `C` samples a pixel (1: gray, 2: gray + alpha, 3:
/// RGB, 4: RGBA) each scaled by `v`.
fn reader<T: Copy + Sync, const C: usize>(
    p: &[T],
    v: impl Fn(T) -> u32 + Sync,
) -> impl Fn(usize) -> [u32; 4] + Sync {
    move |k| {
        let s = |i: usize| v(p[C * k + i]);
        match C {
            1 => [s(0), s(0), s(0), 255],
            2 => [s(0), s(0), s(0), s(1)],
            3 => [s(0), s(1), s(2), 255],
            _ => [s(0), s(1), s(2), s(3)],
        }
    }
}

/// The preview size of a `width` x `height` image whose longest side may be at most `max_side`.
#[must_use]
pub fn preview_size(width: u32, height: u32, max_side: u32) -> (u32, u32) {
    let longest = width.max(height).max(1);
    if longest <= max_side {
        return (width.max(1), height.max(1));
    }
    let scale = |v: u32| ((u64::from(v) * u64::from(max_side)).div_ceil(u64::from(longest)) as u32).max(1);
    (scale(width), scale(height))
}

/// The preview level (longest side at most `max_side`, box filter, at most 8 x 8 samples per
/// pixel) and its mipmaps down to 1 x 1, in parallel rows.
#[must_use]
pub fn preview_levels(image: &DynamicImage, max_side: u32) -> Vec<Level> {
    let (width, height) = (image.width(), image.height());
    let (pw, ph) = preview_size(width, height, max_side);
    let first = match image {
        // The common cases without the generic reader: a gray output (kept gray) and an RGB
        // photo.
        DynamicImage::ImageLuma8(i) => downsample_opaque::<1, 1>(i.as_raw(), (width, height), (pw, ph)),
        DynamicImage::ImageRgb8(i) => downsample_opaque::<3, 4>(i.as_raw(), (width, height), (pw, ph)),
        _ => read(image, Downsample { width, height, pw, ph }),
    };
    let mut levels = vec![first];
    while let Some(last) = levels.last().filter(|l| l.width > 1 || l.height > 1) {
        levels.push(half(last));
    }
    levels
}

/// Box-filters opaque 8-bit pixels of `C` channels (1: gray, 3: RGB) from `size` to `preview`,
/// into `OUT` channels (1: gray, 4: RGBA).
fn downsample_opaque<const C: usize, const OUT: usize>(
    src: &[u8],
    size: (u32, u32),
    preview: (u32, u32),
) -> Level {
    let ((width, height), (pw, ph)) = (size, preview);
    let (cols, rows) = (boxes(pw, width), boxes(ph, height));
    let mut bytes = vec![0u8; pw as usize * ph as usize * OUT];
    bytes.par_chunks_mut(pw as usize * OUT).zip(rows.par_iter()).for_each(|(out, &(ya, yb))| {
        let step_y = (yb - ya).div_ceil(8);
        let mut sums = vec![[0u32; C]; pw as usize];
        let mut count_y = 0u32;
        for row in (ya..yb).step_by(step_y) {
            let line = &src[row * width as usize * C..(row + 1) * width as usize * C];
            for (sum, &(xa, xb)) in sums.iter_mut().zip(&cols) {
                let step_x = (xb - xa).div_ceil(8);
                for col in (xa..xb).step_by(step_x) {
                    for (c, s) in sum.iter_mut().enumerate() {
                        *s += u32::from(line[col * C + c]);
                    }
                }
            }
            count_y += 1;
        }
        for ((x, sum), &(xa, xb)) in sums.iter().enumerate().zip(&cols) {
            let n = count_y * (xb - xa).div_ceil((xb - xa).div_ceil(8)) as u32;
            let value = |c: usize| ((sum[c.min(C - 1)] + n / 2) / n) as u8;
            let pixel = [value(0), value(1), value(2), 255];
            out[x * OUT..(x + 1) * OUT].copy_from_slice(&pixel[..OUT]);
        }
    });
    Level { width: pw, height: ph, gray: OUT == 1, bytes }
}

/// Box-filters a `width` x `height` image to `pw` x `ph`.
struct Downsample {
    width: u32,
    height: u32,
    pw: u32,
    ph: u32,
}

/// Each output pixel's `[start, end)` source range along one side.
fn boxes(n: u32, side: u32) -> Vec<(usize, usize)> {
    let scale = f64::from(side) / f64::from(n);
    (0..n)
        .map(|p| {
            let a = ((f64::from(p) * scale) as u32).min(side - 1);
            let b = ((f64::from(p + 1) * scale) as u32).clamp(a + 1, side);
            (a as usize, b as usize)
        })
        .collect()
}

impl Visit for Downsample {
    type Out = Level;

    fn visit(self, px: impl Fn(usize) -> [u32; 4] + Sync) -> Level {
        let Self { width, height, pw, ph } = self;
        let (cols, rows) = (boxes(pw, width), boxes(ph, height));
        let mut rgba = vec![0u8; pw as usize * ph as usize * 4];
        rgba.par_chunks_mut(pw as usize * 4).zip(rows.par_iter()).for_each(|(out, &(ya, yb))| {
            let step_y = (yb - ya).div_ceil(8);
            for (x, &(xa, xb)) in cols.iter().enumerate() {
                let step_x = (xb - xa).div_ceil(8);
                let mut sum = [0u32; 4];
                let mut weight = 0;
                for row in (ya..yb).step_by(step_y) {
                    let base = row * width as usize;
                    for col in (xa..xb).step_by(step_x) {
                        let [red, green, blue, alpha] = px(base + col);
                        sum[0] += red * alpha;
                        sum[1] += green * alpha;
                        sum[2] += blue * alpha;
                        sum[3] += alpha * 255;
                        weight += 255;
                    }
                }
                for (channel, total) in out[x * 4..x * 4 + 4].iter_mut().zip(sum) {
                    *channel = ((total + weight / 2) / weight) as u8;
                }
            }
        });
        Level { width: pw, height: ph, gray: false, bytes: rgba }
    }
}

/// The next mip level: 2 x 2 boxes, edges repeated for odd sizes.
fn half(level: &Level) -> Level {
    let (w, h) = ((level.width / 2).max(1), (level.height / 2).max(1));
    let channels = level.channels();
    let src = |x: u32, y: u32, c: usize| {
        let (x, y) = (x.min(level.width - 1) as usize, y.min(level.height - 1) as usize);
        u32::from(level.bytes[(y * level.width as usize + x) * channels + c])
    };
    let mut bytes = vec![0u8; w as usize * h as usize * channels];
    for y in 0..h {
        for x in 0..w {
            for c in 0..channels {
                let s = src(2 * x, 2 * y, c)
                    + src(2 * x + 1, 2 * y, c)
                    + src(2 * x, 2 * y + 1, c)
                    + src(2 * x + 1, 2 * y + 1, c);
                bytes[(y * w + x) as usize * channels + c] = ((s + 2) / 4) as u8;
            }
        }
    }
    Level { width: w, height: h, gray: level.gray, bytes }
}

/// Full-resolution pixels `x0..x0 + width`, `y0..y0 + height` of `image`: gray for an 8-bit
/// gray image, else premultiplied RGBA8.
#[must_use]
pub fn tile(image: &DynamicImage, x0: u32, y0: u32, width: u32, height: u32) -> Level {
    if let DynamicImage::ImageLuma8(i) = image {
        // Tiles are cut on the UI thread: one slice copy per row.
        let stride = image.width() as usize;
        let mut bytes = Vec::with_capacity(width as usize * height as usize);
        for row in y0..y0 + height {
            let start = row as usize * stride + x0 as usize;
            bytes.extend_from_slice(&i.as_raw()[start..start + width as usize]);
        }
        return Level { width, height, gray: true, bytes };
    }
    let bytes = read(image, Tile { stride: image.width() as usize, x0, y0, width, height });
    Level { width, height, gray: false, bytes }
}

/// Cuts a tile out of an image with `stride` pixels per row.
struct Tile {
    stride: usize,
    x0: u32,
    y0: u32,
    width: u32,
    height: u32,
}

impl Visit for Tile {
    type Out = Vec<u8>;

    fn visit(self, px: impl Fn(usize) -> [u32; 4] + Sync) -> Vec<u8> {
        let mut rgba = Vec::with_capacity(self.width as usize * self.height as usize * 4);
        for row in self.y0..self.y0 + self.height {
            for col in self.x0..self.x0 + self.width {
                let [red, green, blue, alpha] = px(row as usize * self.stride + col as usize);
                rgba.extend([red, green, blue].map(|c| ((c * alpha + 127) / 255) as u8));
                rgba.push(alpha as u8);
            }
        }
        rgba
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preview_averages_boxes_and_premultiplies() {
        // 4 x 2 gray: left half 0, right half 200; to 2 x 1, kept gray.
        let img = DynamicImage::ImageLuma8(
            image::GrayImage::from_raw(4, 2, vec![0, 0, 200, 200, 0, 0, 200, 200]).expect("size"),
        );
        let levels = preview_levels(&img, 2);
        assert_eq!((levels[0].width, levels[0].height, levels[0].gray), (2, 1, true));
        assert_eq!(levels[0].bytes, vec![0, 200]);
        assert_eq!(levels.len(), 2);
        assert_eq!((levels[1].gray, levels[1].bytes.as_slice()), (true, [100].as_slice()));
        // Half-transparent white is premultiplied.
        let la =
            DynamicImage::ImageLumaA8(image::GrayAlphaImage::from_raw(1, 1, vec![255, 128]).expect("size"));
        let level = &preview_levels(&la, 8)[0];
        assert_eq!((level.gray, level.bytes.as_slice()), (false, [128, 128, 128, 128].as_slice()));
        assert_eq!(tile(&la, 0, 0, 1, 1).bytes, vec![128, 128, 128, 128]);
        // RGBA mipmaps average each channel.
        let rgba = DynamicImage::ImageRgba8(image::RgbaImage::from_fn(2, 2, |x, _| {
            image::Rgba([if x == 0 { 0 } else { 200 }, 10, 20, 255])
        }));
        let levels = preview_levels(&rgba, 2);
        assert_eq!(levels[1].bytes, vec![100, 10, 20, 255]);
    }

    #[test]
    fn the_fast_paths_match_the_generic_reader() {
        let rgb = DynamicImage::ImageRgb8(image::RgbImage::from_fn(37, 23, |x, y| {
            image::Rgb([(x * 7 % 256) as u8, (y * 11 % 256) as u8, ((x * y) % 256) as u8])
        }));
        let gray = DynamicImage::ImageLuma8(rgb.to_luma8());
        for img in [rgb, gray] {
            let (w, h) = (img.width(), img.height());
            for side in [5, 11, 16] {
                let (pw, ph) = preview_size(w, h, side);
                let fast = &preview_levels(&img, side)[0];
                let generic = read(&img, Downsample { width: w, height: h, pw, ph });
                assert_eq!((fast.width, fast.height), (pw, ph));
                // A gray level holds what the generic reader's RGBA holds in each colour channel.
                let fast_rgba: Vec<u8> = if fast.gray {
                    fast.bytes.iter().flat_map(|&v| [v, v, v, 255]).collect()
                } else {
                    fast.bytes.clone()
                };
                assert_eq!(fast_rgba, generic.bytes, "{:?} to {side}", img.color());
            }
        }
    }

    #[test]
    fn tiles_are_cut_from_the_full_image() {
        let img =
            DynamicImage::ImageRgb8(image::RgbImage::from_fn(5, 3, |x, y| image::Rgb([x as u8, y as u8, 7])));
        assert_eq!(tile(&img, 3, 1, 2, 1).bytes, vec![3, 1, 7, 255, 4, 1, 7, 255]);
        assert_eq!(preview_levels(&img, 5)[0].bytes[..4], [0, 0, 7, 255]);
        let gray = DynamicImage::ImageLuma8(image::GrayImage::from_fn(5, 3, |x, y| {
            image::Luma([(10 * y + x) as u8])
        }));
        let t = tile(&gray, 3, 1, 2, 2);
        assert_eq!((t.gray, t.bytes.as_slice()), (true, [13, 14, 23, 24].as_slice()));
    }
}
