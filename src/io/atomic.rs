//! Atomic file writing: the bytes go to a temporary file in the target folder, are synced, then
//! renamed into place, so a failed write never leaves a half file and an existing file is only
//! replaced when asked.

use std::io::{BufWriter, Write as _};
use std::path::Path;

use super::{IoError, owned};

/// Writes `path` through `write` atomically; returns the bytes written. With `overwrite` false an
/// existing file is never replaced (`IoError::Exists`).
pub fn write_atomically(
    path: &Path,
    overwrite: bool,
    write: impl FnOnce(&mut BufWriter<&std::fs::File>) -> Result<(), String>,
) -> Result<u64, IoError> {
    let write_err = |reason: String| IoError::Write { path: owned(path), reason };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let tmp = tempfile::Builder::new()
        .prefix(".graylab-")
        .suffix(".part")
        .tempfile_in(dir)
        .map_err(|e| write_err(format!("cannot create a file in {}: {e}", dir.display())))?;
    {
        let mut out = BufWriter::with_capacity(1 << 20, tmp.as_file());
        write(&mut out).map_err(write_err)?;
        out.flush().map_err(|e| write_err(e.to_string()))?;
    }
    tmp.as_file().sync_all().map_err(|e| write_err(e.to_string()))?;
    let bytes = tmp.as_file().metadata().map_or(0, |m| m.len());
    // The temporary file is deleted when `persist*` fails (it is dropped with the error).
    if overwrite {
        tmp.persist(path).map_err(|e| write_err(e.error.to_string()))?;
    } else {
        tmp.persist_noclobber(path).map_err(|e| {
            if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                IoError::Exists { path: owned(path) }
            } else {
                write_err(e.error.to_string())
            }
        })?;
    }
    Ok(bytes)
}
