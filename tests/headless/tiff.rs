//! TIFF variants, built by hand byte by byte: associated alpha made straight before the formula,
//! gray + alpha and floating-point gray read, palette, CMYK and CCITT (modified Huffman, Group 3)
//! TIFFs read, damaged `PackBits` strips refused, and the variants graylab cannot read named in
//! words. Pixels are checked after conversion on both backends.

use crate::common;

use std::path::{Path, PathBuf};

use graylab::engine::{Backend, ConvertSettings, Engine, RunOptions};
use graylab::io::{DecodeOptions, IoError, decode_file};
use graylab::pixel::Formula;
use image::{DynamicImage, ImageBuffer};

/// One directory entry: tag, type (3 SHORT, 4 LONG) and values.
type Entry = (u16, u16, Vec<u32>);

/// A one-strip TIFF holding `entries` (sorted here), `data` as its strip (`StripOffsets` and
/// `StripByteCounts` are added), values that do not fit in an entry placed after the directory.
fn tiff(little: bool, entries: &[Entry], data: &[u8]) -> Vec<u8> {
    laid_out(little, false, entries, data)
}

/// [`tiff`], classic or `BigTIFF` (`big`: 64-bit offsets and counts, 20-byte entries, values of
/// up to 8 bytes inline).
fn laid_out(little: bool, big: bool, entries: &[Entry], data: &[u8]) -> Vec<u8> {
    let mut entries = entries.to_vec();
    entries.push((273, 4, vec![0]));
    entries.push((279, 4, vec![data.len() as u32]));
    entries.sort_by_key(|e| e.0);
    // An unsigned integer of `n` bytes in the file's byte order.
    let uint = |v: u64, n: usize| -> Vec<u8> {
        if little { v.to_le_bytes()[..n].to_vec() } else { v.to_be_bytes()[8 - n..].to_vec() }
    };
    let value_bytes = |kind: u16, values: &[u32]| -> Vec<u8> {
        values.iter().flat_map(|&v| uint(u64::from(v), if kind == 3 { 2 } else { 4 })).collect()
    };
    // The header's length, and the widths of an entry count, an entry, and a value field.
    let (head_len, count_len, entry_len, field_len) = if big { (16, 8, 20, 8) } else { (8, 2, 12, 4) };
    let ifd_len = count_len + entry_len * entries.len() + field_len;
    let mut extra: Vec<u8> = Vec::new();
    let extra_at = head_len + ifd_len;
    let out_of_line: usize =
        entries.iter().map(|(_, kind, v)| value_bytes(*kind, v).len()).filter(|&n| n > field_len).sum();
    let data_at = (extra_at + out_of_line) as u32;
    let mut t = match (little, big) {
        (true, false) => b"II*\0".to_vec(),
        (false, false) => b"MM\0*".to_vec(),
        (true, true) => b"II+\0".to_vec(),
        (false, true) => b"MM\0+".to_vec(),
    };
    if big {
        // The offsets' size, a reserved word, then the first directory's offset.
        t.extend(uint(8, 2));
        t.extend(uint(0, 2));
    }
    t.extend(uint(head_len as u64, field_len));
    t.extend(uint(entries.len() as u64, count_len));
    for (tag, kind, values) in &entries {
        let values = if *tag == 273 { vec![data_at] } else { values.clone() };
        let bytes = value_bytes(*kind, &values);
        t.extend(uint(u64::from(*tag), 2));
        t.extend(uint(u64::from(*kind), 2));
        t.extend(uint(values.len() as u64, field_len));
        if bytes.len() <= field_len {
            let mut inline = bytes.clone();
            inline.resize(field_len, 0);
            t.extend(inline);
        } else {
            t.extend(uint((extra_at + extra.len()) as u64, field_len));
            extra.extend(bytes);
        }
    }
    t.extend(uint(0, field_len));
    t.extend(extra);
    assert_eq!(t.len(), data_at as usize);
    t.extend_from_slice(data);
    t
}

/// The entries of a `w` x `h` image of `samples` samples of `bits` bits.
fn basic(w: u32, h: u32, photometric: u32, samples: u32, bits: u32) -> Vec<Entry> {
    vec![
        (256, 4, vec![w]),
        (257, 4, vec![h]),
        (258, 3, vec![bits; samples as usize]),
        (259, 3, vec![1]),
        (262, 3, vec![photometric]),
        (277, 3, vec![samples]),
        (278, 4, vec![h]),
    ]
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("write test file");
    p
}

fn decode(path: &Path) -> Result<DynamicImage, IoError> {
    decode_file(path, &DecodeOptions::default()).map(|d| d.image)
}

/// The gray image on the CPU and, where there is an adapter, on the GPU (which must agree).
fn converted(image: &DynamicImage) -> DynamicImage {
    let cpu = Engine::cpu_only();
    let settings = ConvertSettings { threads: 2, ..ConvertSettings::default() };
    let a = cpu.convert(image, &settings, RunOptions::default()).expect("cpu").image;
    if let Some(gpu) = common::gpu() {
        let engine = Engine::with_gpu(gpu);
        let s = ConvertSettings { backend: Backend::Gpu, ..settings };
        let b = engine.convert(image, &s, RunOptions::default()).expect("gpu").image;
        assert_eq!(a, b, "GPU = CPU");
    }
    a
}

/// What Pillow and `ImageMagick` make an 8-bit premultiplied sample: floor(c * 255 / a), at most
/// 255; 0 where a is 0 (measured with Pillow 13 and `ImageMagick` 6.9 on these files).
fn straight8(c: u8, a: u8) -> u8 {
    (u32::from(c) * 255).checked_div(u32::from(a)).map_or(0, |v| v.min(255) as u8)
}

/// What `ImageMagick` makes a 16-bit one: round(c * 65535 / a), at most 65535.
fn straight16(c: u16, a: u16) -> u16 {
    let (c, a) = (u32::from(c), u32::from(a));
    (c * 65535 + a / 2).checked_div(a).map_or(0, |v| v.min(65535) as u16)
}

/// 16-bit samples as the bytes of an image buffer.
fn ne_bytes(words: &[u16]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_ne_bytes()).collect()
}

#[test]
fn associated_alpha_is_made_straight_before_the_formula_on_both_backends() {
    let dir = tempfile::tempdir().expect("temp dir");
    // Premultiplied samples: half-transparent, low alpha, transparent, opaque.
    let pixels: [[u8; 4]; 6] = [
        [100, 50, 25, 128],
        [10, 9, 3, 12],
        [0, 0, 0, 0],
        [200, 100, 0, 255],
        [60, 60, 60, 60],
        [1, 2, 3, 4],
    ];
    let mut entries = basic(3, 2, 2, 4, 8);
    entries.push((338, 3, vec![1]));
    let path = write(dir.path(), "rgba8-assoc.tif", &tiff(true, &entries, pixels.as_flattened()));
    let decoded = decode(&path).expect("premultiplied RGBA");
    assert_eq!(
        decoded.as_bytes()[..8],
        [199, 99, 49, 128, 212, 191, 63, 12],
        "Pillow's and ImageMagick's values"
    );
    let gray = converted(&decoded);
    let want: Vec<u8> = pixels
        .iter()
        .flat_map(|p| {
            let s = |c: u8| straight8(c, p[3]);
            [Formula::Bt601.luma8(s(p[0]), s(p[1]), s(p[2])), p[3]]
        })
        .collect();
    assert_eq!(gray.as_bytes(), want, "gray + alpha of the straight colours");

    // 16-bit, big-endian.
    let words: [[u16; 4]; 2] = [[30000, 20000, 10000, 40000], [5, 4, 3, 0]];
    let mut entries = basic(2, 1, 2, 4, 16);
    entries.push((338, 3, vec![1]));
    let data: Vec<u8> = words.as_flattened().iter().flat_map(|v| v.to_be_bytes()).collect();
    let decoded =
        decode(&write(dir.path(), "rgba16-assoc.tif", &tiff(false, &entries, &data))).expect("16-bit");
    let DynamicImage::ImageRgba16(rgba) = &decoded else { panic!("{:?}", decoded.color()) };
    let s = straight16;
    assert_eq!(rgba.as_raw(), &[s(30000, 40000), s(20000, 40000), s(10000, 40000), 40000, 0, 0, 0, 0]);
    assert_eq!(rgba.as_raw()[..3], [49151, 32768, 16384], "ImageMagick's values");
    let gray = converted(&decoded);
    let DynamicImage::ImageLumaA16(la) = &gray else { panic!("{:?}", gray.color()) };
    assert_eq!(la.as_raw()[1..], [40000, 0, 0]);

    // Straight (unassociated) alpha is left as it is.
    let mut entries = basic(3, 2, 2, 4, 8);
    entries.push((338, 3, vec![2]));
    let path = write(dir.path(), "rgba8-straight.tif", &tiff(true, &entries, pixels.as_flattened()));
    assert_eq!(decode(&path).expect("straight RGBA").as_bytes(), pixels.as_flattened());
}

#[test]
fn gray_with_alpha_and_floating_point_gray_convert() {
    let dir = tempfile::tempdir().expect("temp dir");
    let la: [u8; 8] = [10, 255, 200, 128, 0, 0, 255, 1];
    for (name, extra, white_is_zero, want) in [
        ("la8.tif", 2, false, la.to_vec()),
        ("la8-white-is-zero.tif", 2, true, vec![245, 255, 55, 128, 255, 0, 0, 1]),
        ("la8-assoc.tif", 1, false, vec![10, 255, 255, 128, 0, 0, 255, 1]),
        // An extra sample of unspecified meaning is no alpha.
        ("gray-extra.tif", 0, false, vec![10, 200, 0, 255]),
    ] {
        let mut entries = basic(2, 2, u32::from(!white_is_zero), 2, 8);
        entries.push((338, 3, vec![extra]));
        let decoded = decode(&write(dir.path(), name, &tiff(true, &entries, &la)))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(decoded.as_bytes(), want, "{name}");
        assert_eq!(converted(&decoded).as_bytes(), want, "{name}: gray passes through both backends");
        // The same as a BigTIFF (as graylab writes past 4 GiB), in either byte order: read alike
        // (the `image` crate alone refuses gray + alpha, "color type Unknown(16)").
        for little in [true, false] {
            let big =
                write(dir.path(), &format!("big-{little}-{name}"), &laid_out(little, true, &entries, &la));
            let decoded = decode(&big).unwrap_or_else(|e| panic!("BigTIFF {name}: {e}"));
            assert_eq!(decoded.as_bytes(), want, "BigTIFF {name}");
        }
    }

    // 16-bit gray + alpha, big-endian.
    let words: [u16; 4] = [1000, 65535, 30000, 20000];
    let mut entries = basic(2, 1, 1, 2, 16);
    entries.push((338, 3, vec![2]));
    let data: Vec<u8> = words.iter().flat_map(|v| v.to_be_bytes()).collect();
    let decoded = decode(&write(dir.path(), "la16.tif", &tiff(false, &entries, &data))).expect("LA16");
    let DynamicImage::ImageLumaA16(got) = &decoded else { panic!("{:?}", decoded.color()) };
    assert_eq!(got.as_raw(), &words);
    // The same samples as associated alpha: the gray is made straight.
    entries.retain(|e| e.0 != 338);
    entries.push((338, 3, vec![1]));
    let decoded = decode(&write(dir.path(), "la16-assoc.tif", &tiff(false, &entries, &data))).expect("LA16");
    let want = [straight16(1000, 65535), 65535, straight16(30000, 20000), 20000];
    assert_eq!(converted(&decoded).as_bytes(), ne_bytes(&want));

    // Floating-point gray becomes 16-bit as graylab's floating-point RGB does.
    let floats: [f32; 6] = [0.0, 0.25, 0.5, 1.0, 1.5, -0.2];
    let mut entries = basic(3, 2, 1, 1, 32);
    entries.push((339, 3, vec![3]));
    let data: Vec<u8> = floats.iter().flat_map(|v| v.to_le_bytes()).collect();
    let decoded = decode(&write(dir.path(), "f32.tif", &tiff(true, &entries, &data))).expect("float gray");
    let rgb: Vec<f32> = floats.iter().flat_map(|&v| [v, v, v]).collect();
    let as_rgb = DynamicImage::ImageRgb32F(ImageBuffer::from_raw(3, 2, rgb).expect("size"));
    let want: Vec<u16> = as_rgb.to_rgb16().pixels().map(|p| p[0]).collect();
    let DynamicImage::ImageLuma16(got) = &decoded else { panic!("{:?}", decoded.color()) };
    assert_eq!(got.as_raw(), &want);
    assert_eq!(converted(&decoded), decoded);
    // The floating-point RGB it is consistent with gives the same gray through the formula.
    let DynamicImage::ImageLuma16(from_rgb) = converted(&as_rgb) else { panic!("L16") };
    assert_eq!(from_rgb.as_raw(), &want);
}

#[test]
fn variants_graylab_cannot_read_are_named_in_words() {
    let dir = tempfile::tempdir().expect("temp dir");
    let with = |entries: &[Entry], changes: &[Entry]| -> Vec<Entry> {
        let mut e: Vec<Entry> =
            entries.iter().filter(|(t, ..)| changes.iter().all(|c| c.0 != *t)).cloned().collect();
        e.extend_from_slice(changes);
        e
    };
    let rgb = basic(4, 2, 2, 3, 8);
    let gray1 = basic(8, 2, 0, 1, 1);
    for (name, entries, what) in [
        (
            "cmyk-jpeg.tif",
            with(&rgb, &[(259, 3, vec![7]), (262, 3, vec![5])]),
            "JPEG-compressed data of PhotometricInterpretation 5",
        ),
        ("ycbcr.tif", with(&rgb, &[(262, 3, vec![6])]), "YCbCr data (PhotometricInterpretation 6)"),
        ("lab.tif", with(&rgb, &[(262, 3, vec![8])]), "CIE L*a*b* data (PhotometricInterpretation 8)"),
        (
            "g3-2d.tif",
            with(&gray1, &[(259, 3, vec![3]), (292, 4, vec![1])]),
            "CCITT Group 3 data (compression 3) in two-dimensional coding (T4Options 1)",
        ),
        (
            "palette-no-map.tif",
            with(&gray1, &[(262, 3, vec![3])]),
            "palette data but no colour map (ColorMap tag)",
        ),
        ("gray3.tif", basic(2, 2, 1, 3, 8), "gray data of 8-bit samples, 3 per pixel"),
        // The `tiff` crate panics on these (an assertion); strips of separate planes it reads.
        (
            "planar-tiles.tif",
            with(&rgb, &[(284, 3, vec![2]), (322, 4, vec![16]), (323, 4, vec![16])]),
            "tiles of separate colour planes (PlanarConfiguration 2)",
        ),
    ] {
        // Named alike in a classic TIFF and in a big-endian BigTIFF.
        let big = write(dir.path(), &format!("big-{name}"), &laid_out(false, true, &entries, &[0; 64]));
        let err = decode(&big).expect_err(name).to_string();
        assert!(err.contains(&format!("a TIFF with {what}")), "BigTIFF {name}: {err}");
        let err = decode(&write(dir.path(), name, &tiff(true, &entries, &[0; 64]))).expect_err(name);
        let msg = err.to_string();
        assert!(matches!(err, IoError::Unsupported { .. }), "{name}: {err:?}");
        assert!(msg.contains(&format!("a TIFF with {what}")) && msg.ends_with(name), "{name}: {msg}");
        assert!(!msg.contains("Unknown("), "{name}: {msg}");
    }
}

/// Gray of 2 or 4 bits a sample (a document scan's 16 levels) was refused ("a TIFF with 4-bit
/// unsigned-integer samples") where libtiff, Pillow and `ImageMagick` read it: each level is
/// made 8-bit as libtiff makes it (level x 255 / top level: 4 bits 0, 17 ... 255; 2 bits 0, 85,
/// 170, 255), 0 white where the file says so, across rows padded to a whole byte.
#[test]
fn two_and_four_bit_gray_tiffs_are_read_level_by_level_as_libtiff_reads_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (w, h) = (5u32, 3u32);
    for bits in [2u32, 4] {
        let top = (1u32 << bits) - 1;
        let level = |x: u32, y: u32| (x + 2 * y) % (top + 1);
        let data = common::packed_levels((w, h), bits, level);
        for (photometric, white_is_zero) in [(1, false), (0, true)] {
            let name = format!("g{bits}-{photometric}.tif");
            let path = write(dir.path(), &name, &tiff(true, &basic(w, h, photometric, 1, bits), &data));
            let image = decode(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
            let gray =
                image.as_luma8().unwrap_or_else(|| panic!("{name}: 8-bit gray, not {:?}", image.color()));
            for (x, y, p) in gray.enumerate_pixels() {
                let l = if white_is_zero { top - level(x, y) } else { level(x, y) };
                assert_eq!(u32::from(p.0[0]), l * 255 / top, "{name} at ({x}, {y})");
            }
        }
    }
    // The caption and the report say what the file stores.
    let o = common::graylab(&["convert", "g4-1.tif", "-o", "g4.png"], dir.path());
    assert!(
        common::text(&o).contains("note: the file stores 4-bit gray: read as 8-bit gray"),
        "{}",
        common::text(&o)
    );
    // Three samples of 4 bits are still named.
    let err =
        decode(&write(dir.path(), "rgb4.tif", &tiff(true, &basic(2, 2, 2, 3, 4), &[0; 6]))).expect_err("rgb");
    assert!(err.to_string().contains("a TIFF with 4-bit unsigned-integer samples"), "{err}");
}

#[test]
fn palette_tiffs_are_read_through_their_colour_map() {
    let dir = tempfile::tempdir().expect("temp dir");
    // 4-bit indices, 16-bit colour map, both byte orders; rows start on a byte.
    let map16: Vec<u32> = (0..16u32)
        .map(|i| i * 4369)
        .chain((0..16).map(|i| 65535 - i * 4369))
        .chain((0..16).map(|i| i * 1000))
        .collect();
    let indices = [[1usize, 15, 0], [7, 2, 9]];
    let data = [0x1F, 0x00, 0x72, 0x90];
    let rgb16 = |i: usize| [map16[i] >> 8, map16[16 + i] >> 8, map16[32 + i] >> 8].map(|v| v as u8);
    for little in [true, false] {
        let mut entries = basic(3, 2, 3, 1, 4);
        entries.push((320, 3, map16.clone()));
        let name = if little { "p4-le.tif" } else { "p4-be.tif" };
        let decoded = decode(&write(dir.path(), name, &tiff(little, &entries, &data)))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let want: Vec<u8> = indices.as_flattened().iter().flat_map(|&i| rgb16(i)).collect();
        assert_eq!(decoded.as_bytes(), want, "{name}");
        let gray: Vec<u8> = want.chunks(3).map(|p| Formula::Bt601.luma8(p[0], p[1], p[2])).collect();
        assert_eq!(converted(&decoded).as_bytes(), gray, "{name}");
    }
    // 8-bit indices and a colour map of 8-bit values (none above 255), taken as they are.
    let map8: Vec<u32> = (0..256u32).map(|i| 255 - i).chain(0..256).chain((0..256).map(|i| i / 2)).collect();
    let mut entries = basic(4, 1, 3, 1, 8);
    entries.push((320, 3, map8));
    let decoded = decode(&write(dir.path(), "p8.tif", &tiff(true, &entries, &[0, 1, 200, 255]))).expect("p8");
    assert_eq!(decoded.as_bytes(), [255, 0, 0, 254, 1, 0, 55, 200, 100, 0, 255, 127]);
    // 1-bit indices: ten pixels in two bytes.
    let mut entries = basic(10, 1, 3, 1, 1);
    entries.push((320, 3, vec![0, 65535, 65535, 0, 0, 65535]));
    let decoded =
        decode(&write(dir.path(), "p1.tif", &tiff(true, &entries, &[0b1010_0000, 0b0100_0000]))).expect("p1");
    let want: Vec<u8> = [1, 0, 1, 0, 0, 0, 0, 0, 0, 1]
        .iter()
        .flat_map(|&i| if i == 1 { [255, 0, 255] } else { [0, 255, 0] })
        .collect();
    assert_eq!(decoded.as_bytes(), want);
}

/// Bits written first to last, most significant first in each byte.
#[derive(Default)]
struct Bits {
    bytes: Vec<u8>,
    used: u32,
}

impl Bits {
    fn put(&mut self, code: &str) {
        for c in code.chars() {
            if self.used.is_multiple_of(8) {
                self.bytes.push(0);
            }
            if c == '1' {
                *self.bytes.last_mut().expect("a byte") |= 0x80 >> (self.used % 8);
            }
            self.used += 1;
        }
    }

    fn align(&mut self) {
        self.used = self.used.div_ceil(8) * 8;
    }
}

/// T.4 codes for the runs the test images use.
fn run_code(white: bool, run: u32) -> &'static str {
    match (white, run) {
        (true, 0) => "00110101",
        (true, 1) => "000111",
        (true, 2) => "0111",
        (true, 3) => "1000",
        (true, 64) => "11011",
        (false, 2) => "11",
        (false, 4) => "011",
        (false, 5) => "0011",
        _ => panic!("no code for {run}"),
    }
}

/// Three rows of 70 pixels as runs (starting with white), one makeup code among them.
const ROWS: [&[u32]; 3] = [&[3, 2, 65], &[0, 5, 65], &[66, 4]];

fn coded_row(bits: &mut Bits, runs: &[u32]) {
    for (k, &run) in runs.iter().enumerate() {
        let white = k % 2 == 0;
        if run >= 64 {
            bits.put(run_code(white, 64));
        }
        bits.put(run_code(white, run % 64));
    }
}

#[test]
fn ccitt_modified_huffman_and_group3_tiffs_are_read() {
    let dir = tempfile::tempdir().expect("temp dir");
    let black_pixels = |photometric: u32| -> Vec<u8> {
        let (white, black) = if photometric == 0 { (255, 0) } else { (0, 255) };
        ROWS.iter()
            .flat_map(|runs| {
                runs.iter()
                    .enumerate()
                    .flat_map(move |(k, &n)| vec![if k % 2 == 0 { white } else { black }; n as usize])
            })
            .collect()
    };
    let (mut huffman, mut group3, mut group3_aligned) = (Bits::default(), Bits::default(), Bits::default());
    for runs in ROWS {
        coded_row(&mut huffman, runs);
        huffman.align();
        group3.put("000000000001");
        coded_row(&mut group3, runs);
        // Fill bits (T4Options bit 2): each end-of-line code ends on a byte.
        let fill = (group3_aligned.used + 12).div_ceil(8) * 8 - 12 - group3_aligned.used;
        group3_aligned.put(&"0".repeat(fill as usize));
        group3_aligned.put("000000000001");
        coded_row(&mut group3_aligned, runs);
    }
    for (name, compression, t4, bits, photometric, fill_order) in [
        ("mh.tif", 2, None, &huffman, 0, 1),
        ("mh-black-is-zero.tif", 2, None, &huffman, 1, 1),
        ("g3.tif", 3, Some(0), &group3, 0, 1),
        ("g3-fill.tif", 3, Some(4), &group3_aligned, 0, 1),
        ("g3-lsb-first.tif", 3, None, &group3, 0, 2),
    ] {
        let mut entries = basic(70, 3, photometric, 1, 1);
        entries.retain(|e| e.0 != 259);
        entries.push((259, 3, vec![compression]));
        entries.push((266, 3, vec![fill_order]));
        if let Some(t4) = t4 {
            entries.push((292, 4, vec![t4]));
        }
        let mut data = bits.bytes.clone();
        if fill_order == 2 {
            for b in &mut data {
                *b = b.reverse_bits();
            }
        }
        let decoded = decode(&write(dir.path(), name, &tiff(true, &entries, &data)))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(decoded.as_bytes(), black_pixels(photometric), "{name}");
        assert_eq!(converted(&decoded), decoded, "{name}");
    }
    // Cut short: the file is truncated, not damaged.
    let mut entries = basic(70, 3, 0, 1, 1);
    entries.retain(|e| e.0 != 259);
    entries.push((259, 3, vec![2]));
    let err = decode(&write(dir.path(), "mh-cut.tif", &tiff(true, &entries, &huffman.bytes[..4])))
        .expect_err("cut");
    assert!(matches!(err, IoError::Truncated { .. }), "{err:?}");
}

/// `tiff` as libtiff reads it through `tiff2rgba` (its JPEG pieces decoded by libjpeg, YCbCr to
/// RGB by libjpeg), as RGB; `None` without the tool.
fn libtiff_rgb(tiff: &Path) -> Option<image::RgbImage> {
    let out = tiff.with_extension("rgba.tif");
    let done = crate::codecs::reference_tool(
        "tiff2rgba",
        "libtiff-tools",
        &["-c".as_ref(), "none".as_ref(), tiff.as_os_str(), out.as_os_str()],
    )?;
    assert!(done.status.success(), "tiff2rgba: {}", String::from_utf8_lossy(&done.stderr));
    Some(image::open(&out).expect("tiff2rgba's output").to_rgb8())
}

#[test]
fn jpeg_compressed_tiffs_decode_as_libtiff_does_stripped_and_tiled() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let colour = image::RgbImage::from_fn(301, 203, |x, y| {
        image::Rgb([(x * 5 + y) as u8, (y * 3) as u8, ((x ^ y) * 2) as u8])
    });
    let plain = d.join("plain.tif");
    colour.save(&plain).expect("an uncompressed TIFF");
    // tiffcp writes what libtiff's JPEG codec writes: YCbCr (its default), RGB (`jpeg:r`), strips
    // of 16 rows or tiles of 64 x 64 (the last ones cut by the image's edge).
    let cases: [(&str, &[&str]); 3] = [
        ("ycbcr-strips.tif", &["-c", "jpeg", "-r", "16"]),
        ("ycbcr-tiles.tif", &["-c", "jpeg", "-t", "-w", "64", "-l", "64"]),
        ("rgb-strips.tif", &["-c", "jpeg:r", "-r", "16"]),
    ];
    for (name, flags) in cases {
        let path = d.join(name);
        let mut args: Vec<&std::ffi::OsStr> = flags.iter().map(std::ffi::OsStr::new).collect();
        args.extend([plain.as_os_str(), path.as_os_str()]);
        let Some(made) = crate::codecs::reference_tool("tiffcp", "libtiff-tools", &args) else { return };
        assert!(made.status.success(), "tiffcp {name}: {}", String::from_utf8_lossy(&made.stderr));
        let decoded = graylab::io::decode_file(&path, &graylab::io::DecodeOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let Some(reference) = libtiff_rgb(&path) else { return };
        let ours = decoded.image.to_rgb8();
        assert_eq!(ours.dimensions(), (301, 203), "{name}");
        let worst = ours.as_raw().iter().zip(reference.as_raw()).map(|(a, b)| a.abs_diff(*b)).max();
        assert_eq!(worst, Some(0), "{name}: libjpeg's pixels, as libtiff's");
    }
    // A piece cut short is refused by name, not decoded to a wrong image.
    let whole = std::fs::read(d.join("ycbcr-strips.tif")).expect("read");
    let cut = d.join("cut.tif");
    std::fs::write(&cut, &whole[..whole.len() * 2 / 3]).expect("write");
    let err = graylab::io::decode_file(&cut, &graylab::io::DecodeOptions::default()).expect_err("cut");
    assert!(err.to_string().contains("cut.tif"), "{err}");
}

#[test]
fn cmyk_tiffs_are_read_with_libtiffs_integer_formula_and_said_to_be_cmyk() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    // Every ink against three blacks: 51 is where a floating-point formula loses a level.
    let blacks = [0u8, 51, 200];
    let inks = |c: u8, k: u8| [c, 255 - c, c / 2, k];
    let data: Vec<u8> = blacks.iter().flat_map(|&k| (0..=255u8).flat_map(move |c| inks(c, k))).collect();
    let path = write(d, "cmyk.tif", &tiff(true, &basic(256, 3, 5, 4, 8), &data));
    let decoded = decode_file(&path, &DecodeOptions::default()).expect("a CMYK TIFF");
    assert_eq!(decoded.stored_as, Some("CMYK"), "the caption and the CLI say so");
    // libtiff's `TIFFReadRGBAImage`, which OpenCV's `imread` uses: (255 - ink) * (255 - k) / 255.
    let libtiff = |ink: u8, k: u8| ((255 - u32::from(ink)) * (255 - u32::from(k)) / 255) as u8;
    let want = image::RgbImage::from_fn(256, 3, |x, y| {
        let [c, m, yellow, k] = inks(x as u8, blacks[y as usize]);
        image::Rgb([libtiff(c, k), libtiff(m, k), libtiff(yellow, k)])
    });
    let DynamicImage::ImageRgb8(rgb) = &decoded.image else {
        panic!("8-bit RGB: {:?}", decoded.image.color())
    };
    assert_eq!(rgb, &want);
    if let Some(reference) = libtiff_rgb(&path) {
        assert_eq!(rgb, &reference, "libtiff's own reading");
    }
    // 16-bit samples, the same formula at their depth.
    let words: Vec<u16> = [[0, 65535, 1000, 13107], [40000, 20000, 0, 0]].concat();
    let data: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let path = write(d, "cmyk16.tif", &tiff(true, &basic(2, 1, 5, 4, 16), &data));
    let decoded = decode_file(&path, &DecodeOptions::default()).expect("a 16-bit CMYK TIFF");
    let DynamicImage::ImageRgb16(rgb) = &decoded.image else { panic!("16-bit RGB") };
    assert_eq!(rgb.as_raw(), &[52428, 0, 51628, 25535, 45535, 65535]);
    let o = common::graylab(&["convert", "cmyk.tif", "-o", "cmyk.png"], d);
    let said = common::text(&o);
    assert!(o.status.success() && said.contains("note: the file stores CMYK: read as RGB"), "{said}");
}

#[test]
fn damaged_packbits_strips_are_refused_where_libtiff_warns_or_refuses() {
    let dir = tempfile::tempdir().expect("temp dir");
    // 6x3 gray, 18 bytes; PackBits: a literal row (5: 6 bytes), a repeated row (251: 6 times),
    // a literal row.
    let pixels: Vec<u8> =
        (0..6u8).map(|v| v * 40).chain([77; 6]).chain((0..6u8).map(|v| 250 - v * 9)).collect();
    let mut coded = vec![5];
    coded.extend(&pixels[..6]);
    coded.extend([251, 77, 5]);
    coded.extend(&pixels[12..]);
    let entries: Vec<Entry> = basic(6, 3, 1, 1, 8)
        .into_iter()
        .map(|(tag, kind, v)| if tag == 259 { (tag, kind, vec![32773]) } else { (tag, kind, v) })
        .collect();
    let read = |name: &str, data: &[u8]| decode(&write(dir.path(), name, &tiff(true, &entries, data)));
    // Whole, and with padding after its rows (libtiff reads both without a word).
    for (name, data) in
        [("whole.tif", coded.clone()), ("padded.tif", [coded.as_slice(), &[0x80, 0]].concat())]
    {
        let image = read(name, &data).expect(name);
        assert_eq!(image.as_bytes(), pixels.as_slice(), "{name}");
    }
    // A repeat run of 8 where there was 6 runs past the strip's end (libtiff: "Discarding 2
    // bytes"); a strip cut after its first row ends short (libtiff: "Not enough data").
    let mut over = coded.clone();
    over[7] = 249;
    for (name, data, how) in [
        ("over.tif", over, "unpacks to 20 bytes where its rows hold 18"),
        ("short.tif", coded[..7].to_vec(), "ends after 6 of its 18 bytes"),
    ] {
        let err = read(name, &data).expect_err(name);
        let msg = err.to_string();
        assert!(matches!(err, IoError::Decode { .. }), "{name}: {err:?}");
        let says = format!("its PackBits data is damaged: strip 1 of 1 (rows 1 to 3 of 3) {how}");
        assert!(msg.contains(&says) && msg.ends_with(name), "{name}: {msg}");
    }
}

/// A camera raw laid out as a DNG or a NEF: a 16x12 RGB preview first (`NewSubfileType` 1), the
/// raw in a `SubIFD` (its offset here the first directory's: no reader follows it); `dng` adds a
/// `DNGVersion`.
pub(crate) fn camera_raw(dng: bool) -> Vec<u8> {
    let mut entries = basic(16, 12, 2, 3, 8);
    entries.push((254, 4, vec![1]));
    entries.push((330, 4, vec![8]));
    if dng {
        entries.push((50706, 1, vec![0x0000_0401]));
    }
    tiff(true, &entries, &[90; 16 * 12 * 3])
}

#[test]
fn a_camera_raw_is_refused_never_converted_from_its_preview() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(dir.path(), "IMG_0002.dng", &camera_raw(true));
    let o = common::graylab(&["convert", "IMG_0002.dng", "-o", "out.png"], dir.path());
    let said = common::text(&o);
    assert_eq!(o.status.code(), Some(1), "{said}");
    assert!(
        said.contains(
            "error: unsupported image (a camera raw (DNG) file: graylab would read only its 16x12 preview, and raw \
             sensor data is not supported; develop it to TIFF or JPEG first): IMG_0002.dng"
        ),
        "{said}"
    );
    assert!(!dir.path().join("out.png").exists(), "no thumbnail converted");
    // A NEF's layout, without a DNGVersion; a TIFF whose first image is a preview, alone.
    let err = decode(&write(dir.path(), "DSC_0001.nef", &camera_raw(false))).expect_err("a raw");
    let says = "unsupported image (a camera raw file (its full image in a SubIFD): graylab would read only its \
                16x12 preview";
    assert!(err.to_string().starts_with(says), "{err}");
    let with_kind = |kind: u32| {
        let mut entries = basic(16, 12, 2, 3, 8);
        entries.push((254, 4, vec![kind]));
        tiff(true, &entries, &[90; 16 * 12 * 3])
    };
    let err = decode(&write(dir.path(), "thumb.tif", &with_kind(1))).expect_err("a preview");
    let says = "a TIFF whose first image is a 16x12 preview of reduced resolution (NewSubfileType 1)";
    assert!(err.to_string().contains(says), "{err}");
    // A raw whose first image is the sensor's colour filter array (as a Pentax PEF), or a DNG's
    // linear raw, without any other sign.
    for photometric in [32803, 34892] {
        let err = decode(&write(
            dir.path(),
            "IMGP0001.PEF",
            &tiff(true, &basic(16, 12, photometric, 1, 16), &[0; 384]),
        ))
        .expect_err("sensor data");
        let says = format!(
            "unsupported image (a camera raw file (its first image is sensor data, PhotometricInterpretation \
             {photometric}): raw sensor data is not supported; develop it to TIFF or JPEG first): "
        );
        assert!(err.to_string().starts_with(&says), "{err}");
    }
    // A full-resolution image (0), and a page of a document (2), are read as before.
    for kind in [0, 2] {
        let image = decode(&write(dir.path(), "page.tif", &with_kind(kind))).expect("a page");
        assert_eq!((image.width(), image.height(), image.as_bytes()[0]), (16, 12, 90), "{kind}");
    }
}

/// A Canon CR2 (a TIFF whose first image is a full-size JPEG preview, "CR" 2 in its header) was
/// refused as "a TIFF with no `PhotometricInterpretation` tag"; it is a camera raw, said so by name.
#[test]
fn a_canon_cr2_is_refused_as_a_camera_raw() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(dir.path(), "IMG_0001.CR2", &common::canon_cr2(48, 32));
    let o = common::graylab(&["convert", "IMG_0001.CR2", "-o", "out.png"], dir.path());
    let said = common::text(&o);
    assert_eq!(o.status.code(), Some(1), "{said}");
    assert!(
        said.contains(
            "error: unsupported image (a camera raw (Canon CR2) file: graylab would read only its 48x32 JPEG \
             preview, and raw sensor data is not supported; develop it to TIFF or JPEG first): IMG_0001.CR2"
        ),
        "{said}"
    );
    assert!(!dir.path().join("out.png").exists(), "no preview converted");
    // Known by its header even where its first directory cannot be read (a tag of a wrong type).
    let mut odd = common::canon_cr2(48, 32);
    odd[18 + 2] = 7;
    let err = decode(&write(dir.path(), "odd.cr2", &odd)).expect_err("a raw");
    assert!(err.to_string().starts_with("unsupported image (a camera raw (Canon CR2) file"), "{err}");
    // "CR" with another version, or in a big-endian file, is a TIFF like any other.
    let mut v3 = common::canon_cr2(48, 32);
    v3[10] = 3;
    let err = decode(&write(dir.path(), "v3.tif", &v3)).expect_err("no PhotometricInterpretation");
    assert!(!err.to_string().contains("camera raw"), "{err}");
}

#[test]
fn a_tiff_orientation_tag_is_said_to_be_one_not_exif() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut entries = basic(4, 2, 1, 1, 8);
    entries.push((274, 3, vec![6]));
    write(dir.path(), "turned.tif", &tiff(true, &entries, &[0, 30, 60, 90, 120, 150, 180, 210]));
    let o = common::graylab(&["convert", "turned.tif", "-o", "turned.png"], dir.path());
    let said = common::text(&o);
    assert!(o.status.success() && said.contains("note: orientation applied (TIFF tag)"), "{said}");
    assert!(!said.contains("EXIF"), "{said}");
    let turned = image::open(dir.path().join("turned.png")).expect("output").to_luma8();
    // Turned clockwise: the bottom row as stored is the left column.
    assert_eq!(turned.as_raw(), &[120, 0, 150, 30, 180, 60, 210, 90]);
}

/// Decodes `image` saved as `ext` under a budget of `budget_bytes`: the bytes reserved.
fn reserved(image: &DynamicImage, ext: &str, budget_bytes: u64) -> Result<u64, IoError> {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(format!("in.{ext}"));
    image.save(&path).expect("save");
    let options = DecodeOptions { memory_budget_bytes: Some(budget_bytes), ..DecodeOptions::default() };
    decode_file(&path, &options).map(|d| d.memory.bytes())
}

/// A plain TIFF is read straight into the image, as a PNG is: the budget counts its pixels once
/// (`image`'s TIFF decoder read them into a buffer of its own and copied them out), and refuses
/// before decoding only what does not fit that.
#[test]
fn a_plain_tiff_reserves_no_copy_of_its_pixels() {
    let rgb = DynamicImage::ImageRgb8(image::RgbImage::from_fn(500, 400, |x, y| {
        image::Rgb([x as u8, y as u8, (x ^ y) as u8])
    }));
    let pixels_bytes = 500 * 400 * 3;
    let png = reserved(&rgb, "png", 1 << 30).expect("fits");
    assert!(png < 2 * pixels_bytes, "{png}");
    assert_eq!(reserved(&rgb, "tif", 1 << 30).expect("fits"), png);
    assert_eq!(reserved(&rgb, "tif", png).expect("fits at its size"), png);
    match reserved(&rgb, "tif", png - 1) {
        Err(IoError::TooLarge { needed_bytes, .. }) => assert_eq!(needed_bytes, png),
        other => panic!("refused before decoding, not {other:?}"),
    }
}
