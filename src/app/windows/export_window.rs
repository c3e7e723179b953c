//! The export window: file, format, quality and depth, with consent before replacing a file.

use std::path::{Path, PathBuf};

use egui::{RichText, Ui};

use crate::app::session::Session;
use crate::io::ExportFormat;

/// The export window's state.
#[derive(Default)]
pub struct ExportWindow {
    /// Whether the window is open.
    pub open: bool,
    path: String,
    /// The chosen file exists: ask before replacing it. The question holds for the path and
    /// format it was asked with; typing another path or choosing another format drops it.
    confirm_replace: Option<(String, Option<ExportFormat>)>,
    /// The path last looked at and what it is (a folder, the open image's own file): looked at
    /// once per edit, not once a frame on the UI thread.
    folder_seen: Option<(String, PathIs)>,
}

impl ExportWindow {
    /// Opens the window with a default file name in the last export folder, else next to the
    /// input, never in graylab's own tree (see `default_save_folder`); says why not when there is
    /// nothing to export.
    pub fn open_for(&mut self, session: &mut Session) {
        let Some(input) = session.input().map(|i| i.path.clone()) else {
            session.toasts.error("Open an image first: there is nothing to export yet.".into());
            return;
        };
        if !self.open {
            let settings = session.settings();
            let format = settings.export.format.unwrap_or_default();
            let dir =
                super::json_file::default_save_folder(&[settings.export_dir.as_deref(), input.parent()]);
            let path = crate::engine::default_output_path(&input, Some(&dir), format);
            self.path = path.display().to_string();
            self.confirm_replace = None;
            self.open = true;
        }
    }

    /// Puts a chosen file in the path field.
    pub fn set_path(&mut self, path: &Path) {
        self.path = path.display().to_string();
        self.confirm_replace = None;
    }

    /// Shows the window when open; returns the folder and name for a save dialog when the user
    /// pressed Choose….
    pub fn show(
        &mut self,
        ctx: &egui::Context,
        room: super::Room,
        session: &mut Session,
    ) -> Option<(Option<PathBuf>, String)> {
        let mut choose = None;
        let window = room.window("Export", super::EXPORT_ID, egui::Align2::RIGHT_TOP);
        let window = window.collapsible(false).resizable(false);
        let open = super::show(ctx, window, self.open, |ui| choose = self.ui(ui, session));
        self.open = open && self.open;
        choose
    }

    fn ui(&mut self, ui: &mut Ui, session: &mut Session) -> Option<(Option<PathBuf>, String)> {
        let mut export: Option<bool> = None;
        let mut choose = None;
        // The output's op, as the export writes it (the panel's until a result exists).
        let op = session.output().map_or(session.settings().convert.op, |o| o.settings.op);
        let input = session.input().map(|i| i.path.clone());
        let kept =
            session.input().and_then(|i| i.metadata.as_deref()).map(|e| (e.tags() > 0, e.xmp().is_some()));
        let opts = &mut session.settings_mut().export;
        ui.horizontal(|ui| {
            let label = ui.label("File");
            let field =
                ui.add(egui::TextEdit::singleline(&mut self.path).desired_width(360.0)).labelled_by(label.id);
            if field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                export = Some(false);
            }
            if ui.button("Choose…").on_hover_text("The system's save dialog, where there is one").clicked()
            {
                let path = PathBuf::from(&self.path);
                let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                choose = Some((path.parent().map(Path::to_path_buf), name));
            }
        });
        // As the CLI: a format that contradicts the name's, or a folder, is no file to write.
        let typed = self.path.trim();
        let named = ExportFormat::from_path(Path::new(typed));
        if self.folder_seen.as_ref().is_none_or(|(seen, _)| seen != typed) {
            let path = Path::new(typed);
            let is = if path.is_dir() {
                PathIs::Folder
            } else if input.as_deref().is_some_and(|i| crate::io::same_file(i, path)) {
                PathIs::TheInput
            } else {
                PathIs::File
            };
            self.folder_seen = Some((typed.to_owned(), is));
        }
        let is = self.folder_seen.as_ref().map_or(PathIs::File, |(_, is)| *is);
        let problem = problem(opts.format, named, is, op);
        let format = opts.format.or(named).filter(|_| problem.is_none());
        let asked = (typed.to_owned(), opts.format);
        if self.confirm_replace.as_ref().is_some_and(|a| *a != asked) {
            self.confirm_replace = None;
        }
        egui::ComboBox::from_label("Format")
            .selected_text(opts.format.map_or_else(|| "from the file name".to_owned(), |f| f.to_string()))
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut opts.format, None, "from the file name");
                for f in ExportFormat::ALL {
                    ui.selectable_value(&mut opts.format, Some(f), f.to_string());
                }
            });
        if format == Some(ExportFormat::Jpeg) {
            ui.add(egui::Slider::new(&mut opts.jpeg_quality, 1..=100).text("JPEG quality"));
        }
        ui.checkbox(&mut opts.force_8bit, "Always 8-bit (else 16-bit images stay 16-bit in PNG and TIFF)");
        if let Some(f) = format {
            ui.label(RichText::new(format_hint(f, op)).weak());
            if let Some(kept) = kept {
                ui.label(RichText::new(metadata_hint(f, kept)).weak());
            }
        } else {
            let why = problem
                .as_deref()
                .unwrap_or("Unknown format: end the name with .png, .jpg, .tif, .bmp or .webp");
            ui.colored_label(ui.visuals().error_fg_color, why);
        }
        if self.confirm_replace.is_some() {
            ui.colored_label(crate::app::look::warning(ui.visuals()), "This file exists. Replace it?");
            ui.horizontal(|ui| {
                if ui.add_enabled(format.is_some(), egui::Button::new("Replace")).clicked() {
                    export = Some(true);
                }
                if ui.button("Keep it").clicked() {
                    self.confirm_replace = None;
                }
            });
        } else if ui
            .add_enabled(format.is_some(), egui::Button::new("Export"))
            .on_hover_text("Enter in the File field does the same")
            .clicked()
        {
            export = Some(false);
        }
        // Nothing is written while the window says what is wrong, replacing a file least of all.
        if format.is_none() {
            export = None;
        }
        ui.label(
            RichText::new("Written to a temporary file first, then renamed: never a half-written file.")
                .weak(),
        );
        let path = PathBuf::from(self.path.trim());
        match export {
            Some(false) if path.exists() => self.confirm_replace = Some(asked),
            Some(overwrite) => {
                session.export_to(path, overwrite);
                self.open = false;
            }
            None => {}
        }
        choose
    }
}

/// What an export in `format` keeps of a photo's metadata, as `convert` keeps it, by what the
/// photo has: EXIF tags, XMP properties.
fn metadata_hint(format: ExportFormat, (tags, xmp): (bool, bool)) -> String {
    let exif = "camera, exposure and date (EXIF)";
    let catalogue = "title, keywords, rating and credits (XMP)";
    let what = match (tags, xmp) {
        (true, true) => format!("{exif} and its {catalogue}"),
        (false, true) => catalogue.to_owned(),
        _ => exif.to_owned(),
    };
    match format {
        ExportFormat::Bmp => {
            format!("A BMP has no place for the photo's {what}: the other formats keep them.")
        }
        _ => format!("Keeps the photo's {what}, never its location."),
    }
}

/// What the typed path is, for [`problem`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PathIs {
    /// A folder.
    Folder,
    /// The file of the image open now.
    TheInput,
    /// Anything else: a file to write, new or to replace.
    File,
}

/// What keeps the window from writing: a folder, a format that contradicts the name, a dither
/// into a JPEG (as the CLI refuses them); `None` when nothing does.
fn problem(
    format: Option<ExportFormat>,
    named: Option<ExportFormat>,
    is: PathIs,
    op: crate::pixel::Op,
) -> Option<String> {
    match (format, named) {
        _ if is == PathIs::Folder => Some("That is a folder: add a file name to it".to_owned()),
        // As the CLI refuses an output that would replace its own input.
        _ if is == PathIs::TheInput => Some(
            "That is the photo open now: exporting would replace the original (choose another name)"
                .to_owned(),
        ),
        (Some(f), Some(n)) if f != n => Some(format!(
            "{f} contradicts the name, a {n} file's: choose {n} or \"from the file name\", or rename it"
        )),
        // As the CLI: a dither's black and white would come out of a JPEG's coding in grays.
        (f, n) if op == crate::pixel::Op::Dither && f.or(n) == Some(ExportFormat::Jpeg) => Some(
            "The dither is black and white only, and JPEG is lossy: its coding would add grays \
             (choose PNG, TIFF or BMP, written as 1 bit, or WebP, lossless)"
                .to_owned(),
        ),
        _ => None,
    }
}

/// What `format` writes of the result of `op`: "PNG: 8 or 16 bit, keeps alpha"; after an op the
/// result is 8-bit gray without alpha (the dither's 1 bit in a PNG, a TIFF or a BMP).
fn format_hint(format: ExportFormat, op: crate::pixel::Op) -> String {
    match op {
        crate::pixel::Op::None => format!(
            "{format}: {}, {}",
            if format.has_16bit() { "8 or 16 bit" } else { "8 bit only" },
            if format.has_alpha() { "keeps alpha" } else { "no alpha channel" }
        ),
        crate::pixel::Op::Dither if format != ExportFormat::Webp => {
            format!("{format}: the dither's black and white as 1 bit, no alpha channel (an op drops it)")
        }
        _ => format!("{format}: 8 bit, no alpha channel (the {op} after the grayscale drops it)"),
    }
}
