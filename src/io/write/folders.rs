//! Output folders shared between runs: each run holds a shared advisory lock (`flock`) on the
//! folders it writes in, and a run removes the empty folders it made only when it can lock them
//! and every folder above them alone. So two runs sharing an `--out-dir` (the guide's shards)
//! never remove a folder the other is writing in: its file is still unnamed (`O_TMPFILE`), and
//! the folder looks empty.

use std::fs::File;
use std::path::{Path, PathBuf};

/// Shared locks on the folders a run writes in, held until dropped.
#[derive(Debug)]
pub struct WritingIn {
    /// The open folders: each lock lives as long as its descriptor.
    _locks: Vec<File>,
}

impl WritingIn {
    /// Takes a shared lock on each of `folders` that exists (a folder that cannot be opened or
    /// locked, e.g. on a filesystem without locks, is passed over: the lock only guards).
    pub fn lock<'a>(folders: impl IntoIterator<Item = &'a Path>) -> Self {
        let open = |dir: &Path| File::open(dir).ok().filter(|f| f.lock_shared().is_ok());
        Self { _locks: folders.into_iter().filter_map(open).collect() }
    }
}

/// Removes the folders in `created` that are empty, the deepest first, if no other run writes
/// in them or in a folder above them (this run's own [`WritingIn`] dropped first). A folder
/// that holds anything is refused by the OS, and kept.
pub fn remove_empty_folders(created: &[PathBuf]) {
    let absolute: Vec<PathBuf> = created.iter().filter_map(|d| std::path::absolute(d).ok()).collect();
    let mut watched: Vec<&Path> = absolute.iter().flat_map(|d| d.ancestors()).collect();
    watched.sort();
    watched.dedup();
    let mut alone = Vec::with_capacity(watched.len());
    for dir in watched {
        match File::open(dir) {
            Ok(f) if f.try_lock().is_err() => {
                log::info!("kept the folders made: another run writes in {}", dir.display());
                return;
            }
            Ok(f) => alone.push(f),
            Err(_) => {}
        }
    }
    let mut deepest_first = created.to_vec();
    deepest_first.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    for dir in deepest_first {
        if std::fs::remove_dir(&dir).is_ok() {
            log::info!("removed the empty folder {}", dir.display());
        }
    }
    drop(alone);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_another_run_writes_in_is_kept_until_it_is_done() {
        let root = tempfile::tempdir().expect("temp dir");
        let made = [root.path().join("new"), root.path().join("new/deeper")];
        std::fs::create_dir_all(&made[1]).expect("mkdir");
        // Another run writes in the folder above what this one made.
        let other = WritingIn::lock([root.path()]);
        remove_empty_folders(&made);
        assert!(made[1].is_dir(), "kept while the other writes");
        drop(other);
        let other = WritingIn::lock([made[1].as_path()]);
        remove_empty_folders(&made);
        assert!(made[1].is_dir(), "kept: the other writes in it");
        drop(other);
        remove_empty_folders(&made);
        assert!(!made[0].exists(), "removed once alone");
    }
}
