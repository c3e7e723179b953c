//! A TIFF's first image file directory, read before decoding: sample formats the `image` crate
//! refuses with its own words or, worse, decodes as noise (32-bit unsigned integers without a
//! `SampleFormat` tag are read as floating point) are refused with a sentence naming them.

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::Path;

use crate::io::{IoError, owned};

const BITS_PER_SAMPLE: u16 = 258;
const SAMPLE_FORMAT: u16 = 339;
/// Directories with more entries than this are left to the decoder.
const MAX_ENTRIES: u64 = 4096;

/// Refuses TIFF sample formats graylab cannot decode correctly; other files pass.
pub(in crate::io) fn check_tiff(path: &Path, head: &[u8]) -> Result<(), IoError> {
    let little = match head.get(..4) {
        Some(b"II*\0") => true,
        Some(b"MM\0*") => false,
        _ => return Ok(()),
    };
    let Some((bits, format)) = first_ifd(path, head, little) else { return Ok(()) };
    let what = match (format, bits) {
        (1, 1 | 8 | 16) | (3, 32) => return Ok(()),
        (1, bits) => format!("{bits}-bit unsigned-integer samples"),
        (2, bits) => format!("{bits}-bit signed-integer samples"),
        (3, bits) => format!("{bits}-bit floating-point samples"),
        (4, _) => "samples of undefined format (SampleFormat 4)".to_owned(),
        (other, _) => format!("an invalid sample format ({other})"),
    };
    Err(IoError::Unsupported {
        path: owned(path),
        reason: format!(
            "a TIFF with {what}; graylab reads TIFF samples of 1, 8 or 16 bits (unsigned) or 32-bit floating point"
        ),
    })
}

/// Bits per sample (the largest listed) and the sample format (1 when absent) of the first
/// directory, or `None` when it cannot be read (the decoder then says why).
fn first_ifd(path: &Path, head: &[u8], little: bool) -> Option<(u32, u16)> {
    let u16_at = |b: &[u8], i: usize| {
        let v = [*b.get(i)?, *b.get(i + 1)?];
        Some(if little { u16::from_le_bytes(v) } else { u16::from_be_bytes(v) })
    };
    let u32_at = |b: &[u8], i: usize| {
        let v: [u8; 4] = b.get(i..i + 4)?.try_into().ok()?;
        Some(if little { u32::from_le_bytes(v) } else { u32::from_be_bytes(v) })
    };
    let mut file = std::fs::File::open(path).ok()?;
    let offset = u64::from(u32_at(head, 4)?);
    file.seek(SeekFrom::Start(offset)).ok()?;
    let mut count = [0u8; 2];
    file.read_exact(&mut count).ok()?;
    let entries = u64::from(u16_at(&count, 0)?).min(MAX_ENTRIES);
    let mut ifd = Vec::new();
    (&mut file).take(entries * 12).read_to_end(&mut ifd).ok()?;
    let (mut bits, mut format) = (None, 1u16);
    for entry in ifd.chunks_exact(12) {
        let (tag, kind, n) = (u16_at(entry, 0)?, u16_at(entry, 2)?, u32_at(entry, 4)?);
        if tag != BITS_PER_SAMPLE && tag != SAMPLE_FORMAT {
            continue;
        }
        // SHORT values: up to two inline, more at an offset.
        if kind != 3 || n == 0 {
            return None;
        }
        let values: Vec<u16> = if n <= 2 {
            (0..n as usize).map(|k| u16_at(entry, 8 + 2 * k)).collect::<Option<_>>()?
        } else {
            let mut raw = vec![0u8; 2 * n.min(16) as usize];
            file.seek(SeekFrom::Start(u64::from(u32_at(entry, 8)?))).ok()?;
            file.read_exact(&mut raw).ok()?;
            (0..raw.len() / 2).map(|k| u16_at(&raw, 2 * k)).collect::<Option<_>>()?
        };
        if tag == BITS_PER_SAMPLE {
            bits = values.iter().copied().max().map(u32::from);
        } else {
            format = values.iter().copied().find(|&f| f != 1).unwrap_or(1);
        }
    }
    Some((bits?, format))
}
