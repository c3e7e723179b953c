//! Native file dialogs (rfd's async dialogs, driven on their own thread so the UI keeps
//! running while one is open).
//!
//! On Linux rfd answers "nothing chosen" both when the user cancels and when there is no dialog
//! service (xdg-desktop-portal or zenity) at all. An answer within a moment of asking almost
//! always means the latter, and the app then says so and points to drag-and-drop and the path
//! field.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Answers faster than this are taken as "no dialog service", not as a user's cancel.
const TOO_FAST_FOR_A_HUMAN: Duration = Duration::from_millis(400);

/// What a dialog answered.
pub enum DialogAnswer {
    /// A file was chosen.
    Chosen(PathBuf),
    /// Nothing was chosen (cancelled, or no dialog could be shown).
    Nothing {
        /// Whether the answer came too fast for a person: most likely no dialog service.
        probably_unavailable: bool,
    },
}

/// What a dialog chooses a file for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DialogFor {
    /// The image to open.
    Open,
    /// Where to export the gray image.
    Export,
    /// Where to save the runs' trace.
    Trace,
    /// A saved bench to compare the runs with.
    CompareRuns,
}

/// A dialog in flight.
pub struct PendingDialog {
    rx: mpsc::Receiver<DialogAnswer>,
    /// What it chooses a file for.
    pub purpose: DialogFor,
}

impl PendingDialog {
    /// The answer, once there is one.
    pub fn poll(&self) -> Option<DialogAnswer> {
        self.rx.try_recv().ok()
    }
}

/// Shows `dialog`, opened in `dir` when given, on a thread of its own.
fn spawn(
    ctx: &egui::Context,
    purpose: DialogFor,
    dialog: rfd::AsyncFileDialog,
    dir: Option<&std::path::Path>,
) -> PendingDialog {
    let dialog = if let Some(dir) = dir { dialog.set_directory(dir) } else { dialog };
    let save = matches!(purpose, DialogFor::Export | DialogFor::Trace);
    let (tx, rx) = mpsc::channel();
    let no_thread = tx.clone();
    let ctx = ctx.clone();
    let spawned = std::thread::Builder::new().name("graylab-dialog".into()).spawn(move || {
        let asked = Instant::now();
        let chosen = if save {
            pollster::block_on(dialog.save_file())
        } else {
            pollster::block_on(dialog.pick_file())
        };
        let answer = match chosen {
            Some(file) => DialogAnswer::Chosen(file.path().to_path_buf()),
            None => DialogAnswer::Nothing { probably_unavailable: asked.elapsed() < TOO_FAST_FOR_A_HUMAN },
        };
        let _ = tx.send(answer);
        ctx.request_repaint();
    });
    if spawned.is_err() {
        // No thread, no dialog: answer at once so the app says how else to open a file.
        let _ = no_thread.send(DialogAnswer::Nothing { probably_unavailable: true });
    }
    PendingDialog { rx, purpose }
}

/// Opens the "open image" dialog.
pub fn open_image(ctx: &egui::Context, dir: Option<&std::path::Path>) -> PendingDialog {
    let dialog = rfd::AsyncFileDialog::new()
        .set_title("Open an image")
        .add_filter("Images", &["jpg", "jpeg", "png", "tif", "tiff", "webp", "bmp"])
        .add_filter("All files", &["*"]);
    spawn(ctx, DialogFor::Open, dialog, dir)
}

/// Opens the "export as" dialog.
pub fn save_image(ctx: &egui::Context, dir: Option<&std::path::Path>, file_name: &str) -> PendingDialog {
    let dialog = rfd::AsyncFileDialog::new().set_title("Export the grayscale image").set_file_name(file_name);
    spawn(ctx, DialogFor::Export, dialog, dir)
}

/// Opens the "compare with a saved bench" dialog.
pub fn open_bench(ctx: &egui::Context, dir: Option<&std::path::Path>) -> PendingDialog {
    let dialog = rfd::AsyncFileDialog::new()
        .set_title("Compare the runs with a saved bench (graylab bench --json)")
        .add_filter("graylab bench (JSON)", &["json"])
        .add_filter("All files", &["*"]);
    spawn(ctx, DialogFor::CompareRuns, dialog, dir)
}

/// Opens the "save trace" dialog.
pub fn save_trace(ctx: &egui::Context, dir: Option<&std::path::Path>, file_name: &str) -> PendingDialog {
    let dialog = rfd::AsyncFileDialog::new()
        .set_title("Save the runs as a trace (open it in ui.perfetto.dev)")
        .set_file_name(file_name)
        .add_filter("Chrome trace (JSON)", &["json"]);
    spawn(ctx, DialogFor::Trace, dialog, dir)
}
