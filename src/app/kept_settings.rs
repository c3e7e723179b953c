//! The app's settings file kept whole. eframe rewrites `app.ron` in place (truncate, then
//! write), so a full disk or a kill during its write leaves it cut short, and eframe then starts
//! from defaults: the settings, the recent files and the kept sweep lost. So at launch a file
//! that reads whole is copied beside it (`app.ron.bak`, written atomically), and one that does
//! not (and still does not a moment later: another graylab may be writing it) is replaced by
//! that copy, with a warning; the same is done again once the window closes.

use std::path::{Path, PathBuf};

/// The name eframe gives its settings file in its storage folder.
const FILE: &str = "app.ron";

/// How long a damaged file is watched before it is taken for one cut short, not one being
/// written by another graylab (eframe writes its few KiB in well under this).
const SETTLE: std::time::Duration = std::time::Duration::from_millis(300);

/// What [`keep_or_restore`] did.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Kept {
    /// The file reads whole: copied to the backup (or the backup already held it).
    Copied,
    /// The file was cut short or damaged: the backup was put in its place.
    Restored,
    /// Nothing to keep or restore (no file yet, or a damaged one with no backup), or the copy
    /// could not be written (said in the log).
    Nothing,
}

/// The settings file in eframe's storage folder for graylab, where there is one.
pub(super) fn settings_file() -> Option<PathBuf> {
    eframe::storage_dir("graylab").map(|dir| dir.join(FILE))
}

/// Keeps a whole `file` in its backup, or puts the backup in place of a damaged one.
pub(super) fn keep_or_restore(file: &Path) -> Kept {
    let backup = file.with_extension("ron.bak");
    let Ok(text) = std::fs::read_to_string(file) else { return Kept::Nothing };
    let write = |to: &Path, text: &str| {
        crate::io::write_atomically(to, true, |w| {
            std::io::Write::write_all(w, text.as_bytes()).map_err(Into::into)
        })
    };
    if reads_whole(&text) {
        if std::fs::read_to_string(&backup).is_ok_and(|b| b == text) {
            return Kept::Copied;
        }
        return match write(&backup, &text) {
            Ok(_) => Kept::Copied,
            Err(e) => {
                log::warn!("the settings could not be backed up: {e}");
                Kept::Nothing
            }
        };
    }
    // Another graylab may be writing it this moment (eframe truncates, then writes): damaged is
    // what it still is, unchanged, a moment later.
    std::thread::sleep(SETTLE);
    if std::fs::read_to_string(file).ok().as_deref() != Some(text.as_str()) {
        return Kept::Nothing;
    }
    let Some(good) = std::fs::read_to_string(&backup).ok().filter(|b| reads_whole(b)) else {
        return Kept::Nothing;
    };
    match write(file, &good) {
        Ok(_) => {
            log::warn!(
                "the settings file was cut short (a write that could not finish: a full disk?): the copy \
                 kept at the last launch was put back: {}",
                file.display()
            );
            Kept::Restored
        }
        Err(e) => {
            log::warn!("the settings file is damaged and its copy could not be put back: {e}");
            Kept::Nothing
        }
    }
}

/// Whether `text` reads as eframe reads its settings: a RON map of strings.
fn reads_whole(text: &str) -> bool {
    ron::from_str::<std::collections::HashMap<String, String>>(text).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_settings_file_cut_short_is_put_back_from_its_copy() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join(FILE);
        assert_eq!(keep_or_restore(&file), Kept::Nothing, "no file yet");
        let whole = "{\n    \"app\": \"(recent:[\\\"/photos/a.jpg\\\"])\",\n}\n";
        std::fs::write(&file, whole).expect("write");
        assert_eq!(keep_or_restore(&file), Kept::Copied);
        assert_eq!(std::fs::read_to_string(dir.path().join("app.ron.bak")).expect("backup"), whole);
        // A write cut short (a full disk): the copy is put back.
        std::fs::write(&file, &whole[..20]).expect("cut");
        assert_eq!(keep_or_restore(&file), Kept::Restored);
        assert_eq!(std::fs::read_to_string(&file).expect("restored"), whole);
        // A damaged file without a copy is left to eframe (which starts from defaults).
        std::fs::remove_file(dir.path().join("app.ron.bak")).expect("rm");
        std::fs::write(&file, "{ \"app\": ").expect("cut");
        assert_eq!(keep_or_restore(&file), Kept::Nothing);
        assert_eq!(std::fs::read_to_string(&file).expect("left"), "{ \"app\": ");
    }
}
