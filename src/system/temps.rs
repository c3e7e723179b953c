//! graylab's own temporary files (`.graylab-PID-RANDOM.part` beside an output while it is written):
//! naming, a registry of those in flight that SIGINT/SIGTERM/SIGHUP remove before the process
//! dies ([`super::signals`]), and the removal of stale ones that a killed run left behind.
//!
//! Most exports never show a named temporary file (see `io::write::atomic`: `O_TMPFILE` where the
//! filesystem has it); this covers the others and the instant of an overwriting rename.

use std::collections::HashSet;
use std::fs::File;
use std::hash::BuildHasher as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, SystemTime};

const PREFIX: &str = ".graylab-";
const SUFFIX: &str = ".part";
/// A temporary file without a process id (older graylab versions) is stale after this long.
const OLD_STYLE_STALE: Duration = Duration::from_hours(1);

fn registry() -> MutexGuard<'static, HashSet<PathBuf>> {
    static FILES: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    FILES.get_or_init(Mutex::default).lock().unwrap_or_else(PoisonError::into_inner)
}

/// A named temporary file in flight: registered for removal on a signal, locked (`flock`) so
/// no other run takes it for stale, removed when dropped unless it was renamed.
pub(crate) struct NamedTemp {
    path: PathBuf,
    /// Kept open: the lock lives as long as this descriptor.
    lock: Option<File>,
}

impl NamedTemp {
    /// Creates an empty file with `0666 & ~umask` in `dir` and returns it with its guard.
    pub fn create(dir: &Path) -> std::io::Result<(File, Self)> {
        let mut files = registry();
        loop {
            let path = dir.join(unique_name());
            match new_file(&path) {
                Ok(file) => {
                    files.insert(path.clone());
                    // Ours until the process ends, however it ends; a failed lock only costs
                    // the stale-file check its certainty.
                    let _ = file.try_lock();
                    let lock = file.try_clone().ok();
                    return Ok((file, Self { path, lock }));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Registers a path that a hard link is about to create (so a signal removes it too).
    pub fn register_link(dir: &Path) -> Self {
        let path = dir.join(unique_name());
        registry().insert(path.clone());
        Self { path, lock: None }
    }

    /// The file was renamed into place: nothing to remove.
    pub fn renamed(mut self) {
        registry().remove(&self.path);
        self.lock = None;
        self.path = PathBuf::new();
    }
}

impl Drop for NamedTemp {
    fn drop(&mut self) {
        if self.path.as_os_str().is_empty() {
            return;
        }
        let mut files = registry();
        let _ = std::fs::remove_file(&self.path);
        files.remove(&self.path);
    }
}

#[cfg(unix)]
fn new_file(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    std::fs::OpenOptions::new().read(true).write(true).create_new(true).mode(0o666).open(path)
}

#[cfg(not(unix))]
fn new_file(path: &Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(path)
}

fn unique_name() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let random = std::collections::hash_map::RandomState::new().hash_one((
        nanos,
        COUNTER.fetch_add(1, Ordering::Relaxed),
        std::thread::current().id(),
    ));
    format!("{PREFIX}{}-{:012x}{SUFFIX}", std::process::id(), random & 0xFFFF_FFFF_FFFF)
}

/// Removes, once per folder and process, graylab temporary files in `dir` whose process is
/// gone (killed with SIGKILL, or a power loss) and that no live process holds locked.
pub(crate) fn remove_stale_once(dir: &Path) {
    static DONE: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    let key = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    if !DONE.get_or_init(Mutex::default).lock().unwrap_or_else(PoisonError::into_inner).insert(key) {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(middle) = name.strip_prefix(PREFIX).and_then(|n| n.strip_suffix(SUFFIX)) else {
            continue;
        };
        let path = entry.path();
        if is_stale(&path, middle) {
            match std::fs::remove_file(&path) {
                Ok(()) => {
                    log::info!("removed a stale temporary file of an interrupted run: {}", path.display());
                }
                Err(e) => log::debug!("cannot remove the stale {}: {e}", path.display()),
            }
        }
    }
}

fn is_stale(path: &Path, middle: &str) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return false };
    if !meta.is_file() {
        return false;
    }
    let owner_gone = match middle.split_once('-').and_then(|(pid, _)| pid.parse::<u32>().ok()) {
        Some(pid) => pid != std::process::id() && !process_exists(pid),
        None => meta.modified().ok().and_then(|m| m.elapsed().ok()).is_some_and(|age| age > OLD_STYLE_STALE),
    };
    // A live writer holds an exclusive lock, wherever its process id comes from.
    owner_gone && File::open(path).is_ok_and(|f| f.try_lock().is_ok())
}

#[cfg(unix)]
fn process_exists(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) else {
        return false;
    };
    // EPERM: it exists but belongs to someone else.
    !matches!(rustix::process::test_kill_process(pid), Err(rustix::io::Errno::SRCH))
}

#[cfg(not(unix))]
fn process_exists(_pid: u32) -> bool {
    true
}

/// Files put in place by [`publish`] in this process.
static PUBLISHED: AtomicU64 = AtomicU64::new(0);

/// Puts a written file in place through `link` (a link or a rename) with the registry held, so
/// that a signal, which holds it until the process ends, finds each file in place and counted
/// or not in place at all; counts it.
pub(crate) fn publish<T>(link: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
    let _files = registry();
    let done = link()?;
    PUBLISHED.fetch_add(1, Ordering::Relaxed);
    Ok(done)
}

/// How many files this process has put in place (atomic writes), for what a signal says.
#[must_use]
pub(crate) fn published_files() -> u64 {
    PUBLISHED.load(Ordering::Relaxed)
}

/// Removes every graylab temporary file in flight and returns the registry locked, so that no
/// new one can appear while the caller lets a signal end the process.
pub(super) fn remove_in_flight() -> MutexGuard<'static, HashSet<PathBuf>> {
    let files = registry();
    for path in files.iter() {
        let _ = std::fs::remove_file(path);
    }
    files
}
