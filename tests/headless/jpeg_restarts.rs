//! JPEG restart markers numbered out of sequence, and coded data damaged between two markers,
//! each built here from a whole file: libjpeg resynchronises as `OpenCV`'s decode does, the rows
//! named are exactly the rows that differ from the whole file's, a file that would lose rows is
//! refused without `--allow-truncated` (naming the file, the rows and the flag), and one that
//! loses none is read with a warning that says so.

use std::path::Path;

use graylab::io::{DecodeOptions, DecodeWarning, IoError, RestartDamage, decode_file};

use crate::common::{graylab, text};
use crate::jpeg::write;

fn options(allow_truncated: bool) -> DecodeOptions {
    DecodeOptions { memory_budget_bytes: Some(256 << 20), allow_truncated, ..DecodeOptions::default() }
}

/// 60x400, 4:2:0, a restart marker after every MCU row (16 pixel rows): 25 intervals, 24 markers.
const SEQUENTIAL: &[u8] = include_bytes!("../fixtures/jpeg/luma-restart-tall.jpg");
/// The same pixels, progressive, a restart marker after every MCU row of each scan.
const PROGRESSIVE: &[u8] = include_bytes!("../fixtures/jpeg/restart-progressive-tall.jpg");

/// The offsets of the restart markers in the first scan of `jpeg`.
fn first_scan_markers(jpeg: &[u8]) -> Vec<usize> {
    let sos = jpeg.windows(2).position(|w| w == [0xFF, 0xDA]).expect("a scan");
    let data = sos + 2 + usize::from(u16::from_be_bytes([jpeg[sos + 2], jpeg[sos + 3]]));
    let mut markers = Vec::new();
    let mut at = data;
    while at + 1 < jpeg.len() {
        match (jpeg[at], jpeg[at + 1]) {
            (0xFF, 0xD0..=0xD7) => markers.push(at),
            (0xFF, 0x00 | 0xFF) => {}
            (0xFF, _) => break,
            _ => {}
        }
        at += 1;
    }
    markers
}

/// The rows in which `a` and `b` (RGB, 60 wide) differ.
fn rows_differing(a: &[u8], b: &[u8]) -> Vec<u32> {
    let row = 60 * 3;
    (0..a.len() / row).filter(|&y| a[y * row..][..row] != b[y * row..][..row]).map(|y| y as u32).collect()
}

/// Asserts that the rows in which `a` and `b` differ are `lost`, and at most the row either side
/// of them: libjpeg smooths 4:2:0 chroma across the rows next to a lost interval, which moves
/// their colour (their luma stays).
fn assert_rows_lost(a: &[u8], b: &[u8], lost: std::ops::Range<u32>, what: &str) {
    let differing = rows_differing(a, b);
    let spill = lost.start.saturating_sub(1)..lost.end + 1;
    assert!(lost.clone().all(|y| differing.contains(&y)), "{what}: {lost:?} named, {differing:?} differ");
    assert!(differing.iter().all(|y| spill.contains(y)), "{what}: {lost:?} named, {differing:?} differ");
}

fn rgb(path: &Path, options: &DecodeOptions) -> Result<(Vec<u8>, Vec<DecodeWarning>), IoError> {
    let decoded = decode_file(path, options)?;
    Ok((decoded.image.to_rgb8().into_raw(), decoded.warnings))
}

#[test]
fn a_renumbered_marker_loses_the_rows_libjpeg_loses_and_names_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let whole = rgb(&write(dir.path(), "whole.jpg", SEQUENTIAL), &options(false)).expect("whole");
    assert!(whole.1.is_empty(), "{:?}", whole.1);
    let markers = first_scan_markers(SEQUENTIAL);
    assert_eq!(markers.len(), 24);
    // Marker 12 (RST4, after rows 192 to 207) numbered k ahead: libjpeg's rule, and what
    // OpenCV 5.1 reads from such files (a k-ahead marker in a 1501-row photo: 16, 24, 0, 0, 0, 8
    // and 8 rows lost, 8-row intervals there).
    let lost = [Some(208..240), Some(208..256), None, None, None, Some(208..224), Some(208..224)];
    for (k, lost) in (1..8u8).zip(lost) {
        let mut bytes = SEQUENTIAL.to_vec();
        let found = (4 + k) % 8;
        bytes[markers[12] + 1] = 0xD0 + found;
        let name = format!("k{k}.jpg");
        let path = write(dir.path(), &name, &bytes);
        let Some(lost) = lost else {
            let (pixels, warnings) = rgb(&path, &options(false)).expect("libjpeg loses nothing");
            assert_eq!(
                warnings,
                vec![DecodeWarning::RestartRenumbered { found, expected: 4, row: 208, height: 400 }],
                "k = {k}"
            );
            assert!(warnings[0].to_string().contains("no row is lost"), "{}", warnings[0]);
            assert_eq!(rows_differing(&pixels, &whole.0), Vec::<u32>::new(), "k = {k}");
            continue;
        };
        let err = rgb(&path, &options(false)).expect_err("rows would be lost");
        let msg = err.to_string();
        assert!(
            matches!(err, IoError::DamagedData { rows: Some(rows), .. } if rows == (lost.start, lost.end))
        );
        let rows = format!("rows {} to {} of 400", lost.start + 1, lost.end);
        let marker = format!("RST{found} stands where RST4 belongs");
        assert!(msg.contains(&rows) && msg.contains(&marker) && msg.ends_with(&name), "k = {k}: {msg}");
        let (pixels, warnings) = rgb(&path, &options(true)).expect("kept when asked");
        let cause = RestartDamage::OutOfSequence { found, expected: 4 };
        assert_eq!(
            warnings,
            vec![DecodeWarning::DamagedRestart { rows: (lost.start, lost.end), height: 400, cause }],
            "k = {k}"
        );
        assert_rows_lost(&pixels, &whole.0, lost, &format!("k = {k}"));
    }
}

#[test]
fn a_renumbered_marker_in_a_progressive_scan_is_read_as_libjpeg_reads_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let whole = rgb(&write(dir.path(), "whole.jpg", PROGRESSIVE), &options(false)).expect("whole");
    assert!(whole.1.is_empty(), "{:?}", whole.1);
    let markers = first_scan_markers(PROGRESSIVE);
    assert_eq!(markers.len(), 24, "the DC scan's markers");
    // 3 ahead: taken for the one expected, nothing lost.
    let mut bytes = PROGRESSIVE.to_vec();
    bytes[markers[12] + 1] = 0xD0 + 7;
    let (pixels, warnings) = rgb(&write(dir.path(), "k3.jpg", &bytes), &options(false)).expect("read");
    assert_eq!(
        warnings,
        vec![DecodeWarning::RestartRenumbered { found: 7, expected: 4, row: 208, height: 400 }]
    );
    assert_eq!(pixels, whole.0);
    // 1 ahead: the DC of one interval left gray and the next decoded from its data, refused
    // unless kept; the rows named are those that differ.
    bytes[markers[12] + 1] = 0xD0 + 5;
    let path = write(dir.path(), "k1.jpg", &bytes);
    let err = rgb(&path, &options(false)).expect_err("rows would be lost");
    assert!(matches!(err, IoError::DamagedData { rows: Some((208, 240)), .. }), "{err}");
    let (pixels, warnings) = rgb(&path, &options(true)).expect("kept when asked");
    let cause = RestartDamage::InProgressiveScan;
    assert_eq!(warnings, vec![DecodeWarning::DamagedRestart { rows: (208, 240), height: 400, cause }]);
    assert_rows_lost(&pixels, &whole.0, 208..240, "progressive, k = 1");
}

/// `SEQUENTIAL` with the data after marker `n` cut to its first 4 bytes: that interval's data
/// ends at the next marker before its blocks do.
fn damaged_after(n: usize) -> Vec<u8> {
    let markers = first_scan_markers(SEQUENTIAL);
    let kept = markers[n] + 2 + 4;
    [&SEQUENTIAL[..kept], &SEQUENTIAL[markers[n + 1]..]].concat()
}

#[test]
fn data_damaged_inside_an_interval_is_that_intervals_rows_not_a_truncation() {
    let dir = tempfile::tempdir().expect("temp dir");
    let whole = rgb(&write(dir.path(), "whole.jpg", SEQUENTIAL), &options(false)).expect("whole");
    // Interval 6 (rows 96 to 111), after marker 5.
    let path = write(dir.path(), "damaged.jpg", &damaged_after(5));
    let err = rgb(&path, &options(false)).expect_err("damaged rows");
    let msg = err.to_string();
    assert!(matches!(err, IoError::DamagedData { rows: Some((96, 112)), .. }), "{err:?}");
    assert!(msg.contains("rows 97 to 112 of 400") && msg.ends_with("damaged.jpg"), "{msg}");
    let (pixels, warnings) = rgb(&path, &options(true)).expect("kept when asked");
    let cause = RestartDamage::DataCut;
    assert_eq!(warnings, vec![DecodeWarning::DamagedRestart { rows: (96, 112), height: 400, cause }]);
    assert!(!warnings[0].to_string().contains("truncated"), "{}", warnings[0]);
    assert_rows_lost(&pixels, &whole.0, 96..112, "interval 6 cut");
}

#[test]
fn convert_refuses_damaged_rows_with_the_flag_to_keep_them_and_keeps_them_with_it() {
    // The file to file path decodes a YCbCr JPEG in bands, one per core, each its own JPEG.
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    write(d, "whole.jpg", SEQUENTIAL);
    write(d, "damaged.jpg", &damaged_after(20));
    let mut renumbered = SEQUENTIAL.to_vec();
    renumbered[first_scan_markers(SEQUENTIAL)[12] + 1] = 0xD0 + 6;
    write(d, "renumbered.jpg", &renumbered);
    let o = graylab(&["convert", "whole.jpg", "-o", "whole.png", "--backend", "cpu"], d);
    assert!(o.status.success(), "{}", text(&o));
    let gray = |name: &str| image::open(d.join(name)).expect("output").to_luma8().into_raw();
    let want = gray("whole.png");
    // Interval 21 (rows 336 to 351); marker 12 two ahead: rows 208 to 255.
    for (input, rows) in [("damaged.jpg", 336..352u32), ("renumbered.jpg", 208..256)] {
        let o = graylab(&["convert", input, "-o", "out.png", "--backend", "cpu"], d);
        let said = text(&o);
        assert_eq!(o.status.code(), Some(1), "{input}: {said}");
        let named = format!("rows {} to {} of 400", rows.start + 1, rows.end);
        assert!(said.contains(&named) && said.contains(input), "{input}: {said}");
        assert!(said.contains("pass --allow-truncated"), "{input}: the flag is named: {said}");
        assert!(!d.join("out.png").exists(), "{input}: nothing written");
        let o = graylab(&["convert", input, "-o", "out.png", "--backend", "cpu", "--allow-truncated"], d);
        let said = text(&o);
        assert!(o.status.success(), "{input}: {said}");
        assert!(said.contains(&named) && !said.contains("truncated:"), "{input}: {said}");
        let got = gray("out.png");
        let differing: Vec<u32> =
            (0..400u32).filter(|&y| got[y as usize * 60..][..60] != want[y as usize * 60..][..60]).collect();
        assert_eq!(differing, rows.collect::<Vec<_>>(), "{input}: the rows named differ, and no other");
        std::fs::remove_file(d.join("out.png")).expect("kept output");
    }
}
