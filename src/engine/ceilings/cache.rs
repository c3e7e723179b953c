//! The probed GPU ceilings, kept per adapter (name, driver and backend) and host thread count
//! in `$XDG_CACHE_HOME/graylab/` (else `~/.cache/graylab/`) as JSON, written atomically: `bench`,
//! `sweep` and the app reuse them, `graylab info --probe` measures them again.

use std::path::PathBuf;
use std::sync::PoisonError;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::engine::{Engine, EngineError};
use crate::gpu::GpuCeilings;

/// Version of the cache file's layout; a file of another version is measured again.
const FORMAT: u32 = 1;

#[derive(serde::Serialize, serde::Deserialize)]
struct CacheFile {
    format: u32,
    graylab_version: String,
    measured_unix_s: u64,
    ceilings: GpuCeilings,
}

/// GPU ceilings and where they came from.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct KnownCeilings {
    /// The figures.
    pub ceilings: GpuCeilings,
    /// Whether they were measured by this process (else read from the cache).
    pub measured_now: bool,
    /// When they were measured, seconds since 1970.
    pub measured_unix_s: u64,
    /// The cache file they were read from or written to.
    pub cache_path: Option<PathBuf>,
    /// Why they could not be cached, when they could not.
    pub cache_error: Option<String>,
}

impl KnownCeilings {
    /// How long ago they were measured, in words ("40 s ago", "3 min ago", "2 days ago").
    #[must_use]
    pub fn measured_ago(&self) -> String {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        match now.saturating_sub(self.measured_unix_s) {
            s @ 0..120 => format!("{s} s ago"),
            s @ 120..7200 => format!("{} min ago", s / 60),
            s @ 7200..172_800 => format!("{} h ago", s / 3600),
            s => format!("{} days ago", s / 86400),
        }
    }
}

/// The folder of graylab's caches: `$XDG_CACHE_HOME/graylab` (an absolute path), else
/// `$HOME/.cache/graylab`; `None` when neither is set.
#[must_use]
pub fn cache_dir() -> Option<PathBuf> {
    let var = |name| std::env::var_os(name).map(PathBuf::from).filter(|p| p.is_absolute());
    var("XDG_CACHE_HOME").or_else(|| var("HOME").map(|h| h.join(".cache"))).map(|d| d.join("graylab"))
}

/// The cache file of an adapter key: readable, and unique through a checksum of the whole key.
fn cache_file(adapter_key: &str) -> Option<PathBuf> {
    let mut name: String = adapter_key
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '.' { c.to_ascii_lowercase() } else { '-' })
        .collect();
    while name.contains("--") {
        name = name.replace("--", "-");
    }
    let name: String = name.trim_matches('-').chars().take(80).collect();
    let sum = crc32fast::hash(adapter_key.as_bytes());
    Some(cache_dir()?.join(format!("ceilings-{name}-{sum:08x}.json")))
}

/// The cached ceilings of the adapter `adapter_key` for this process's host thread count.
#[must_use]
pub fn cached_ceilings(adapter_key: &str) -> Option<KnownCeilings> {
    let path = cache_file(adapter_key)?;
    let file: CacheFile = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
    let threads = rayon::current_num_threads();
    (file.format == FORMAT
        && file.ceilings.adapter_key == adapter_key
        && file.ceilings.host_threads == threads)
        .then_some(KnownCeilings {
            ceilings: file.ceilings,
            measured_now: false,
            measured_unix_s: file.measured_unix_s,
            cache_path: Some(path),
            cache_error: None,
        })
}

/// Writes `ceilings` to the cache; the file's path.
fn store(ceilings: &GpuCeilings, measured_unix_s: u64) -> Result<PathBuf, String> {
    let path = cache_file(&ceilings.adapter_key).ok_or("neither XDG_CACHE_HOME nor HOME is set")?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let file = CacheFile {
        format: FORMAT,
        graylab_version: env!("CARGO_PKG_VERSION").to_owned(),
        measured_unix_s,
        ceilings: ceilings.clone(),
    };
    let json = serde_json::to_string_pretty(&file).map_err(|e| e.to_string())?;
    crate::io::write_atomically(&path, true, |out| {
        std::io::Write::write_all(out, json.as_bytes()).map_err(crate::io::WriteCause::Os)
    })
    .map_err(|e| e.to_string())?;
    Ok(path)
}

impl Engine {
    /// This GPU's ceilings: the ones this engine has, else the cached ones for this adapter and
    /// host thread count, else measured now (well under 2 s; about
    /// [`crate::gpu::PROBE_HOLD_BYTES`] held meanwhile) and cached. `remeasure` always measures
    /// (`graylab info --probe`).
    pub fn gpu_ceilings(&self, remeasure: bool) -> Result<KnownCeilings, EngineError> {
        let converter = self.gpu_converter()?;
        let key = GpuCeilings::key_of(converter.context().adapter_info());
        let mut known = self.ceilings.lock().unwrap_or_else(PoisonError::into_inner);
        if !remeasure {
            if let Some(k) = known.as_ref().filter(|k| k.ceilings.adapter_key == key) {
                return Ok(k.clone());
            }
            if let Some(k) = self.ceiling_cache.then(|| cached_ceilings(&key)).flatten() {
                *known = Some(k.clone());
                return Ok(k);
            }
        }
        let ceilings = converter.measure_ceilings()?;
        let measured_unix_s = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let stored = self.ceiling_cache.then(|| store(&ceilings, measured_unix_s));
        if let Some(Err(e)) = &stored {
            log::warn!("the GPU ceilings could not be cached: {e}");
        }
        let (cache_path, cache_error) = match stored {
            Some(Ok(path)) => (Some(path), None),
            Some(Err(e)) => (None, Some(e)),
            None => (None, None),
        };
        let k = KnownCeilings { ceilings, measured_now: true, measured_unix_s, cache_path, cache_error };
        *known = Some(k.clone());
        Ok(k)
    }

    /// This GPU's ceilings if known or cached (kept from then on); measures nothing. Opens the
    /// GPU if needed; `None` without one.
    pub fn cached_gpu_ceilings(&self) -> Option<KnownCeilings> {
        let key = GpuCeilings::key_of(self.gpu().ok()?.adapter_info());
        let mut known = self.ceilings.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(k) = known.as_ref().filter(|k| k.ceilings.adapter_key == key) {
            return Some(k.clone());
        }
        let k = self.ceiling_cache.then(|| cached_ceilings(&key)).flatten()?;
        *known = Some(k.clone());
        Some(k)
    }

    /// The GPU ceilings this engine has measured or read, without measuring or reading anything.
    #[must_use]
    pub fn known_gpu_ceilings(&self) -> Option<KnownCeilings> {
        self.ceilings.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_files_are_named_by_the_whole_key() {
        let Some(dir) = cache_dir() else { return };
        let a = cache_file("llvmpipe (LLVM 15.0.6, 256 bits) | Mesa 22.3.6 | vulkan").expect("path");
        assert_eq!(a.parent(), Some(dir.as_path()));
        let name = a.file_name().and_then(|n| n.to_str()).expect("name");
        assert!(name.starts_with("ceilings-llvmpipe-llvm-15.0.6-256-bits-mesa-22.3.6-vulkan-"), "{name}");
        let b = cache_file("llvmpipe (LLVM 15.0.6, 256 bits) | Mesa 22.3.6 | gl").expect("path");
        assert_ne!(a, b);
    }
}
