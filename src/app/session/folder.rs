//! Stepping through the open image's folder, as image viewers do (← and →): the images of the
//! folder in name order, told from other files by their content, and where the open one is
//! among them ("2 of 5").

use std::path::{Path, PathBuf};

use super::Session;

/// The images in `dir`, sorted by file name.
fn images_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut images: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()))
        .map(|e| e.path())
        .filter(|p| crate::io::sniff_format(p).is_some())
        .collect();
    images.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    images
}

/// The image after (or before) `current` in its folder, if there is one.
#[must_use]
pub fn neighbour(current: &Path, forward: bool) -> Option<PathBuf> {
    let images = images_in(current.parent()?);
    let name = current.file_name()?;
    // Where `current` is, or would be (it may have been deleted or renamed since).
    let at = images.binary_search_by(|p| p.file_name().cmp(&Some(name)));
    match (at, forward) {
        (Ok(i), true) => images.get(i + 1),
        (Ok(i) | Err(i), false) => i.checked_sub(1).and_then(|j| images.get(j)),
        (Err(i), true) => images.get(i),
    }
    .cloned()
}

/// Where `path` is among the images of its folder: (its place from 1, how many there are).
#[must_use]
pub fn place_in_folder(path: &Path) -> Option<(usize, usize)> {
    let images = images_in(path.parent()?);
    let name = path.file_name()?;
    let at = images.iter().position(|p| p.file_name() == Some(name))?;
    Some((at + 1, images.len()))
}

impl Session {
    /// Where the open image is among the images of its folder ("2 of 5"), read when it opened.
    pub fn folder_place(&self) -> Option<(usize, usize)> {
        self.folder_place
    }

    /// The file being opened, until it is open (or failed to open).
    pub fn opening(&self) -> Option<&Path> {
        self.opening.as_deref()
    }

    /// How many opens have failed so far: a new failure means the file asked for is not the one
    /// on screen, so a field that names it must name the image shown again.
    pub fn failed_opens(&self) -> u64 {
        self.failed_opens
    }

    /// Opens the next (or previous) image of the folder of the image being opened, that this
    /// stepping failed to open last (so a damaged file is stepped past) or shown; says so when
    /// there is none.
    pub fn step_in_folder(&mut self, forward: bool) {
        let anchor = self.opening.clone().or_else(|| self.failed_open.clone());
        let Some(current) = anchor.or_else(|| self.input.as_ref().map(|i| i.path.clone())) else {
            return;
        };
        if let Some(path) = neighbour(&current, forward) {
            let path = std::path::absolute(&path).unwrap_or(path);
            self.open(path.clone(), None);
            self.stepped_to = Some(path);
        } else {
            let which = if forward { "last" } else { "first" };
            self.toasts.note(format!("This is the {which} image of its folder."));
        }
    }
}
