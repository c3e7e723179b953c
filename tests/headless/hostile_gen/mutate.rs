//! Structured mutations of one seed file per format: each returns a name saying what was done
//! and the mutated bytes.

use super::{Rng, minimal_jpeg, sof_offset};

fn put16(bytes: &mut [u8], at: usize, v: u16) {
    if let Some(s) = bytes.get_mut(at..at + 2) {
        s.copy_from_slice(&v.to_be_bytes());
    }
}

fn put32be(bytes: &mut [u8], at: usize, v: u32) {
    if let Some(s) = bytes.get_mut(at..at + 4) {
        s.copy_from_slice(&v.to_be_bytes());
    }
}

fn put32le(bytes: &mut [u8], at: usize, v: u32) {
    if let Some(s) = bytes.get_mut(at..at + 4) {
        s.copy_from_slice(&v.to_le_bytes());
    }
}

const SIDES16: [u16; 10] = [0, 1, 7, 8, 9, 255, 1000, 4096, 16384, 65535];
const SIDES32: [u32; 10] = [0, 1, 3, 255, 4096, 16_384, 65_535, 100_000, 0x7FFF_FFFF, u32::MAX];

pub(super) fn mutate_jpeg(rng: &mut Rng, seed: &[u8]) -> (String, Vec<u8>) {
    let mut b = seed.to_vec();
    let Some(sof) = sof_offset(&b) else { return ("jpeg-as-is".into(), b) };
    match rng.below(10) {
        8 => {
            // Bytes before a marker (libjpeg skips them with "extraneous bytes before marker").
            let markers: Vec<usize> = (2..b.len() - 1).filter(|&i| b[i] == 0xFF && b[i + 1] != 0).collect();
            let at = markers[rng.below(markers.len())];
            let n = 1 + rng.below(9);
            let junk: Vec<u8> = (0..n).map(|_| (rng.next() as u8) & 0x7F).collect();
            b.splice(at..at, junk);
            (format!("jpeg-{n}-junk-bytes-at-{at}"), b)
        }
        9 => {
            // A restart marker dropped, or its number changed.
            let rst: Vec<usize> =
                (0..b.len() - 1).filter(|&i| b[i] == 0xFF && (0xD0..=0xD7).contains(&b[i + 1])).collect();
            let Some(&at) = rst.get(rng.below(rst.len().max(1))) else {
                return ("jpeg-no-restarts".into(), b);
            };
            if rng.below(2) == 0 {
                b.drain(at..at + 2);
                (format!("jpeg-restart-dropped-at-{at}"), b)
            } else {
                b[at + 1] = 0xD0 + rng.below(8) as u8;
                (format!("jpeg-restart-renumbered-at-{at}"), b)
            }
        }
        0 => {
            let (w, h) = (rng.pick(&SIDES16), rng.pick(&SIDES16));
            put16(&mut b, sof + 5, h);
            put16(&mut b, sof + 7, w);
            (format!("jpeg-sof-{w}x{h}"), b)
        }
        1 => {
            let kind = rng.pick(&[0xC1u8, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF]);
            b[sof + 1] = kind;
            (format!("jpeg-sof{}", kind - 0xC0), b)
        }
        2 => {
            let n = rng.pick(&[0u8, 2, 4, 5, 255]);
            b[sof + 9] = n;
            (format!("jpeg-{n}-components"), b)
        }
        3 => {
            let f = rng.pick(&[0x00u8, 0x44, 0xF1, 0x1F, 0x55, 0x22]);
            b[sof + 11] = f;
            (format!("jpeg-sampling-{f:02x}"), b)
        }
        4 => {
            let p = rng.pick(&[0u8, 1, 12, 16, 255]);
            b[sof + 4] = p;
            (format!("jpeg-precision-{p}"), b)
        }
        5 => {
            let keep = rng.below(b.len().max(1));
            b.truncate(keep);
            (format!("jpeg-cut-at-{keep}"), b)
        }
        6 => {
            for _ in 0..=rng.below(8) {
                let i = rng.below(b.len());
                b[i] = rng.next() as u8;
            }
            ("jpeg-flipped-bytes".into(), b)
        }
        _ => {
            let (w, h) = (rng.pick(&SIDES16), rng.pick(&SIDES16));
            let sof_kind = rng.pick(&[0u8, 2]);
            let short = rng.pick(&[0usize, 1, 100, usize::MAX]);
            let eoi = rng.below(2) == 0;
            (
                format!("jpeg-minimal-sof{sof_kind}-{w}x{h}-short{}", short.min(999)),
                minimal_jpeg(sof_kind, w, h, short, eoi),
            )
        }
    }
}

pub(super) fn mutate_png(rng: &mut Rng, seed: &[u8]) -> (String, Vec<u8>) {
    let mut b = seed.to_vec();
    let name = match rng.below(5) {
        0 => {
            let (w, h) = (rng.pick(&SIDES32), rng.pick(&SIDES32));
            put32be(&mut b, 16, w);
            put32be(&mut b, 20, h);
            format!("png-ihdr-{w}x{h}")
        }
        1 => {
            let (depth, color) =
                (rng.pick(&[0u8, 1, 3, 8, 16, 32]), rng.pick(&[0u8, 1, 2, 3, 4, 5, 6, 7, 255]));
            b[24] = depth;
            b[25] = color;
            format!("png-depth{depth}-color{color}")
        }
        2 => {
            let keep = rng.below(b.len());
            b.truncate(keep);
            return (format!("png-cut-at-{keep}"), b);
        }
        3 => {
            for _ in 0..=rng.below(6) {
                let i = 33 + rng.below(b.len() - 33);
                b[i] = rng.next() as u8;
            }
            return ("png-corrupt-data".into(), b);
        }
        _ => {
            b[28] = rng.pick(&[1u8, 2]); // interlace method: Adam7 or invalid
            "png-interlace".into()
        }
    };
    // Mostly keep the header's CRC valid so the decoder reads the mutated values.
    if rng.below(4) != 0 {
        let crc = crc32fast::hash(&b[12..29]);
        put32be(&mut b, 29, crc);
    }
    (name, b)
}

pub(super) fn mutate_tiff(rng: &mut Rng, seed: &[u8]) -> (String, Vec<u8>) {
    let mut b = seed.to_vec();
    let ifd = u32::from_le_bytes([b[4], b[5], b[6], b[7]]) as usize;
    let entries = usize::from(u16::from_le_bytes([b[ifd], b[ifd + 1]]));
    let entry = ifd + 2 + 12 * rng.below(entries.max(1));
    let tag = u16::from_le_bytes([b[entry], b[entry + 1]]);
    match rng.below(4) {
        0 => {
            let v = rng.pick(&SIDES32);
            put32le(&mut b, entry + 8, v);
            (format!("tiff-tag{tag}-value{v}"), b)
        }
        1 => {
            let v = rng.pick(&SIDES32);
            put32le(&mut b, entry + 4, v);
            (format!("tiff-tag{tag}-count{v}"), b)
        }
        2 => {
            let off = rng.pick(&[0u32, 4, 8, u32::MAX, ifd as u32]);
            put32le(&mut b, 4, off);
            (format!("tiff-ifd-at-{off}"), b)
        }
        _ => {
            let keep = rng.below(b.len());
            b.truncate(keep);
            (format!("tiff-cut-at-{keep}"), b)
        }
    }
}

pub(super) fn mutate_bmp(rng: &mut Rng, seed: &[u8]) -> (String, Vec<u8>) {
    let mut b = seed.to_vec();
    match rng.below(5) {
        0 => {
            let w = rng.pick(&[0i32, 1, -1, 65_535, 100_000, i32::MAX, i32::MIN]);
            let h = rng.pick(&[0i32, 1, -1, -65_535, 100_000, i32::MAX, i32::MIN]);
            b[18..22].copy_from_slice(&w.to_le_bytes());
            b[22..26].copy_from_slice(&h.to_le_bytes());
            (format!("bmp-{w}x{h}"), b)
        }
        1 => {
            let bpp = rng.pick(&[0u16, 1, 7, 15, 64, 0xFFFF]);
            b[28..30].copy_from_slice(&bpp.to_le_bytes());
            (format!("bmp-bpp{bpp}"), b)
        }
        2 => {
            let c = rng.pick(&[1u32, 2, 3, 4, 5, 99]);
            put32le(&mut b, 30, c);
            (format!("bmp-compression{c}"), b)
        }
        3 => {
            let off = rng.pick(&[0u32, 14, u32::MAX, 1 << 30]);
            put32le(&mut b, 10, off);
            (format!("bmp-data-at-{off}"), b)
        }
        _ => {
            let keep = rng.below(b.len());
            b.truncate(keep);
            (format!("bmp-cut-at-{keep}"), b)
        }
    }
}

pub(super) fn mutate_webp(rng: &mut Rng, seed: &[u8]) -> (String, Vec<u8>) {
    let mut b = seed.to_vec();
    match rng.below(4) {
        0 if b.get(12..16) == Some(b"VP8L") => {
            // 14-bit width-1 and height-1 after the 0x2F signature at byte 20.
            let (w, h) = (rng.below(1 << 14) as u32, rng.below(1 << 14) as u32);
            let bits = w | (h << 14) | (u32::from(b[24]) & 0xF0) << 24;
            put32le(&mut b, 21, bits);
            (format!("webp-{}x{}", w + 1, h + 1), b)
        }
        1 => {
            let size = rng.pick(&[0u32, 4, u32::MAX, 1 << 30]);
            put32le(&mut b, 4, size);
            (format!("webp-riff-size-{size}"), b)
        }
        2 => {
            b[12..16].copy_from_slice(rng.pick(&[b"VP8 ", b"VP8X", b"ANIM", b"XXXX"]));
            ("webp-chunk-type".into(), b)
        }
        _ => {
            let keep = rng.below(b.len());
            b.truncate(keep);
            (format!("webp-cut-at-{keep}"), b)
        }
    }
}
