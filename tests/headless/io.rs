//! Decoding and export: every hostile input class gets its own error naming the file, EXIF
//! orientation is applied, exports are atomic and never clobber.

use crate::common;

use std::path::Path;

use graylab::io::{
    DecodeOptions, ExportFormat, ExportOptions, IoError, WriteCause, decode_file, encode_file,
};
use image::{DynamicImage, GrayImage, ImageBuffer, Luma, LumaA, RgbImage};

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("write test file");
    p
}

fn png_bytes(img: &DynamicImage) -> Vec<u8> {
    let mut buf = std::io::Cursor::new(Vec::new());
    img.write_to(&mut buf, image::ImageFormat::Png).expect("encode png");
    buf.into_inner()
}

fn gradient(w: u32, h: u32) -> DynamicImage {
    DynamicImage::ImageRgb8(RgbImage::from_fn(w, h, |x, y| {
        image::Rgb([(x * 7) as u8, (y * 13) as u8, (x ^ y) as u8])
    }))
}

/// A PNG whose header claims `w` x `h` pixels, with an almost empty compressed stream: 65 bytes
/// that must not make graylab allocate.
fn header_bomb(w: u32, h: u32) -> Vec<u8> {
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(b"IHDR");
    ihdr.extend_from_slice(&w.to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]); // 8-bit RGB
    let crc = crc32fast::hash(&ihdr);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend_from_slice(&13u32.to_be_bytes());
    png.extend_from_slice(&ihdr);
    png.extend_from_slice(&crc.to_be_bytes());
    // An IDAT with an empty zlib stream, so decoders get past the header.
    let idat = [b'I', b'D', b'A', b'T', 0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01];
    png.extend_from_slice(&8u32.to_be_bytes());
    png.extend_from_slice(&idat);
    png.extend_from_slice(&crc32fast::hash(&idat).to_be_bytes());
    png.extend_from_slice(&0u32.to_be_bytes());
    png.extend_from_slice(b"IEND");
    png.extend_from_slice(&crc32fast::hash(b"IEND").to_be_bytes());
    png
}

fn zero_width_bmp() -> Vec<u8> {
    let mut bmp = b"BM".to_vec();
    for v in [66u32, 0, 54, 40, 0, 2] {
        bmp.extend_from_slice(&v.to_le_bytes());
    }
    bmp.extend_from_slice(&[1, 0, 24, 0]); // planes, bits per pixel
    bmp.resize(66, 0);
    bmp
}

fn decode(path: &Path) -> Result<graylab::io::Decoded, IoError> {
    decode_file(path, &DecodeOptions::default())
}

#[test]
fn hostile_inputs_each_get_their_error_naming_the_file() {
    type Case = (&'static str, Vec<u8>, fn(&IoError) -> bool);
    let dir = tempfile::tempdir().expect("temp dir");
    let good = png_bytes(&gradient(64, 64));
    let cases: Vec<Case> = vec![
        ("empty.png", vec![], |e| matches!(e, IoError::Empty { .. })),
        ("truncated.png", good[..good.len() / 2].to_vec(), |e| matches!(e, IoError::Truncated { .. })),
        ("garbage.png", [&good[..60], &[0x55; 400][..]].concat(), |e| {
            matches!(e, IoError::Decode { .. } | IoError::Truncated { .. })
        }),
        ("notes.txt", b"just some text, not an image at all".to_vec(), |e| {
            matches!(e, IoError::NotAnImage { looks_like: "text", .. })
        }),
        // Text with an image's name: said to be text, not a decoder's "illegal start bytes".
        ("text.jpg", b"this is not a JPEG\n".to_vec(), |e| {
            matches!(e, IoError::NotAnImage { looks_like: "text", .. })
        }),
        ("bomb.png", header_bomb(200_000, 200_000), |e| {
            matches!(e, IoError::ImpossibleSize { width: 200_000, height: 200_000, file_bytes: 65, .. })
        }),
        // A GIF header with no frame in it.
        ("empty.gif", b"GIF89a\x01\x00\x01\x00\x00\x00\x00;".to_vec(), |e| {
            matches!(e, IoError::Decode { .. } | IoError::Truncated { .. })
        }),
        (
            "photo.avif",
            b"\0\0\0\x1cftypavif\0\0\0\0avifmif1miaf".to_vec(),
            |e| matches!(e, IoError::UnsupportedFormat { format, .. } if format == "AVIF"),
        ),
        ("notes.jpg", b"Illegal start bytes? No: this is a text file.\n".to_vec(), |e| {
            matches!(e, IoError::NotAnImage { looks_like: "text", .. })
        }),
        // Width 0: a corrupt header, not a "too large" image.
        (
            "zero.bmp",
            zero_width_bmp(),
            |e| matches!(e, IoError::Decode { reason, .. } if reason == "the header claims 0x2 pixels"),
        ),
    ];
    for (name, bytes, expected) in cases {
        let path = write(dir.path(), name, &bytes);
        let err = decode(&path).expect_err(name);
        assert!(expected(&err), "{name}: unexpected {err:?}");
        let msg = err.to_string();
        assert!(msg.contains(name), "{name}: message does not name the file: {msg}");
    }
    let missing = dir.path().join("missing.jpg");
    let err = decode(&missing).expect_err("missing");
    assert!(matches!(err, IoError::Open { .. }) && err.to_string().contains("missing.jpg"), "{err}");
    // Each cause once, even through an error chain printed with `{:#}`.
    let chain = format!("{:#}", anyhow::Error::from(err));
    assert_eq!(chain.matches("No such file").count(), 1, "{chain}");
    let err = decode(dir.path()).expect_err("a folder");
    assert!(matches!(err, IoError::Open { .. }), "{err:?}");
}

#[test]
fn header_bomb_is_refused_by_the_budget_not_by_allocation() {
    let dir = tempfile::tempdir().expect("temp dir");
    // 20000 x 20000 RGB = 1.2 GB plus 0.4 GB of gray: refused under a 1 GiB budget. A second
    // IDAT chunk pads the image data past deflate's best ratio (1032:1), so that it could hold
    // the pixels.
    let mut png = header_bomb(20_000, 20_000);
    let iend = png.split_off(png.len() - 12);
    png.extend_from_slice(&1_200_000u32.to_be_bytes());
    let mut chunk = b"IDAT".to_vec();
    chunk.resize(4 + 1_200_000, 0);
    png.extend_from_slice(&chunk);
    png.extend_from_slice(&crc32fast::hash(&chunk).to_be_bytes());
    png.extend_from_slice(&iend);
    let path = write(dir.path(), "big.png", &png);
    let options = DecodeOptions { memory_budget_bytes: Some(1 << 30), ..DecodeOptions::default() };
    let err = decode_file(&path, &options).expect_err("too large");
    assert!(
        matches!(err, IoError::TooLarge { needed_bytes: 1_600_000_000, budget_bytes: 1_073_741_824, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("20000x20000"), "{err}");
    // Padded with anything but image data, or not at all, the same header cannot be real.
    let mut padded = png.clone();
    let at = padded.windows(4).rposition(|w| w == b"IDAT").expect("IDAT");
    padded[at..at + 4].copy_from_slice(b"pAdd");
    let len = padded.len();
    let crc = crc32fast::hash(&padded[at..len - 16]);
    padded[len - 16..len - 12].copy_from_slice(&crc.to_be_bytes());
    let err = decode_file(&write(dir.path(), "padded.png", &padded), &options).expect_err("impossible");
    assert!(matches!(err, IoError::ImpossibleSize { data_bytes: 8, .. }), "{err:?}");
    // Unpadded, the same header cannot be real: refused from the file size alone.
    let path = write(dir.path(), "tiny.png", &header_bomb(20_000, 20_000));
    let err = decode_file(&path, &options).expect_err("impossible");
    assert!(matches!(err, IoError::ImpossibleSize { min_bytes: 1_162_810, file_bytes: 65, .. }), "{err:?}");
    assert!(err.to_string().contains("20000x20000") && err.to_string().contains("65 B"), "{err}");
}

#[test]
fn exif_orientation_is_applied() {
    // A 4x2 JPEG with orientation 6 (rotate 90 degrees clockwise) decodes as 2x4.
    let mut jpeg = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 95)
        .encode_image(&gradient(4, 2))
        .expect("encode jpeg");
    let mut exif = b"Exif\0\0II*\0\x08\0\0\0\x01\0".to_vec();
    exif.extend_from_slice(&[0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0]); // tag 0x0112 SHORT 1 = 6
    exif.extend_from_slice(&[0, 0, 0, 0]);
    let mut with_exif = jpeg[..2].to_vec(); // SOI
    with_exif.extend_from_slice(&[0xFF, 0xE1]);
    with_exif.extend_from_slice(&((exif.len() + 2) as u16).to_be_bytes());
    with_exif.extend_from_slice(&exif);
    with_exif.extend_from_slice(&jpeg[2..]);
    let dir = tempfile::tempdir().expect("temp dir");
    let d = decode(&write(dir.path(), "rotated.jpg", &with_exif)).expect("decodes");
    assert_eq!((d.image.width(), d.image.height()), (2, 4));
    assert!(d.reoriented);
    let plain = decode(&write(dir.path(), "plain.jpg", &jpeg)).expect("decodes");
    assert_eq!((plain.image.width(), plain.image.height()), (4, 2));
    assert!(!plain.reoriented);
}

#[test]
fn every_format_round_trips_and_reports_what_it_changed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let gray = DynamicImage::ImageLuma8(GrayImage::from_fn(37, 23, |x, y| Luma([(x * 5 + y * 3) as u8])));
    let lossless = [ExportFormat::Png, ExportFormat::Tiff, ExportFormat::Bmp, ExportFormat::Webp];
    for format in ExportFormat::ALL {
        let path = dir.path().join(format!("out.{}", format.extension()));
        let r = encode_file(&gray, &path, &ExportOptions::default()).expect("export");
        assert_eq!(r.format, format);
        assert_eq!(r.bytes, std::fs::metadata(&path).expect("written").len());
        let back = decode(&path).expect("reads back").image.to_luma8();
        assert_eq!(back.dimensions(), (37, 23), "{format}");
        if lossless.contains(&format) {
            assert_eq!(back.as_raw(), gray.to_luma8().as_raw(), "{format} must be lossless");
        }
    }
    // 16-bit gray + alpha: PNG keeps both, JPEG says what it dropped.
    let la16 = DynamicImage::ImageLumaA16(ImageBuffer::from_fn(5, 4, |x, y| {
        LumaA([(x * 10_000 + y) as u16, 40_000])
    }));
    let png = dir.path().join("la16.png");
    let r = encode_file(&la16, &png, &ExportOptions::default()).expect("png");
    assert!(r.notes.is_empty());
    assert_eq!(decode(&png).expect("reads").image, la16);
    let jpg = dir.path().join("la16.jpg");
    let r = encode_file(&la16, &jpg, &ExportOptions::default()).expect("jpeg");
    assert_eq!(r.notes.len(), 2, "{:?}", r.notes);
    // TIFF keeps 16-bit gray and alpha as they are (tests/headless/codecs.rs reads them back with libtiff);
    // BMP keeps alpha as RGBA with equal R, G and B, and says so (no false "no alpha").
    let tif = dir.path().join("la16.tif");
    let r = encode_file(&la16, &tif, &ExportOptions::default()).expect("tiff");
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    let back = decode(&tif).expect("reads").image;
    assert_eq!(back.to_luma_alpha16(), la16.to_luma_alpha16(), "TIFF keeps 16-bit gray and alpha");
    let bmp = dir.path().join("la16.bmp");
    let r = encode_file(&la16, &bmp, &ExportOptions::default()).expect("bmp");
    assert!(r.notes.iter().all(|n| !n.contains("no alpha")), "{:?}", r.notes);
    let back = decode(&bmp).expect("reads").image;
    assert!(back.color().has_alpha(), "BMP keeps alpha: {:?}", back.color());
    assert_eq!(back.to_luma_alpha8(), la16.to_luma_alpha8());
}

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("list")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".graylab-"))
        .collect()
}

#[test]
fn exports_never_clobber_and_never_leave_half_files() {
    let dir = tempfile::tempdir().expect("temp dir");
    let gray = DynamicImage::ImageLuma8(GrayImage::from_pixel(8, 8, Luma([9])));
    let path = dir.path().join("keep.png");
    std::fs::write(&path, b"precious").expect("write");
    let err = encode_file(&gray, &path, &ExportOptions::default()).expect_err("exists");
    assert!(matches!(err, IoError::Exists { .. }) && err.to_string().contains("keep.png"), "{err}");
    assert_eq!(std::fs::read(&path).expect("read"), b"precious");
    encode_file(&gray, &path, &ExportOptions { overwrite: true, ..ExportOptions::default() })
        .expect("overwrite");
    assert_eq!(decode(&path).expect("now a PNG").image.to_luma8().get_pixel(3, 3), &Luma([9]));

    // WebP refuses images over 16383 px a side, before writing anything.
    let wide = DynamicImage::ImageLuma8(GrayImage::new(16_384, 1));
    let err =
        encode_file(&wide, &dir.path().join("wide.webp"), &ExportOptions::default()).expect_err("too wide");
    assert!(matches!(err, IoError::ExportUnsupported { .. }), "{err:?}");
    assert!(!dir.path().join("wide.webp").exists());

    let err = encode_file(&gray, &dir.path().join("no-such-dir/x.png"), &ExportOptions::default())
        .expect_err("no dir");
    // The operating system's error is kept whole, so its kind can be matched.
    assert!(
        matches!(&err, IoError::Write { cause: WriteCause::Os(e), .. } if e.kind() == std::io::ErrorKind::NotFound),
        "{err:?}"
    );
    let err =
        encode_file(&gray, &dir.path().join("x.gif"), &ExportOptions::default()).expect_err("unknown ext");
    assert!(matches!(err, IoError::UnknownExportFormat { .. }), "{err:?}");
    assert_eq!(leftovers(dir.path()), Vec::<String>::new());
}

/// An uncompressed little-endian RGB TIFF of `w` x `h` with `bits` per sample and, when given,
/// a `SampleFormat` tag; the samples are `fill`.
fn tiff(w: u32, h: u32, bits: u16, sample_format: Option<u16>, fill: u8) -> Vec<u8> {
    let data_len = w * h * 3 * u32::from(bits) / 8;
    let mut entries: Vec<(u16, u16, u32, u32)> = vec![
        (256, 4, 1, w),
        (257, 4, 1, h),
        (258, 3, 3, 0), // BitsPerSample: three values at an offset, patched below
        (259, 3, 1, 1),
        (262, 3, 1, 2),
        (273, 4, 1, 0), // StripOffsets, patched below
        (277, 3, 1, 3),
        (278, 4, 1, h),
        (279, 4, 1, data_len),
    ];
    if let Some(f) = sample_format {
        entries.push((339, 3, 1, u32::from(f)));
    }
    let ifd_len = 2 + 12 * entries.len() as u32 + 4;
    let (bits_at, data_at) = (8 + ifd_len, 8 + ifd_len + 6);
    let mut t = b"II*\0".to_vec();
    t.extend_from_slice(&8u32.to_le_bytes());
    t.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    for (tag, kind, count, value) in entries {
        let value = match tag {
            258 => bits_at,
            273 => data_at,
            _ => value,
        };
        t.extend_from_slice(&tag.to_le_bytes());
        t.extend_from_slice(&kind.to_le_bytes());
        t.extend_from_slice(&count.to_le_bytes());
        t.extend_from_slice(&value.to_le_bytes());
    }
    t.extend_from_slice(&0u32.to_le_bytes());
    for _ in 0..3 {
        t.extend_from_slice(&bits.to_le_bytes());
    }
    t.resize(t.len() + data_len as usize, fill);
    t
}

#[test]
fn tiff_sample_formats_graylab_cannot_read_are_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The hand-made writer is right: its 8-bit unsigned TIFF decodes to its samples.
    let ok = decode(&write(dir.path(), "u8.tif", &tiff(4, 3, 8, None, 77))).expect("8-bit RGB TIFF");
    assert!(ok.image.to_rgb8().as_raw().iter().all(|&v| v == 77));
    for (name, bits, format, what) in [
        // Without SampleFormat the `image` crate reads 32-bit integers as floats: noise.
        ("u32.tif", 32, None, "32-bit unsigned-integer samples"),
        ("u32-tagged.tif", 32, Some(1), "32-bit unsigned-integer samples"),
        ("i16.tif", 16, Some(2), "16-bit signed-integer samples"),
        ("f16.tif", 16, Some(3), "16-bit floating-point samples"),
        ("u4.tif", 4, None, "4-bit unsigned-integer samples"),
    ] {
        let err = decode(&write(dir.path(), name, &tiff(4, 3, bits, format, 200))).expect_err(name);
        let msg = err.to_string();
        assert!(matches!(err, IoError::Unsupported { .. }), "{name}: {err:?}");
        assert!(msg.contains(&format!("a TIFF with {what}")) && msg.ends_with(name), "{name}: {msg}");
    }
}

#[test]
fn gif_pnm_tga_ico_and_qoi_are_read() {
    let dir = tempfile::tempdir().expect("temp dir");
    // 64 colours: GIF's palette holds them all, so every format is lossless here.
    let img = DynamicImage::ImageRgb8(RgbImage::from_fn(40, 24, |x, y| {
        image::Rgb([(x / 5 * 32) as u8, (y / 3 * 32) as u8, 90])
    }));
    for (name, format) in [
        ("a.gif", image::ImageFormat::Gif),
        ("a.ppm", image::ImageFormat::Pnm),
        ("a.tga", image::ImageFormat::Tga),
        ("a.ico", image::ImageFormat::Ico),
        ("a.qoi", image::ImageFormat::Qoi),
    ] {
        let mut bytes = std::io::Cursor::new(Vec::new());
        // An ICO holds RGBA (its decoder refuses an RGB PNG inside).
        let source = if format == image::ImageFormat::Ico {
            DynamicImage::ImageRgba8(img.to_rgba8())
        } else {
            img.clone()
        };
        source.write_to(&mut bytes, format).expect("encode");
        let path = write(dir.path(), name, bytes.get_ref());
        assert_eq!(graylab::io::sniff_format(&path), Some(format), "{name}");
        let decoded = decode(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(decoded.format, format);
        assert_eq!(decoded.image.to_rgb8().as_raw(), img.to_rgb8().as_raw(), "{name}");
    }
    // A PGM (gray) too.
    let gray = DynamicImage::ImageLuma8(GrayImage::from_fn(9, 5, |x, y| Luma([(x * 20 + y) as u8])));
    let mut bytes = std::io::Cursor::new(Vec::new());
    gray.write_to(&mut bytes, image::ImageFormat::Pnm).expect("encode");
    let decoded = decode(&write(dir.path(), "g.pgm", bytes.get_ref())).expect("PGM");
    assert_eq!(decoded.image.as_bytes(), gray.as_bytes());
}

#[test]
fn a_damaged_or_cut_webp_is_told_in_words_naming_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut buf = std::io::Cursor::new(Vec::new());
    gradient(64, 48).write_to(&mut buf, image::ImageFormat::WebP).expect("encode webp");
    let good = buf.into_inner();
    assert!(decode(&write(dir.path(), "good.webp", &good)).is_ok());
    let cut = good[..good.len() * 2 / 3].to_vec();
    // The bitstream scrambled behind the RIFF, VP8L and image headers (a lossless WebP).
    let mut scrambled = good.clone();
    for b in &mut scrambled[30..] {
        *b ^= 0x5A;
    }
    let cut_is_truncated = decode(&write(dir.path(), "cut.webp", &cut)).expect_err("cut");
    assert!(matches!(cut_is_truncated, IoError::Truncated { .. }), "{cut_is_truncated:?}");
    for (name, bytes) in [("cut.webp", cut), ("scrambled.webp", scrambled)] {
        let err = decode(&write(dir.path(), name, &bytes)).expect_err(name);
        let msg = err.to_string();
        assert!(msg.ends_with(name) || msg.contains(name), "{name}: does not name the file: {msg}");
        match &err {
            IoError::Truncated { .. } => {}
            IoError::Decode { reason, .. } => {
                assert!(reason.starts_with("WebP: "), "{name}: not a sentence: {reason}");
                assert!(!reason.contains("Format error"), "{name}: raw words: {reason}");
            }
            other => panic!("{name}: unexpected {other:?}"),
        }
    }
}

/// A WebP with bytes missing from the middle of its bitstream still ends where its last chunk's
/// data did, less a few bytes: its chunk sizes say what is missing. Lossless and lossy alike
/// (a fuzzed file decoded to a wrong image without a word: `image-webp` reads what is there).
#[test]
fn a_webp_with_bytes_missing_inside_is_truncated() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut lossless = std::io::Cursor::new(Vec::new());
    gradient(64, 48).write_to(&mut lossless, image::ImageFormat::WebP).expect("encode webp");
    for (name, good) in
        [("lossless", lossless.into_inner()), ("lossy", lossy_webp(&gradient(64, 48).to_rgb8()))]
    {
        let ok = decode(&write(dir.path(), &format!("{name}.webp"), &good)).expect(name);
        assert_eq!((ok.image.width(), ok.image.height()), (64, 48), "{name}");
        for missing in [1, 3] {
            let mut cut = good.clone();
            let at = good.len() / 2;
            cut.drain(at..at + missing);
            let file = format!("{name}-{missing}.webp");
            let err = decode(&write(dir.path(), &file, &cut)).expect_err(&file);
            assert!(matches!(err, IoError::Truncated { .. }), "{file}: {err:?}");
            assert!(err.to_string().contains(&file), "{file}: {err}");
        }
    }
}

/// `rgb` as a lossy WebP at quality 80, written by libwebp (the `image` crate writes lossless only).
fn lossy_webp(rgb: &image::RgbImage) -> Vec<u8> {
    let int = |n: u32| i32::try_from(n).expect("fits");
    let (w, h) = (int(rgb.width()), int(rgb.height()));
    let mut out = std::ptr::null_mut();
    // SAFETY: `rgb` holds `h` rows of `3 * w` bytes; libwebp allocates `out` and returns its
    // length, and it is freed with `WebPFree` once copied.
    unsafe {
        let len = libwebp_sys::WebPEncodeRGB(rgb.as_raw().as_ptr(), w, h, 3 * w, 80.0, &raw mut out);
        assert!(len > 0 && !out.is_null(), "libwebp encodes");
        let file = std::slice::from_raw_parts(out, len).to_vec();
        libwebp_sys::WebPFree(out.cast());
        file
    }
}

/// A decode under a 256 MiB budget: a header bomb that passes the claims is refused as too large
/// (on a build without the claims check), never allocated.
fn decode_small(path: &Path) -> Result<graylab::io::Decoded, IoError> {
    decode_file(path, &DecodeOptions { memory_budget_bytes: Some(256 << 20), ..DecodeOptions::default() })
}

/// The LZW data of a 1x1 frame (minimum code size 2): clear, index 0, end.
const GIF_1X1_LZW: [u8; 2] = [0x44, 0x01];

/// A GIF of `screen` with a 2-colour global table and `frames` (left, top, width, height, LZW
/// data); 35 bytes for one 1x1 frame.
fn gif(screen: (u16, u16), frames: &[([u16; 4], &[u8])]) -> Vec<u8> {
    let mut g = b"GIF89a".to_vec();
    g.extend_from_slice(&screen.0.to_le_bytes());
    g.extend_from_slice(&screen.1.to_le_bytes());
    g.extend_from_slice(&[0x80, 0, 0, 0, 0, 0, 255, 255, 255]);
    for (rect, data) in frames {
        g.push(0x2C);
        for v in rect {
            g.extend_from_slice(&v.to_le_bytes());
        }
        g.extend_from_slice(&[0, 2]);
        for block in data.chunks(255) {
            g.push(block.len() as u8);
            g.extend_from_slice(block);
        }
        g.push(0);
    }
    g.push(0x3B);
    g
}

/// An 8-bit RLE (`compression` 1) or uncompressed (0) BMP of `w` x `h` with a gray palette and
/// `data` after it.
fn bmp8(w: i32, h: i32, compression: u32, data: &[u8]) -> Vec<u8> {
    let offset = 14 + 40 + 1024;
    let mut b = b"BM".to_vec();
    for v in [(offset + data.len()) as u32, 0, offset as u32, 40, w as u32, h as u32] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b.extend_from_slice(&[1, 0, 8, 0]);
    for v in [compression, data.len() as u32, 0, 0, 256, 0] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    for i in 0..=255u8 {
        b.extend_from_slice(&[i, i, i, 0]);
    }
    b.extend_from_slice(data);
    b
}

/// The VP8L chunk (header included) of a lossless `w` x `h` WebP of one colour.
fn vp8l_chunk(w: u32, h: u32) -> Vec<u8> {
    let mut buf = std::io::Cursor::new(Vec::new());
    DynamicImage::ImageRgba8(image::RgbaImage::from_pixel(w, h, image::Rgba([9, 99, 199, 255])))
        .write_to(&mut buf, image::ImageFormat::WebP)
        .expect("encode webp");
    let webp = buf.into_inner();
    assert_eq!(&webp[12..16], b"VP8L");
    let len = u32::from_le_bytes(webp[16..20].try_into().expect("4 bytes")) as usize;
    webp[12..20 + len + (len & 1)].to_vec()
}

fn le24(v: u32) -> [u8; 3] {
    let b = v.to_le_bytes();
    [b[0], b[1], b[2]]
}

/// An animated WebP of `canvas` whose frames each hold `image` (a VP8 or VP8L chunk) at 0, 0.
fn animated_webp(canvas: (u32, u32), image: &[u8], frame: (u32, u32), frames: usize) -> Vec<u8> {
    let mut body = b"WEBP".to_vec();
    body.extend_from_slice(b"VP8X");
    body.extend_from_slice(&10u32.to_le_bytes());
    body.extend_from_slice(&[0x02, 0, 0, 0]);
    body.extend_from_slice(&le24(canvas.0 - 1));
    body.extend_from_slice(&le24(canvas.1 - 1));
    body.extend_from_slice(b"ANIM");
    body.extend_from_slice(&6u32.to_le_bytes());
    body.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
    for _ in 0..frames {
        let mut anmf = [le24(0), le24(0), le24(frame.0 - 1), le24(frame.1 - 1), le24(100)].concat();
        anmf.push(0);
        anmf.extend_from_slice(image);
        body.extend_from_slice(b"ANMF");
        body.extend_from_slice(&(anmf.len() as u32).to_le_bytes());
        body.extend_from_slice(&anmf);
    }
    let mut riff = b"RIFF".to_vec();
    riff.extend_from_slice(&(body.len() as u32).to_le_bytes());
    riff.extend_from_slice(&body);
    riff
}

/// A little-endian TIFF of 8-bit gray pages, each (width, height, its strip's bytes), with
/// `compression` and `extra` entries (tag, type, count, value) on the first page.
fn gray_tiff(pages: &[(u32, u32, Vec<u8>)], compression: u16, extra: &[(u16, u16, u32, u32)]) -> Vec<u8> {
    let mut t = b"II*\0\0\0\0\0".to_vec();
    let mut link = 4;
    for (i, (w, h, data)) in pages.iter().enumerate() {
        let data_at = t.len() as u32;
        t.extend_from_slice(data);
        if t.len() % 2 == 1 {
            t.push(0);
        }
        let mut entries = vec![
            (256, 4, 1, *w),
            (257, 4, 1, *h),
            (258, 3, 1, 8),
            (259, 3, 1, u32::from(compression)),
            (262, 3, 1, 1),
            (273, 4, 1, data_at),
            (277, 3, 1, 1),
            (278, 4, 1, *h),
            (279, 4, 1, data.len() as u32),
        ];
        if i == 0 {
            entries.extend_from_slice(extra);
            entries.sort_by_key(|e| e.0);
        }
        let ifd_at = t.len() as u32;
        t[link..link + 4].copy_from_slice(&ifd_at.to_le_bytes());
        t.extend_from_slice(&(entries.len() as u16).to_le_bytes());
        for (tag, kind, count, value) in entries {
            t.extend_from_slice(&tag.to_le_bytes());
            t.extend_from_slice(&kind.to_le_bytes());
            t.extend_from_slice(&count.to_le_bytes());
            t.extend_from_slice(&value.to_le_bytes());
        }
        link = t.len();
        t.extend_from_slice(&0u32.to_le_bytes());
    }
    t
}

fn encoded(img: &DynamicImage, format: image::ImageFormat) -> Vec<u8> {
    let mut buf = std::io::Cursor::new(Vec::new());
    img.write_to(&mut buf, format).expect("encode");
    buf.into_inner()
}

#[test]
fn headers_every_format_cannot_hold_are_refused_before_allocating() {
    // Name, bytes, the format named, the size claimed.
    type Case = (&'static str, Vec<u8>, &'static str, (u32, u32));
    let dir = tempfile::tempdir().expect("temp dir");
    let ico_png = {
        // An ICO whose one entry (256 px, "0") is a PNG claiming 60000x60000 with no data.
        let png = header_bomb(60_000, 60_000);
        let mut ico = vec![0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1, 0, 32, 0];
        ico.extend_from_slice(&(png.len() as u32).to_le_bytes());
        ico.extend_from_slice(&22u32.to_le_bytes());
        ico.extend_from_slice(&png);
        ico
    };
    let mut tga = vec![0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    tga.extend_from_slice(&30_000u16.to_le_bytes());
    tga.extend_from_slice(&30_000u16.to_le_bytes());
    tga.extend_from_slice(&[24, 0, 0xFF, 1, 2, 3]);
    let mut qoi = b"qoif".to_vec();
    qoi.extend_from_slice(&30_000u32.to_be_bytes());
    qoi.extend_from_slice(&30_000u32.to_be_bytes());
    qoi.extend_from_slice(&[3, 0, 0xFE, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 1]);
    let cases: Vec<Case> = vec![
        // A 35-byte GIF whose screen is 30000x30000, with one 1x1 frame.
        ("screen.gif", gif((30_000, 30_000), &[([0, 0, 1, 1], &GIF_1X1_LZW)]), "GIF", (30_000, 30_000)),
        ("screen-wide.gif", gif((65_535, 40_000), &[([0, 0, 1, 1], &GIF_1X1_LZW)]), "GIF", (65_535, 40_000)),
        // A frame that claims 30000x30000 pixels from 2 bytes of LZW data.
        (
            "frame.gif",
            gif((30_000, 30_000), &[([0, 0, 30_000, 30_000], &GIF_1X1_LZW)]),
            "GIF",
            (30_000, 30_000),
        ),
        // 1,080 bytes of RLE8 whose first code ends the bitmap.
        ("rle8.bmp", bmp8(30_000, 30_000, 1, &[0, 1]), "BMP", (30_000, 30_000)),
        ("short.bmp", bmp8(20_000, 20_000, 0, &[7; 64]), "BMP", (20_000, 20_000)),
        // An animated WebP whose canvas says 8388609x61, with one 1x1 frame.
        (
            "canvas.webp",
            animated_webp((8_388_609, 61), &vp8l_chunk(1, 1), (1, 1), 1),
            "WebP",
            (8_388_609, 61),
        ),
        ("strips.tif", gray_tiff(&[(20_000, 20_000, vec![5; 100])], 1, &[]), "TIFF", (20_000, 20_000)),
        ("lzw.tif", gray_tiff(&[(20_000, 20_000, vec![5; 100])], 5, &[]), "TIFF", (20_000, 20_000)),
        ("rle.tga", tga, "TGA", (30_000, 30_000)),
        ("runs.qoi", qoi, "QOI", (30_000, 30_000)),
        (
            "short.pgm",
            [&b"P5\n# a comment\n30000 30000\n255\n"[..], &[9; 64]].concat(),
            "PNM",
            (30_000, 30_000),
        ),
        ("plain.ppm", b"P3 30000 30000 255 1 2 3 4 5 6".to_vec(), "PNM", (30_000, 30_000)),
        ("inside.ico", ico_png, "ICO (PNG)", (60_000, 60_000)),
    ];
    for (name, bytes, format, size) in cases {
        let err = decode_small(&write(dir.path(), name, &bytes)).expect_err(name);
        let claimed = match &err {
            IoError::ImpossibleSize { format: f, width, height, min_bytes, data_bytes, .. } => {
                assert!(min_bytes > data_bytes, "{name}: {err:?}");
                (*f, (*width, *height))
            }
            IoError::ImpossibleCanvas { format: f, width, height, .. } => (*f, (*width, *height)),
            other => panic!("{name}: refused as {other:?}, not as impossible"),
        };
        assert_eq!(claimed, (format, size), "{name}");
        let message = err.to_string();
        assert!(
            message.starts_with("the file cannot hold the image its header claims")
                && message.ends_with(name),
            "{message}"
        );
    }
}

#[test]
fn real_encoders_flat_and_busy_images_pass_the_claims() {
    let dir = tempfile::tempdir().expect("temp dir");
    let flat = |w, h| DynamicImage::ImageRgb8(RgbImage::from_pixel(w, h, image::Rgb([40, 40, 40])));
    let flat_rgba =
        |w, h| DynamicImage::ImageRgba8(image::RgbaImage::from_pixel(w, h, image::Rgba([40, 40, 40, 255])));
    let cases = [
        ("flat.png", flat(4096, 4096), image::ImageFormat::Png),
        ("flat.gif", flat_rgba(2048, 2048), image::ImageFormat::Gif),
        ("busy.gif", DynamicImage::ImageRgba8(gradient(300, 200).to_rgba8()), image::ImageFormat::Gif),
        ("flat.webp", flat_rgba(4096, 4096), image::ImageFormat::WebP),
        ("flat.tif", flat(1024, 1024), image::ImageFormat::Tiff),
        ("flat.bmp", flat(1023, 17), image::ImageFormat::Bmp),
        ("flat.tga", flat(4096, 4096), image::ImageFormat::Tga),
        ("flat.qoi", flat(4096, 4096), image::ImageFormat::Qoi),
        ("flat.ppm", flat(1000, 999), image::ImageFormat::Pnm),
        ("flat.ico", flat_rgba(256, 256), image::ImageFormat::Ico),
        ("flat.jpg", flat(2048, 2048), image::ImageFormat::Jpeg),
    ];
    for (name, img, format) in cases {
        let decoded = decode(&write(dir.path(), name, &encoded(&img, format)))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((decoded.image.width(), decoded.image.height()), (img.width(), img.height()), "{name}");
    }
    // RLE8 as encoders write it: runs of up to 255 pixels and an end of line per row.
    let mut rle = Vec::new();
    for _ in 0..3 {
        rle.extend_from_slice(&[255, 200, 45, 200, 0, 0]);
    }
    rle.extend_from_slice(&[0, 1]);
    let decoded = decode(&write(dir.path(), "runs.bmp", &bmp8(300, 3, 1, &rle))).expect("RLE8 BMP");
    assert!(decoded.image.to_luma8().pixels().all(|p| p.0 == [200]));
    // A delta escape skips rows (here 62 of 64 in 4 bytes): valid, read as OpenCV reads it
    // (before, refused as a file that cannot hold its pixels). Rows go bottom up.
    let rle = [64, 3, 0, 0, 0, 2, 0, 62, 64, 7, 0, 0, 0, 1];
    let decoded = decode(&write(dir.path(), "delta.bmp", &bmp8(64, 64, 1, &rle))).expect("a delta");
    let gray = decoded.image.to_luma8();
    assert_eq!((gray.get_pixel(0, 63).0, gray.get_pixel(63, 0).0, gray.dimensions()), ([3], [7], (64, 64)));
    // A GIF screen a little larger than its one frame (the rest empty) is kept.
    let margin = decode(&write(dir.path(), "margin.gif", &gif((64, 64), &[([0, 0, 1, 1], &GIF_1X1_LZW)])));
    assert_eq!(margin.expect("a 64x64 screen").image.width(), 64);
}

/// A `BigTIFF` (64-bit offsets) of 8-bit gray `w` x `h` pixels, uncompressed, in one strip.
fn bigtiff(little: bool, w: u16, h: u16, pixels: &[u8]) -> Vec<u8> {
    let b16 = |v: u16| if little { v.to_le_bytes() } else { v.to_be_bytes() };
    let b64 = |v: u64| if little { v.to_le_bytes() } else { v.to_be_bytes() };
    let mut t = if little { b"II+\0".to_vec() } else { b"MM\0+".to_vec() };
    t.extend_from_slice(&b16(8));
    t.extend_from_slice(&b16(0));
    t.extend_from_slice(&b64(16));
    let data_at = 16 + 8 + 9 * 20 + 8;
    let entries: [(u16, u16, u64); 9] = [
        (256, 3, u64::from(w)),
        (257, 3, u64::from(h)),
        (258, 3, 8),
        (259, 3, 1),
        (262, 3, 1),
        (273, 16, data_at),
        (277, 3, 1),
        (278, 3, u64::from(h)),
        (279, 16, pixels.len() as u64),
    ];
    t.extend_from_slice(&b64(entries.len() as u64));
    for (tag, kind, value) in entries {
        t.extend_from_slice(&b16(tag));
        t.extend_from_slice(&b16(kind));
        t.extend_from_slice(&b64(1));
        if kind == 3 {
            t.extend_from_slice(&b16(value as u16));
            t.extend_from_slice(&[0; 6]);
        } else {
            t.extend_from_slice(&b64(value));
        }
    }
    t.extend_from_slice(&b64(0));
    assert_eq!(t.len() as u64, data_at);
    t.extend_from_slice(pixels);
    t
}

#[test]
fn bigtiff_is_sniffed_read_and_listed_as_an_image() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pixels: Vec<u8> = (0..6 * 5).map(|i| (i * 8) as u8).collect();
    for (name, little) in [("little.tif", true), ("big.tif", false)] {
        let path = write(dir.path(), name, &bigtiff(little, 6, 5, &pixels));
        assert_eq!(graylab::io::sniff_format(&path), Some(image::ImageFormat::Tiff), "{name}");
        let kind = graylab::io::classify_file(&path).expect("classify");
        assert_eq!(kind, graylab::io::FileKind::Image(image::ImageFormat::Tiff), "{name}");
        let decoded = decode(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(decoded.format, image::ImageFormat::Tiff);
        assert_eq!(
            decoded.image,
            DynamicImage::ImageLuma8(GrayImage::from_raw(6, 5, pixels.clone()).expect("size"))
        );
    }
}

#[test]
fn pnm_with_other_maxvals_is_scaled_exactly_in_integers() {
    let dir = tempfile::tempdir().expect("temp dir");
    let exact = |v: u32, max: u32, target: u32| (v * target * 2 + max) / (2 * max);
    // 14 and 100 give 8-bit samples (7 of 14 is 127.5 exactly), 1023 16-bit ones.
    for max in [14u32, 100, 1023] {
        let values: Vec<u32> = (0..=max).collect();
        let width = values.len();
        let plain = values.iter().map(ToString::to_string).collect::<Vec<_>>().join(" ");
        let binary: Vec<u8> = if max > 255 {
            values.iter().flat_map(|&v| (v as u16).to_be_bytes()).collect()
        } else {
            values.iter().map(|&v| v as u8).collect()
        };
        let rgb_plain = values.iter().map(|v| format!("{v} {v} {v}")).collect::<Vec<_>>().join("\n");
        let rgb_binary: Vec<u8> =
            binary.chunks(if max > 255 { 2 } else { 1 }).flat_map(|s| s.repeat(3)).collect();
        let files = [
            ("p2.pgm", [format!("P2\n{width} 1\n{max}\n").as_bytes(), plain.as_bytes()].concat(), 1),
            ("p5.pgm", [format!("P5\n{width} 1\n{max}\n").as_bytes(), &binary].concat(), 1),
            ("p3.ppm", [format!("P3\n{width} 1\n{max}\n").as_bytes(), rgb_plain.as_bytes()].concat(), 3),
            ("p6.ppm", [format!("P6 {width} 1 {max}\n").as_bytes(), &rgb_binary].concat(), 3),
        ];
        for (name, bytes, channels) in files {
            let decoded =
                decode(&write(dir.path(), name, &bytes)).unwrap_or_else(|e| panic!("{max} {name}: {e}"));
            let got: Vec<u32> = if max > 255 {
                decoded
                    .image
                    .as_bytes()
                    .chunks(2)
                    .map(|b| u32::from(u16::from_ne_bytes([b[0], b[1]])))
                    .collect()
            } else {
                decoded.image.as_bytes().iter().map(|&b| u32::from(b)).collect()
            };
            let target = if max > 255 { 65535 } else { 255 };
            let want: Vec<u32> =
                values.iter().flat_map(|&v| std::iter::repeat_n(exact(v, max, target), channels)).collect();
            assert_eq!(got, want, "maxval {max}, {name}");
            assert_eq!(decoded.image.color().has_color(), channels == 3, "{name}");
        }
    }
}

/// A maxval Netpbm does not allow (0, or above 65535) is refused by name; before, 4000000000
/// scaled white to 1 of 65535, exit 0.
#[test]
fn pnm_maxvals_outside_netpbms_range_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, max) in [("huge.pgm", 4_000_000_000_u64), ("above.ppm", 70_000), ("zero.pgm", 0)] {
        let magic = if name.ends_with("ppm") { "P6" } else { "P5" };
        let bytes = [format!("{magic}\n4 1\n{max}\n").into_bytes(), vec![255; 24]].concat();
        let err = decode(&write(dir.path(), name, &bytes)).expect_err(name).to_string();
        let why = format!("its maxval {max} is outside 1 to 65535, which Netpbm allows");
        assert!(err.contains(&why) && err.ends_with(name), "{err}");
    }
}

/// An EXIF block (TIFF structure) holding only the orientation, as a SHORT (3) or LONG (4).
fn exif_orientation(kind: u16, value: u32) -> Vec<u8> {
    let mut exif = b"II*\0\x08\0\0\0\x01\0\x12\x01".to_vec();
    exif.extend_from_slice(&kind.to_le_bytes());
    exif.extend_from_slice(&1u32.to_le_bytes());
    exif.extend_from_slice(&value.to_le_bytes()); // A SHORT's 2 bytes come first either way.
    exif.extend_from_slice(&[0; 4]);
    exif
}

/// `png` with `chunk` (type and data) inserted before its IEND.
fn png_with_chunk(png: &[u8], kind: [u8; 4], data: &[u8]) -> Vec<u8> {
    let (body, iend) = png.split_at(png.len() - 12);
    let mut chunk = kind.to_vec();
    chunk.extend_from_slice(data);
    let mut out = body.to_vec();
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(&chunk);
    out.extend_from_slice(&crc32fast::hash(&chunk).to_be_bytes());
    out.extend_from_slice(iend);
    out
}

#[test]
fn exif_orientation_as_long_or_after_the_png_data_is_applied() {
    let dir = tempfile::tempdir().expect("temp dir");
    let img = gradient(4, 2);
    let rotated = img.rotate90();
    let mut jpeg = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 100)
        .encode_image(&img)
        .expect("encode jpeg");
    let app1 = [b"Exif\0\0".as_slice(), &exif_orientation(4, 6)].concat();
    let mut long_jpeg = jpeg[..2].to_vec();
    long_jpeg.extend_from_slice(&[0xFF, 0xE1]);
    long_jpeg.extend_from_slice(&((app1.len() + 2) as u16).to_be_bytes());
    long_jpeg.extend_from_slice(&app1);
    long_jpeg.extend_from_slice(&jpeg[2..]);
    let d = decode(&write(dir.path(), "long.jpg", &long_jpeg)).expect("JPEG");
    let plain = decode(&write(dir.path(), "plain.jpg", &jpeg)).expect("JPEG").image;
    assert!(d.reoriented);
    assert_eq!(d.image, plain.rotate90(), "LONG orientation 6 in a JPEG");
    let png = png_bytes(&img);
    for (name, kind) in [("late-short.png", 3), ("late-long.png", 4)] {
        let d = decode(&write(dir.path(), name, &png_with_chunk(&png, *b"eXIf", &exif_orientation(kind, 6))))
            .expect("PNG");
        assert!(d.reoriented, "{name}");
        assert_eq!(d.image.to_rgb8(), rotated.to_rgb8(), "{name}");
    }
    let gray: Vec<u8> = (0..8).map(|i| i * 30).collect();
    let tif = gray_tiff(&[(4, 2, gray.clone())], 1, &[(274, 4, 1, 6)]);
    let d = decode(&write(dir.path(), "long.tif", &tif)).expect("TIFF");
    assert!(d.reoriented);
    assert_eq!(d.image, DynamicImage::ImageLuma8(GrayImage::from_raw(4, 2, gray).expect("size")).rotate90());
}

#[test]
fn an_opaque_gif_has_no_alpha_and_a_transparent_one_keeps_it_on_both_backends() {
    use graylab::engine::{Backend, ConvertSettings, Engine, RunOptions};
    let dir = tempfile::tempdir().expect("temp dir");
    let opaque = image::RgbaImage::from_fn(24, 16, |x, y| {
        image::Rgba([(x / 6 * 60) as u8, (y / 4 * 60) as u8, 90, 255])
    });
    let mut holed = opaque.clone();
    holed.put_pixel(3, 3, image::Rgba([0, 0, 0, 0]));
    let cpu = Engine::new();
    let gpu = common::gpu().map(Engine::with_gpu);
    for (name, source, alpha) in [("opaque.gif", &opaque, false), ("holed.gif", &holed, true)] {
        let bytes = encoded(&DynamicImage::ImageRgba8(source.clone()), image::ImageFormat::Gif);
        let decoded = decode(&write(dir.path(), name, &bytes)).expect(name);
        assert_eq!(decoded.image.color().has_alpha(), alpha, "{name}: {:?}", decoded.image.color());
        assert_eq!(decoded.image.to_rgba8(), *source, "{name}");
        let mut outputs = vec![(Backend::Cpu, &cpu)];
        if let Some(g) = &gpu {
            outputs.push((Backend::Gpu, g));
        }
        let mut results = Vec::new();
        for (backend, engine) in outputs {
            let settings = ConvertSettings { backend, ..ConvertSettings::default() };
            let gray =
                engine.convert(&decoded.image, &settings, RunOptions::default()).expect("convert").image;
            assert_eq!(gray.color().has_alpha(), alpha, "{name} on {backend}");
            results.push(gray);
        }
        assert!(results.windows(2).all(|w| w[0] == w[1]), "{name}: CPU and GPU differ");
    }
}

#[test]
fn files_with_more_frames_or_pages_say_only_the_first_was_converted() {
    let dir = tempfile::tempdir().expect("temp dir");
    let frame = |v: u8| image::Frame::new(image::RgbaImage::from_pixel(8, 6, image::Rgba([v, v, v, 255])));
    let mut gif = Vec::new();
    image::codecs::gif::GifEncoder::new(&mut gif)
        .encode_frames([frame(10), frame(90), frame(200)])
        .expect("gif");
    let mut apng = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut apng, 8, 6);
        encoder.set_color(png::ColorType::Grayscale);
        encoder.set_animated(3, 0).expect("animated");
        let mut writer = encoder.write_header().expect("header");
        for v in [10u8, 90, 200] {
            writer.write_image_data(&[v; 48]).expect("frame");
        }
    }
    let mut webp = animated_webp((8, 6), &vp8l_chunk(8, 6), (8, 6), 2);
    // The alpha flag, as Pillow writes it for every animation: its frames are opaque all the same.
    assert_eq!(&webp[12..16], b"VP8X");
    webp[20] |= 0x10;
    let tiff = gray_tiff(&[(8, 6, vec![10; 48]), (8, 6, vec![90; 48]), (4, 4, vec![7; 16])], 1, &[]);
    for (name, bytes, total, unit) in [
        ("a.gif", gif, 3, "frame"),
        ("a.png", apng, 3, "frame"),
        ("a.webp", webp, 2, "frame"),
        ("a.tif", tiff, 3, "page"),
    ] {
        let d = decode(&write(dir.path(), name, &bytes)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let frames = d.frames.unwrap_or_else(|| panic!("{name}: no frame count"));
        assert_eq!((frames.converted, frames.total), (1, total), "{name}");
        let said: Vec<String> = d.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            said,
            [format!("the file holds {total} {unit}s: {unit} 1 of {total} converted")],
            "{name}"
        );
        assert_eq!((d.image.width(), d.image.height()), (8, 6), "{name}: the first frame");
        // Every frame is opaque: no alpha in the result, although the GIF and WebP decoders give
        // RGBA for any animation.
        assert!(!d.image.color().has_alpha(), "{name}: opaque, so no alpha ({:?})", d.image.color());
    }
    let still = decode(&write(dir.path(), "still.png", &png_bytes(&gradient(8, 6)))).expect("still");
    assert_eq!((still.frames, still.warnings.len()), (None, 0));
}

#[test]
fn a_bmp_longer_than_its_header_says_is_converted_with_a_warning() {
    // 8x4, 8 bits a pixel: rows of 8 bytes, each row its own gray.
    let dir = tempfile::tempdir().expect("temp dir");
    let rows: Vec<u8> = (0..4u8).flat_map(|r| [40 * r + 10; 8]).collect();
    let whole = bmp8(8, 4, 0, &rows);
    // Two bytes inserted into the second row stored: the rows after them shift.
    let at = 14 + 40 + 1024 + 8 + 3;
    let inserted = [&whole[..at], &[255, 255], &whole[at..]].concat();
    let mut no_size = inserted.clone();
    no_size[2..6].copy_from_slice(&0u32.to_le_bytes());
    for (name, bytes, warned) in
        [("whole.bmp", &whole, false), ("inserted.bmp", &inserted, true), ("no-size.bmp", &no_size, false)]
    {
        let d = decode(&write(dir.path(), name, bytes)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let said: Vec<String> = d.warnings.iter().map(ToString::to_string).collect();
        let want = [format!(
            "the file is 2 bytes longer than its header says ({} bytes): if they were inserted among its \
             pixels, the rows after them are shifted",
            whole.len()
        )];
        assert_eq!(said, if warned { &want[..] } else { &[] }, "{name}");
        assert_eq!(d.image.width(), 8, "{name}: converted as stored");
    }
    // The CLI says it, naming the file, and converts.
    let o = common::graylab(&["convert", "inserted.bmp", "-o", "out.png"], dir.path());
    assert!(o.status.success(), "{}", common::text(&o));
    assert!(
        common::text(&o).contains("warning: inserted.bmp: the file is 2 bytes longer"),
        "{}",
        common::text(&o)
    );
}

#[test]
fn two_and_four_bit_gray_pngs_say_what_they_store_and_read_as_libpng_scales_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (w, h) = (7u32, 3u32);
    for (bits, depth) in [(2u32, png::BitDepth::Two), (4, png::BitDepth::Four)] {
        let top = (1u32 << bits) - 1;
        let level = |x: u32, y: u32| (x + 3 * y) % (top + 1);
        let data = common::packed_levels((w, h), bits, level);
        let mut bytes = Vec::new();
        let mut encoder = png::Encoder::new(&mut bytes, w, h);
        encoder.set_color(png::ColorType::Grayscale);
        encoder.set_depth(depth);
        encoder.write_header().and_then(|mut e| e.write_image_data(&data)).expect("png");
        let name = format!("g{bits}.png");
        let path = write(dir.path(), &name, &bytes);
        let decoded = decode(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(decoded.stored_as, Some(if bits == 2 { "2-bit gray" } else { "4-bit gray" }), "{name}");
        let gray = decoded.image.as_luma8().unwrap_or_else(|| panic!("{name}: 8-bit gray"));
        for (x, y, p) in gray.enumerate_pixels() {
            assert_eq!(u32::from(p.0[0]), level(x, y) * 255 / top, "{name} at ({x}, {y})");
        }
    }
    let o = common::graylab(&["convert", "g2.png", "-o", "out.png"], dir.path());
    let said = common::text(&o);
    assert!(said.contains("note: the file stores 2-bit gray: read as 8-bit gray"), "{said}");
    // An 8-bit gray PNG stores what it gives.
    let plain = write(
        dir.path(),
        "plain.png",
        &png_bytes(&DynamicImage::ImageLuma8(GrayImage::from_pixel(4, 4, Luma([9])))),
    );
    assert_eq!(decode(&plain).expect("decode").stored_as, None);
}
