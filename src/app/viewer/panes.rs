//! Drawing one pane: the image (over a checkerboard when it has alpha), the caption on a chip,
//! and the wipe divider with its drag handle.

use egui::{Color32, CursorIcon, Painter, Pos2, Rect, Sense, Stroke, Ui, pos2, vec2};

use crate::app::state::ViewMode;
use crate::app::textures::{DisplayImage, Placement, TileBudget};

/// What the panes show.
pub struct Images<'a> {
    /// The input as shown.
    pub input: &'a DisplayImage,
    /// Caption of the input.
    pub input_caption: &'a str,
    /// The output as shown, once there is one.
    pub output: Option<&'a DisplayImage>,
    /// Caption of the output.
    pub caption: &'a str,
    /// What the output pane says while there is no output ("converting…").
    pub pending: &'a str,
}

fn draw_image(ui: &Ui, clip: Rect, image: &DisplayImage, place: &Placement, budget: &mut TileBudget) {
    image.paint(&ui.painter_at(clip), place, budget);
}

/// Text on a dark chip, readable over any image, kept left of `max_x`; where it is cut short
/// with "…", hovering the chip shows the whole text. `id`: the chip's own, one per caption drawn.
fn caption(ui: &Ui, painter: &Painter, (text, id): (&str, egui::Id), at: Pos2, max_x: f32) {
    // One line, ended with "…" where the pane is narrower ("… in its folder (arrow ke" was cut
    // at the pane's edge at 1024x640).
    let format = egui::TextFormat::simple(egui::FontId::proportional(13.0), Color32::WHITE);
    let mut job = egui::text::LayoutJob::single_section(text.to_owned(), format);
    job.wrap =
        egui::text::TextWrapping::truncate_at_width((max_x - painter.clip_rect().min.x - 12.0).max(24.0));
    let galley = painter.layout_job(job);
    let at = pos2(at.x.min(max_x - galley.size().x - 6.0).max(painter.clip_rect().min.x + 6.0), at.y);
    let rect = Rect::from_min_size(at, galley.size()).expand2(vec2(6.0, 3.0));
    let elided = galley.elided;
    painter.rect_filled(rect, 4.0, Color32::from_black_alpha(170));
    painter.galley(at, galley, Color32::WHITE);
    if elided {
        // Only the part of the chip the pane shows answers the pointer.
        let shown = rect.intersect(painter.clip_rect());
        ui.interact(shown, id, Sense::hover()).on_hover_text(text);
    }
}

fn note(painter: &Painter, clip: Rect, text: &str) {
    painter.text(
        clip.center(),
        egui::Align2::CENTER_CENTER,
        text,
        egui::FontId::proportional(16.0),
        Color32::GRAY,
    );
}

/// Which pane of a view mode is drawn, and where.
#[derive(Clone, Copy, Debug)]
pub struct PaneAt {
    /// The view mode.
    pub mode: ViewMode,
    /// The pane's index in that mode (side by side: 0 is the input).
    pub index: usize,
    /// Its place on screen.
    pub rect: Rect,
}

/// The viewer's state a pane reads or changes.
pub struct PaneState<'a> {
    /// Where the wipe divider is, from 0 (left) to 1 (right); dragging it moves it.
    pub wipe: &'a mut f32,
    /// A/B: whether the output is shown (else the input).
    pub show_output: bool,
}

/// Draws one pane: `at` says which and where, `state` the divider and the A/B choice.
pub fn draw(
    ui: &Ui,
    state: PaneState<'_>,
    at: PaneAt,
    images: &Images<'_>,
    place: &Placement,
    budget: &mut TileBudget,
) {
    let PaneState { wipe, show_output } = state;
    let PaneAt { mode, index, rect: pane } = at;
    let painter = ui.painter_at(pane);
    let corner = pane.min + vec2(10.0, 6.0);
    // Each caption's id, apart in every pane.
    let id = |which: &str| ui.scope_id().with(("pane caption", index, which));
    let output = |clip: Rect, budget: &mut TileBudget| match images.output {
        Some(out) => draw_image(ui, clip, out, place, budget),
        None => note(&painter, clip, images.pending),
    };
    // Side by side the input is on the left; flipped, it stays on screen while its output converts.
    let input_shown = match mode {
        ViewMode::SideBySide => index == 0,
        ViewMode::Flip => !show_output || images.output.is_none(),
        ViewMode::Wipe => {
            let x = pane.min.x + pane.width() * *wipe;
            draw_image(ui, Rect::from_min_max(pane.min, pos2(x, pane.max.y)), images.input, place, budget);
            output(Rect::from_min_max(pos2(x, pane.min.y), pane.max), budget);
            divider(ui, &painter, wipe, pane, x);
            caption(ui, &painter, (images.input_caption, id("input")), corner, x - 10.0);
            let below = pos2(x + 10.0, pane.min.y + 30.0);
            caption(ui, &painter, (images.caption, id("output")), below, pane.max.x - 10.0);
            return;
        }
    };
    if !input_shown {
        output(pane, budget);
        caption(ui, &painter, (images.caption, id("output")), corner, pane.max.x);
    } else if mode == ViewMode::Flip && show_output {
        draw_image(ui, pane, images.input, place, budget);
        let text = format!("{} (the output is {})", images.input_caption, images.pending);
        caption(ui, &painter, (&text, id("input")), corner, pane.max.x);
    } else {
        draw_image(ui, pane, images.input, place, budget);
        caption(ui, &painter, (images.input_caption, id("input")), corner, pane.max.x);
    }
}

/// The wipe divider: a line with a round handle; drag anywhere on it to move it.
fn divider(ui: &Ui, painter: &Painter, wipe: &mut f32, pane: Rect, x: f32) {
    let hit = Rect::from_min_max(pos2(x - 8.0, pane.min.y), pos2(x + 8.0, pane.max.y));
    let response = ui
        .interact(hit, ui.scope_id().with("wipe divider"), Sense::drag())
        .on_hover_cursor(CursorIcon::ResizeHorizontal);
    if let Some(p) = response.interact_pointer_pos().filter(|_| response.dragged()) {
        *wipe = ((p.x - pane.min.x) / pane.width()).clamp(0.0, 1.0);
    }
    let strong = response.hovered() || response.dragged();
    let colour = if strong { Color32::WHITE } else { Color32::YELLOW };
    painter.line_segment([pos2(x, pane.min.y), pos2(x, pane.max.y)], Stroke::new(2.0, colour));
    painter.circle(pos2(x, pane.center().y), 9.0, Color32::from_black_alpha(170), Stroke::new(2.0, colour));
    // Two small arrowheads: drag sideways.
    let c = pos2(x, pane.center().y);
    for dir in [-1.0f32, 1.0] {
        let (tip, back) = (c + vec2(dir * 6.0, 0.0), c + vec2(dir * 2.0, 0.0));
        let points = vec![tip, back + vec2(0.0, -4.0), back + vec2(0.0, 4.0)];
        painter.add(egui::Shape::convex_polygon(points, colour, Stroke::NONE));
    }
}
