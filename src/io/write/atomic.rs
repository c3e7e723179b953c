//! Atomic file writing: the bytes go to a temporary file in the target folder, are synced, then
//! linked or renamed into place, so a failed or interrupted write never leaves a half file and an
//! existing file is only replaced when asked.
//!
//! On Linux the temporary file is unnamed (`O_TMPFILE`) and appears under its final name with
//! `linkat`, so even SIGKILL leaves nothing. Elsewhere, or where the filesystem cannot, a named
//! `.graylab-PID-RANDOM.part` file is used ([`crate::system::temps`]): removed on SIGINT/SIGTERM, and by
//! the next run in that folder after SIGKILL. New files get `0666 & ~umask`; a replaced file keeps
//! its permission bits (never setuid, setgid or sticky). A FIFO, a device or a read-only file is
//! never replaced. A symbolic link is written through, as `cp` writes: the file it leads to is
//! replaced and the link kept (never one to nothing, or into `/proc`, as `/dev/stdout` is).

pub use crate::system::signals::remove_temp_files_on_signals;

use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};

use crate::io::kind::special_kind;
use crate::io::{IoError, WriteCause};
use crate::system::temps::{NamedTemp, publish, remove_stale_once};

/// Set to `1` to never use `O_TMPFILE` (tests of the named-file path).
pub const NO_TMPFILE_ENV: &str = "GRAYLAB_NO_TMPFILE";

/// Set to a path: each export, its temporary file made, waits until that path exists and
/// removes it, so that each file made there releases one export (tests that interrupt an export
/// while it writes, or after some of a batch's files, without racing it).
pub const HOLD_ENV: &str = "GRAYLAB_HOLD_EXPORT";

/// Waits until the path [`HOLD_ENV`] names exists, and takes it: the export that removes it goes
/// on, any other waits for the next one.
fn hold_for_tests() {
    let Some(release) = std::env::var_os(HOLD_ENV) else { return };
    while std::fs::remove_file(&release).is_err() {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The file that writing `path` writes: `path` itself, or the file its symbolic link leads to
/// (through every link). A link to nothing, round a loop, or through `/proc` or `/dev/fd` (a
/// process's open file, as `/dev/stdout` is, which a rename would swap for a file) is refused.
pub fn written_through(path: &Path) -> Result<PathBuf, IoError> {
    let mut at = path.to_path_buf();
    // As many links as Linux follows.
    for _ in 0..40 {
        let Ok(next) = std::fs::read_link(&at) else { break };
        let next = match at.parent() {
            Some(folder) if next.is_relative() => folder.join(next),
            _ => next,
        };
        if next.starts_with("/proc") || next.starts_with("/dev/fd") {
            let why = "a process's open file (as /dev/stdout is), which graylab never writes through";
            return Err(IoError::OutputLink { path: path.into(), to: next, why });
        }
        at = next;
    }
    let why = match std::fs::symlink_metadata(&at) {
        Err(_) if at != path => "which leads to no file, so nothing is written through it",
        Ok(meta) if meta.file_type().is_symlink() => "which leads round a loop of links",
        _ => return Ok(at),
    };
    Err(IoError::OutputLink { path: path.into(), to: at, why })
}

/// What [`write_atomically`] refuses before writing, in the order that tells each cause first:
/// a folder, a device or FIFO, a file that exists without `overwrite`, a read-only file. Returns
/// the file written ([`written_through`]) and what is there now.
pub fn check_output(path: &Path, overwrite: bool) -> Result<(PathBuf, Option<std::fs::Metadata>), IoError> {
    let through = written_through(path)?;
    let path = through.as_path();
    let existing = std::fs::metadata(path).ok();
    if existing.as_ref().is_some_and(std::fs::Metadata::is_dir) {
        return Err(IoError::OutputIsFolder { path: path.into() });
    }
    // A device or a FIFO is never swapped for a file, even with `overwrite` (`/dev/null`).
    if let Some(kind) = existing.as_ref().and_then(special_kind) {
        return Err(IoError::OutputNotAFile { path: path.into(), kind });
    }
    if existing.is_some() && !overwrite {
        return Err(IoError::Exists { path: path.into() });
    }
    // A read-only file is refused as `cp` refuses it to its owner, even with `overwrite` (and
    // even for root, who could write it: the bits are what the owner said).
    if let Some(mode) = existing.as_ref().and_then(read_only_mode) {
        return Err(IoError::ReadOnly { path: path.into(), mode });
    }
    Ok((through, existing))
}

/// Writes `path` through `write` atomically; returns the bytes written. With `overwrite` false an
/// existing file is never replaced (`IoError::Exists`). A symbolic link is written through
/// ([`written_through`]).
pub fn write_atomically(
    path: &Path,
    overwrite: bool,
    write: impl FnOnce(&mut BufWriter<&File>) -> Result<(), WriteCause>,
) -> Result<u64, IoError> {
    let (through, existing) = check_output(path, overwrite)?;
    let path = through.as_path();
    let write_err = |cause: WriteCause| IoError::Write { path: path.into(), cause };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    remove_stale_once(dir);
    let (file, named) = if let Some(file) = unnamed_file(dir) {
        (file, None)
    } else {
        let (file, guard) = NamedTemp::create(dir).map_err(|e| write_err(e.into()))?;
        (file, Some(guard))
    };
    // A replaced file keeps its permission bits (its owner and group cannot be kept unless root),
    // but never setuid, setgid or sticky: an image is not a program.
    if let Some(meta) = existing.as_ref().filter(|m| m.is_file())
        && let Err(e) = file.set_permissions(plain_permissions(meta))
    {
        log::warn!("cannot keep the permissions of {}: {e}", path.display());
    }
    hold_for_tests();
    {
        let mut out = BufWriter::with_capacity(1 << 20, &file);
        write(&mut out).map_err(write_err)?;
        out.flush().map_err(|e| write_err(e.into()))?;
    }
    file.sync_all().map_err(|e| write_err(e.into()))?;
    let bytes = file.metadata().map_or(0, |m| m.len());
    let exists = |e: &std::io::Error| e.kind() == std::io::ErrorKind::AlreadyExists;
    match named {
        Some(temp) if overwrite => {
            publish(|| std::fs::rename(temp.path(), path)).map_err(|e| write_err(e.into()))?;
            temp.renamed();
        }
        // A hard link never replaces anything: the no-clobber check and the write are one step.
        Some(temp) => {
            let renamed = publish(|| match std::fs::hard_link(temp.path(), path) {
                Ok(()) => Ok(false),
                // A filesystem without hard links: check, then rename.
                Err(e) if exists(&e) || path.exists() => Err(e),
                Err(_) => std::fs::rename(temp.path(), path).map(|()| true),
            })
            .map_err(|e| {
                if exists(&e) || path.exists() {
                    IoError::Exists { path: path.into() }
                } else {
                    write_err(e.into())
                }
            })?;
            if renamed {
                temp.renamed();
            }
        }
        None if overwrite => {
            let temp = NamedTemp::register_link(dir);
            link_unnamed(&file, temp.path()).map_err(|e| write_err(e.into()))?;
            publish(|| std::fs::rename(temp.path(), path)).map_err(|e| write_err(e.into()))?;
            temp.renamed();
        }
        None => publish(|| link_unnamed(&file, path)).map_err(|e| {
            if exists(&e) { IoError::Exists { path: path.into() } } else { write_err(e.into()) }
        })?,
    }
    sync_dir(dir);
    Ok(bytes)
}

/// The permission bits (`0o444`) of a regular file that its mode keeps this process from
/// writing: the owner's write bit for its owner (and for root, as if it were the owner), the
/// group's for a member of its group, the others' for anyone else; `None` for a file it may
/// write, or anything but a regular file. The bits, not `access()`, which lets root write all.
#[must_use]
pub fn read_only_mode(meta: &std::fs::Metadata) -> Option<u32> {
    if !meta.is_file() {
        return None;
    }
    #[cfg(unix)]
    {
        use rustix::process::{getegid, geteuid, getgroups};
        use std::os::unix::fs::MetadataExt as _;
        let mode = meta.mode() & 0o777;
        let uid = geteuid();
        let in_group = || {
            getegid().as_raw() == meta.gid()
                || getgroups().is_ok_and(|groups| groups.iter().any(|g| g.as_raw() == meta.gid()))
        };
        let write_bit = if uid.is_root() || uid.as_raw() == meta.uid() {
            0o200
        } else if in_group() {
            0o020
        } else {
            0o002
        };
        (mode & write_bit == 0).then_some(mode)
    }
    #[cfg(not(unix))]
    meta.permissions().readonly().then_some(0o444)
}

/// `meta`'s permissions without the setuid, setgid and sticky bits.
fn plain_permissions(meta: &std::fs::Metadata) -> std::fs::Permissions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::Permissions::from_mode(meta.permissions().mode() & 0o777)
    }
    #[cfg(not(unix))]
    meta.permissions()
}

/// An unnamed file in `dir` (`O_TMPFILE`, mode `0666 & ~umask`), where the filesystem and
/// `/proc` allow linking it later.
#[cfg(target_os = "linux")]
fn unnamed_file(dir: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    if std::env::var(NO_TMPFILE_ENV).is_ok_and(|v| v == "1") || !Path::new("/proc/self/fd").is_dir() {
        return None;
    }
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o666)
        .custom_flags(rustix::fs::OFlags::TMPFILE.bits().cast_signed())
        .open(dir)
        .map_err(|e| log::debug!("no O_TMPFILE in {}: {e}", dir.display()))
        .ok()
}

#[cfg(not(target_os = "linux"))]
fn unnamed_file(_dir: &Path) -> Option<File> {
    None
}

/// Gives the unnamed `file` the name `path`; fails if `path` exists.
#[cfg(target_os = "linux")]
fn link_unnamed(file: &File, path: &Path) -> std::io::Result<()> {
    use rustix::fs::{AtFlags, CWD, linkat};
    use std::os::fd::AsRawFd as _;
    let proc_path = format!("/proc/self/fd/{}", file.as_raw_fd());
    linkat(CWD, proc_path.as_str(), CWD, path, AtFlags::SYMLINK_FOLLOW).map_err(std::io::Error::from)
}

#[cfg(not(target_os = "linux"))]
fn link_unnamed(_file: &File, _path: &Path) -> std::io::Result<()> {
    Err(std::io::Error::other("unnamed temporary files exist only on Linux"))
}

/// Makes the new name durable (best effort: not every filesystem syncs folders).
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}
