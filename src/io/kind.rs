//! What a path is before it is read or replaced: a regular file, or a FIFO, a device, a socket
//! (never opened, so a FIFO cannot block); inputs opened without blocking and checked again on
//! the open file; what a file that is not an image looks like (text, a PDF, an archive); and
//! whether two paths name one file (an output that would replace an input).

use std::fs::{File, Metadata};
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// What a file that is neither a regular file nor a folder is, in words ("a FIFO"), or `None`
/// for a regular file or a folder.
#[must_use]
pub fn special_kind(meta: &Metadata) -> Option<&'static str> {
    let kind = meta.file_type();
    if kind.is_file() || kind.is_dir() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        let kinds = [
            (kind.is_fifo(), "a FIFO (named pipe)"),
            (kind.is_char_device(), "a character device"),
            (kind.is_block_device(), "a block device"),
            (kind.is_socket(), "a socket"),
        ];
        if let Some(&(_, name)) = kinds.iter().find(|(is, _)| *is) {
            return Some(name);
        }
    }
    Some("not a regular file")
}

/// Opens `path` for reading without blocking (`O_NONBLOCK`, so a FIFO swapped in after a check
/// cannot hang the open), and refuses anything but a regular file on the open file itself.
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits().cast_signed());
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(std::io::Error::other("it is a folder"));
    }
    if let Some(kind) = special_kind(&meta) {
        return Err(std::io::Error::other(format!("it is {kind}, not a regular file")));
    }
    Ok(file)
}

/// Reads at most `limit` bytes of a regular file opened with [`open_regular`].
pub fn read_capped(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let mut bytes = Vec::new();
    file.take(limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// What `head`, the first bytes of a file that is no image format graylab knows, looks like:
/// `Some("text")`, `Some("a PDF document")`…, or `None` when nothing can be said (it may be a
/// format recognised by its name only).
#[must_use]
pub fn looks_like(head: &[u8]) -> Option<&'static str> {
    const MAGIC: [(&[u8], &str); 8] = [
        (b"%PDF", "a PDF document"),
        (b"PK\x03\x04", "a ZIP archive"),
        (b"\x1f\x8b", "gzip data"),
        (b"\x7fELF", "a program (ELF)"),
        (b"<?xml", "XML text"),
        (b"<svg", "an SVG drawing"),
        (b"<!DOCTYPE html", "an HTML page"),
        (b"<html", "an HTML page"),
    ];
    if let Some((_, what)) = MAGIC.iter().find(|(magic, _)| head.starts_with(magic)) {
        return Some(what);
    }
    // Text: valid UTF-8 (a character cut at the end aside) without control bytes but white
    // space (tabs, line ends, form feeds).
    let valid = match std::str::from_utf8(head) {
        Ok(s) => s,
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""),
        Err(_) => return None,
    };
    let text = !valid.is_empty() && valid.chars().all(|c| !c.is_control() || c.is_whitespace());
    text.then_some("text")
}

/// The folder `path` is in: its parent, or `.` for a bare name.
#[must_use]
pub fn folder_of(path: &Path) -> &Path {
    path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// Whether `output` names the file `input` (the same path, through a symlink or a hard link:
/// the same device and inode). Where one is not there yet, the same folder entry, however each
/// is spelled (`x.png`, `./x.png`, `$PWD/x.png`).
#[must_use]
pub fn same_file(input: &Path, output: &Path) -> bool {
    input == output
        || match (file_id(input), file_id(output)) {
            (Some(a), Some(b)) => a == b,
            _ => entry_key(input) == entry_key(output),
        }
}

/// A folder entry: its folder's device and inode with its name, or the whole path.
pub type EntryKey = (Option<(u64, u64)>, PathBuf);

/// A path's folder entry: its folder's device and inode with its name, so that two spellings of
/// one path are one entry (the path itself while the folder does not exist yet).
#[must_use]
pub fn entry_key(path: &Path) -> EntryKey {
    match (file_id(folder_of(path)), path.file_name()) {
        (Some(id), Some(name)) => (Some(id), PathBuf::from(name)),
        _ => (None, path.to_path_buf()),
    }
}

/// A file's or folder's identity: device and inode (from its canonical path where those are not
/// known), through symlinks.
#[must_use]
pub fn file_id(path: &Path) -> Option<(u64, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        let mut h = std::hash::DefaultHasher::new();
        std::hash::Hash::hash(&path.canonicalize().ok()?, &mut h);
        Some((0, std::hash::Hasher::finish(&h)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_known_magic_are_named() {
        assert_eq!(looks_like(b"this is not a photo\n"), Some("text"));
        assert_eq!(looks_like("d\u{e9}j\u{e0} vu".as_bytes()), Some("text"));
        assert_eq!(looks_like(b"%PDF-1.7"), Some("a PDF document"));
        assert_eq!(looks_like(b"\x00\x00\x02\x00\x00"), None, "a TGA header is not text");
        assert_eq!(looks_like(b""), None);
        assert_eq!(looks_like(b"page one\x0cpage two\x0b"), Some("text"), "form and line feeds are text");
        assert_eq!(looks_like(b"text\x1b[0m"), None, "an escape byte is not");
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_fifos_are_named_and_never_opened_blocking() {
        let meta = std::fs::metadata("/dev/null").expect("/dev/null");
        assert_eq!(special_kind(&meta), Some("a character device"));
        let dir = tempfile::tempdir().expect("temp dir");
        let fifo = dir.path().join("fifo");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR)
            .expect("mkfifo");
        // Without O_NONBLOCK this open would wait for a writer forever.
        let err = open_regular(&fifo).expect_err("a FIFO is refused");
        assert!(err.to_string().contains("a FIFO"), "{err}");
        assert!(read_capped(Path::new("/dev/zero"), 16).is_err(), "a device is refused");
    }
}
