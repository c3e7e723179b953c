//! A JPEG's structure, read without decoding: the frame type and its components, the scans, how
//! many bytes of coded image data there are and whether the file ends where it should. Used to
//! name unsupported variants, to refuse files that cannot hold the pixels their header claims,
//! and to notice truncation (the decoder fills missing rows with gray and says nothing).

use crate::io::read::jpeg_layout::Component;
pub(in crate::io) use crate::io::read::jpeg_layout::{FrameKind, Junk, Layout, Scan, ScanError};

/// Reads the structure of the JPEG in `bytes` (which starts with `FF D8`).
pub(in crate::io) fn scan(bytes: &[u8]) -> Result<Layout, ScanError> {
    let byte = |i: usize| bytes.get(i).copied().ok_or(ScanError::EndsInHeaders);
    let be16 = |i: usize| Ok::<_, ScanError>(u16::from_be_bytes([byte(i)?, byte(i + 1)?]));
    if bytes.get(..2) != Some(&[0xFF, 0xD8]) {
        return Err(ScanError::Corrupt("it does not start with a JPEG start-of-image marker".into()));
    }
    let mut layout = Layout { precision: 8, ..Layout::default() };
    let mut frame_seen = false;
    let mut interval = 0u16;
    let mut pos = 2;
    loop {
        // A marker: 0xFF, any fill 0xFF bytes, then the code. Other bytes are skipped up to the
        // next marker, as libjpeg does ("extraneous bytes before marker").
        if byte(pos)? != 0xFF {
            let Some(next) = next_marker(bytes, pos) else {
                return if layout.scans > 0 {
                    Ok(layout)
                } else {
                    Err(ScanError::Corrupt(format!("no marker where one must be, at byte {pos}")))
                };
            };
            layout.junk.push(Junk { at: pos, len: next - pos, marker: byte(next + 1)? });
            pos = next;
        }
        while byte(pos)? == 0xFF {
            pos += 1;
        }
        let code = byte(pos)?;
        pos += 1;
        match code {
            0xD9 => {
                layout.complete = true;
                return Ok(layout);
            }
            // Standalone markers: TEM, RSTn.
            0x01 | 0xD0..=0xD7 => {}
            0xDA => {
                if !frame_seen {
                    return Err(ScanError::Corrupt("a scan comes before the frame header".into()));
                }
                let len = usize::from(be16(pos)?);
                let mut scan = read_scan(&bytes[..bytes.len().min(pos + len)], pos + 2, &layout)?;
                scan.interval = interval;
                pos += len;
                layout.scans += 1;
                let (end, ended) = entropy_coded_end(bytes, pos, &mut scan.restarts)
                    .map_or((bytes.len().max(pos), false), |end| (end, true));
                scan.data = pos..end;
                scan.ended = ended;
                layout.coded_bytes += (end - pos) as u64;
                layout.scan_list.push(scan);
                if !ended {
                    // The file ends inside the image data: truncated.
                    return Ok(layout);
                }
                pos = end;
            }
            _ => {
                let len = usize::from(be16(pos)?);
                if len < 2 {
                    return Err(ScanError::Corrupt(format!("marker FF{code:02X} has length {len}")));
                }
                if is_sof(code) {
                    if frame_seen {
                        return Err(ScanError::Corrupt("two frame headers".into()));
                    }
                    frame_seen = true;
                    read_frame(code, &bytes[..bytes.len().min(pos + len)], pos + 2, &mut layout)?;
                }
                let segment = &bytes[pos.min(bytes.len())..bytes.len().min(pos + len)];
                if code == 0xDD && segment.len() >= 4 {
                    interval = u16::from_be_bytes([segment[2], segment[3]]);
                }
                pos += len;
            }
        }
        if pos >= bytes.len() {
            // Ends between segments without the end-of-image marker.
            return if layout.scans > 0 { Ok(layout) } else { Err(ScanError::EndsInHeaders) };
        }
    }
}

fn is_sof(code: u8) -> bool {
    matches!(code, 0xC0..=0xCF) && !matches!(code, 0xC4 | 0xC8 | 0xCC)
}

fn read_frame(code: u8, bytes: &[u8], at: usize, layout: &mut Layout) -> Result<(), ScanError> {
    let byte = |i: usize| bytes.get(at + i).copied().ok_or(ScanError::EndsInHeaders);
    let n = code - 0xC0;
    layout.kind = match n {
        0 | 1 => FrameKind::Sequential,
        2 => FrameKind::Progressive,
        9 => FrameKind::Arithmetic { progressive: false },
        10 => FrameKind::Arithmetic { progressive: true },
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

/// A start-of-scan header: the components (by index into the frame's) and the scan parameters.
fn read_scan(bytes: &[u8], at: usize, layout: &Layout) -> Result<Scan, ScanError> {
    let byte = |i: usize| bytes.get(at + i).copied().ok_or(ScanError::EndsInHeaders);
    let count = usize::from(byte(0)?);
    let mut scan = Scan { components: Vec::with_capacity(count), ..Scan::default() };
    for c in 0..count {
        let id = byte(1 + 2 * c)?;
        let Some(index) = layout.components.iter().position(|k| k.id == id) else {
            return Err(ScanError::Corrupt(format!(
                "a scan codes component {id}, which the frame does not have"
            )));
        };
        scan.components.push(index);
    }
    let params = 1 + 2 * count;
    (scan.ss, scan.se) = (byte(params)?, byte(params + 1)?);
    let approx = byte(params + 2)?;
    (scan.ah, scan.al) = (approx >> 4, approx & 0x0F);
    Ok(scan)
}

/// The next marker at or after `from`: an `FF` followed by a code (not a stuffed `00`, not fill).
fn next_marker(bytes: &[u8], from: usize) -> Option<usize> {
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
fn entropy_coded_end(bytes: &[u8], from: usize, restarts: &mut Vec<(usize, u8)>) -> Option<usize> {
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

#[cfg(test)]
mod tests {
    use crate::io::read::jpeg_layout::Component;
    use crate::io::read::jpeg_scan::*;

    #[test]
    fn reads_a_real_jpeg_and_notices_truncation() {
        let pixel = |x: u32, y: u32| [(x * 9) as u8, (y * 5) as u8, 77];
        let full = crate::io::read::stored_luma::tests_support::colour_jpeg((100, 60), 80, pixel);
        let l = scan(&full).expect("scan");
        assert_eq!((l.kind, l.width, l.height, l.precision), (FrameKind::Sequential, 100, 60, 8));
        assert_eq!(l.components.len(), 3);
        assert_eq!(full[l.height_at..l.height_at + 2], 60u16.to_be_bytes(), "where the height lies");
        assert!(l.complete && l.scans == 1 && l.coded_bytes > 100, "{l:?}");
        assert!(l.coded_bytes >= l.min_coded_bytes());
        let cut = scan(&full[..full.len() / 2]).expect("scan");
        assert!(!cut.complete && cut.coded_bytes < l.coded_bytes, "{cut:?}");
        assert_eq!(scan(&full[..20]), Err(ScanError::EndsInHeaders));
    }

    #[test]
    fn the_floor_counts_every_block() {
        let layout = |kind, comps: &[(u8, u8)]| Layout {
            kind,
            precision: 8,
            width: 65535,
            height: 65535,
            components: comps.iter().zip(1..).map(|(&(h, v), id)| Component { id, h, v }).collect(),
            scans: 1,
            complete: true,
            ..Layout::default()
        };
        // 8192 x 8192 luma blocks, 2 bits each: 16 MiB.
        assert_eq!(layout(FrameKind::Sequential, &[(1, 1)]).min_coded_bytes(), 8192 * 8192 / 4);
        // 4:2:0 adds two quarter-size chroma planes; progressive needs half.
        let yuv420 = [(2, 2), (1, 1), (1, 1)];
        assert_eq!(layout(FrameKind::Sequential, &yuv420).min_coded_bytes(), 8192 * 8192 * 3 / 2 / 4);
        assert_eq!(layout(FrameKind::Progressive, &yuv420).min_coded_bytes(), 8192 * 8192 * 3 / 2 / 8);
        assert_eq!(layout(FrameKind::Sequential, &yuv420).mcu_rows(), 16);
    }

    #[test]
    fn broken_structures_are_errors_not_panics() {
        for bytes in [
            &b"\xFF\xD8"[..],
            b"\xFF\xD8\xFF",
            b"\xFF\xD8\xFF\xC0\x00",
            b"\xFF\xD8\xFF\xC0\x00\x0B\x08\x00\x10\x00\x10\x01\x01\x00\x00",
            b"\xFF\xD8\xFF\xDA\x00\x02",
            b"\xFF\xD8\x00",
            b"\xFF\xD8\xFF\xE0\x00\x00",
        ] {
            assert!(scan(bytes).is_err(), "{bytes:?}");
        }
    }
}
