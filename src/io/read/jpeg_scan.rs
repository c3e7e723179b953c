//! A JPEG's structure, read without decoding: the frame type and its components, the scans, how
//! many bytes of coded image data there are and whether the file ends where it should. Used to
//! name unsupported variants, to refuse files that cannot hold the pixels their header claims,
//! and to notice truncation (the decoder fills missing rows with gray and says nothing).

pub(in crate::io) use crate::io::read::jpeg_layout::{Code, FrameKind, Junk, Layout, Scan, ScanError};
use crate::io::read::jpeg_segments::{
    entropy_coded_end, is_sof, next_marker, read_frame, read_scan, read_tables,
};

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
    // The code for symbol 0 of each [class][table], when it has one.
    let mut tables: [[Option<Code>; 4]; 2] = [[None; 4]; 2];
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
                let mut scan = read_scan(&bytes[..bytes.len().min(pos + len)], pos + 2, &layout, &tables)?;
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
                if code == 0xC4 {
                    read_tables(segment, &mut tables);
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
