//! Decoding and export: every hostile input class gets its own error naming the file, EXIF
//! orientation is applied, exports are atomic and never clobber.

mod common;

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
    // TIFF keeps 16-bit gray and alpha as they are (tests/codecs.rs reads them back with libtiff);
    // BMP keeps alpha as RGBA with equal R, G and B, and says so (no false "no alpha").
    let tif = dir.path().join("la16.tif");
    let r = encode_file(&la16, &tif, &ExportOptions::default()).expect("tiff");
    assert!(r.notes.is_empty(), "{:?}", r.notes);
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
