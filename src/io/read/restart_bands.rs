//! A JPEG with restart intervals cut into bands that decode on their own: where a restart
//! marker falls at the start of an MCU row, the coded data after it depends on nothing before
//! it (the DC predictions restart), so the rows below it are a JPEG of their own: the same
//! headers with the band's height, the band's restart intervals (markers renumbered from 0) and
//! an end-of-image marker. Each band then decodes on its own core.

use std::ops::Range;

use crate::io::read::jpeg_layout::{FrameKind, Layout};

/// One band: its pixel rows in the image, and a complete JPEG of those rows alone.
pub(in crate::io) struct Band {
    pub rows: Range<usize>,
    pub jpeg: Vec<u8>,
    /// Where in `jpeg` libjpeg's warnings of its resynchronisations on restart markers out of
    /// sequence will come, told already ([`super::jpeg_variants::Plan::resynced_at`]): only in
    /// a band of the whole file, never cut where markers are out of sequence.
    pub resynced_at: Vec<usize>,
}

/// `bytes` (a complete baseline JPEG of one interleaved scan, as `layout` describes it) cut
/// into at most `parts` bands starting at multiples of `align_rows` pixel rows; `None` when it
/// has no restart interval, its markers are not where the interval puts them (one missing, or
/// numbered out of sequence: libjpeg resynchronises on those in its own way, which a band
/// renumbered from 0 would not), or it has no such place to cut.
pub(in crate::io) fn restart_bands(
    bytes: &[u8],
    layout: &Layout,
    parts: usize,
    align_rows: usize,
) -> Option<Vec<Band>> {
    let [scan] = &layout.scan_list[..] else { return None };
    let interval = usize::from(scan.interval);
    if parts < 2
        || interval == 0
        || layout.kind != FrameKind::Sequential
        || !layout.complete
        || !layout.junk.is_empty()
        || scan.components.len() != layout.components.len()
        || layout.precision != 8
    {
        return None;
    }
    let (h_max, v_max) = layout.max_factors();
    let (h_max, v_max) = (h_max as usize, v_max as usize);
    let (width, height) = (layout.width as usize, layout.height as usize);
    let (mcu_rows, mcu_height) = (height.div_ceil(8 * v_max), 8 * v_max);
    let mcus_per_row = width.div_ceil(8 * h_max);
    let units = mcus_per_row * mcu_rows;
    let in_sequence = scan.restarts.iter().enumerate().all(|(k, &(_, n))| usize::from(n) == k % 8);
    if scan.restarts.len() != units.div_ceil(interval) - 1 || !in_sequence || align_rows == 0 {
        return None;
    }
    // MCU rows where a band may start: at a restart marker and at a multiple of `align_rows`.
    let step = lcm(interval / gcd(mcus_per_row, interval), align_rows / gcd(mcu_height, align_rows));
    let mut starts: Vec<usize> = (1..parts)
        .map(|p| ((p * mcu_rows) as f64 / parts as f64 / step as f64).round() as usize * step)
        .filter(|&r| r > 0 && r < mcu_rows)
        .collect();
    starts.dedup();
    if starts.is_empty() {
        return None;
    }
    let header = &bytes[..scan.data.start];
    let height_at = layout.height_at;
    let mut bands = Vec::with_capacity(starts.len() + 1);
    let bounds: Vec<usize> = std::iter::once(0).chain(starts).chain(std::iter::once(mcu_rows)).collect();
    for pair in bounds.windows(2) {
        let (first, last) = (pair[0], pair[1]);
        // Segments (restart intervals) of the band: [s0, s1).
        let (s0, s1) = (first * mcus_per_row / interval, (last * mcus_per_row).div_ceil(interval));
        let start = if s0 == 0 { scan.data.start } else { scan.restarts[s0 - 1].0 + 2 };
        let end = if last == mcu_rows { scan.data.end } else { scan.restarts[s1 - 1].0 };
        let rows = first * mcu_height..(last * mcu_height).min(height);
        let mut jpeg = Vec::with_capacity(header.len() + (end - start) + 2);
        jpeg.extend_from_slice(header);
        jpeg.get_mut(height_at..height_at + 2)?
            .copy_from_slice(&u16::try_from(rows.len()).ok()?.to_be_bytes());
        jpeg.extend_from_slice(bytes.get(start..end)?);
        // The band's own markers, numbered from RST0 as a decoder expects.
        for (k, &(at, _)) in scan.restarts.iter().enumerate().take(s1.saturating_sub(1)).skip(s0) {
            let local = header.len() + at + 1 - start;
            jpeg[local] = 0xD0 + ((k - s0) % 8) as u8;
        }
        jpeg.extend_from_slice(&[0xFF, 0xD9]);
        bands.push(Band { rows, jpeg, resynced_at: Vec::new() });
    }
    Some(bands)
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn lcm(a: usize, b: usize) -> usize {
    a / gcd(a, b).max(1) * b
}

#[cfg(test)]
mod tests {
    use crate::io::read::restart_bands::*;
    use crate::io::read::stored_luma::JpegOut;
    use crate::io::read::stored_luma::tests_support::libjpeg_pixels;

    #[test]
    fn gcd_and_lcm() {
        assert_eq!((gcd(480, 480), lcm(1, 8), lcm(6, 4)), (480, 8, 12));
    }

    #[test]
    fn bands_decode_on_their_own_to_the_rows_of_the_whole() {
        // 60x400, 4:2:0 (MCUs of 16x16: 25 rows of 4), a restart marker every MCU row.
        let bytes = include_bytes!("../../../tests/fixtures/jpeg/luma-restart-tall.jpg");
        let layout = crate::io::read::jpeg_scan::scan(bytes).expect("layout");
        let whole = libjpeg_pixels(bytes, (60, 400), JpegOut::Luma);
        for (parts, align, starts) in
            [(2, 128, vec![0, 256]), (3, 16, vec![0, 128, 272]), (25, 16, (0..25).map(|r| r * 16).collect())]
        {
            let bands = restart_bands(bytes, &layout, parts, align).expect("bands");
            assert_eq!(bands.iter().map(|b| b.rows.start).collect::<Vec<_>>(), starts, "{parts} parts");
            assert_eq!(bands.last().map(|b| b.rows.end), Some(400));
            let mut joined = Vec::new();
            for band in &bands {
                joined.extend(libjpeg_pixels(&band.jpeg, (60, band.rows.len() as u32), JpegOut::Luma));
            }
            assert!(joined == whole, "{parts} parts: the bands' rows are the whole file's");
        }
        // Nowhere to cut: fewer rows than the alignment, or one part.
        assert!(restart_bands(bytes, &layout, 2, 512).is_none());
        assert!(restart_bands(bytes, &layout, 1, 16).is_none());
    }

    #[test]
    fn files_without_restarts_at_row_starts_are_not_cut() {
        let no_restarts = include_bytes!("../../../tests/fixtures/jpeg/luma-420.jpg");
        let layout = crate::io::read::jpeg_scan::scan(no_restarts).expect("layout");
        assert!(restart_bands(no_restarts, &layout, 2, 16).is_none(), "no restart interval");
        let progressive = include_bytes!("../../../tests/fixtures/jpeg/luma-progressive.jpg");
        let layout = crate::io::read::jpeg_scan::scan(progressive).expect("layout");
        assert!(restart_bands(progressive, &layout, 2, 16).is_none(), "progressive");
    }
}
