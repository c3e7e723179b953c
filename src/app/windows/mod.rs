//! The windows opened on demand: export, size sweep, round trips, parity, the tutorial's claims,
//! transfer paths, and the native file dialogs.

pub(super) mod claims_window;
pub(super) mod dialogs;
pub(super) mod export_window;
mod json_file;
pub(super) mod parity_window;
pub(super) mod paths_window;
pub(super) mod round_trips_window;
mod sweep_views;
pub(super) mod sweep_window;

/// Where the windows may be: over the viewer and the chart dock, never over the settings panel
/// (the controls they change) nor the status bar (Stop).
#[derive(Clone, Copy, Debug)]
pub struct Room {
    /// The free rectangle.
    pub rect: egui::Rect,
}

impl Room {
    /// A window titled `title`, its id from `id` (one of this module's `*_ID`), kept inside the
    /// room, no larger than it, placed first at the room's corner `corner` (each window its own,
    /// so that one never opens exactly over another).
    pub fn window(self, title: &str, id: &str, corner: egui::Align2) -> egui::Window<'static> {
        let margin = 12.0;
        let inner = self.rect.shrink(margin);
        egui::Window::new(title.to_owned())
            .id(egui::Id::unique(id))
            .constrain_to(self.rect)
            .pivot(corner)
            .default_pos(corner.pos_in_rect(&inner))
            .max_width((self.rect.width() - 2.0 * margin).max(200.0))
            .max_height((self.rect.height() - 2.0 * margin).max(150.0))
    }

    /// The lowest a window's content may reach: the room's margin and the window's own frame
    /// below its content.
    #[must_use]
    pub fn bottom_y(self) -> f32 {
        self.rect.bottom() - 24.0
    }
}

/// Shows `window` with `add` as its content; whether it is still `open` (its close button).
fn show(ctx: &egui::Context, window: egui::Window<'_>, open: bool, add: impl FnOnce(&mut egui::Ui)) -> bool {
    let mut open = open;
    window.open(&mut open).show(ctx, add);
    open
}

/// The export window's id (its layer, for Esc).
pub const EXPORT_ID: &str = "graylab export window";
/// The size-sweep window's id.
pub const SWEEP_ID: &str = "graylab sweep window";
/// The parity window's id.
pub const PARITY_ID: &str = "graylab parity window";
/// The tutorial-claims window's id.
pub const CLAIMS_ID: &str = "graylab claims window";
/// The round-trips window's id.
pub const ROUND_TRIPS_ID: &str = "graylab round trips window";
/// The transfer-paths window's id.
pub const PATHS_ID: &str = "graylab transfer paths window";

/// A result's verdict, and the warning that its "GPU" is a software adapter's (the CPU itself),
/// unless the verdict says so already.
fn verdict_ui(ui: &mut egui::Ui, verdict: &str, software_adapter: bool) {
    ui.label(egui::RichText::new(verdict).strong());
    if software_adapter && !verdict.to_lowercase().contains("software adapter") {
        ui.colored_label(
            crate::app::look::warning(ui.visuals()),
            "Software adapter: the GPU series describe a CPU emulation, not a GPU.",
        );
    }
}

/// The warning that a result measured on a debug build has timings that mean nothing.
fn debug_build_ui(ui: &mut egui::Ui, build: &str) {
    if build == "debug" {
        ui.colored_label(
            crate::app::look::warning(ui.visuals()),
            "Debug build: these timings mean nothing (build with cargo build --release).",
        );
    }
}

/// The image a window's result is of: its id and file name.
type ImageOf = Option<(u64, String)>;

/// The image open now, as [`ImageOf`] names it.
fn image_of(session: &crate::app::session::Session) -> ImageOf {
    let input = session.input()?;
    Some((input.id, input.path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned())))
}

/// Says, above a result kept from an image opened before (`of`), whose it is and what to do.
fn opened_before_ui(ui: &mut egui::Ui, session: &crate::app::session::Session, of: &ImageOf, todo: &str) {
    if let Some((id, name)) = of
        && session.input().is_some_and(|i| i.id != *id)
    {
        ui.colored_label(
            crate::app::look::warning(ui.visuals()),
            format!("These results are of {name}, opened before: {todo} the open image for its own."),
        );
    }
}
