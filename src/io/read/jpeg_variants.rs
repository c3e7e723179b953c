//! The JPEG variants libjpeg-turbo refuses or reads with damage, told from the structure walk
//! ([`super::jpeg_scan`]) before it decodes: factors that do not divide the largest (3 beside 2
//! or 4) and a progressive header on a baseline scan are refused, as libjpeg refuses them; bytes
//! between segments are skipped and restart intervals that lost their marker are made gray, as
//! libjpeg does, each with a warning of graylab's own that names the rows (a lost marker is an
//! error unless damaged data may be kept).

use std::ops::Range;
use std::path::Path;

use crate::io::codecs::jpeg::BitWriter;
use crate::io::read::jpeg_scan::{Code, FrameKind, Layout, Scan};
use crate::io::{DecodeWarning, IoError};

/// How to decode one JPEG: the bytes (repaired when they had to be) and the warnings.
pub(in crate::io) struct Plan {
    /// The bytes to decode.
    pub bytes: Vec<u8>,
    /// What was repaired.
    pub warnings: Vec<DecodeWarning>,
}

/// Repairs what libjpeg would skip; refuses what libjpeg refuses.
pub(in crate::io) fn plan(
    path: &Path,
    bytes: Vec<u8>,
    layout: &Layout,
    keep_damaged: bool,
) -> Result<Plan, IoError> {
    let damaged = |detail: String| IoError::DamagedData { path: path.into(), detail };
    let unsupported = |reason: String| Err(IoError::Unsupported { path: path.into(), reason });
    if layout.height == 0 && layout.width > 0 {
        return unsupported(
            "a JPEG whose height follows its image data (a DNL marker; the frame header says 0)".to_owned(),
        );
    }
    let most = crate::io::codecs::jpeg::JPEG_MAX_SIDE;
    if layout.width > most || layout.height > most {
        return unsupported(format!(
            "a JPEG of {}x{} pixels: libjpeg, the decoder graylab and OpenCV use, reads at most {most} a side",
            layout.width, layout.height
        ));
    }
    for (n, scan) in layout.scan_list.iter().enumerate() {
        if layout.kind == FrameKind::Progressive && !progressive_scan_valid(scan) {
            let what = if scan.ss == 0 && scan.se == 63 {
                "codes all 64 coefficients at once, as a baseline scan does".to_owned()
            } else {
                format!(
                    "has invalid progressive parameters (Ss={} Se={} Ah={} Al={})",
                    scan.ss, scan.se, scan.ah, scan.al
                )
            };
            return Err(damaged(format!(
                "the frame header says progressive (SOF2) but scan {} {what}",
                n + 1
            )));
        }
    }
    let mut edits: Vec<(Range<usize>, Vec<u8>)> = Vec::new();
    let mut warnings = Vec::new();
    for junk in &layout.junk {
        edits.push((junk.at..junk.at + junk.len, Vec::new()));
        warnings.push(DecodeWarning::ExtraneousBytes { bytes: junk.len, marker: junk.marker });
    }
    for scan in &layout.scan_list {
        for lost in lost_restarts(layout, scan) {
            let rows = lost.rows(layout, scan);
            let detail = format!(
                "a restart marker is missing in the coded data: rows {} to {} of {} cannot be placed",
                rows.start, rows.end, layout.height
            );
            if layout.kind != FrameKind::Sequential {
                return Err(damaged(format!("{detail}, in a progressive scan")));
            }
            if !keep_damaged {
                return Err(damaged(detail));
            }
            let Some(data) = gray_intervals(layout, scan, lost.intervals.clone()) else {
                return Err(damaged(format!("{detail}, and its Huffman tables cannot code gray blocks")));
            };
            edits.push((lost.bytes, data));
            warnings
                .push(DecodeWarning::DamagedRestart { rows: (rows.start, rows.end), height: layout.height });
        }
    }
    let (h_max, v_max) = layout.max_factors();
    if let Some(c) =
        layout.components.iter().find(|c| h_max % u32::from(c.h) != 0 || v_max % u32::from(c.v) != 0)
    {
        return unsupported(format!(
            "a JPEG with a component sampled {}x{} beside one sampled {h_max}x{v_max}, a ratio that is \
             not a whole number (libjpeg does not read it either)",
            c.h, c.v
        ));
    }
    Ok(Plan { bytes: apply(bytes, edits), warnings })
}

/// JPEG's rules for a progressive scan (G.1.1.1.1): DC alone, or one component's AC band.
fn progressive_scan_valid(scan: &Scan) -> bool {
    let spectral = if scan.ss == 0 {
        scan.se == 0
    } else {
        scan.se >= scan.ss && scan.se <= 63 && scan.components.len() == 1
    };
    spectral && scan.ah <= 13 && scan.al <= 13
}

/// Coded data that holds more than one restart interval because markers between them are lost.
struct Lost {
    /// The restart intervals it holds (0-based).
    intervals: Range<u64>,
    /// Its bytes in the file.
    bytes: Range<usize>,
}

impl Lost {
    /// The pixel rows those intervals cover.
    fn rows(&self, layout: &Layout, scan: &Scan) -> Range<u32> {
        let (h_max, v_max) = layout.max_factors();
        let (per_row, unit_rows) = if let [one] = scan.components[..] {
            let c = layout.components[one];
            ((layout.width * u32::from(c.h)).div_ceil(h_max).div_ceil(8), 8 * v_max / u32::from(c.v))
        } else {
            (layout.width.div_ceil(8 * h_max), 8 * v_max)
        };
        let interval = u64::from(scan.interval);
        let unit_row = |unit: u64| (unit / u64::from(per_row.max(1))) as u32 * unit_rows;
        let first = unit_row(self.intervals.start * interval);
        let last = unit_row((self.intervals.end * interval).min(layout.scan_units(scan)).saturating_sub(1));
        first..(last + unit_rows).min(layout.height)
    }
}

/// The pieces of a complete scan's data that hold several restart intervals.
fn lost_restarts(layout: &Layout, scan: &Scan) -> Vec<Lost> {
    if scan.interval == 0 || !scan.ended {
        return Vec::new();
    }
    let total = layout.scan_units(scan).div_ceil(u64::from(scan.interval));
    let mut lost = Vec::new();
    let (mut first, mut from) = (0u64, scan.data.start);
    for &(at, number) in &scan.restarts {
        // The interval this marker ends: the first from `first` on with its number.
        let ends = first + (u64::from(number) + 8 - first % 8) % 8;
        if ends > first {
            lost.push(Lost { intervals: first..ends + 1, bytes: from..at });
        }
        (first, from) = (ends + 1, at + 2);
    }
    if total > first + 1 {
        lost.push(Lost { intervals: first..total, bytes: from..scan.data.end });
    }
    lost
}

/// Coded data for `intervals` of `scan` in which every block is flat gray (no DC difference,
/// end of block), with their restart markers between them; `None` if the scan's tables have
/// no code for either symbol.
fn gray_intervals(layout: &Layout, scan: &Scan, intervals: Range<u64>) -> Option<Vec<u8>> {
    let codes: Vec<(Code, Code)> = scan.zero_codes.iter().copied().collect::<Option<_>>()?;
    let blocks: Vec<u32> = if scan.components.len() == 1 {
        vec![1]
    } else {
        scan.components
            .iter()
            .map(|&c| u32::from(layout.components[c].h) * u32::from(layout.components[c].v))
            .collect()
    };
    let units = layout.scan_units(scan);
    let interval = u64::from(scan.interval);
    let mut out = Vec::new();
    for i in intervals.clone() {
        let mut bits = BitWriter::default();
        for _ in i * interval..((i + 1) * interval).min(units) {
            for (&(dc, ac), &n) in codes.iter().zip(&blocks) {
                for _ in 0..n {
                    for (code, len) in [dc, ac] {
                        // Only the code's own bits: a damaged table's code may run past them.
                        let len = u32::from(len);
                        bits.put(&mut out, u32::from(code) & ((1 << len) - 1), len);
                    }
                }
            }
        }
        bits.finish(&mut out);
        if i + 1 < intervals.end {
            out.extend_from_slice(&[0xFF, 0xD0 + (i % 8) as u8]);
        }
    }
    Some(out)
}

/// `bytes` with each range replaced (the ranges do not overlap).
fn apply(bytes: Vec<u8>, mut edits: Vec<(Range<usize>, Vec<u8>)>) -> Vec<u8> {
    if edits.is_empty() {
        return bytes;
    }
    edits.sort_by_key(|(r, _)| r.start);
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    for (range, with) in edits {
        out.extend_from_slice(&bytes[at..range.start.max(at)]);
        out.extend_from_slice(&with);
        at = range.end.max(at);
    }
    out.extend_from_slice(&bytes[at.min(bytes.len())..]);
    out
}
