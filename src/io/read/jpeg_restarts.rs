//! A JPEG's restart intervals as libjpeg reads them. Where a marker is missing or numbered out
//! of sequence, libjpeg resynchronises by its own rule (`jpeg_resync_to_restart`): a marker 1 or
//! 2 ahead of the one expected means markers were lost (the intervals before it are left gray),
//! one 1 or 2 behind is skipped with the data after it, and any other is taken for the one
//! expected. That is foretold here from the structure walk, so that graylab names the rows lost
//! and lets libjpeg decode them as `OpenCV` does. Also the interval a warning of libjpeg's lies
//! in: a premature end at a restart marker is damage in that interval, not the file's end.

use std::ops::Range;

use mozjpeg_sys as ffi;

use crate::io::RestartDamage;
use crate::io::read::jpeg_layout::{Layout, Scan};
use crate::io::read::jpeg_scan;
use crate::io::read::libjpeg::LibjpegWarning;

/// What libjpeg's decode of one scan does with its restart markers.
#[derive(Debug, Default, PartialEq, Eq)]
pub(in crate::io) struct Resync {
    /// Runs of intervals that libjpeg leaves gray or decodes from another interval's data: their
    /// rows, and what it found first.
    pub lost: Vec<(Range<u32>, RestartDamage)>,
    /// Markers out of sequence that libjpeg takes for the one expected, no row lost: the number
    /// found, the one expected and the first row after it.
    pub renumbered: Vec<(u8, u8, u32)>,
    /// Where libjpeg's source stands at each marker it resynchronises on ([`around`]): its
    /// warnings there ("found marker … instead of `RSTn`", bytes skipped to it, the premature end
    /// of an interval it leaves gray) are what `lost` and `renumbered` tell.
    pub at_bytes: Vec<usize>,
}

/// What libjpeg does with `scan`'s restart markers (the scan of `layout`, walked in `bytes`).
pub(in crate::io) fn resync(bytes: &[u8], layout: &Layout, scan: &Scan) -> Resync {
    let mut out = Resync::default();
    if scan.interval == 0 {
        return out;
    }
    let total = layout.scan_units(scan).div_ceil(u64::from(scan.interval));
    let markers = &scan.restarts;
    let count = markers.len() as u64;
    let in_order = markers.iter().enumerate().all(|(k, &(_, n))| usize::from(n) == k % 8);
    // Every marker in its place: as many as the intervals need, or fewer where the file ends.
    if in_order && (count + 1 == total || !scan.ended && count < total) {
        return out;
    }
    let whole_count = count + 1 == total;
    // Whether interval `j`, decoded from segment `source` (`None`: left gray), is right: with
    // a marker for every interval, the segment of its own place; with markers lost, a segment
    // numbered for it (one after the marker before it), as libjpeg assumes.
    let right = |j: u64, source: Option<usize>| match source {
        None => false,
        Some(s) if whole_count => s as u64 == j,
        Some(0) => j.is_multiple_of(8),
        Some(s) => markers.get(s - 1).is_some_and(|&(_, n)| u64::from((n + 1) % 8) == j % 8),
    };
    let progressive = layout.kind.progressive();
    // Runs of intervals not right: (first, end, what started it, all left gray).
    let mut runs: Vec<(u64, u64, Option<RestartDamage>, bool)> = Vec::new();
    let mut open: Option<(u64, Option<RestartDamage>, bool)> = None;
    let mut event = None;
    let mut renumbered = Vec::new();
    let (mut source, mut next, mut expected) = (Some(0usize), 0usize, 0u8);
    let mut end = total;
    for j in 0..total {
        match (right(j, source), &mut open) {
            (false, None) => open = Some((j, event, source.is_none())),
            (false, Some((_, _, gray))) => *gray &= source.is_none(),
            (true, Some((first, cause, gray))) => {
                runs.push((*first, j, *cause, *gray));
                open = None;
            }
            (true, None) => {}
        }
        if j + 1 == total {
            break;
        }
        // libjpeg reads the marker after interval `j`, skipping what is left of its segment; the
        // first marker out of place it meets names what it found.
        let mut m = next;
        let mut found_first = None;
        let read = loop {
            let Some(&(_, found)) = markers.get(m) else {
                if !scan.ended {
                    // The file ends: a truncation, told where the walk finds it.
                    break None;
                }
                // A marker that is no restart marker: left unread, each interval on is gray.
                out.at_bytes.extend(around(bytes, scan, m));
                found_first.get_or_insert(RestartDamage::MarkerMissing);
                next = m;
                break Some(None);
            };
            // A marker out of sequence, or one libjpeg skipped data to reach (it tells of the
            // bytes skipped there).
            if found != expected || found_first.is_some() {
                out.at_bytes.extend(around(bytes, scan, m));
            }
            if found == expected {
                next = m + 1;
                break Some(Some(m + 1));
            }
            found_first.get_or_insert(RestartDamage::OutOfSequence { found, expected });
            match (found + 8 - expected) % 8 {
                // One of the next two: the markers between were lost; left unread, so the
                // interval is gray.
                1 | 2 => {
                    next = m;
                    break Some(None);
                }
                // One before: skipped, with the data after it, to the next marker.
                6 | 7 => m += 1,
                // Too far to trust: taken for the one expected.
                _ => {
                    renumbered.push((found, expected, j + 1));
                    next = m + 1;
                    break Some(Some(m + 1));
                }
            }
        };
        event = found_first.or(event);
        let Some(read) = read else {
            end = j + 1;
            break;
        };
        source = read;
        expected = (expected + 1) % 8;
    }
    if let Some((first, cause, gray)) = open {
        runs.push((first, end, cause, gray));
    }
    for &(first, end, cause, gray) in &runs {
        let cause = if progressive {
            RestartDamage::InProgressiveScan
        } else if gray && !whole_count {
            RestartDamage::MarkerMissing
        } else {
            cause.unwrap_or(RestartDamage::MarkerMissing)
        };
        out.lost.push((interval_rows(layout, scan, first..end), cause));
    }
    out.renumbered = renumbered
        .into_iter()
        .filter(|&(_, _, j)| !runs.iter().any(|&(first, end, ..)| (first..end).contains(&j)))
        .map(|(found, expected, j)| (found, expected, interval_rows(layout, scan, j..j + 1).start))
        .collect();
    out
}

/// Where libjpeg's source stands at restart marker `m` of `scan` in `bytes` (past the last, the
/// marker that ends the scan): at its first byte (fill bytes before it counted), where it tells
/// of bytes it skipped to reach it, and past it.
fn around(bytes: &[u8], scan: &Scan, m: usize) -> [usize; 2] {
    let fill = |run: &mut dyn Iterator<Item = &u8>| run.take_while(|&&c| c == 0xFF).count();
    // `at` is the last 0xFF before the marker's code.
    if let Some(&(at, _)) = scan.restarts.get(m) {
        [at + 1 - bytes.get(..=at).map_or(1, |b| fill(&mut b.iter().rev())), at + 2]
    } else {
        let end = scan.data.end;
        [end, end + bytes.get(end..).map_or(0, |b| fill(&mut b.iter())) + 1]
    }
}

/// The pixel rows that `intervals` (0-based, in `scan`'s units) cover.
pub(in crate::io) fn interval_rows(layout: &Layout, scan: &Scan, intervals: Range<u64>) -> Range<u32> {
    let (h_max, v_max) = layout.max_factors();
    let one = match scan.components[..] {
        [one] => layout.components.get(one),
        _ => None,
    };
    let (per_row, unit_rows) = match one {
        Some(c) => ((layout.width * u32::from(c.h)).div_ceil(h_max).div_ceil(8), 8 * v_max / u32::from(c.v)),
        None => (layout.width.div_ceil(8 * h_max), 8 * v_max),
    };
    let interval = u64::from(scan.interval);
    let unit_row = |unit: u64| (unit / u64::from(per_row.max(1))) as u32 * unit_rows;
    let first = unit_row(intervals.start * interval);
    let last = unit_row((intervals.end * interval).min(layout.scan_units(scan)).saturating_sub(1));
    first.min(layout.height)..(last + unit_rows).min(layout.height)
}

/// libjpeg's warnings of one decode of `bytes` (whose first row is row `first_row` of the image)
/// sorted out: those `foretold` ([`Resync::at_bytes`]) dropped; each premature end at a restart
/// marker placed in its interval's rows ([`place`]); and the few bytes libjpeg reports skipped
/// after an interval whose data ran out dropped: its bit buffer's fill of zero bits, counted as
/// skipped at a later marker, not bytes of the file.
pub(in crate::io) fn sort_out(
    warnings: &mut Vec<LibjpegWarning>,
    bytes: &[u8],
    first_row: u32,
    foretold: &[usize],
) {
    // The most bytes of zero bits libjpeg-turbo's bit buffer holds (57 bits).
    const FILL_BYTES: u32 = 7;
    let resync = [ffi::JWRN_MUST_RESYNC, ffi::JWRN_EXTRANEOUS_DATA, ffi::JWRN_HIT_MARKER];
    let mut filled = false;
    warnings.retain(|w| {
        let was_filled = filled;
        filled |= w.code == ffi::JWRN_HIT_MARKER;
        if resync.contains(&w.code) && w.at_byte.is_some_and(|at| foretold.contains(&at)) {
            return false;
        }
        let skipped = w
            .message
            .strip_prefix("Corrupt JPEG data: ")
            .and_then(|m| m.split(' ').next()?.parse::<u32>().ok());
        if was_filled && w.code == ffi::JWRN_EXTRANEOUS_DATA && skipped.is_some_and(|n| n <= FILL_BYTES) {
            filled = false;
            return false;
        }
        true
    });
    place(warnings, bytes, first_row);
}

/// Sets [`LibjpegWarning::interval_rows`] of each premature end in `warnings` at a restart
/// marker: the rows of the interval whose data ended there, found by walking `bytes` (the JPEG
/// libjpeg decoded, whose first row is row `first_row` of the image).
fn place(warnings: &mut [LibjpegWarning], bytes: &[u8], first_row: u32) {
    let hit = |w: &LibjpegWarning| w.code == ffi::JWRN_HIT_MARKER && w.at_byte.is_some();
    if !warnings.iter().any(hit) {
        return;
    }
    let Ok(layout) = jpeg_scan::scan(bytes) else { return };
    // Pixel rows of one row of MCUs, the unit libjpeg counts its progress in.
    let mcu_rows = 8 * layout.max_factors().1;
    for warning in warnings.iter_mut().filter(|w| hit(w)) {
        let Some(at) = warning.at_byte else { continue };
        let Some(scan) = layout.scan_list.iter().rev().find(|s| s.data.start <= at) else { continue };
        // The source stands inside the data of the interval libjpeg decodes, or just past the
        // marker that ends it (its bit buffer read ahead to it), or, if the interval's first
        // block ran out, just past the marker that starts it: the interval holding the row
        // libjpeg decodes tells those two apart.
        let Some(m) = scan.restarts.iter().position(|&(marker_at, _)| marker_at + 2 >= at) else { continue };
        let rows = |n: usize| interval_rows(&layout, scan, n as u64..n as u64 + 1);
        let row = warning.imcu_row.map(|r| r * mcu_rows);
        let starts_next = scan.restarts.get(m).is_some_and(|&(marker_at, _)| marker_at + 2 == at)
            && row.is_some_and(|row| !rows(m).contains(&row) && rows(m + 1).contains(&row));
        let interval = m + usize::from(starts_next);
        if interval >= scan.restarts.len() {
            // The last interval's data ended at the scan's end: a truncation.
            continue;
        }
        let rows = rows(interval);
        warning.interval_rows = Some((first_row + rows.start, first_row + rows.end));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::read::jpeg_layout::Component;

    /// A 64-wide gray frame of `intervals` restart intervals of one MCU row each (8 rows), its
    /// markers numbered `numbers`, each segment 10 bytes of zeros, the scan ended by an end
    /// marker.
    fn walked(intervals: u32, numbers: &[u8]) -> (Vec<u8>, Layout) {
        let mut scan = Scan { components: vec![0], interval: 8, ended: true, ..Scan::default() };
        let mut at = 10;
        for &n in numbers {
            scan.restarts.push((at, n));
            at += 12;
        }
        scan.data = 0..at;
        let mut bytes = [vec![0; at], vec![0xFF, 0xD9]].concat();
        for &(at, n) in &scan.restarts {
            bytes[at..at + 2].copy_from_slice(&[0xFF, 0xD0 + n]);
        }
        let layout = Layout {
            width: 64,
            height: 8 * intervals,
            components: vec![Component { id: 1, h: 1, v: 1 }],
            scans: 1,
            scan_list: vec![scan],
            complete: true,
            ..Layout::default()
        };
        (bytes, layout)
    }

    fn foretold(intervals: u32, numbers: &[u8]) -> Resync {
        let (bytes, layout) = walked(intervals, numbers);
        resync(&bytes, &layout, &layout.scan_list[0])
    }

    #[test]
    fn markers_in_sequence_foretell_nothing() {
        assert_eq!(foretold(10, &[0, 1, 2, 3, 4, 5, 6, 7, 0]), Resync::default());
    }

    #[test]
    fn a_marker_renumbered_loses_the_rows_libjpeg_loses() {
        // Marker 4 (after rows 32-39) renumbered by k: what libjpeg's rule does with it, in rows
        // (8 an interval), as OpenCV's decode of such files shows.
        let table = [
            (1, Some(40..56)),
            (2, Some(40..64)),
            (3, None),
            (4, None),
            (5, None),
            (6, Some(40..48)),
            (7, Some(40..48)),
        ];
        for (k, lost) in table {
            let mut numbers = [0, 1, 2, 3, 4, 5, 6, 7, 0];
            let found = (4 + k) % 8;
            numbers[4] = found;
            let told = foretold(10, &numbers);
            let cause = RestartDamage::OutOfSequence { found, expected: 4 };
            let lost: Vec<_> = lost.into_iter().map(|rows| (rows, cause)).collect();
            assert_eq!(told.lost, lost, "k = {k}");
            let renumbered = if lost.is_empty() { vec![(found, 4, 40)] } else { Vec::new() };
            assert_eq!(told.renumbered, renumbered, "k = {k}");
            // The source stands at and past the renumbered marker (at 10 + 4 * 12) when libjpeg
            // warns.
            assert_eq!(told.at_bytes[..2], [10 + 4 * 12, 10 + 4 * 12 + 2], "k = {k}");
        }
    }

    #[test]
    fn a_missing_marker_loses_only_the_interval_whose_data_went_with_it() {
        // Marker 4 gone: the segment after marker 3 holds intervals 4 and 5; libjpeg decodes 4
        // from it and leaves 5 gray.
        let told = foretold(10, &[0, 1, 2, 3, 5, 6, 7, 0]);
        assert_eq!(told.lost, vec![(40..48, RestartDamage::MarkerMissing)]);
        // The last marker gone: the last interval is gray, up to the scan's end marker.
        let told = foretold(10, &[0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(told.lost, vec![(72..80, RestartDamage::MarkerMissing)]);
        assert_eq!(told.at_bytes, vec![10 + 8 * 12, 10 + 8 * 12 + 2], "at the end marker");
    }

    #[test]
    fn warnings_foretold_and_the_bit_buffers_fill_are_dropped() {
        let warning = |code, message: &str, at_byte| LibjpegWarning {
            code,
            message: format!("Corrupt JPEG data: {message}"),
            at_row: None,
            at_byte: Some(at_byte),
            imcu_row: None,
            interval_rows: None,
        };
        let mut warnings = vec![
            warning(ffi::JWRN_MUST_RESYNC, "found marker 0xd6 instead of RST5", 60),
            warning(ffi::JWRN_HIT_MARKER, "premature end of data segment", 60),
            // The zero bits libjpeg filled its buffer with, counted at a later marker.
            warning(ffi::JWRN_EXTRANEOUS_DATA, "1 extraneous bytes before marker 0xd1", 106),
            warning(ffi::JWRN_EXTRANEOUS_DATA, "3250 extraneous bytes before marker 0xd2", 130),
            warning(ffi::JWRN_MUST_RESYNC, "found marker 0xd4 instead of RST3", 150),
        ];
        sort_out(&mut warnings, &[], 0, &[58, 60]);
        let left: Vec<_> = warnings.iter().map(|w| w.at_byte).collect();
        assert_eq!(left, [Some(130), Some(150)], "{warnings:?}");
    }

    #[test]
    fn intervals_cover_their_rows() {
        let (_, layout) = walked(10, &[]);
        let scan = &layout.scan_list[0];
        assert_eq!(interval_rows(&layout, scan, 0..1), 0..8);
        assert_eq!(interval_rows(&layout, scan, 3..5), 24..40);
        assert_eq!(interval_rows(&layout, scan, 9..12), 72..80, "not past the image");
    }
}
