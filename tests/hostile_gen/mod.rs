//! The hostile-input generator: structured mutations of real JPEG, PNG, TIFF, BMP and WebP files
//! (frame and header dimensions, marker types, components, sampling, IFD entries, truncation)
//! plus random bytes, deterministic from a seed. `GRAYLAB_HOSTILE_CASES=N` asks for N cases
//! (the default keeps CI under its time limit); `GRAYLAB_HOSTILE_SEED` changes the seed.
#![allow(dead_code, reason = "each test binary uses a different subset")]

use image::{DynamicImage, ImageFormat, RgbImage, RgbaImage};

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

fn put16(bytes: &mut [u8], at: usize, v: u16) {
    if let Some(s) = bytes.get_mut(at..at + 2) {
        s.copy_from_slice(&v.to_be_bytes());
    }
}

fn put32be(bytes: &mut [u8], at: usize, v: u32) {
    if let Some(s) = bytes.get_mut(at..at + 4) {
        s.copy_from_slice(&v.to_be_bytes());
    }
}

fn put32le(bytes: &mut [u8], at: usize, v: u32) {
    if let Some(s) = bytes.get_mut(at..at + 4) {
        s.copy_from_slice(&v.to_le_bytes());
    }
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

const SIDES16: [u16; 10] = [0, 1, 7, 8, 9, 255, 1000, 4096, 16384, 65535];
const SIDES32: [u32; 10] = [0, 1, 3, 255, 4096, 16_384, 65_535, 100_000, 0x7FFF_FFFF, u32::MAX];

fn mutate_jpeg(rng: &mut Rng, seed: &[u8]) -> (String, Vec<u8>) {
    let mut b = seed.to_vec();
    let Some(sof) = sof_offset(&b) else { return ("jpeg-as-is".into(), b) };
    match rng.below(8) {
        0 => {
            let (w, h) = (rng.pick(&SIDES16), rng.pick(&SIDES16));
            put16(&mut b, sof + 5, h);
            put16(&mut b, sof + 7, w);
            (format!("jpeg-sof-{w}x{h}"), b)
        }
        1 => {
            let kind = rng.pick(&[0xC1u8, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF]);
            b[sof + 1] = kind;
            (format!("jpeg-sof{}", kind - 0xC0), b)
        }
        2 => {
            let n = rng.pick(&[0u8, 2, 4, 5, 255]);
            b[sof + 9] = n;
            (format!("jpeg-{n}-components"), b)
        }
        3 => {
            let f = rng.pick(&[0x00u8, 0x44, 0xF1, 0x1F, 0x55, 0x22]);
            b[sof + 11] = f;
            (format!("jpeg-sampling-{f:02x}"), b)
        }
        4 => {
            let p = rng.pick(&[0u8, 1, 12, 16, 255]);
            b[sof + 4] = p;
            (format!("jpeg-precision-{p}"), b)
        }
        5 => {
            let keep = rng.below(b.len().max(1));
            b.truncate(keep);
            (format!("jpeg-cut-at-{keep}"), b)
        }
        6 => {
            for _ in 0..=rng.below(8) {
                let i = rng.below(b.len());
                b[i] = rng.next() as u8;
            }
            ("jpeg-flipped-bytes".into(), b)
        }
        _ => {
            let (w, h) = (rng.pick(&SIDES16), rng.pick(&SIDES16));
            let sof_kind = rng.pick(&[0u8, 2]);
            let short = rng.pick(&[0usize, 1, 100, usize::MAX]);
            let eoi = rng.below(2) == 0;
            (
                format!("jpeg-minimal-sof{sof_kind}-{w}x{h}-short{}", short.min(999)),
                minimal_jpeg(sof_kind, w, h, short, eoi),
            )
        }
    }
}

fn mutate_png(rng: &mut Rng, seed: &[u8]) -> (String, Vec<u8>) {
    let mut b = seed.to_vec();
    let name = match rng.below(5) {
        0 => {
            let (w, h) = (rng.pick(&SIDES32), rng.pick(&SIDES32));
            put32be(&mut b, 16, w);
            put32be(&mut b, 20, h);
            format!("png-ihdr-{w}x{h}")
        }
        1 => {
            let (depth, color) =
                (rng.pick(&[0u8, 1, 3, 8, 16, 32]), rng.pick(&[0u8, 1, 2, 3, 4, 5, 6, 7, 255]));
            b[24] = depth;
            b[25] = color;
            format!("png-depth{depth}-color{color}")
        }
        2 => {
            let keep = rng.below(b.len());
            b.truncate(keep);
            return (format!("png-cut-at-{keep}"), b);
        }
        3 => {
            for _ in 0..=rng.below(6) {
                let i = 33 + rng.below(b.len() - 33);
                b[i] = rng.next() as u8;
            }
            return ("png-corrupt-data".into(), b);
        }
        _ => {
            b[28] = rng.pick(&[1u8, 2]); // interlace method: Adam7 or invalid
            "png-interlace".into()
        }
    };
    // Mostly keep the header's CRC valid so the decoder reads the mutated values.
    if rng.below(4) != 0 {
        let crc = crc32(&b[12..29]);
        put32be(&mut b, 29, crc);
    }
    (name, b)
}

fn mutate_tiff(rng: &mut Rng, seed: &[u8]) -> (String, Vec<u8>) {
    let mut b = seed.to_vec();
    let ifd = u32::from_le_bytes([b[4], b[5], b[6], b[7]]) as usize;
    let entries = usize::from(u16::from_le_bytes([b[ifd], b[ifd + 1]]));
    let entry = ifd + 2 + 12 * rng.below(entries.max(1));
    let tag = u16::from_le_bytes([b[entry], b[entry + 1]]);
    match rng.below(4) {
        0 => {
            let v = rng.pick(&SIDES32);
            put32le(&mut b, entry + 8, v);
            (format!("tiff-tag{tag}-value{v}"), b)
        }
        1 => {
            let v = rng.pick(&SIDES32);
            put32le(&mut b, entry + 4, v);
            (format!("tiff-tag{tag}-count{v}"), b)
        }
        2 => {
            let off = rng.pick(&[0u32, 4, 8, u32::MAX, ifd as u32]);
            put32le(&mut b, 4, off);
            (format!("tiff-ifd-at-{off}"), b)
        }
        _ => {
            let keep = rng.below(b.len());
            b.truncate(keep);
            (format!("tiff-cut-at-{keep}"), b)
        }
    }
}

fn mutate_bmp(rng: &mut Rng, seed: &[u8]) -> (String, Vec<u8>) {
    let mut b = seed.to_vec();
    match rng.below(5) {
        0 => {
            let w = rng.pick(&[0i32, 1, -1, 65_535, 100_000, i32::MAX, i32::MIN]);
            let h = rng.pick(&[0i32, 1, -1, -65_535, 100_000, i32::MAX, i32::MIN]);
            b[18..22].copy_from_slice(&w.to_le_bytes());
            b[22..26].copy_from_slice(&h.to_le_bytes());
            (format!("bmp-{w}x{h}"), b)
        }
        1 => {
            let bpp = rng.pick(&[0u16, 1, 7, 15, 64, 0xFFFF]);
            b[28..30].copy_from_slice(&bpp.to_le_bytes());
            (format!("bmp-bpp{bpp}"), b)
        }
        2 => {
            let c = rng.pick(&[1u32, 2, 3, 4, 5, 99]);
            put32le(&mut b, 30, c);
            (format!("bmp-compression{c}"), b)
        }
        3 => {
            let off = rng.pick(&[0u32, 14, u32::MAX, 1 << 30]);
            put32le(&mut b, 10, off);
            (format!("bmp-data-at-{off}"), b)
        }
        _ => {
            let keep = rng.below(b.len());
            b.truncate(keep);
            (format!("bmp-cut-at-{keep}"), b)
        }
    }
}

fn mutate_webp(rng: &mut Rng, seed: &[u8]) -> (String, Vec<u8>) {
    let mut b = seed.to_vec();
    match rng.below(4) {
        0 if b.get(12..16) == Some(b"VP8L") => {
            // 14-bit width-1 and height-1 after the 0x2F signature at byte 20.
            let (w, h) = (rng.below(1 << 14) as u32, rng.below(1 << 14) as u32);
            let bits = w | (h << 14) | (u32::from(b[24]) & 0xF0) << 24;
            put32le(&mut b, 21, bits);
            (format!("webp-{}x{}", w + 1, h + 1), b)
        }
        1 => {
            let size = rng.pick(&[0u32, 4, u32::MAX, 1 << 30]);
            put32le(&mut b, 4, size);
            (format!("webp-riff-size-{size}"), b)
        }
        2 => {
            b[12..16].copy_from_slice(rng.pick(&[b"VP8 ", b"VP8X", b"ANIM", b"XXXX"]));
            ("webp-chunk-type".into(), b)
        }
        _ => {
            let keep = rng.below(b.len());
            b.truncate(keep);
            (format!("webp-cut-at-{keep}"), b)
        }
    }
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
                    let (n, b) = mutate_jpeg(&mut rng, &seeds[0]);
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
