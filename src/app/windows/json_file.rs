//! The JSON-file row the sweep and claims windows share: Save with consent before replacing a
//! file, and the atomic write with its toast.

use std::path::Path;

use egui::Ui;

use crate::app::look;
use crate::app::session::Session;
use crate::engine::WriteCause;

/// The Save button, or the "Replace it?" question after a Save onto an existing file. Returns
/// `Some(overwrite)` when the caller should save now.
pub(super) fn save_button(
    ui: &mut Ui,
    confirm_replace: &mut bool,
    path: &Path,
    can_save: bool,
) -> Option<bool> {
    if *confirm_replace {
        ui.colored_label(look::WARNING, "This file exists. Replace it?");
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

/// Writes `value` to `path` as pretty JSON, atomically (mode 0666 & ~umask, or the replaced
/// file's), never replacing a file unless `overwrite`; `name` ("Sweep", "Claims") names it in
/// the toast that says how it went.
pub(super) fn save_json(
    session: &mut Session,
    path: &Path,
    overwrite: bool,
    value: &impl serde::Serialize,
    name: &str,
) {
    let written = crate::engine::write_atomically(path, overwrite, |out| {
        serde_json::to_writer_pretty(&mut *out, value).map_err(|e| WriteCause::Os(e.into()))?;
        std::io::Write::write_all(out, b"\n").map_err(WriteCause::Os)
    });
    match written {
        Ok(_) => session.toasts.success(format!("{name} saved to {}", path.display())),
        Err(e) => session.toasts.error(format!(
            "Could not save the {}. {}",
            name.to_lowercase(),
            crate::app::advice::describe(&e)
        )),
    }
}
