//! The EXIF an export keeps of a TIFF input ([`crate::io::Exif`]): the kept tags of its first
//! directory (the camera, the date, the credits) and of the EXIF directory that one points to
//! (the exposure, the lens), read from the file as a camera's EXIF block is read, classic or
//! `BigTIFF`. A damaged entry is skipped, never trusted.

use std::path::Path;
use std::sync::Arc;

use crate::io::Exif;
use crate::io::exif::{Directory, EXIF_POINTER_TAG, Entry, kept_value_len};
use crate::io::read::claims::Walk;
use crate::io::read::claims::tiff_ifd::{Ifd, Layout};

/// The kept tags of the TIFF at `path` (whose first bytes are `head`); `None` where it keeps
/// none or is no TIFF.
pub(in crate::io) fn exif_of_tiff(path: &Path, head: &[u8]) -> Option<Arc<Exif>> {
    let (layout, at) = Layout::of(head)?;
    let mut walk = Walk::open(path)?;
    let first = layout.ifd(&mut walk, at)?;
    let pointer = first.entries.iter().find(|e| e.tag == EXIF_POINTER_TAG);
    let shot_at = pointer.and_then(|e| layout.values(&mut walk, e, 1)).and_then(|v| v.first().copied());
    let shot = shot_at.and_then(|at| layout.ifd(&mut walk, at));
    let ifd0 = kept(layout, &mut walk, &first, Directory::First);
    let shot = shot.map(|ifd| kept(layout, &mut walk, &ifd, Directory::Shot)).unwrap_or_default();
    Exif::of_entries(layout.little(), ifd0, shot).map(Arc::new)
}

/// The entries of `ifd` an export keeps as `directory`'s, with their values' bytes.
fn kept(layout: Layout, walk: &mut Walk, ifd: &Ifd, directory: Directory) -> Vec<Entry> {
    let entry = |e: &crate::io::read::claims::tiff_ifd::Entry, walk: &mut Walk| {
        let len = kept_value_len(directory, e.tag, e.kind, e.count)?;
        let value = layout.value_bytes(walk, e, len)?;
        Some(Entry { tag: e.tag, kind: e.kind, count: u32::try_from(e.count).ok()?, value })
    };
    ifd.entries.iter().filter_map(|e| entry(e, walk)).collect()
}
