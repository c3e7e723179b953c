//! Paths in JSON without loss: a string where the name is valid UTF-8, else its exact bytes.

use std::path::Path;

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
