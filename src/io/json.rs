//! JSON files: graylab's own small ones (a cache, a kept pace) read whole and checked, any one
//! written atomically, and paths in JSON without loss (a string where the name is valid UTF-8,
//! else its exact bytes).

use std::path::Path;

use crate::io::{IoError, WriteCause, open_regular, write_atomically};

/// Reads graylab's own small JSON file: a regular file (never a FIFO or a device, opened without
/// blocking) of at most `limit` bytes holding a `T`, the one reader of every JSON file graylab
/// reads back; `Ok(None)` where there is none.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path, limit: u64) -> Result<Option<T>, IoError> {
    let too_large = || IoError::NotJson { path: path.into(), reason: format!("over {limit} bytes") };
    let file = match open_regular(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(cause) => return Err(IoError::Open { path: path.into(), cause }),
    };
    // A file that says it is too large is refused unread (a sparse file of gigabytes).
    if file.metadata().is_ok_and(|m| m.len() > limit) {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(file, limit.saturating_add(1)), &mut bytes)
        .map_err(|cause| IoError::Open { path: path.into(), cause })?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| IoError::NotJson { path: path.into(), reason: e.to_string() })
}

/// Writes `value` to `path` as pretty JSON with a final newline, atomically (see
/// [`write_atomically`]: an existing file is replaced only with `overwrite`); the bytes written.
pub fn write_json(path: &Path, overwrite: bool, value: &impl serde::Serialize) -> Result<u64, IoError> {
    write_atomically(path, overwrite, |out| {
        serde_json::to_writer_pretty(&mut *out, value).map_err(|e| WriteCause::Os(e.into()))?;
        std::io::Write::write_all(out, b"\n").map_err(WriteCause::Os)
    })
}

/// A path in JSON without loss: a string where it is valid UTF-8, else an object
/// `{"bytes": [...], "lossy": "..."}` with the name's exact bytes and a readable form (invalid
/// bytes shown as U+FFFD).
#[derive(Clone, Copy, Debug)]
pub struct JsonPath<'a>(pub &'a Path);

impl serde::Serialize for JsonPath<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize_path(self.0, serializer)
    }
}

/// Writes `path` as [`JsonPath`] does (for `#[serde(serialize_with)]`).
pub fn serialize_path<S: serde::Serializer>(path: &Path, serializer: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeStruct as _;
    if let Some(text) = path.to_str() {
        return serializer.serialize_str(text);
    }
    #[cfg(unix)]
    let bytes = std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()).to_vec();
    #[cfg(not(unix))]
    let bytes = path.to_string_lossy().into_owned().into_bytes();
    let mut object = serializer.serialize_struct("Path", 2)?;
    object.serialize_field("bytes", &bytes)?;
    object.serialize_field("lossy", &path.to_string_lossy())?;
    object.end()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_json_file_is_read_whole_or_said_why_not() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("kept.json");
        // None there: nothing, not an error.
        assert!(matches!(read_json::<Vec<u32>>(&path, 64), Ok(None)));
        // Written atomically, with a final newline, and read back whole.
        write_json(&path, false, &vec![1u32, 2, 3]).expect("written");
        assert!(std::fs::read(&path).expect("read").ends_with(b"]\n"));
        assert_eq!(read_json::<Vec<u32>>(&path, 64).expect("read"), Some(vec![1, 2, 3]));
        // Never replaced unless asked.
        assert!(matches!(write_json(&path, false, &vec![4u32]), Err(IoError::Exists { .. })));
        write_json(&path, true, &vec![4u32]).expect("replaced");
        assert_eq!(read_json::<Vec<u32>>(&path, 64).expect("read"), Some(vec![4]));
        // Over the limit, or not that JSON: refused, naming the file and why.
        std::fs::write(&path, vec![b' '; 65]).expect("write");
        let err = read_json::<Vec<u32>>(&path, 64).expect_err("too large").to_string();
        assert!(err.contains("over 64 bytes") && err.contains("kept.json"), "{err}");
        std::fs::write(&path, b"{ \"not\": ").expect("write");
        let err = read_json::<Vec<u32>>(&path, 64).expect_err("damaged").to_string();
        assert!(err.starts_with("not a graylab JSON file (") && err.contains("kept.json"), "{err}");
        // A folder is no file to read.
        assert!(matches!(read_json::<Vec<u32>>(dir.path(), 64), Err(IoError::Open { .. })));
    }
}
