//! The hostile-input generator: structured mutations of real JPEG, PNG, TIFF, BMP and WebP files
//! (frame and header dimensions, marker types, components, sampling, bytes before markers, lost
//! restart markers, IFD entries, truncation)
//! plus random bytes, deterministic from a seed. `GRAYLAB_HOSTILE_CASES=N` asks for N cases
//! (the default keeps CI under its time limit); `GRAYLAB_HOSTILE_SEED` changes the seed.

mod mutate;

use image::{DynamicImage, ImageFormat, RgbImage, RgbaImage};
use mutate::{mutate_bmp, mutate_jpeg, mutate_png, mutate_tiff, mutate_webp};

/// One generated input: a file name that says what was done, and the bytes.
pub struct Case {
    /// `NNNN-what.ext`.
    pub name: String,
    /// The file's content.
    pub bytes: Vec<u8>,
}

/// Cases asked for by `GRAYLAB_HOSTILE_CASES`, else `default`.
pub fn case_count(default: usize) -> usize {
    std::env::var("GRAYLAB_HOSTILE_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The seed from `GRAYLAB_HOSTILE_SEED`, else a fixed one.
pub fn seed() -> u64 {
    std::env::var("GRAYLAB_HOSTILE_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x9e37_79b9)
}

/// A small xorshift generator (deterministic, no dependency).
pub struct Rng(u64);

impl Rng {
    /// Seeded.
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// The next value.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A value below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// One of `items`.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

fn photo(w: u32, h: u32) -> RgbImage {
    RgbImage::from_fn(w, h, |x, y| image::Rgb([(x * 13 + y) as u8, (y * 7) as u8, (x ^ y) as u8 * 3]))
}

fn encoded(img: &DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, format).expect("encode a seed file");
    out.into_inner()
}

/// A minimal JPEG built by hand: one gray component, one-code Huffman tables, and exactly the
/// fewest coded bytes `width` x `height` can have (2 bits a block sequential, 1 progressive),
/// less `short_bytes`. `sof` is the frame marker's low byte (0 baseline, 2 progressive, 3 ...).
pub fn minimal_jpeg(sof: u8, width: u16, height: u16, short_bytes: usize, with_eoi: bool) -> Vec<u8> {
    let mut j = vec![0xFF, 0xD8];
    j.extend_from_slice(&[0xFF, 0xDB, 0, 67, 0]);
    j.extend_from_slice(&[1; 64]);
    j.extend_from_slice(&[0xFF, 0xC0 + sof, 0, 11, 8]);
    j.extend_from_slice(&height.to_be_bytes());
    j.extend_from_slice(&width.to_be_bytes());
    j.extend_from_slice(&[1, 1, 0x11, 0]);
    // DC table 0 and AC table 0: one code each, "0", for symbol 0 (DC: no difference; AC: EOB).
    let mut table = |class: u8| {
        j.extend_from_slice(&[0xFF, 0xC4, 0, 20, class << 4, 1]);
        j.extend_from_slice(&[0; 15]);
        j.push(0);
    };
    table(0);
    table(1);
    let progressive = sof == 2;
    let spectral_end = if progressive { 0 } else { 63 };
    j.extend_from_slice(&[0xFF, 0xDA, 0, 8, 1, 1, 0x00, 0, spectral_end, 0]);
    let blocks = u64::from(width).div_ceil(8) * u64::from(height).div_ceil(8);
    let bits = blocks * if progressive { 1 } else { 2 };
    let data = (bits.div_ceil(8) as usize).saturating_sub(short_bytes);
    j.resize(j.len() + data, 0);
    if with_eoi {
        j.extend_from_slice(&[0xFF, 0xD9]);
    }
    j
}

/// Byte offset of the first JPEG frame header's marker (`FF Cn`, not DHT/DAC/JPG).
pub fn sof_offset(jpeg: &[u8]) -> Option<usize> {
    jpeg.windows(2)
        .position(|w| w[0] == 0xFF && matches!(w[1], 0xC0..=0xCF) && ![0xC4, 0xC8, 0xCC].contains(&w[1]))
}

/// Valid, highly compressible RGB PNGs sized against `budget_bytes` for a conversion that
/// reserves `bytes_per_pixel` (4 on the CPU: RGB plus gray; 12 on the GPU: three times that):
/// two at 80% of it, which may never be converted at the same time, and one at 110%, which
/// must be refused.
pub fn budget_cases(budget_bytes: u64, bytes_per_pixel: f64) -> Vec<Case> {
    [("a-80", 0.8), ("b-80", 0.8), ("c-110", 1.1)]
        .into_iter()
        .map(|(name, share)| {
            let side = ((budget_bytes as f64 * share / bytes_per_pixel).sqrt()) as u32;
            let img = DynamicImage::ImageRgb8(RgbImage::from_pixel(side, side, image::Rgb([200, 100, 50])));
            Case { name: format!("budget-{name}-{side}x{side}.png"), bytes: encoded(&img, ImageFormat::Png) }
        })
        .collect()
}

/// `count` cases from `seed`: every format's mutations in turn, then random bytes.
pub fn cases(count: usize, seed: u64) -> Vec<Case> {
    let rgb = DynamicImage::ImageRgb8(photo(48, 32));
    let rgba = DynamicImage::ImageRgba8(RgbaImage::from_fn(40, 30, |x, y| {
        image::Rgba([x as u8 * 6, y as u8 * 8, 99, (x + y) as u8])
    }));
    // A JPEG with restart markers (graylab's own encoder: gray, one interval per 128 rows).
    let gray =
        DynamicImage::ImageLuma8(image::GrayImage::from_fn(40, 400, |x, y| image::Luma([(x * 5 + y) as u8])));
    let restarts =
        graylab::io::encode_to_vec(&gray, graylab::io::ExportFormat::Jpeg, 85).expect("a seed file");
    let seeds = [
        encoded(&rgb, ImageFormat::Jpeg),
        encoded(&rgba, ImageFormat::Png),
        encoded(&rgb, ImageFormat::Tiff),
        encoded(&rgb, ImageFormat::Bmp),
        encoded(&rgba, ImageFormat::WebP),
    ];
    let mut rng = Rng::new(seed);
    (0..count)
        .map(|i| {
            let (what, ext, bytes) = match i % 7 {
                0 | 5 => {
                    let seed = if rng.below(3) == 0 { &restarts } else { &seeds[0] };
                    let (n, b) = mutate_jpeg(&mut rng, seed);
                    (n, "jpg", b)
                }
                1 => {
                    let (n, b) = mutate_png(&mut rng, &seeds[1]);
                    (n, "png", b)
                }
                2 => {
                    let (n, b) = mutate_tiff(&mut rng, &seeds[2]);
                    (n, "tif", b)
                }
                3 => {
                    let (n, b) = mutate_bmp(&mut rng, &seeds[3]);
                    (n, "bmp", b)
                }
                4 => {
                    let (n, b) = mutate_webp(&mut rng, &seeds[4]);
                    (n, "webp", b)
                }
                _ => {
                    let len = rng.below(600);
                    let mut b: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
                    let magic: &[u8] = rng.pick(&[
                        &b""[..],
                        b"\xFF\xD8\xFF",
                        b"\x89PNG\r\n\x1a\n",
                        b"II*\0",
                        b"BM",
                        b"RIFF\0\0\0\0WEBP",
                    ]);
                    b.splice(0..0, magic.iter().copied());
                    ("random".into(), "bin", b)
                }
            };
            Case { name: format!("{i:04}-{what}.{ext}"), bytes }
        })
        .collect()
}
