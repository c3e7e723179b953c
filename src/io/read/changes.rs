//! A file rewritten or replaced while it is read gives a mix of two images: its identity
//! (device and inode), size, modification and change times are compared before and after.

use std::fs::Metadata;
use std::path::Path;

use crate::io::IoError;

/// What tells one version of a file from another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    identity: (u64, u64),
    len: u64,
    modified: Option<std::time::SystemTime>,
    changed_ns: (i64, i64),
}

impl Stamp {
    fn of(meta: &Metadata) -> Self {
        #[cfg(unix)]
        let (identity, changed_ns) = {
            use std::os::unix::fs::MetadataExt as _;
            ((meta.dev(), meta.ino()), (meta.ctime(), meta.ctime_nsec()))
        };
        #[cfg(not(unix))]
        let (identity, changed_ns) = ((0, 0), (0, 0));
        Self { identity, len: meta.len(), modified: meta.modified().ok(), changed_ns }
    }
}

/// Refuses the file at `path` when it is no longer the one `before` (its metadata when the read
/// began) describes. A change within one tick of the file system's clock that keeps the size
/// and the inode cannot be seen.
pub(super) fn check_unchanged(path: &Path, before: &Metadata) -> Result<(), IoError> {
    #[cfg(test)]
    if let Some(hook) = tests::HOOK.with(|h| h.borrow_mut().take()) {
        hook(path);
    }
    match std::fs::metadata(path) {
        Ok(after) if Stamp::of(&after) == Stamp::of(before) => Ok(()),
        _ => Err(IoError::ChangedWhileRead { path: path.into() }),
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::path::Path;
    use std::time::{Duration, SystemTime};

    use crate::io::{DecodeOptions, IoError, decode_file};

    /// A change made to the file between the read and the check.
    type Rewrite = Box<dyn FnOnce(&Path)>;

    thread_local! {
        /// Runs after the file is read and before it is checked again: the tests rewrite it here.
        pub(super) static HOOK: RefCell<Option<Rewrite>> = RefCell::new(None);
    }

    fn bmp(value: u8, width: u32) -> Vec<u8> {
        let mut bytes = std::io::Cursor::new(Vec::new());
        image::GrayImage::from_pixel(width, 4, image::Luma([value]))
            .write_to(&mut bytes, image::ImageFormat::Bmp)
            .expect("encode");
        bytes.into_inner()
    }

    /// Decodes `a.bmp` while `rewrite` changes it between the read and the check after it.
    fn decode_while(rewrite: impl FnOnce(&Path) + 'static) -> Result<image::DynamicImage, IoError> {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("a.bmp");
        std::fs::write(&path, bmp(10, 8)).expect("write");
        HOOK.with(|h| *h.borrow_mut() = Some(Box::new(rewrite)));
        decode_file(&path, &DecodeOptions::default()).map(|d| d.image)
    }

    #[test]
    fn a_file_rewritten_or_replaced_while_it_is_read_is_refused() {
        let unchanged = decode_while(|_| {}).expect("an untouched file decodes");
        assert_eq!(unchanged.to_luma8().get_pixel(0, 0).0, [10]);
        let cases: [(&str, Rewrite); 3] = [
            ("rewritten, another size", Box::new(|p| std::fs::write(p, bmp(200, 12)).expect("rewrite"))),
            (
                "replaced by a rename, the same size",
                Box::new(|p| {
                    let new = p.with_extension("new");
                    std::fs::write(&new, bmp(200, 8)).expect("write");
                    std::fs::rename(&new, p).expect("rename");
                }),
            ),
            (
                "rewritten in place, the same size, an older time",
                Box::new(|p| {
                    let file = std::fs::OpenOptions::new().write(true).open(p).expect("open");
                    std::io::Write::write_all(&mut &file, &bmp(200, 8)).expect("rewrite");
                    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1)).expect("set time");
                }),
            ),
        ];
        for (what, rewrite) in cases {
            let err = decode_while(rewrite).expect_err(what);
            assert!(matches!(err, IoError::ChangedWhileRead { .. }), "{what}: {err:?}");
            let message = err.to_string();
            assert!(
                message.starts_with("the file changed while it was read: ") && message.ends_with("a.bmp"),
                "{message}"
            );
        }
    }
}
