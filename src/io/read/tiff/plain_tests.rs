//! Plain TIFFs built here (strips or tiles, uncompressed, LZW or Deflate with or without the
//! horizontal predictor, either byte order) read by `plain.rs` (compressed chunks by `chunks.rs`),
//! compared byte for byte with the `image` crate's own TIFF decoder, and what each holds besides
//! its output.

use std::io::Cursor;

use image::{ColorType, ImageDecoder};

use super::chunks::Chunks;
use super::open;
use crate::io::read::tiff_header::{Alpha, Variant};

/// How the pixels are laid out and coded.
#[derive(Clone, Copy, Debug)]
struct Layout {
    /// Rows per strip, or the side of a square tile when `tiled`.
    rows: u32,
    tiled: bool,
    coding: Coding,
    little: bool,
}

/// How the pieces are compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Coding {
    Raw,
    Lzw,
    /// LZW of the differences along each row (the horizontal predictor).
    LzwPredicted,
    /// Deflate (`Compression` 8), each piece a zlib stream.
    Deflate,
    /// Deflate of the differences along each row, under the older code (`Compression` 32946).
    DeflatePredicted,
}

impl Coding {
    fn predicted(self) -> bool {
        matches!(self, Self::LzwPredicted | Self::DeflatePredicted)
    }

    /// The `Compression` tag's value.
    fn tag(self) -> u32 {
        match self {
            Self::Raw => 1,
            Self::Lzw | Self::LzwPredicted => 5,
            Self::Deflate => 8,
            Self::DeflatePredicted => 32946,
        }
    }

    fn compress(self, raw: Vec<u8>) -> Vec<u8> {
        match self {
            Self::Raw => raw,
            Self::Lzw | Self::LzwPredicted => {
                weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8)
                    .encode(&raw)
                    .expect("lzw")
            }
            Self::Deflate | Self::DeflatePredicted => fdeflate::compress_to_vec(&raw),
        }
    }
}

/// A TIFF of `width` x `height` pixels of `samples` samples of `bits` bits (`pixels`: the
/// samples in native byte order, rows top to bottom), gray or RGB by the number of samples.
fn build(width: u32, height: u32, samples: u16, bits: u16, pixels: &[u8], layout: Layout) -> Vec<u8> {
    let sample_bytes = usize::from(bits / 8);
    let pixel_bytes = usize::from(samples) * sample_bytes;
    let (piece_w, piece_h) = if layout.tiled { (layout.rows, layout.rows) } else { (width, layout.rows) };
    let across = width.div_ceil(piece_w);
    let down = height.div_ceil(piece_h);
    let mut pieces = Vec::new();
    for py in 0..down {
        for px in 0..across {
            // A tile holds its whole size, padded with zeros; a strip its rows in the image.
            let rows = if layout.tiled { piece_h } else { piece_h.min(height - py * piece_h) };
            let mut raw = Vec::new();
            for y in py * piece_h..py * piece_h + rows {
                let mut row = Vec::new();
                for x in px * piece_w..px * piece_w + piece_w {
                    let at = (y as usize * width as usize + x as usize) * pixel_bytes;
                    match pixels.get(at..at + pixel_bytes) {
                        Some(p) if x < width && y < height => row.extend_from_slice(p),
                        _ => row.extend(std::iter::repeat_n(0, pixel_bytes)),
                    }
                }
                if layout.coding.predicted() {
                    predict(&mut row, pixel_bytes, sample_bytes);
                }
                if sample_bytes == 2 && layout.little != cfg!(target_endian = "little") {
                    row.chunks_exact_mut(2).for_each(|s| s.swap(0, 1));
                }
                raw.extend(row);
            }
            pieces.push(layout.coding.compress(raw));
        }
    }
    let photometric = if samples >= 3 { 2 } else { 1 };
    let mut entries: Vec<(u16, u16, Vec<u32>)> = vec![
        (256, 4, vec![width]),
        (257, 4, vec![height]),
        (258, 3, vec![u32::from(bits); usize::from(samples)]),
        (259, 3, vec![layout.coding.tag()]),
        (262, 3, vec![photometric]),
        (277, 3, vec![u32::from(samples)]),
        (284, 3, vec![1]),
        (317, 3, vec![if layout.coding.predicted() { 2 } else { 1 }]),
    ];
    if samples == 2 || samples == 4 {
        entries.push((338, 3, vec![2]));
    }
    let counts: Vec<u32> = pieces.iter().map(|p| p.len() as u32).collect();
    let (offsets_tag, counts_tag) = if layout.tiled {
        entries.push((322, 4, vec![piece_w]));
        entries.push((323, 4, vec![piece_h]));
        (324, 325)
    } else {
        entries.push((278, 4, vec![piece_h]));
        (273, 279)
    };
    entries.push((offsets_tag, 4, vec![0; pieces.len()]));
    entries.push((counts_tag, 4, counts));
    entries.sort_by_key(|e| e.0);
    let uint = |v: u32, n: usize| -> Vec<u8> {
        if layout.little { v.to_le_bytes()[..n].to_vec() } else { v.to_be_bytes()[4 - n..].to_vec() }
    };
    let size = |kind: u16| if kind == 3 { 2 } else { 4 };
    let ifd_len = 2 + 12 * entries.len() + 4;
    let extra_len: usize = entries.iter().map(|(_, k, v)| size(*k) * v.len()).filter(|&n| n > 4).sum();
    let data_at = 8 + ifd_len + extra_len;
    let mut offsets = Vec::new();
    let mut at = data_at;
    for piece in &pieces {
        offsets.push(at as u32);
        at += piece.len();
    }
    let mut t = if layout.little { b"II*\0".to_vec() } else { b"MM\0*".to_vec() };
    t.extend(uint(8, 4));
    t.extend(uint(entries.len() as u32, 2));
    let mut extra = Vec::new();
    for (tag, kind, values) in &entries {
        let values = if *tag == offsets_tag { &offsets } else { values };
        let bytes: Vec<u8> = values.iter().flat_map(|&v| uint(v, size(*kind))).collect();
        t.extend(uint(u32::from(*tag), 2));
        t.extend(uint(u32::from(*kind), 2));
        t.extend(uint(values.len() as u32, 4));
        if bytes.len() > 4 {
            t.extend(uint((8 + ifd_len + extra.len()) as u32, 4));
            extra.extend(bytes);
        } else {
            t.extend(bytes.iter().copied().chain(std::iter::repeat(0)).take(4));
        }
    }
    t.extend(uint(0, 4));
    t.extend(extra);
    for piece in &pieces {
        t.extend(piece);
    }
    t
}

/// Each sample of a row made its difference from the one a pixel before (native byte order).
fn predict(row: &mut [u8], pixel_bytes: usize, sample_bytes: usize) {
    for i in (pixel_bytes..row.len()).step_by(sample_bytes).rev() {
        if sample_bytes == 1 {
            row[i] = row[i].wrapping_sub(row[i - pixel_bytes]);
        } else {
            let v = u16::from_ne_bytes([row[i], row[i + 1]]);
            let p = u16::from_ne_bytes([row[i - pixel_bytes], row[i - pixel_bytes + 1]]);
            row[i..i + 2].copy_from_slice(&v.wrapping_sub(p).to_ne_bytes());
        }
    }
}

/// Pixels of `samples` samples of `bits` bits, varied enough for LZW and the predictor.
fn pixels(width: u32, height: u32, samples: u16, bits: u16) -> Vec<u8> {
    let count = (width * height) as usize * usize::from(samples);
    (0..count)
        .flat_map(|i| {
            let v = (i * 7919 + i / 13) as u16;
            if bits == 8 { vec![(v >> 3) as u8] } else { v.to_ne_bytes().to_vec() }
        })
        .collect()
}

/// `tiff` decoded by the variant `variant`: its colour, the bytes it holds besides its output,
/// and the pixels, or the decoder's error in words.
fn decoded(tiff: &[u8], variant: Variant) -> Result<(ColorType, u64, Vec<u8>), String> {
    let limits = image::Limits::no_limits();
    let (decoder, scratch_bytes) = open(Cursor::new(tiff.to_vec()), variant, &limits).expect("opens");
    let color = decoder.color_type();
    let mut buf = vec![0; usize::try_from(decoder.total_bytes()).expect("fits")];
    decoder.read_image_boxed(&mut buf).map_err(|e| e.to_string())?;
    Ok((color, scratch_bytes, buf))
}

const LAYOUTS: [Layout; 9] = [
    Layout { rows: 7, tiled: false, coding: Coding::Raw, little: true },
    Layout { rows: 16, tiled: true, coding: Coding::Raw, little: false },
    Layout { rows: 5, tiled: false, coding: Coding::LzwPredicted, little: true },
    Layout { rows: 3, tiled: false, coding: Coding::Lzw, little: false },
    Layout { rows: 16, tiled: true, coding: Coding::LzwPredicted, little: true },
    Layout { rows: 64, tiled: false, coding: Coding::LzwPredicted, little: false },
    Layout { rows: 4, tiled: false, coding: Coding::Deflate, little: true },
    Layout { rows: 6, tiled: false, coding: Coding::DeflatePredicted, little: false },
    Layout { rows: 16, tiled: true, coding: Coding::Deflate, little: true },
];

#[test]
fn plain_tiffs_read_straight_into_the_output_as_images_decoder_reads_them() {
    let (width, height) = (37, 29);
    let (mut failed, mut refused_by_image) = (Vec::new(), Vec::new());
    for (samples, bits, color) in [
        (3, 8, ColorType::Rgb8),
        (4, 8, ColorType::Rgba8),
        (3, 16, ColorType::Rgb16),
        (4, 16, ColorType::Rgba16),
        (1, 8, ColorType::L8),
        (1, 16, ColorType::L16),
    ] {
        let source = pixels(width, height, samples, bits);
        for layout in LAYOUTS {
            let what = format!("{color:?} {layout:?}");
            let tiff = build(width, height, samples, bits, &source, layout);
            let theirs = image::load_from_memory_with_format(&tiff, image::ImageFormat::Tiff);
            let (got_color, scratch_bytes, got) = match (decoded(&tiff, Variant::Plain), theirs) {
                (Ok(ours), Ok(theirs)) => {
                    assert_eq!(ours.2, theirs.as_bytes(), "{what}: as the `image` crate reads it");
                    ours
                }
                (Err(ours), Err(theirs)) => {
                    assert_eq!(ours, theirs.to_string(), "{what}: refused in the same words");
                    failed.push(what);
                    continue;
                }
                (Ok(ours), Err(_)) => {
                    refused_by_image.push(what.clone());
                    ours
                }
                (ours, theirs) => panic!("{what}: {:?} against {:?}", ours.err(), theirs.err()),
            };
            assert_eq!(got_color, color, "{what}");
            assert_eq!(got, source, "{what}: the pixels written");
            // No copy of the pixels: only the compressed chunks in flight, when on all cores,
            // and a tile of scratch for each of the two rows of tiles.
            let several_bands = layout.coding != Coding::Raw && height > layout.rows;
            let compressed = (tiff.len() - 8) as u64;
            let tiles = if layout.tiled {
                2 * u64::from(layout.rows.pow(2)) * u64::from(samples * bits / 8)
            } else {
                0
            };
            assert!(
                if several_bands {
                    scratch_bytes > 0 && scratch_bytes < compressed + tiles
                } else {
                    scratch_bytes == 0
                },
                "{what}: {scratch_bytes} bytes held besides the output"
            );
        }
    }
    // The `tiff` crate (0.11.3) finds no end code in these 16-pixel-wide LZW tiles, where libtiff
    // reads them, and so do the tiles decoded on all cores: the pixels written (above).
    let tiled_lzw = "L8 Layout { rows: 16, tiled: true, coding: LzwPredicted, little: true }";
    assert_eq!(refused_by_image, [tiled_lzw]);
    assert!(failed.is_empty(), "{failed:?}");
}

#[test]
fn gray_and_alpha_reads_straight_into_the_output_its_gray_inverted_where_0_is_white() {
    let (width, height) = (23, 19);
    for bits in [8, 16] {
        let source = pixels(width, height, 2, bits);
        for layout in LAYOUTS {
            let what = format!("LA{bits} {layout:?}");
            let tiff = build(width, height, 2, bits, &source, layout);
            let gray = Variant::Gray { alpha: Alpha::Straight, white_is_zero: None };
            let (color, scratch_bytes, got) = decoded(&tiff, gray).expect(&what);
            assert_eq!(color, if bits == 8 { ColorType::La8 } else { ColorType::La16 }, "{what}");
            assert_eq!(got, source, "{what}");
            let tiles =
                if layout.tiled { 2 * u64::from(layout.rows.pow(2)) * u64::from(bits / 4) } else { 0 };
            assert!(scratch_bytes < (tiff.len() - 8) as u64 + tiles, "{what}: no copy of the pixels");
        }
    }
}

#[test]
fn damaged_chunks_fail_as_the_tiff_crate_fails_them() {
    let (width, height) = (40, 30);
    let source = pixels(width, height, 3, 8);
    for (coding, tiled) in [(Coding::LzwPredicted, false), (Coding::Deflate, false), (Coding::Deflate, true)]
    {
        let layout = Layout { rows: if tiled { 16 } else { 4 }, tiled, coding, little: true };
        let whole = build(width, height, 3, 8, &source, layout);
        // The last chunk cut short: its rows cannot be filled. And a byte of the first chunk's
        // stream changed.
        let short = whole[..whole.len() - 40].to_vec();
        let mut flipped = whole.clone();
        let mut decoder = tiff::decoder::Decoder::new(Cursor::new(&whole)).expect("opens");
        let tag = if tiled { tiff::tags::Tag::TileOffsets } else { tiff::tags::Tag::StripOffsets };
        let offsets = decoder.get_tag_u64_vec(tag).expect("chunks");
        flipped[usize::try_from(offsets[0]).expect("fits") + 5] ^= 0x5A;
        for (what, tiff) in [("short", short), ("flipped", flipped)] {
            let limits = image::Limits::no_limits();
            let (decoder, _) = open(Cursor::new(tiff.clone()), Variant::Plain, &limits).expect("opens");
            let mut buf = vec![0; usize::try_from(decoder.total_bytes()).expect("fits")];
            let ours = decoder.read_image_boxed(&mut buf).map_err(|e| e.to_string());
            let theirs = image::load_from_memory_with_format(&tiff, image::ImageFormat::Tiff);
            match (ours, theirs) {
                (Err(ours), Err(theirs)) => assert_eq!(ours, theirs.to_string(), "{layout:?} {what}"),
                // LZW has no checksum: a changed byte decodes to other pixels, alike.
                (Ok(()), Ok(theirs)) if coding == Coding::LzwPredicted && what == "flipped" => {
                    assert_eq!(buf, theirs.as_bytes(), "{layout:?} {what}");
                }
                (ours, theirs) => panic!("{layout:?} {what}: {:?} against {:?}", ours.err(), theirs.err()),
            }
        }
    }
}

#[test]
fn compressed_chunks_decode_on_all_cores_as_written_and_one_band_is_left_to_the_tiff_crate() {
    let (width, height) = (37, 29);
    for (samples, bits, color) in [
        (3, 8, ColorType::Rgb8),
        (3, 16, ColorType::Rgb16),
        (4, 8, ColorType::Rgba8),
        (1, 16, ColorType::L16),
    ] {
        let source = pixels(width, height, samples, bits);
        for layout in LAYOUTS.into_iter().filter(|l| l.coding != Coding::Raw) {
            let what = format!("{color:?} {layout:?}");
            let tiff = build(width, height, samples, bits, &source, layout);
            let mut decoder = tiff::decoder::Decoder::new(Cursor::new(tiff)).expect("opens");
            let planned = Chunks::plan(&mut decoder, (width, height), color, usize::MAX);
            if layout.rows >= height {
                assert!(planned.is_none(), "{what}: one band of rows is not planned");
                continue;
            }
            let chunks = planned.expect(&what);
            let mut buf = vec![0; source.len()];
            chunks.read(&mut decoder, &mut buf).expect(&what);
            assert_eq!(buf, source, "{what}");
        }
    }
}
