//! What the windows that save share: the folder a save goes to by default (never graylab's own
//! tree), and for the sweep and claims windows' JSON files, Save with consent before replacing a
//! file and the atomic write with its toast.

use std::path::{Path, PathBuf};

use egui::Ui;

use crate::app::look;
use crate::app::session::Session;
use crate::io::ResultKind;

/// What a window's JSON file row asked for.
pub(super) enum RowAsked {
    /// Save to the path (`true`: replacing the file there).
    Save(bool),
    /// Load the file at the path to compare.
    Load,
    /// Clear what was loaded.
    Clear,
}

/// A window's JSON file row: the path field, at most `most` points wide; Save (when `can_save`),
/// asking before it replaces a file; Load to compare; and `clear`, a button to clear what was
/// loaded, if any. Whether the path was typed, and what was asked.
pub(super) fn file_row(
    ui: &mut Ui,
    (path, confirm_replace): (&mut String, &mut bool),
    can_save: bool,
    most: f32,
    clear: Option<&str>,
) -> (bool, Option<RowAsked>) {
    ui.horizontal_wrapped(|ui| {
        let label = ui.label("JSON file");
        // The field takes what the buttons leave of the row, from 140 points (a fixed 380 made
        // the claims window's row, and so the window, wider than a 1024-px screen once a report
        // was loaded): Save and Load to compare, then Clear or the question.
        let buttons = if clear.is_some() || *confirm_replace { 340.0 } else { 200.0 };
        let width = (ui.available_size_before_wrap().x - buttons).clamp(140.0, most);
        let typed =
            ui.add(egui::TextEdit::singleline(path).desired_width(width)).labelled_by(label.id).changed();
        if typed {
            *confirm_replace = false;
        }
        let file = PathBuf::from(path.trim());
        let mut asked = save_button(ui, confirm_replace, &file, can_save).map(RowAsked::Save);
        if ui.button("Load to compare").clicked() {
            asked = Some(RowAsked::Load);
        }
        if let Some(clear) = clear
            && ui.button(clear).clicked()
        {
            asked = Some(RowAsked::Clear);
        }
        (typed, asked)
    })
    .inner
}

/// The Save button, or the "Replace it?" question after a Save onto an existing file. Returns
/// `Some(overwrite)` when the caller should save now.
fn save_button(ui: &mut Ui, confirm_replace: &mut bool, path: &Path, can_save: bool) -> Option<bool> {
    if *confirm_replace {
        ui.colored_label(look::warning(ui.visuals()), "This file exists. Replace it?");
        if ui.button("Replace").clicked() {
            *confirm_replace = false;
            return Some(true);
        }
        if ui.button("Keep it").clicked() {
            *confirm_replace = false;
        }
    } else if ui.add_enabled(can_save, egui::Button::new("Save")).clicked() {
        if path.exists() {
            *confirm_replace = true;
        } else {
            return Some(false);
        }
    }
    None
}

/// Writes `value` to `path` as a result file stamped as the CLI stamps its own
/// ([`crate::io::write_result`]), replacing a file only when `overwrite`; the toast says how.
/// [`save_result`] for a long job's report, with what it was estimated at and what it took
/// where known (`took_s` `None`: the report holds its own), as the CLI's `--json` writes it.
pub(super) fn save_timed_result(
    session: &mut Session,
    (path, overwrite): (&Path, bool),
    kind: ResultKind,
    report: &impl serde::Serialize,
    timing: Option<(crate::engine::estimate::Estimate, Option<f64>)>,
) {
    match timing {
        Some((estimate, took_s)) => {
            let timed = crate::engine::estimate::Timed::new(report, estimate, took_s);
            save_result(session, path, overwrite, kind, &timed);
        }
        None => save_result(session, path, overwrite, kind, report),
    }
}

pub(super) fn save_result(
    session: &mut Session,
    path: &Path,
    overwrite: bool,
    kind: ResultKind,
    value: &impl serde::Serialize,
) {
    let adapter = session.gpu().map(|g| g.report());
    let provenance = crate::io::Provenance::now(adapter.as_ref(), crate::engine::available_threads());
    let name = kind.name();
    match crate::io::write_result(path, overwrite, kind, &provenance, value) {
        Ok(_) => session.toasts.success(format!("Saved the {name} to {}", path.display())),
        Err(e) => {
            let why = crate::app::advice::describe(&e);
            session.toasts.error(format!("Could not save the {name}. {why}"));
        }
    }
}

/// Reads the result of `kind` at `path` through the one reader of result files
/// ([`crate::io::read_result`]), with the file's name; a failure is a toast naming the file and
/// why, and `None`.
pub(super) fn load_result<T: serde::de::DeserializeOwned>(
    session: &mut Session,
    path: &Path,
    kind: ResultKind,
) -> Option<(String, T)> {
    match crate::io::read_result::<T>(path, Some(kind)) {
        Ok(read) => Some((crate::app::session::file_name(path), read.body)),
        Err(e) => {
            let why = crate::app::advice::describe(&e);
            session.toasts.error(format!("Could not load the {}. {why}", kind.name()));
            None
        }
    }
}

/// The folder a save goes to by default: the first folder of `wanted` (the last export's, the
/// photo's) that exists and is not inside graylab's own tree (the bundled sample's `assets/`),
/// else `Documents` in the home folder where it exists, else the home folder, else the
/// temporary folder. Never the working folder, which for a desktop app is wherever it started.
pub(super) fn default_save_folder(wanted: &[Option<&Path>]) -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from).filter(|h| !h.as_os_str().is_empty());
    let documents = home.as_ref().is_some_and(|h| h.join("Documents").is_dir());
    let mut own = vec![PathBuf::from(env!("CARGO_MANIFEST_DIR"))];
    own.extend(
        crate::app::sample_photo().and_then(|p| std::path::absolute(p).ok()?.parent().map(Path::to_path_buf)),
    );
    let existing: Vec<Option<&Path>> = wanted.iter().map(|w| w.filter(|d| d.is_dir())).collect();
    save_folder(&existing, &own, home.as_deref(), documents)
}

/// [`default_save_folder`] on what it found: `own` are graylab's own folders, `documents`
/// whether `home` has a `Documents` folder.
fn save_folder(wanted: &[Option<&Path>], own: &[PathBuf], home: Option<&Path>, documents: bool) -> PathBuf {
    let mine = |d: &Path| own.iter().any(|o| d.starts_with(o));
    let chosen = wanted.iter().flatten().find(|d| d.is_absolute() && !mine(d));
    match (chosen, home) {
        (Some(d), _) => d.to_path_buf(),
        (None, Some(home)) if documents => home.join("Documents"),
        (None, Some(home)) => home.to_path_buf(),
        (None, None) => std::env::temp_dir(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saves_go_next_to_the_photo_unless_it_is_graylabs_own() {
        let own = [PathBuf::from("/opt/graylab"), PathBuf::from("/srv/graylab/assets")];
        let home = Some(Path::new("/home/ada"));
        let photos = Path::new("/home/ada/photos");
        let sample = Path::new("/opt/graylab/assets");
        // The last export's folder first, then the photo's.
        let exports = Path::new("/home/ada/gray");
        assert_eq!(save_folder(&[Some(exports), Some(photos)], &own, home, true), exports);
        assert_eq!(save_folder(&[None, Some(photos)], &own, home, true), photos);
        // The bundled sample's folder, or anything in graylab's tree, is never chosen.
        assert_eq!(save_folder(&[Some(sample)], &own, home, true), Path::new("/home/ada/Documents"));
        assert_eq!(save_folder(&[Some(sample)], &own, home, false), Path::new("/home/ada"));
        let assets = Path::new("/srv/graylab/assets");
        assert_eq!(save_folder(&[Some(assets), Some(sample)], &own, home, false), Path::new("/home/ada"));
        // A folder that only shares a prefix of the name is not graylab's.
        let beside = Path::new("/opt/graylab-photos");
        assert_eq!(save_folder(&[Some(beside)], &own, home, true), beside);
        // A relative folder means the working folder: never.
        assert_eq!(save_folder(&[Some(Path::new("photos"))], &own, home, false), Path::new("/home/ada"));
        assert_eq!(save_folder(&[Some(sample)], &own, None, true), std::env::temp_dir());
    }
}
