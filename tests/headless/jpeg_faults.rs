//! Issue 42's JPEG fault classes: a libjpeg error after the last row commits nothing (E1); coded
//! data that ends early before an end-of-image marker is a truncation (E2); three components
//! take libjpeg's colour space rule (E5); the damage libjpeg warns about reaches the user (E6);
//! every complete JPEG is libjpeg's decode (E7).

use std::path::Path;

use graylab::io::{DecodeOptions, DecodeWarning, IoError, StoredLuma, TruncatedAt, decode_file};

use crate::common::{graylab, text};
use crate::jpeg::{jpeg, write};

fn options(allow_truncated: bool, stored_luma: bool) -> DecodeOptions {
    DecodeOptions {
        memory_budget_bytes: Some(256 << 20),
        allow_truncated,
        stored_luma,
        ..DecodeOptions::default()
    }
}

/// The offset of the first segment with marker `FF code`, walking the segments from SOI.
fn segment(bytes: &[u8], code: u8) -> usize {
    let mut at = 2;
    while at + 4 <= bytes.len() {
        assert_eq!(bytes[at], 0xFF, "a segment at {at}");
        if bytes[at + 1] == code {
            return at;
        }
        at += 2 + usize::from(u16::from_be_bytes([bytes[at + 2], bytes[at + 3]]));
    }
    panic!("no FF{code:02X} segment");
}

/// `jpeg` with `inserted` placed right after its SOI marker.
fn after_soi(jpeg: &[u8], inserted: &[u8]) -> Vec<u8> {
    [&jpeg[..2], inserted, &jpeg[2..]].concat()
}

/// The file's image data ends (its last two bytes are the end-of-image marker) with `trailer`
/// instead.
fn with_trailer(jpeg: &[u8], trailer: &[u8]) -> Vec<u8> {
    [&jpeg[..jpeg.len() - 2], trailer].concat()
}

#[test]
fn a_libjpeg_error_after_the_last_row_leaves_the_users_file_as_it_was() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let good = jpeg(640, 480);
    // Each is read by libjpeg only after the image's last row, in its `finish`.
    let triggers: [(&str, &[u8]); 3] = [
        ("a second scan", &[0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00, 0xFF, 0xD9]),
        (
            "a second frame header",
            &[0xFF, 0xC0, 0x00, 0x0B, 0x08, 0x00, 0x10, 0x00, 0x10, 0x01, 0x01, 0x11, 0x00, 0xFF, 0xD9],
        ),
        ("a table that is too short", &[0xFF, 0xDB, 0x00, 0x03, 0x00, 0xFF, 0xD9]),
    ];
    let mut by_libjpeg = 0;
    for (what, trailer) in triggers {
        let input = write(d, "late.jpg", &with_trailer(&good, trailer));
        for (output, formula, backend) in [
            ("u.png", "bt601", "cpu"),
            ("u.jpg", "bt601", "cpu"),
            ("u.png", "stored-luma", "cpu"),
            ("u.png", "bt709", "gpu"),
        ] {
            std::fs::write(d.join(output), b"precious").expect("the user's file");
            let o = graylab(
                &[
                    "convert",
                    "late.jpg",
                    "-o",
                    output,
                    "--overwrite",
                    "--formula",
                    formula,
                    "--backend",
                    backend,
                ],
                d,
            );
            let said = text(&o);
            assert_eq!(o.status.code(), Some(1), "{what} -> {output} {formula} {backend}: {said}");
            assert_eq!(
                std::fs::read(d.join(output)).expect("still there"),
                b"precious",
                "{what} -> {output} {formula} {backend}: the user's file was replaced: {said}"
            );
            assert!(said.contains("late.jpg"), "the error names the file: {said}");
            by_libjpeg += usize::from(said.contains("libjpeg"));
        }
        assert_eq!(input.metadata().expect("input").len() as usize, good.len() - 2 + trailer.len());
    }
    assert!(by_libjpeg >= 4, "at least one trigger reaches libjpeg's finish ({by_libjpeg} runs did)");
    let leftovers: Vec<_> = std::fs::read_dir(d)
        .expect("list")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains(".part"))
        .collect();
    assert!(leftovers.is_empty(), "no temporary file left: {leftovers:?}");
}

#[test]
fn data_cut_short_before_an_end_marker_is_refused_as_truncated_or_kept_with_its_row() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let good = jpeg(640, 480);
    let cut = write(d, "cut.jpg", &[&good[..good.len() / 2], &[0xFF, 0xD9][..]].concat());
    for stored_luma in [false, true] {
        match decode_file(&cut, &options(false, stored_luma)) {
            Err(IoError::Truncated { at: TruncatedAt::EarlyEnd { rows, height: 480 }, .. }) => {
                let rows = rows.expect("a one-scan file says the row");
                assert!(rows > 0 && rows < 480, "stored luma {stored_luma}: row {rows}");
            }
            other => panic!("stored luma {stored_luma}: refused as truncated, not {other:?}"),
        }
        let kept = decode_file(&cut, &options(true, stored_luma)).expect("kept when asked");
        assert!(
            kept.warnings.iter().any(|w| matches!(w, DecodeWarning::Truncated(TruncatedAt::EarlyEnd { .. }))),
            "stored luma {stored_luma}: {:?}",
            kept.warnings
        );
    }
    for backend in ["cpu", "gpu"] {
        let o = graylab(&["convert", "cut.jpg", "-o", "cut.png", "--backend", backend], d);
        assert_eq!(o.status.code(), Some(1), "{backend}: {}", text(&o));
        assert!(text(&o).contains("premature end of data segment"), "{backend}: {}", text(&o));
        assert!(text(&o).contains("pass --allow-truncated"), "{backend}: the flag is named: {}", text(&o));
        assert!(!d.join("cut.png").exists(), "{backend}: no output after an error");
        let o =
            graylab(&["convert", "cut.jpg", "-o", "cut.png", "--backend", backend, "--allow-truncated"], d);
        assert!(o.status.success(), "{backend}: {}", text(&o));
        // libjpeg leaves the blocks it has no data for at zero: gray, not the last block repeated.
        let said = text(&o);
        assert!(
            said.contains("truncated") && said.contains("the rows after it are gray"),
            "{backend}: {said}"
        );
        std::fs::remove_file(d.join("cut.png")).expect("kept output");
    }
}

/// `jpeg` with its three components named `ids`, in the frame header and the scan header alike.
fn with_component_ids(jpeg: &[u8], ids: [u8; 3]) -> Vec<u8> {
    let mut bytes = jpeg.to_vec();
    let sof = segment(&bytes, 0xC0);
    for (k, id) in ids.iter().enumerate() {
        bytes[sof + 10 + 3 * k] = *id;
    }
    let sos = segment(&bytes, 0xDA);
    for (k, id) in ids.iter().enumerate() {
        bytes[sos + 5 + 2 * k] = *id;
    }
    bytes
}

#[test]
fn a_jfif_file_is_ycbcr_whatever_its_adobe_flag_or_component_ids_say() {
    // libjpeg's rule: a JFIF marker first, then Adobe's transform, then the ids. OpenCV and
    // Pillow decode all three files as YCbCr.
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let good = jpeg(96, 64);
    let adobe_rgb = [0xFF, 0xEE, 0x00, 0x0E, b'A', b'd', b'o', b'b', b'e', 0x00, 0x64, 0, 0, 0, 0, 0];
    let jfif_end = segment(&good, 0xE0) + 2 + usize::from(u16::from_be_bytes([good[4], good[5]]));
    let with_adobe = [&good[..jfif_end], &adobe_rgb[..], &good[jfif_end..]].concat();
    let reference = decode_file(&write(d, "good.jpg", &good), &options(false, false)).expect("good");
    let reference_luma = decode_file(&write(d, "good.jpg", &good), &options(false, true)).expect("good");
    for (name, bytes) in [("adobe0.jpg", with_adobe), ("rgb-ids.jpg", with_component_ids(&good, *b"RGB"))] {
        let path = write(d, name, &bytes);
        let decoded = decode_file(&path, &options(false, false)).expect(name);
        assert_eq!(decoded.image.as_bytes(), reference.image.as_bytes(), "{name}: decoded as YCbCr");
        let luma = decode_file(&path, &options(false, true)).expect(name);
        assert_eq!(luma.stored_luma, Some(StoredLuma::Decoded), "{name}");
        assert_eq!(luma.image.as_bytes(), reference_luma.image.as_bytes(), "{name}: its stored luma");
    }
    // Without a JFIF marker the same ids say RGB, as libjpeg reads them: decoded, not refused.
    let jfif = segment(&good, 0xE0);
    let jfif_len = 2 + usize::from(u16::from_be_bytes([good[jfif + 2], good[jfif + 3]]));
    let bare = [&good[..jfif], &good[jfif + jfif_len..]].concat();
    let rgb = decode_file(&write(d, "rgb.jpg", &with_component_ids(&bare, *b"RGB")), &options(false, true))
        .expect("an RGB JPEG");
    assert!(matches!(rgb.stored_luma, Some(StoredLuma::Fallback(_))), "{:?}", rgb.stored_luma);
}

#[test]
fn damage_libjpeg_warns_about_is_a_warning_naming_the_file() {
    // A run of stuffed FF bytes in the coded data is a run of 1 bits: a Huffman code of sixteen
    // 1s is none, so libjpeg warns "bad Huffman code" and decodes on.
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let good = jpeg(320, 240);
    let data = segment(&good, 0xDA)
        + 2
        + usize::from(u16::from_be_bytes([good[segment(&good, 0xDA) + 2], good[segment(&good, 0xDA) + 3]]));
    let middle = data + (good.len() - data) / 2;
    let mut bad = good.clone();
    for k in 0..32 {
        bad[middle + 2 * k] = 0xFF;
        bad[middle + 2 * k + 1] = 0x00;
    }
    let path = write(d, "damaged.jpg", &bad);
    for stored_luma in [false, true] {
        let decoded = decode_file(&path, &options(false, stored_luma)).expect("decoded on, as djpeg does");
        let damage: Vec<_> =
            decoded.warnings.iter().filter(|w| matches!(w, DecodeWarning::Damaged { .. })).collect();
        assert!(!damage.is_empty(), "stored luma {stored_luma}: {:?}", decoded.warnings);
        assert!(damage[0].to_string().contains("Corrupt JPEG data"), "{}", damage[0]);
    }
    for formula in ["bt601", "stored-luma"] {
        let o =
            graylab(&["convert", "damaged.jpg", "-o", "damaged.png", "--overwrite", "--formula", formula], d);
        assert!(o.status.success(), "{formula}: {}", text(&o));
        assert!(text(&o).contains("Corrupt JPEG data"), "{formula}: {}", text(&o));
        let o = graylab(
            &["convert", "damaged.jpg", "-o", "damaged.png", "--overwrite", "--formula", formula, "--json"],
            d,
        );
        assert!(o.status.success(), "{formula}: {}", text(&o));
        assert!(String::from_utf8_lossy(&o.stdout).contains("Corrupt JPEG data"), "{formula}: {}", text(&o));
    }
}

#[test]
fn a_clean_file_has_no_warning_and_its_app_segments_change_no_pixel() {
    // The complete-file header is libjpeg's: segments it keeps for graylab (an ICC profile in two
    // APP2 parts) invent no warning and change no pixel.
    let dir = tempfile::tempdir().expect("temp dir");
    let good = jpeg(64, 48);
    let icc_part = |n: u8, data: &[u8]| {
        let body = [&b"ICC_PROFILE\0"[..], &[n, 2], data].concat();
        [&[0xFF, 0xE2][..], &u16::try_from(body.len() + 2).expect("short").to_be_bytes(), &body].concat()
    };
    let bytes = after_soi(&good, &[icc_part(2, b"world"), icc_part(1, b"hello ")].concat());
    let path = write(dir.path(), "icc.jpg", &bytes);
    let decoded = decode_file(&path, &options(false, false)).expect("decoded");
    assert!(decoded.warnings.is_empty(), "{:?}", decoded.warnings);
    let plain = decode_file(&write(dir.path(), "plain.jpg", &good), &options(false, false)).expect("plain");
    assert_eq!(decoded.image.as_bytes(), plain.image.as_bytes());
}

#[test]
fn a_progressive_file_closed_before_its_last_scans_says_so() {
    // Cut before its last scan and closed with an end-of-image marker: libjpeg decodes it
    // without a word (every row, at lower quality, its blocks smoothed as each version of libjpeg
    // smooths them), so graylab's own walk says it.
    let dir = tempfile::tempdir().expect("temp dir");
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jpeg/sampled-3x2-progressive.jpg");
    let whole = std::fs::read(fixture).expect("fixture");
    let scans: Vec<usize> =
        whole.windows(2).enumerate().filter(|(_, w)| *w == [0xFF, 0xDA]).map(|(i, _)| i).collect();
    assert!(scans.len() > 2, "a progressive file of several scans");
    let last = *scans.last().expect("scans");
    let closed = write(dir.path(), "closed.jpg", &[&whole[..last], &[0xFF, 0xD9][..]].concat());
    for stored_luma in [false, true] {
        let decoded = decode_file(&closed, &options(false, stored_luma)).expect("decoded");
        assert_eq!(decoded.warnings, vec![DecodeWarning::ScansMissing], "stored luma {stored_luma}");
    }
    let o = graylab(&["convert", "closed.jpg", "-o", "closed.png"], dir.path());
    assert!(o.status.success() && text(&o).contains("progressive scans stop"), "{}", text(&o));
    // The whole file is no truncation.
    let whole = decode_file(&write(dir.path(), "whole.jpg", &whole), &options(false, false)).expect("whole");
    assert!(whole.warnings.is_empty(), "{:?}", whole.warnings);
}

#[test]
fn a_batch_counts_the_files_converted_with_warnings_and_names_each() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    std::fs::create_dir(d.join("in")).expect("mkdir");
    let good = jpeg(160, 120);
    let data = segment(&good, 0xDA) + 14;
    let middle = data + (good.len() - data) / 2;
    let mut bad = good.clone();
    for k in 0..32 {
        bad[middle + 2 * k] = 0xFF;
        bad[middle + 2 * k + 1] = 0x00;
    }
    write(&d.join("in"), "a-clean.jpg", &good);
    write(&d.join("in"), "b-damaged.jpg", &bad);
    let o = graylab(&["convert", "in", "--out-dir", "out"], d);
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("2 of 2 files converted (1 with warnings)"), "{stdout}");
    let stderr = String::from_utf8_lossy(&o.stderr);
    let named: Vec<&str> = stderr.lines().filter(|l| l.starts_with("warning: ")).collect();
    assert!(!named.is_empty() && named.iter().all(|l| l.contains("b-damaged.jpg")), "{stderr}");
    let o = graylab(&["convert", "in", "--out-dir", "out", "--overwrite", "--json"], d);
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let warnings = |name: &str| {
        json.as_array()
            .and_then(|files| files.iter().find(|f| f["input"].as_str().is_some_and(|i| i.ends_with(name))))
            .and_then(|f| f["warnings"].as_array().map(Vec::len))
    };
    assert_eq!(warnings("a-clean.jpg"), Some(0));
    assert!(warnings("b-damaged.jpg").is_some_and(|n| n > 0), "{json}");
}
