//! JPEG edge cases: files that cannot hold what their frame header claims (the floor is exact:
//! 2 bits a block sequential, 1 progressive), truncation reported with the row where the data
//! ends or kept with a warning, unsupported variants named.

use std::path::{Path, PathBuf};

use crate::hostile_gen::{minimal_jpeg, sof_offset};
use graylab::io::{DecodeOptions, DecodeWarning, IoError, StoredLuma, TruncatedAt, decode_file};
use graylab::pixel::Formula;
use image::{DynamicImage, RgbImage};

pub(crate) fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("write test file");
    p
}

pub(crate) fn jpeg(w: u32, h: u32) -> Vec<u8> {
    let img = RgbImage::from_fn(w, h, |x, y| image::Rgb([(x * 3) as u8, (y * 2) as u8, ((x + y) * 5) as u8]));
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90)
        .encode_image(&DynamicImage::ImageRgb8(img))
        .expect("encode");
    out
}

const STRICT: DecodeOptions = DecodeOptions {
    memory_budget_bytes: Some(256 << 20),
    allow_truncated: false,
    working_copies: 0,
    working_copy_bytes: None,
    op_copies: graylab::system::memory_budget::OpCopies::NONE,
    stored_luma: false,
};
const LENIENT: DecodeOptions = DecodeOptions {
    memory_budget_bytes: Some(256 << 20),
    allow_truncated: true,
    working_copies: 0,
    working_copy_bytes: None,
    op_copies: graylab::system::memory_budget::OpCopies::NONE,
    stored_luma: false,
};

#[test]
fn the_floor_is_exact_for_sequential_and_progressive_frames() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (sof, name) in [(0, "baseline"), (2, "progressive")] {
        // 1024 x 512: 8192 blocks; 2048 bytes sequential, 1024 progressive.
        let at_floor = write(dir.path(), &format!("{name}.jpg"), &minimal_jpeg(sof, 1024, 512, 0, true));
        let d = decode_file(&at_floor, &STRICT).unwrap_or_else(|e| panic!("{name} at the floor: {e}"));
        assert_eq!((d.image.width(), d.image.height()), (1024, 512));
        // The minimal progressive file has its DC scan alone: every row, at lower quality.
        let expected = if sof == 2 { vec![DecodeWarning::ScansMissing] } else { Vec::new() };
        assert_eq!(d.warnings, expected, "{name}");
        let short = write(dir.path(), &format!("{name}-short.jpg"), &minimal_jpeg(sof, 1024, 512, 1, true));
        let err = decode_file(&short, &STRICT).expect_err("one byte below the floor");
        let min = if sof == 0 { 2048 } else { 1024 };
        assert!(
            matches!(err, IoError::ImpossibleSize { min_bytes, width: 1024, height: 512, .. } if min_bytes == min),
            "{err:?}"
        );
    }
}

#[test]
fn a_tiny_file_claiming_65535_squared_is_refused_before_allocating() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A real 16x16 JPEG whose frame header is patched to 65535 x 65535: the 854-byte case.
    let mut bytes = jpeg(16, 16);
    let sof = sof_offset(&bytes).expect("SOF");
    bytes[sof + 5..sof + 9].copy_from_slice(&[0xFF, 0xFF, 0xFF, 0xFF]);
    let path = write(dir.path(), "huge.jpg", &bytes);
    for options in [STRICT, DecodeOptions::default()] {
        let err = decode_file(&path, &options).expect_err("impossible");
        let msg = err.to_string();
        assert!(matches!(err, IoError::ImpossibleSize { width: 65535, height: 65535, .. }), "{err:?}");
        assert!(
            msg.contains("65535x65535")
                && msg.contains(&format!("{} B", bytes.len()))
                && msg.contains("huge.jpg"),
            "{msg}"
        );
    }
    // A fuzz-corpus-style 186-byte file: minimal headers, a few bytes of data, no end marker.
    let fuzz = minimal_jpeg(2, 65535, 65535, usize::MAX, false);
    let fuzz = [&fuzz[..], &[0x12; 20]].concat();
    let path = write(dir.path(), "fuzz.jpg", &fuzz);
    let err = decode_file(&path, &STRICT).expect_err("impossible");
    assert!(matches!(err, IoError::ImpossibleSize { .. }), "{err:?}");
    // A file larger than the budget is not even read (the decoder would read it whole).
    let err =
        decode_file(&path, &DecodeOptions { memory_budget_bytes: Some(100), ..STRICT }).expect_err("big");
    assert!(matches!(err, IoError::FileTooLarge { budget_bytes: 100, .. }), "{err:?}");
    // Kept in part when asked: libjpeg reads no side over 65,500, and that is said before
    // anything is allocated.
    let err = decode_file(&path, &LENIENT).expect_err("too wide for libjpeg");
    assert!(matches!(err, IoError::Unsupported { .. }), "{err:?}");
    assert!(err.to_string().contains("65535x65535") && err.to_string().contains("at most 65500"), "{err}");
}

#[test]
fn a_truncated_jpeg_names_the_row_or_is_kept_with_a_warning() {
    let dir = tempfile::tempdir().expect("temp dir");
    let full = jpeg(64, 400);
    let whole = decode_file(&write(dir.path(), "whole.jpg", &full), &STRICT).expect("whole").image.to_rgb8();
    let path = write(dir.path(), "half.jpg", &full[..full.len() / 2]);
    let err = decode_file(&path, &STRICT).expect_err("truncated");
    let IoError::Truncated { at: TruncatedAt::Row { rows, height: 400 }, .. } = err else {
        panic!("{err:?}");
    };
    assert!((80..=320).contains(&rows) && rows % 8 == 0, "ends after row {rows}");
    assert!(
        err.to_string().contains(&format!("ends after row {rows} of 400"))
            && err.to_string().contains("half.jpg")
    );
    let kept = decode_file(&path, &LENIENT).expect("kept when asked");
    assert_eq!(kept.warnings, vec![DecodeWarning::Truncated(TruncatedAt::Row { rows, height: 400 })]);
    let kept = kept.image.to_rgb8();
    assert_eq!(kept.dimensions(), (64, 400));
    // The rows before the reported one are the whole file's as libjpeg decodes it (as OpenCV's
    // imread does), but for the last, whose upsampled chroma may take a little of the gray below;
    // the bottom row is gray, as libjpeg leaves what it did not get.
    let row_bytes = 64 * 3;
    let exact = (rows as usize - 1) * row_bytes;
    assert!(kept.as_raw()[..exact] == whole.as_raw()[..exact], "the rows before {rows} are the whole file's");
    let last = exact..exact + row_bytes;
    let apart = kept.as_raw()[last.clone()].iter().zip(&whole.as_raw()[last]).map(|(a, b)| a.abs_diff(*b));
    assert!(apart.clone().all(|d| d <= 6), "row {}: {:?}", rows - 1, apart.max());
    assert!(kept.as_raw()[kept.len() - row_bytes..].iter().all(|&b| b == 128));
    // Only the end marker cut: every row is there, said, and kept without being asked (before:
    // "ends after row 392 of 400 … the missing part is gray", of an image with nothing missing).
    let path = write(dir.path(), "no-eoi.jpg", &full[..full.len() - 2]);
    let decoded = decode_file(&path, &STRICT).expect("whole but for its end marker");
    assert_eq!(decoded.warnings, vec![DecodeWarning::EndMarkerMissing]);
    assert!(decoded.image.to_rgb8() == whole, "the whole file's pixels");
    // Cut inside the headers: truncated, with nothing to keep.
    let path = write(dir.path(), "head.jpg", &full[..100]);
    assert!(matches!(decode_file(&path, &LENIENT), Err(IoError::Truncated { at: TruncatedAt::Unknown, .. })));
}

#[test]
fn unsupported_variants_are_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (sof, expected) in [
        (3, "lossless JPEG (SOF3)"),
        (11, "arithmetic-coded lossless JPEG (SOF11)"),
        (5, "hierarchical sequential JPEG (SOF5)"),
    ] {
        let mut bytes = jpeg(16, 16);
        let at = sof_offset(&bytes).expect("SOF");
        bytes[at + 1] = 0xC0 + sof;
        let err = decode_file(&write(dir.path(), "v.jpg", &bytes), &STRICT).expect_err("unsupported");
        assert!(matches!(err, IoError::Unsupported { .. }) && err.to_string().contains(expected), "{err}");
    }
    let mut bytes = jpeg(16, 16);
    let at = sof_offset(&bytes).expect("SOF");
    bytes[at + 4] = 12;
    let err = decode_file(&write(dir.path(), "p12.jpg", &bytes), &STRICT).expect_err("12-bit");
    assert!(err.to_string().contains("12-bit JPEG"), "{err}");
}

/// An arithmetic-coded JPEG (`jpegtran -arithmetic`: the same coefficients, coded otherwise),
/// sequential, progressive or with restart markers, was refused ("arithmetic-coded sequential
/// JPEG (SOF9)") where `OpenCV`, vips and Pillow read it; libjpeg decodes it to the pixels of the
/// Huffman-coded file it came from. Cut short or with a marker lost it decodes to noise past the
/// damage without a warning, so it is refused then, even where damaged data may be kept.
#[test]
fn arithmetic_coded_jpegs_decode_to_the_pixels_of_their_huffman_coded_source() {
    let (source, reference) = fixture("luma-420");
    let huffman = decode_file(&source, &STRICT).expect("the source").image.to_rgb8();
    assert!(huffman == reference, "the source as djpeg decodes it");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jpeg");
    for name in ["arithmetic", "arithmetic-progressive", "arithmetic-restart"] {
        let path = dir.join(format!("{name}.jpg"));
        let decoded = decode_file(&path, &STRICT).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(decoded.warnings.is_empty(), "{name}: {:?}", decoded.warnings);
        assert!(decoded.image.to_rgb8() == huffman, "{name}: the Huffman-coded file's pixels");
        let luma = DecodeOptions { stored_luma: true, ..STRICT };
        let stored = decode_file(&path, &luma).unwrap_or_else(|e| panic!("{name}: {e}"));
        let from_source = decode_file(&source, &luma).expect("the source's luma");
        assert!(stored.image.as_bytes() == from_source.image.as_bytes(), "{name}: its stored luma");
    }
    let whole = std::fs::read(dir.join("arithmetic-restart.jpg")).expect("read");
    let tmp = tempfile::tempdir().expect("temp dir");
    let cut = write(tmp.path(), "cut.jpg", &whole[..whole.len() * 2 / 3]);
    let mut renumbered = whole.clone();
    let rst = renumbered.windows(2).position(|w| w == [0xFF, 0xD1]).expect("a second restart marker");
    renumbered[rst + 1] = 0xD3;
    let renumbered = write(tmp.path(), "renumbered.jpg", &renumbered);
    for (path, says) in
        [(cut, "the file ends before its image data does"), (renumbered, "a restart marker is lost")]
    {
        for options in [&STRICT, &LENIENT] {
            let err = decode_file(&path, options).expect_err("never kept in part");
            let text = err.to_string();
            assert!(matches!(err, IoError::DamagedData { rows: None, .. }), "{text}");
            assert!(text.contains(says) && text.contains("never kept in part"), "{text}");
        }
    }
}

/// A fixture of `tests/fixtures/jpeg/` and its decode by libjpeg's `djpeg`.
fn fixture(name: &str) -> (PathBuf, image::RgbImage) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jpeg");
    let reference = image::open(dir.join(format!("{name}.djpeg.png"))).expect("reference").to_rgb8();
    (dir.join(format!("{name}.jpg")), reference)
}

/// The largest and the mean difference of two images' samples.
fn differences(a: &image::RgbImage, b: &image::RgbImage) -> (u8, f64) {
    assert_eq!(a.dimensions(), b.dimensions());
    let d: Vec<u8> = a.as_raw().iter().zip(b.as_raw()).map(|(x, y)| x.abs_diff(*y)).collect();
    (d.iter().copied().max().unwrap_or(0), d.iter().map(|&v| f64::from(v)).sum::<f64>() / d.len() as f64)
}

#[test]
fn separate_scans_and_finer_chroma_decode_as_libjpeg_does() {
    for name in ["noninterleaved", "finer-chroma"] {
        let (path, reference) = fixture(name);
        let decoded = decode_file(&path, &STRICT).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(decoded.warnings.is_empty(), "{name}: {:?}", decoded.warnings);
        let (max, mean) = differences(&decoded.image.to_rgb8(), &reference);
        // libjpeg decodes them, as djpeg does: exactly its pixels (issue 42, E7).
        assert!(max == 0 && mean == 0.0, "{name}: max {max}, mean {mean:.2} against djpeg");
    }
}

#[test]
fn sampling_factors_of_3_decode_as_libjpeg_does() {
    for name in ["sampled-3x1", "sampled-3x2-progressive", "sampled-3x1-restart", "gray-3x1"] {
        let (path, reference) = fixture(name);
        let decoded = decode_file(&path, &STRICT).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(decoded.warnings.is_empty(), "{name}: {:?}", decoded.warnings);
        assert_eq!((decoded.image.width(), decoded.image.height()), (50, 35), "{name}");
        let gray = name.starts_with("gray");
        assert_eq!(decoded.image.color().channel_count(), if gray { 1 } else { 3 }, "{name}");
        let (max, mean) = differences(&decoded.image.to_rgb8(), &reference);
        assert!(max <= 4 && mean < 0.5, "{name}: max {max}, mean {mean:.2} against djpeg");
    }
    // Their EXIF orientation is read too (from libjpeg's header): 6 turns the image a quarter
    // clockwise.
    let (path, reference) = fixture("sampled-3x1");
    let bytes = std::fs::read(&path).expect("read fixture");
    let tiff =
        [b"II*\0", &8u32.to_le_bytes()[..], &[1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0]]
            .concat();
    let exif = [&b"Exif\0\0"[..], &tiff].concat();
    let segment =
        [&[0xFF, 0xE1][..], &u16::try_from(exif.len() + 2).expect("short").to_be_bytes(), &exif].concat();
    let dir = tempfile::tempdir().expect("temp dir");
    let turned = write(dir.path(), "turned.jpg", &[&bytes[..2], &segment, &bytes[2..]].concat());
    let decoded = decode_file(&turned, &STRICT).expect("turned");
    assert!(decoded.reoriented);
    let expected = image::imageops::rotate90(&reference);
    let (max, mean) = differences(&decoded.image.to_rgb8(), &expected);
    assert!(max <= 4 && mean < 0.5, "turned: max {max}, mean {mean:.2} against djpeg's, turned");
}

#[test]
fn a_progressive_header_on_a_baseline_scan_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut bytes = jpeg(48, 32);
    let at = sof_offset(&bytes).expect("SOF");
    bytes[at + 1] = 0xC2;
    let err = decode_file(&write(dir.path(), "sof2.jpg", &bytes), &LENIENT).expect_err("libjpeg refuses it");
    let msg = err.to_string();
    assert!(matches!(err, IoError::DamagedData { .. }), "{err:?}");
    assert!(
        msg.contains("progressive (SOF2)") && msg.contains("baseline") && msg.ends_with("sof2.jpg"),
        "{msg}"
    );
}

#[test]
fn junk_before_a_marker_is_skipped_with_a_warning() {
    let dir = tempfile::tempdir().expect("temp dir");
    let clean = jpeg(48, 32);
    let at = sof_offset(&clean).expect("SOF");
    let junk = [&clean[..at], &[1, 2, 3, 4, 5, 6, 7][..], &clean[at..]].concat();
    let want = decode_file(&write(dir.path(), "clean.jpg", &clean), &STRICT).expect("clean");
    let got = decode_file(&write(dir.path(), "junk.jpg", &junk), &STRICT).expect("read as libjpeg does");
    assert_eq!(got.warnings, vec![DecodeWarning::ExtraneousBytes { bytes: 7, marker: 0xC0 }]);
    assert!(got.warnings[0].to_string().contains("7 extraneous bytes before marker FFC0"));
    assert_eq!(got.image.as_bytes(), want.image.as_bytes());
}

#[test]
fn a_damaged_marker_between_progressive_scans_is_skipped_as_libjpeg_does() {
    let (path, reference) = fixture("progressive-damaged-marker");
    let decoded = decode_file(&path, &STRICT).expect("read as libjpeg does");
    // The bytes skipped, then what libjpeg itself warns of, as djpeg prints it: each kind once.
    assert_eq!(decoded.warnings.first(), Some(&DecodeWarning::ExtraneousBytes { bytes: 60, marker: 0xC4 }));
    let told: Vec<String> = decoded.warnings[1..].iter().map(ToString::to_string).collect();
    assert!(
        told.iter().any(|w| w.contains("Inconsistent progression sequence") && w.contains("times more")),
        "{told:?}"
    );
    let kinds: std::collections::HashSet<_> = told.iter().map(|w| w.split(':').nth(1)).collect();
    assert_eq!(kinds.len(), told.len(), "each kind of damage once: {told:?}");
    let (max, mean) = differences(&decoded.image.to_rgb8(), &reference);
    assert!(max <= 8 && mean < 1.0, "max {max}, mean {mean:.2} against djpeg");
}

#[test]
fn a_lost_restart_marker_loses_only_the_interval_whose_data_went_with_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let gray =
        DynamicImage::ImageLuma8(image::GrayImage::from_fn(64, 512, |x, y| image::Luma([(x * 3 + y) as u8])));
    // graylab's encoder: one restart interval per 128 rows, so 3 markers.
    let full = graylab::io::encode_to_vec(&gray, graylab::io::ExportFormat::Jpeg, 90).expect("encode");
    let want = decode_file(&write(dir.path(), "full.jpg", &full), &STRICT).expect("whole").image.to_luma8();
    let markers: Vec<usize> = full
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w[0] == 0xFF && (0xD0..=0xD7).contains(&w[1]))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(markers.len(), 3);
    // Without marker n, the data before the next one holds intervals n and n + 1: libjpeg (and
    // OpenCV) decodes n from it and fills n + 1 with gray, whose data went with the marker.
    for (lost, gray_rows) in [(1, 256..384u32), (2, 384..512)] {
        let bytes = [&full[..markers[lost]], &full[markers[lost] + 2..]].concat();
        let path = write(dir.path(), &format!("lost-rst{lost}.jpg"), &bytes);
        let err = decode_file(&path, &STRICT).expect_err("damaged");
        let msg = err.to_string();
        assert!(matches!(err, IoError::DamagedData { rows: Some(_), .. }), "{err:?}");
        let rows = format!("rows {} to {} of 512", gray_rows.start + 1, gray_rows.end);
        assert!(
            msg.contains("restart marker is missing") && msg.contains(&rows) && msg.contains("lost-rst"),
            "{msg}"
        );
        let kept = decode_file(&path, &LENIENT).expect("kept when asked");
        let cause = graylab::io::RestartDamage::MarkerMissing;
        assert_eq!(
            kept.warnings,
            vec![DecodeWarning::DamagedRestart {
                rows: (gray_rows.start, gray_rows.end),
                height: 512,
                cause
            }]
        );
        let kept = kept.image.to_luma8();
        for y in 0..512 {
            let row = |img: &image::GrayImage| img.as_raw()[y as usize * 64..][..64].to_vec();
            if gray_rows.contains(&y) {
                // Gray but for the first block, which libjpeg decodes from zero bits.
                let first_block = y < gray_rows.start + 8;
                assert!(row(&kept)[usize::from(first_block) * 8..].iter().all(|&v| v == 128), "row {y}");
            } else {
                assert_eq!(row(&kept), row(&want), "row {y} differs from the whole file's");
            }
        }
    }
}

#[test]
fn decoder_refusals_are_sentences_naming_the_variant() {
    let dir = tempfile::tempdir().expect("temp dir");
    let good = jpeg(48, 32);
    let sof = sof_offset(&good).expect("SOF");
    // Height 0: the height would follow the data in a DNL marker.
    let mut dnl = good.clone();
    dnl[sof + 5..sof + 7].copy_from_slice(&[0, 0]);
    // Y sampled 3x2 beside Cb sampled 2x1: 3 / 2 is no whole ratio (libjpeg refuses it too).
    let mut thirds = good.clone();
    thirds[sof + 11] = 0x32;
    thirds[sof + 14] = 0x21;
    // A quantisation table with table id 5 (0-3 are allowed).
    let mut dqt = good.clone();
    let at = dqt.windows(2).position(|w| w == [0xFF, 0xDB]).expect("DQT");
    dqt[at + 4] = 0x05;
    for (name, bytes, what) in [
        ("dnl.jpg", dnl, "a DNL marker"),
        ("thirds.jpg", thirds, "sampled 2x1 beside one sampled 3x2, a ratio that is not a whole number"),
        ("dqt.jpg", dqt, "quantisation table (DQT segment) is damaged"),
    ] {
        let err = decode_file(&write(dir.path(), name, &bytes), &STRICT).expect_err(name);
        let msg = err.to_string();
        assert!(msg.contains(what) && msg.ends_with(name), "{name}: {msg}");
        assert!(!msg.contains("Format error decoding"), "{name}: {msg}");
    }
}

/// A truncated CMYK JPEG's missing rows are libjpeg's fill made RGB (about 64, not 128): the
/// row it ends after is where that fill starts (it was always the last row of MCUs).
#[test]
fn a_truncated_cmyk_jpeg_names_the_row_its_data_ends() {
    let dir = tempfile::tempdir().expect("temp dir");
    let whole =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jpeg/cmyk-tall.jpg"))
            .expect("the fixture");
    let path = write(dir.path(), "cmyk-half.jpg", &whole[..whole.len() / 2]);
    let err = decode_file(&path, &STRICT).expect_err("truncated");
    let IoError::Truncated { at: TruncatedAt::Row { rows, height: 96 }, .. } = err else { panic!("{err:?}") };
    assert!(rows < 88 && rows % 8 == 0, "ends after row {rows}");
    // Kept: every row from `rows + 8` on is the one fill colour, and the row before `rows` is not.
    let kept = decode_file(&path, &LENIENT).expect("kept when asked").image.to_rgb8();
    let fill = *kept.get_pixel(0, 95);
    let filled = |y: u32| (0..48).all(|x| *kept.get_pixel(x, y) == fill);
    assert!((rows + 8..96).all(filled), "filled below row {rows}");
    assert!(rows == 0 || !filled(rows - 1), "data above row {rows}");
}

#[test]
fn a_cmyk_jpeg_is_read_as_rgb_and_says_it_was_stored_as_cmyk() {
    // `cmyk.jpg`: ImageMagick's `convert -size 16x8 gradient:red-blue -colorspace CMYK`, red at
    // the top row and blue at the bottom one.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jpeg/cmyk.jpg");
    let decoded = decode_file(&path, &STRICT).expect("a CMYK JPEG decodes");
    assert_eq!(decoded.stored_as, Some("CMYK"), "the caption must not call it a plain RGB file");
    let rgb = decoded.image.to_rgb8();
    assert_eq!(rgb.dimensions(), (16, 8));
    let [r, g, b] = rgb.get_pixel(8, 0).0;
    assert!(r > 200 && g < 60 && b < 60, "top row red, got {r} {g} {b}");
    let [r, g, b] = rgb.get_pixel(8, 7).0;
    assert!(r < 60 && g < 60 && b > 200, "bottom row blue, got {r} {g} {b}");
    // Its gray is OpenCV's `cvtColor(imread(…), COLOR_BGR2GRAY)`, byte for byte: libjpeg's CMYK
    // turned into RGB as `imread` turns it.
    let opencv = image::open(path.with_file_name("cmyk.opencv-gray.png")).expect("reference").to_luma8();
    let gray: Vec<u8> = rgb.pixels().map(|p| Formula::Bt601.luma8(p[0], p[1], p[2])).collect();
    assert_eq!(&gray, opencv.as_raw());
    // Its magenta sampled finer than its cyan (1x1, 2x2, 1x1, 1x1), which graylab refused while
    // another decoder read CMYK: read, and OpenCV's too.
    let finer = path.with_file_name("cmyk-finer.jpg");
    let decoded = decode_file(&finer, &STRICT).expect("a CMYK JPEG sampled 1x1, 2x2, 1x1, 1x1");
    let rgb = decoded.image.to_rgb8();
    let gray: Vec<u8> = rgb.pixels().map(|p| Formula::Bt601.luma8(p[0], p[1], p[2])).collect();
    let opencv =
        image::open(path.with_file_name("cmyk-finer.opencv-gray.png")).expect("reference").to_luma8();
    assert_eq!((decoded.stored_as, gray.as_slice()), (Some("CMYK"), opencv.as_raw().as_slice()));
    // An RGB JPEG is stored as what it is read as.
    let (rgb_path, _) = fixture("finer-chroma");
    assert_eq!(decode_file(&rgb_path, &STRICT).expect("rgb").stored_as, None);
}

/// Stored luma: a fixture, decoded for the luma it stores.
const LUMA: DecodeOptions = DecodeOptions { stored_luma: true, ..STRICT };

#[test]
fn the_stored_luma_is_libjpegs_grayscale_decode() {
    // `luma-*.jpg`: libjpeg-turbo 2.1.5's `cjpeg` at quality 90 from one 101x75 crop of the
    // sample photo, in each layout; `*.djpeg-grayscale.png`: `djpeg -grayscale` of each.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jpeg");
    for name in ["luma-420", "luma-422", "luma-444", "luma-progressive", "luma-restart"] {
        let path = dir.join(format!("{name}.jpg"));
        let reference =
            image::open(dir.join(format!("{name}.djpeg-grayscale.png"))).expect("reference").to_luma8();
        let decoded = decode_file(&path, &LUMA).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(decoded.stored_luma, Some(StoredLuma::Decoded), "{name}");
        let DynamicImage::ImageLuma8(gray) = &decoded.image else {
            panic!("{name}: the stored luma is one gray plane, not {:?}", decoded.image.color())
        };
        assert_eq!(gray.dimensions(), (101, 75), "{name}");
        let d: Vec<u8> = gray.as_raw().iter().zip(reference.as_raw()).map(|(a, b)| a.abs_diff(*b)).collect();
        let max = d.iter().copied().max().unwrap_or(0);
        let mean = d.iter().map(|&v| f64::from(v)).sum::<f64>() / d.len() as f64;
        // libjpeg-turbo's own decoder decodes a complete file: not within a level, exact.
        assert!(max == 0 && mean == 0.0, "{name}: max {max}, mean {mean:.3} against djpeg -grayscale");
        // Not bt601 of the decoded colour, but near it: the encoder's luma before chroma loss.
        let colour = decode_file(&path, &STRICT).expect("colour").image.to_rgb8();
        let bt601: Vec<u8> = colour.pixels().map(|p| Formula::Bt601.luma8(p[0], p[1], p[2])).collect();
        let off = gray.as_raw().iter().zip(&bt601).map(|(a, b)| a.abs_diff(*b)).max().unwrap_or(0);
        assert!(off <= 8, "{name}: {off} levels from bt601 of the decoded colour");
    }
}

#[test]
fn files_without_stored_luma_decode_as_usual_and_say_why() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jpeg");
    // (`stored-rgb.jpg`: `cjpeg -quality 90 -rgb` of the same crop.)
    for (name, why) in [("stored-rgb.jpg", "the JPEG stores RGB"), ("cmyk.jpg", "CMYK or YCCK")] {
        let decoded = decode_file(&dir.join(name), &LUMA).unwrap_or_else(|e| panic!("{name}: {e}"));
        let Some(StoredLuma::Fallback(said)) = decoded.stored_luma else {
            panic!("{name}: {:?}", decoded.stored_luma)
        };
        assert!(said.contains(why), "{name}: {said}");
        assert_eq!(decoded.image.color(), image::ColorType::Rgb8, "{name}: decoded in colour");
        assert!(StoredLuma::Fallback(said).note().contains("bt601"), "{name}");
    }
    // Odd samplings are libjpeg's too (issue 42, E7): their stored luma is decoded, as djpeg
    // -grayscale decodes it, not converted from colour another decoder gave.
    for name in ["sampled-3x1.jpg", "finer-chroma.jpg", "noninterleaved.jpg"] {
        let decoded = decode_file(&dir.join(name), &LUMA).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(decoded.stored_luma, Some(StoredLuma::Decoded), "{name}");
        assert_eq!(decoded.image.color(), image::ColorType::L8, "{name}");
    }
    // A gray JPEG stores its luma alone: that is what it decodes to.
    let gray = decode_file(&dir.join("gray-3x1.jpg"), &LUMA).expect("gray");
    assert_eq!((gray.stored_luma, gray.image.color()), (Some(StoredLuma::Decoded), image::ColorType::L8));
    // Any other format says it is not a JPEG.
    let tmp = tempfile::tempdir().expect("temp dir");
    let png = tmp.path().join("in.png");
    image::RgbImage::new(4, 4).save(&png).expect("png");
    let other = decode_file(&png, &LUMA).expect("png");
    assert_eq!(other.stored_luma, Some(StoredLuma::Fallback("not a JPEG")));
    // Asked for nothing, nothing is said.
    assert_eq!(decode_file(&png, &STRICT).expect("png").stored_luma, None);
}

#[test]
fn a_truncated_jpeg_is_refused_or_kept_for_its_stored_luma_as_for_colour() {
    let dir = tempfile::tempdir().expect("temp dir");
    let whole = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jpeg/luma-420.jpg"))
        .expect("fixture");
    let cut = write(dir.path(), "cut.jpg", &whole[..whole.len() * 2 / 3]);
    let colour = decode_file(&cut, &STRICT).expect_err("truncated");
    let luma = decode_file(&cut, &LUMA).expect_err("truncated");
    assert!(matches!(luma, IoError::Truncated { .. }), "{luma}");
    assert_eq!(luma.to_string(), colour.to_string(), "the same refusal");
    let kept = decode_file(&cut, &DecodeOptions { allow_truncated: true, ..LUMA }).expect("kept");
    assert_eq!(kept.image.color(), image::ColorType::L8);
    let colour = decode_file(&cut, &LENIENT).expect("kept");
    assert_eq!(kept.warnings, colour.warnings, "the same warning, rows and all");
    assert!(matches!(kept.warnings.as_slice(), [DecodeWarning::Truncated(TruncatedAt::Row { .. })]));
}

/// Stored luma whose rows libjpeg upsamples (Y 1x1 beside chroma 1x2) is never cut into restart
/// bands: a band alone decodes its edge rows differently (before, rows 511 and 512 of this file
/// differed from `djpeg -grayscale` by up to 8 levels, exit 0).
#[test]
fn upsampled_stored_luma_is_not_cut_at_a_band_seam() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let rgb = crate::common::photo(650, 1100).to_rgb8();
    let mut ppm = b"P6\n650 1100\n255\n".to_vec();
    ppm.extend_from_slice(rgb.as_raw());
    std::fs::write(d.join("in.ppm"), ppm).expect("ppm");
    let (jpeg, ppm) = (d.join("in.jpg"), d.join("in.ppm"));
    let args = ["-quality", "85", "-sample", "1x1,1x2,1x2", "-restart", "1", "-outfile"];
    let mut args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    args.extend([jpeg.as_os_str(), ppm.as_os_str()]);
    let Some(made) = crate::codecs::reference_tool("cjpeg", "libjpeg-turbo-progs", &args) else { return };
    assert!(made.status.success(), "cjpeg: {}", String::from_utf8_lossy(&made.stderr));
    let o = crate::common::graylab(&["convert", "in.jpg", "--formula", "stored-luma", "-o", "out.png"], d);
    assert!(o.status.success(), "{}", crate::common::text(&o));
    let args = ["-grayscale".as_ref(), "-pnm".as_ref(), jpeg.as_os_str()];
    let Some(djpeg) = crate::codecs::reference_tool("djpeg", "libjpeg-turbo-progs", &args) else { return };
    let header = b"P5\n650 1100\n255\n";
    assert_eq!(djpeg.stdout.get(..header.len()), Some(&header[..]), "djpeg writes one PGM");
    let ours = image::open(d.join("out.png")).expect("output").to_luma8();
    let theirs = djpeg.stdout.get(header.len()..).expect("rows");
    let rows: Vec<usize> =
        (0..1100).filter(|&y| ours.as_raw()[y * 650..][..650] != theirs[y * 650..][..650]).collect();
    assert!(rows.is_empty(), "rows that differ from djpeg -grayscale: {rows:?}");
}

/// A stored-luma conversion runs no kernel, so no work per pixel: its report says 0 rounds, the
/// text no work line at all (no kernel ran), beside the note that the work was not applied
/// (before: "work 5 rounds/px", then the note), on each backend, the streamed CPU path too.
#[test]
fn stored_luma_reports_no_work_rounds() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jpeg/luma-420.jpg");
    std::fs::copy(fixture, d.join("in.jpg")).expect("copy");
    let backends: &[&str] = if crate::common::gpu().is_some() { &["cpu", "gpu"] } else { &["cpu"] };
    for backend in backends {
        let args = [
            "convert",
            "in.jpg",
            "--formula",
            "stored-luma",
            "--work",
            "5",
            "--backend",
            backend,
            "--overwrite",
        ];
        let o = crate::common::graylab(&args, d);
        let t = crate::common::text(&o);
        assert!(o.status.success(), "{backend}: {t}");
        assert!(!t.contains("rounds/px"), "{backend}: no kernel ran, no work to describe: {t}");
        assert!(t.contains("the work per pixel was not applied"), "{backend}: {t}");
        let o = crate::common::graylab(&[&args[..], &["--json"]].concat(), d);
        let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        assert_eq!(json[0]["run"]["work_rounds"], 0, "{backend}: {json}");
    }
}

#[test]
fn a_truncated_turned_jpeg_says_where_it_ends_in_the_image_as_shown() {
    let dir = tempfile::tempdir().expect("temp dir");
    // EXIF orientation 6: the 64x400 rows as stored are shown turned clockwise, 400x64.
    let full = jpeg(64, 400);
    let mut exif = b"Exif\0\0II*\0\x08\0\0\0\x01\0".to_vec();
    exif.extend_from_slice(&[0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0]);
    let mut turned = full[..2].to_vec();
    turned.extend_from_slice(&[0xFF, 0xE1]);
    turned.extend_from_slice(&((exif.len() + 2) as u16).to_be_bytes());
    turned.extend_from_slice(&exif);
    turned.extend_from_slice(&full[2..]);
    let path = write(dir.path(), "t6.jpg", &turned[..turned.len() / 2]);
    let err = decode_file(&path, &STRICT).expect_err("truncated");
    let IoError::Truncated { at: TruncatedAt::Row { rows, height: 400 }, .. } = err else {
        panic!("{err:?}")
    };
    let whole = format!(
        "it ends after row {rows} of 400 as stored: the image as shown is whole in its right {rows} of 400 columns"
    );
    let o = crate::common::graylab(&["convert", "t6.jpg", "-o", "t6.png"], dir.path());
    let said = crate::common::text(&o);
    assert_eq!(o.status.code(), Some(1), "{said}");
    assert!(said.contains(&format!("error: the file is truncated ({whole}): t6.jpg")), "{said}");
    let o = crate::common::graylab(&["convert", "t6.jpg", "-o", "t6.png", "--allow-truncated"], dir.path());
    let said = crate::common::text(&o);
    assert!(o.status.success(), "{said}");
    assert!(
        said.contains(&format!("warning: t6.jpg: the file is truncated ({whole}): the missing part is gray")),
        "{said}"
    );
    // The gray is on the left as shown, the rows with data (a few more than counted whole) on the right.
    let gray = image::open(dir.path().join("t6.png")).expect("output").to_luma8();
    assert_eq!(gray.dimensions(), (400, 64));
    let all_gray = |x: u32| (0..64).all(|y| gray.get_pixel(x, y).0 == [128]);
    let left = (0..400).take_while(|&x| all_gray(x)).count() as u32;
    assert!(left > 0 && left <= 400 - rows, "{left} gray columns on the left, {rows} whole");
    assert!((left..400).all(|x| !all_gray(x)), "the other columns hold data");
}

#[test]
fn a_turned_jpeg_reserves_one_image_and_a_band_not_two_images() {
    // 100x1000 as stored, EXIF orientation 6: 300 kB of RGB, turned as it is decoded, a band
    // of 128 rows (38 kB) at a time. Two whole copies (600 kB) were reserved, and held.
    // The file (42 kB) is held twice while libjpeg starts: 422 kB in all.
    let bytes = jpeg(100, 1000);
    let exif = [
        &b"Exif\0\0II*\0"[..],
        &8u32.to_le_bytes(),
        &[1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0],
    ]
    .concat();
    let segment =
        [&[0xFF, 0xE1][..], &u16::try_from(exif.len() + 2).expect("short").to_be_bytes(), &exif].concat();
    let dir = tempfile::tempdir().expect("temp dir");
    let turned = write(dir.path(), "turned.jpg", &[&bytes[..2], &segment, &bytes[2..]].concat());
    let file_bytes = std::fs::metadata(&turned).expect("written").len();
    let (image_bytes, band_bytes) = (300_000, 128 * 100 * 3);
    let within = |budget| DecodeOptions { memory_budget_bytes: Some(budget), ..STRICT };
    let decoded = decode_file(&turned, &within(450_000)).expect("one image and a band fit");
    assert_eq!((decoded.image.width(), decoded.image.height()), (1000, 100));
    drop(decoded);
    // Refused before anything is allocated where the image and its band do not fit.
    let err = decode_file(&turned, &within(image_bytes + band_bytes)).expect_err("too large");
    let IoError::TooLarge { needed_bytes, .. } = err else { panic!("{err:?}") };
    // The image, its band, the file held twice while libjpeg starts (and nothing else here).
    assert_eq!(needed_bytes, image_bytes + band_bytes + 2 * file_bytes, "{err}");
}
