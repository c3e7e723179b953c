//! The segments of a JPEG's structure walk ([`super::jpeg_scan`]): the frame header, a scan
//! header, the Huffman tables (only the codes of symbol 0), and where entropy-coded data ends.

use crate::io::read::jpeg_layout::{Code, Component, FrameKind, Layout, Scan, ScanError};

pub(super) fn is_sof(code: u8) -> bool {
    matches!(code, 0xC0..=0xCF) && !matches!(code, 0xC4 | 0xC8 | 0xCC)
}

pub(super) fn read_frame(code: u8, bytes: &[u8], at: usize, layout: &mut Layout) -> Result<(), ScanError> {
    let byte = |i: usize| bytes.get(at + i).copied().ok_or(ScanError::EndsInHeaders);
    let n = code - 0xC0;
    layout.kind = match n {
        0 | 1 => FrameKind::Sequential,
        2 => FrameKind::Progressive,
        other => FrameKind::Unsupported(other),
    };
    layout.precision = byte(0)?;
    layout.height = u32::from(u16::from_be_bytes([byte(1)?, byte(2)?]));
    layout.height_at = at + 1;
    layout.width = u32::from(u16::from_be_bytes([byte(3)?, byte(4)?]));
    let count = byte(5)?;
    if count == 0 || count > 4 {
        return Err(ScanError::Corrupt(format!("the frame header lists {count} colour components")));
    }
    for c in 0..usize::from(count) {
        let factors = byte(6 + 3 * c + 1)?;
        let (h, v) = (factors >> 4, factors & 0x0F);
        if !(1..=4).contains(&h) || !(1..=4).contains(&v) {
            return Err(ScanError::Corrupt(format!("component {} has sampling factors {h}x{v}", c + 1)));
        }
        layout.components.push(Component { id: byte(6 + 3 * c)?, h, v });
    }
    Ok(())
}

/// A start-of-scan header: the components (by index into the frame's), the scan parameters and
/// the zero codes of the tables it uses.
pub(super) fn read_scan(
    bytes: &[u8],
    at: usize,
    layout: &Layout,
    tables: &[[Option<Code>; 4]; 2],
) -> Result<Scan, ScanError> {
    let byte = |i: usize| bytes.get(at + i).copied().ok_or(ScanError::EndsInHeaders);
    let count = usize::from(byte(0)?);
    let mut scan = Scan {
        components: Vec::with_capacity(count),
        zero_codes: Vec::with_capacity(count),
        ..Scan::default()
    };
    for c in 0..count {
        let id = byte(1 + 2 * c)?;
        let Some(index) = layout.components.iter().position(|k| k.id == id) else {
            return Err(ScanError::Corrupt(format!(
                "a scan codes component {id}, which the frame does not have"
            )));
        };
        let selectors = byte(2 + 2 * c)?;
        let (dc, ac) = (usize::from(selectors >> 4) & 3, usize::from(selectors & 0x0F) & 3);
        scan.components.push(index);
        scan.zero_codes.push(tables[0][dc].zip(tables[1][ac]));
    }
    let params = 1 + 2 * count;
    (scan.ss, scan.se) = (byte(params)?, byte(params + 1)?);
    let approx = byte(params + 2)?;
    (scan.ah, scan.al) = (approx >> 4, approx & 0x0F);
    Ok(scan)
}

/// Reads the Huffman tables of one DHT segment (its length first): for each, the code of symbol
/// 0, if it has one (the canonical codes of JPEG's Annex C).
pub(super) fn read_tables(segment: &[u8], tables: &mut [[Option<Code>; 4]; 2]) {
    let mut i = 2;
    while let Some(counts) = segment.get(i + 1..i + 17) {
        let (class, id) = (usize::from(segment[i] >> 4).min(1), usize::from(segment[i] & 3));
        let total: usize = counts.iter().map(|&n| usize::from(n)).sum();
        let Some(symbols) = segment.get(i + 17..i + 17 + total) else { return };
        let (mut code, mut k, mut found) = (0u32, 0usize, None);
        for (len, &n) in (1u8..).zip(counts) {
            for _ in 0..n {
                if symbols[k] == 0 && found.is_none() {
                    found = Some((code as u16, len));
                }
                code += 1;
                k += 1;
            }
            code <<= 1;
        }
        tables[class][id] = found;
        i += 17 + total;
    }
}

/// The next marker at or after `from`: an `FF` followed by a code (not a stuffed `00`, not fill).
pub(super) fn next_marker(bytes: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    loop {
        i += bytes.get(i..)?.iter().position(|&b| b == 0xFF)?;
        match *bytes.get(i + 1)? {
            0x00 => i += 2,
            0xFF => i += 1,
            _ => return Some(i),
        }
    }
}

/// Where the entropy-coded data that starts at `from` ends (at the next marker that is neither
/// a stuffed `FF 00` nor a restart marker), or `None` when the file ends first. The restart
/// markers on the way are added to `restarts`.
pub(super) fn entropy_coded_end(bytes: &[u8], from: usize, restarts: &mut Vec<(usize, u8)>) -> Option<usize> {
    let mut i = from;
    loop {
        i += bytes.get(i..)?.iter().position(|&b| b == 0xFF)?;
        let mut next = i + 1;
        while *bytes.get(next)? == 0xFF {
            next += 1;
        }
        match *bytes.get(next)? {
            0x00 => i = next + 1,
            code @ 0xD0..=0xD7 => {
                restarts.push((next - 1, code - 0xD0));
                i = next + 1;
            }
            _ => return Some(i),
        }
    }
}
