//! The JPEG variants libjpeg-turbo refuses or reads with damage, told from the structure walk
//! ([`super::jpeg_scan`]) before it decodes: factors that do not divide the largest (3 beside 2
//! or 4) and a progressive header on a baseline scan are refused, as libjpeg refuses them; bytes
//! between segments are skipped, as libjpeg skips them, and restart markers missing or out of
//! sequence are left to libjpeg, which resynchronises as `OpenCV`'s decode does
//! ([`super::jpeg_restarts`]), each with a warning of graylab's own that names the rows (rows
//! lost are an error unless damaged data may be kept); an arithmetic-coded JPEG cut short or
//! with a restart marker lost is refused, as libjpeg decodes the rest of it to noise.

use std::ops::Range;
use std::path::Path;

use crate::io::read::jpeg_restarts;
use crate::io::read::jpeg_scan::{FrameKind, Layout, Scan};
use crate::io::{DecodeWarning, IoError};

/// How to decode one JPEG: the bytes (repaired when they had to be) and the warnings.
pub(in crate::io) struct Plan {
    /// The bytes to decode.
    pub bytes: Vec<u8>,
    /// What was repaired, and the rows libjpeg will lose.
    pub warnings: Vec<DecodeWarning>,
    /// Where in `bytes` libjpeg's warnings of its resynchronisations will come, told in
    /// `warnings` already ([`jpeg_restarts::sort_out`]).
    pub resynced_at: Vec<usize>,
}

/// Repairs what libjpeg would skip; refuses what libjpeg refuses.
pub(in crate::io) fn plan(
    path: &Path,
    bytes: Vec<u8>,
    layout: &Layout,
    keep_damaged: bool,
) -> Result<Plan, IoError> {
    let damaged = |detail: String| IoError::DamagedData { path: path.into(), detail, rows: None };
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
        if layout.kind.progressive() && !progressive_scan_valid(scan) {
            let what = if scan.ss == 0 && scan.se == 63 {
                "codes all 64 coefficients at once, as a baseline scan does".to_owned()
            } else {
                format!(
                    "has invalid progressive parameters (Ss={} Se={} Ah={} Al={})",
                    scan.ss, scan.se, scan.ah, scan.al
                )
            };
            let sof = if layout.kind == FrameKind::Progressive { 2 } else { 10 };
            return Err(damaged(format!(
                "the frame header says progressive (SOF{sof}) but scan {} {what}",
                n + 1
            )));
        }
    }
    // libjpeg fills what a Huffman-coded file lacks with gray; its arithmetic decoder makes
    // noise of the zeros it reads past a cut or a lost marker, with no warning: never kept.
    let arithmetic = matches!(layout.kind, FrameKind::Arithmetic { .. });
    let noise =
        "an arithmetic-coded JPEG is never kept in part: libjpeg decodes what follows to noise, not gray";
    if arithmetic && !layout.complete {
        let detail = format!("the file ends before its image data does, and {noise}");
        return Err(IoError::DamagedData { path: path.into(), detail, rows: None });
    }
    let mut edits: Vec<(Range<usize>, Vec<u8>)> = Vec::new();
    let mut warnings = Vec::new();
    for junk in &layout.junk {
        edits.push((junk.at..junk.at + junk.len, Vec::new()));
        warnings.push(DecodeWarning::ExtraneousBytes { bytes: junk.len, marker: junk.marker });
    }
    let mut resynced_at = Vec::new();
    let height = layout.height;
    for scan in &layout.scan_list {
        let told = jpeg_restarts::resync(&bytes, layout, scan);
        if arithmetic && !(told.lost.is_empty() && told.renumbered.is_empty()) {
            let detail = format!("a restart marker is lost or out of sequence, and {noise}");
            return Err(IoError::DamagedData { path: path.into(), detail, rows: None });
        }
        for (rows, cause) in told.lost {
            let rows = (rows.start, rows.end);
            if !keep_damaged {
                let detail = cause.words(rows, height, true);
                return Err(IoError::DamagedData { path: path.into(), detail, rows: Some(rows) });
            }
            warnings.push(DecodeWarning::DamagedRestart { rows, height, cause });
        }
        for (found, expected, row) in told.renumbered {
            warnings.push(DecodeWarning::RestartRenumbered { found, expected, row, height });
        }
        // Where libjpeg will stand in the bytes decoded: those skipped before it are not there.
        let skipped = |at: usize| layout.junk.iter().filter(|j| j.at < at).map(|j| j.len).sum::<usize>();
        resynced_at.extend(told.at_bytes.into_iter().map(|at| at - skipped(at)));
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
    Ok(Plan { bytes: apply(bytes, edits), warnings, resynced_at })
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
