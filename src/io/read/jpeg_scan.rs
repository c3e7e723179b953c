//! A JPEG's structure, read without decoding: the frame type and its components, the scans, how
//! many bytes of coded image data there are and whether the file ends where it should. Used to
//! name unsupported variants, to refuse files that cannot hold the pixels their header claims,
//! and to notice truncation (the decoder fills missing rows with gray and says nothing).

/// How a JPEG frame is coded (its `SOFn` marker).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::io) enum FrameKind {
    /// SOF0 / SOF1: sequential DCT, Huffman coding.
    Sequential,
    /// SOF2: progressive DCT, Huffman coding.
    Progressive,
    /// Any other `SOFn`: lossless, hierarchical or arithmetic-coded.
    Unsupported(u8),
}

/// One colour component of the frame: its sampling factors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::io) struct Component {
    pub h: u8,
    pub v: u8,
}

/// What [`scan`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::io) struct Layout {
    pub kind: FrameKind,
    /// Bits per sample (8 for nearly every JPEG).
    pub precision: u8,
    pub width: u32,
    pub height: u32,
    pub components: Vec<Component>,
    /// Start-of-scan segments seen.
    pub scans: u32,
    /// Bytes of entropy-coded data in all scans.
    pub coded_bytes: u64,
    /// The end-of-image marker was reached.
    pub complete: bool,
}

/// Why a JPEG's structure cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::io) enum ScanError {
    /// The file ends inside the headers, before any image data.
    EndsInHeaders,
    /// The structure is broken; the reason.
    Corrupt(String),
}

impl FrameKind {
    /// The variant's name, for messages.
    pub fn describe(marker: u8) -> String {
        let name = match marker {
            3 => "lossless",
            5 => "hierarchical sequential",
            6 => "hierarchical progressive",
            7 => "hierarchical lossless",
            9 => "arithmetic-coded sequential",
            10 => "arithmetic-coded progressive",
            11 => "arithmetic-coded lossless",
            13 => "hierarchical arithmetic-coded sequential",
            14 => "hierarchical arithmetic-coded progressive",
            15 => "hierarchical arithmetic-coded lossless",
            _ => "unknown",
        };
        format!("{name} JPEG (SOF{marker})")
    }
}

/// Reads the structure of the JPEG in `bytes` (which starts with `FF D8`).
pub(in crate::io) fn scan(bytes: &[u8]) -> Result<Layout, ScanError> {
    let byte = |i: usize| bytes.get(i).copied().ok_or(ScanError::EndsInHeaders);
    let be16 = |i: usize| Ok::<_, ScanError>(u16::from_be_bytes([byte(i)?, byte(i + 1)?]));
    if bytes.get(..2) != Some(&[0xFF, 0xD8]) {
        return Err(ScanError::Corrupt("it does not start with a JPEG start-of-image marker".into()));
    }
    let mut layout = Layout {
        kind: FrameKind::Sequential,
        precision: 8,
        width: 0,
        height: 0,
        components: Vec::new(),
        scans: 0,
        coded_bytes: 0,
        complete: false,
    };
    let mut frame_seen = false;
    let mut pos = 2;
    loop {
        // A marker: 0xFF, any fill 0xFF bytes, then the code.
        if byte(pos)? != 0xFF {
            return Err(ScanError::Corrupt(format!("no marker where one must be, at byte {pos}")));
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
                pos += len;
                layout.scans += 1;
                let Some(end) = entropy_coded_end(bytes, pos) else {
                    // The file ends inside the image data: truncated.
                    layout.coded_bytes += bytes.len().saturating_sub(pos) as u64;
                    return Ok(layout);
                };
                layout.coded_bytes += (end - pos) as u64;
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
        other => FrameKind::Unsupported(other),
    };
    layout.precision = byte(0)?;
    layout.height = u32::from(u16::from_be_bytes([byte(1)?, byte(2)?]));
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
        layout.components.push(Component { h, v });
    }
    Ok(())
}

/// Where the entropy-coded data that starts at `from` ends (at the next marker that is neither
/// a stuffed `FF 00` nor a restart marker), or `None` when the file ends first.
fn entropy_coded_end(bytes: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    loop {
        i += bytes.get(i..)?.iter().position(|&b| b == 0xFF)?;
        let mut next = i + 1;
        while *bytes.get(next)? == 0xFF {
            next += 1;
        }
        match *bytes.get(next)? {
            0x00 | 0xD0..=0xD7 => i = next + 1,
            _ => return Some(i),
        }
    }
}

impl Layout {
    /// 8x8 blocks in each component, as the decoder lays them out.
    fn blocks(&self) -> impl Iterator<Item = u64> + '_ {
        let h_max = u64::from(self.components.iter().map(|c| c.h).max().unwrap_or(1));
        let v_max = u64::from(self.components.iter().map(|c| c.v).max().unwrap_or(1));
        let (w, h) = (u64::from(self.width), u64::from(self.height));
        self.components.iter().map(move |c| {
            let cw = (w * u64::from(c.h)).div_ceil(h_max);
            let ch = (h * u64::from(c.v)).div_ceil(v_max);
            cw.div_ceil(8) * ch.div_ceil(8)
        })
    }

    /// The fewest bytes of coded data that can hold this frame: every block of every component
    /// needs a DC code (at least 1 bit) and, in a sequential frame, an end-of-block code (at least
    /// 1 more bit). A progressive frame codes the AC coefficients of up to 32767 blocks with one
    /// end-of-band run, which is why its floor is half as high. Arithmetic coding has no such floor
    /// (and is not decoded here).
    pub fn min_coded_bytes(&self) -> u64 {
        let bits_per_block = match self.kind {
            FrameKind::Sequential => 2,
            FrameKind::Progressive => 1,
            FrameKind::Unsupported(_) => 0,
        };
        (self.blocks().sum::<u64>() * bits_per_block).div_ceil(8)
    }

    /// Extra memory the decoder takes beside the output: a progressive frame (or a sequential
    /// one in several scans) keeps every coefficient, two bytes each, until the end.
    pub fn decoder_scratch_bytes(&self) -> u64 {
        if self.kind == FrameKind::Progressive || self.scans > 1 {
            self.blocks().sum::<u64>() * 64 * 2
        } else {
            0
        }
    }

    /// Pixel rows per row of MCUs (the unit the decoder fills in).
    pub fn mcu_rows(&self) -> u32 {
        if self.components.len() <= 1 {
            8
        } else {
            8 * u32::from(self.components.iter().map(|c| c.v).max().unwrap_or(1))
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::io::read::jpeg_scan::*;

    fn encode(w: u32, h: u32) -> Vec<u8> {
        let img = image::RgbImage::from_fn(w, h, |x, y| image::Rgb([(x * 9) as u8, (y * 5) as u8, 77]));
        let mut out = Vec::new();
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 80).encode_image(&img).expect("encode");
        out
    }

    #[test]
    fn reads_a_real_jpeg_and_notices_truncation() {
        let full = encode(100, 60);
        let l = scan(&full).expect("scan");
        assert_eq!((l.kind, l.width, l.height, l.precision), (FrameKind::Sequential, 100, 60, 8));
        assert_eq!(l.components.len(), 3);
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
            components: comps.iter().map(|&(h, v)| Component { h, v }).collect(),
            scans: 1,
            coded_bytes: 0,
            complete: true,
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
