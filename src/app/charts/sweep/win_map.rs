//! The map of who wins (issue #18): sizes across, work levels (or blur radii) up, each cell coloured by the GPU's
//! speed-up over the best CPU series there (log ratio, red where the CPU is faster, green where
//! the GPU is, neutral at 1x) and the ratio written in it; one map end to end, one with the input
//! kept on the GPU. The measured frontier is a step line between the losing and the winning
//! cells; the modelled one (from the ceilings, continuous levels) a dashed line where it is in
//! range. Drawn with the painter in a sized rect (`egui_plot`'s heatmap has no frontier); each cell
//! is a labelled widget, so its ratio and hover are in the accessibility tree.

use egui::{Color32, Pos2, Rect, RichText, Stroke, Ui};

use super::roofs::{Key, keys_ui};
use crate::engine::sweep::{CellSpeedUp, FrontierPoint, GridAxis, Series, Speedup, SweepResult};

/// Which GPU series a map holds against the best CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Path {
    /// Upload, kernel, download: data starts and ends in host memory.
    EndToEnd,
    /// The input kept on the GPU, the output left there.
    Resident,
}

/// One cell: the medians it compares and the figure it shows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct MapCell {
    /// The faster CPU series here and its median, ns.
    pub cpu: (Series, u64),
    /// The GPU series' median, ns.
    pub gpu_ns: u64,
    /// The GPU's speed-up shown, as the CLI's map and the comparison's line say it
    /// ([`crate::engine::sweep::SweepPoint::speed_up`]): run in turns where it was, else from
    /// the medians.
    pub figure: CellSpeedUp,
    /// Whether the GPU wins here, as the engine's frontier decides it
    /// ([`crate::engine::sweep::SweepPoint::gpu_wins`]).
    pub wins: bool,
    /// End to end: the GPU and the best CPU run in turns, as the sweep decided who is faster
    /// (`None` on the map of the input kept on the GPU, or in a sweep saved without it).
    pub compared: Option<Speedup>,
}

impl MapCell {
    /// How many times faster the GPU is (below 1: slower).
    pub fn speed_up(self) -> f64 {
        self.figure.ratio
    }
}

/// The cells of one map, row by row from the lowest work level, and its frontiers.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Grid {
    /// The columns, megapixels, smallest first.
    pub sizes_mp: Vec<f64>,
    /// What the rows are: work rounds or the blur's radius.
    pub axis: GridAxis,
    /// The rows, rounds per pixel or blur radii, lowest first.
    pub levels: Vec<u32>,
    /// `levels.len() * sizes_mp.len()` cells, `None` where a median is missing.
    pub cells: Vec<Option<MapCell>>,
    /// Per column, the first row of the measured frontier (the GPU wins from it up);
    /// `levels.len()`: at no level.
    pub measured: Vec<usize>,
    /// Per column, the modelled frontier in rows from the bottom (a cell's centre is at `row + 0.5`),
    /// `None` out of range.
    pub modelled: Vec<Option<f64>>,
}

fn same_size(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1e-9)
}

/// The map of `path` in `result`.
pub(super) fn grid(result: &SweepResult, path: Path) -> Grid {
    let mut sizes_mp: Vec<f64> = Vec::new();
    for p in &result.points {
        if !sizes_mp.iter().any(|s| same_size(*s, p.megapixels)) {
            sizes_mp.push(p.megapixels);
        }
    }
    sizes_mp.sort_by(f64::total_cmp);
    let axis = result.axis;
    let levels = map_levels(result);
    let gpu_series = match path {
        Path::EndToEnd => Series::GpuTotal,
        Path::Resident => Series::GpuResident,
    };
    let mut cells = Vec::with_capacity(levels.len() * sizes_mp.len());
    for level in &levels {
        for mp in &sizes_mp {
            let point =
                result.points.iter().find(|p| p.level(axis) == *level && same_size(p.megapixels, *mp));
            cells.push(point.and_then(|p| {
                let cpu = [Series::Cpu1, Series::CpuAll]
                    .into_iter()
                    .filter_map(|s| Some((s, p.median_ns(s)?)))
                    .min_by_key(|(_, ns)| *ns)?;
                let compared = if path == Path::EndToEnd { p.end_to_end } else { None };
                let (figure, wins) = (p.speed_up(gpu_series)?, p.gpu_wins(gpu_series));
                Some(MapCell { cpu, gpu_ns: p.median_ns(gpu_series)?, figure, wins, compared })
            }));
        }
    }
    let from = |f: &FrontierPoint| match path {
        Path::EndToEnd => f.end_to_end_from_rounds,
        Path::Resident => f.resident_from_rounds,
    };
    let frontier = result.frontier.as_ref();
    let cols = sizes_mp.len();
    let measured = (0..cols)
        .map(|c| {
            let engine =
                frontier.and_then(|f| f.measured.iter().find(|p| same_size(p.megapixels, sizes_mp[c])));
            match engine {
                Some(point) => from(point).map_or(levels.len(), |k| nearest_row(&levels, k)),
                // No frontier in the result: the lowest row from which every cell up wins.
                None => (0..=levels.len())
                    .find(|&r| (r..levels.len()).all(|row| cells[row * cols + c].is_some_and(|x| x.wins)))
                    .unwrap_or(levels.len()),
            }
        })
        .collect();
    let modelled = (0..cols)
        .map(|c| {
            let point = frontier?.modelled.iter().find(|p| same_size(p.megapixels, sizes_mp[c]))?;
            row_of_level(&levels, from(point)?)
        })
        .collect();
    Grid { sizes_mp, axis, levels, cells, measured, modelled }
}

/// The levels `result` holds on its second axis (work rounds or blur radii), lowest first: the
/// map's rows.
#[must_use]
pub fn map_levels(result: &SweepResult) -> Vec<u32> {
    let points = result.points.iter().map(|p| p.level(result.axis));
    let mut levels: Vec<u32> = result.grid_levels().into_iter().chain(points).collect();
    levels.sort_unstable();
    levels.dedup();
    levels
}

fn nearest_row(levels: &[u32], k: f64) -> usize {
    (0..levels.len())
        .min_by(|&a, &b| (f64::from(levels[a]) - k).abs().total_cmp(&(f64::from(levels[b]) - k).abs()))
        .unwrap_or(0)
}

/// Where a continuous work level sits, in rows from the bottom: level `levels[i]` at the centre
/// of row `i` (`i + 0.5`), log-spaced (`log2(1 + k)`) between centres; `None` above the top row.
pub(super) fn row_of_level(levels: &[u32], k: f64) -> Option<f64> {
    let f = |k: f64| (1.0 + k.max(0.0)).log2();
    let first = f64::from(*levels.first()?);
    if k <= first {
        return Some(if f(first) > 0.0 { 0.5 * f(k) / f(first) } else { 0.5 });
    }
    levels.windows(2).enumerate().find_map(|(i, w)| {
        let (lo, hi) = (f64::from(w[0]), f64::from(w[1]));
        (k <= hi).then(|| i as f64 + 0.5 + (f(k) - f(lo)) / (f(hi) - f(lo)))
    })
}

/// `3.4x`, `0.12x`, `12x`: two significant figures.
pub(super) fn ratio_text(r: f64) -> String {
    if r >= 10.0 {
        format!("{r:.0}x")
    } else if r >= 1.0 {
        format!("{r:.1}x")
    } else if r >= 0.1 {
        format!("{r:.2}x")
    } else {
        format!("{r:.3}x")
    }
}

/// A cell's colour: neutral at 1x, red as the CPU is faster, green as the GPU is, full at 10x.
pub(super) fn ratio_colour(r: f64, dark_mode: bool) -> Color32 {
    let t = r.max(1e-9).log10().clamp(-1.0, 1.0) as f32;
    let (neutral, red, green) = if dark_mode {
        (Color32::from_gray(72), Color32::from_rgb(190, 50, 45), Color32::from_rgb(35, 150, 65))
    } else {
        (Color32::from_gray(228), Color32::from_rgb(225, 90, 80), Color32::from_rgb(90, 190, 100))
    };
    let end = if t < 0.0 { red } else { green };
    neutral.lerp_to_gamma(end, t.abs())
}

/// The legend's key for the cells' colour at speed-up `r`, edged in the theme's text colour:
/// on the light theme "even" is near-white on a near-white window, seen by its edge alone.
pub(super) fn swatch(visuals: &egui::Visuals, r: f64, name: &str) -> (Key, String) {
    let colour = ratio_colour(r, visuals.dark_mode);
    (Key::Swatch { colour, edge: visuals.text_color() }, name.to_owned())
}

/// Black or white, whichever reads better on `bg`.
pub(super) fn text_on(bg: Color32) -> Color32 {
    use crate::app::look::contrast;
    if contrast(Color32::WHITE, bg) >= contrast(Color32::BLACK, bg) { Color32::WHITE } else { Color32::BLACK }
}

/// Draws both maps of `result` side by side where each cell has room for its ratio, else one at
/// a time with a choice between them, with the legend under, ending near `bottom_y` (the lowest
/// the window may reach) when the cells can stay 16 points tall.
pub fn win_map_ui(ui: &mut Ui, result: &SweepResult, bottom_y: f32) {
    let maps = [
        (Path::EndToEnd, "End to end (upload + kernel + download)"),
        (Path::Resident, "Input kept on the GPU (output left there)"),
    ];
    let g = grid(result, Path::EndToEnd);
    let (rows, cols) = (g.levels.len() as f32, g.sizes_mp.len() as f32);
    let side_by_side = ui.available_width() >= 2.0 * (LEFT + 4.0 + cols * 44.0) + 16.0;
    let width = if side_by_side { (ui.available_width() - 16.0) / 2.0 } else { ui.available_width() };
    let chooser = if side_by_side { 0.0 } else { 24.0 };
    let room_height = bottom_y - ui.cursor().top() - chooser - 70.0;
    let map_height =
        (rows * 30.0 + TOP + BELOW + 24.0).min(room_height).max(rows * 16.0 + TOP + BELOW + 24.0);
    let draw = |ui: &mut Ui, (path, title): (Path, &str)| {
        ui.allocate_ui(egui::vec2(width, map_height), |ui| {
            ui.vertical(|ui| {
                ui.label(RichText::new(title).strong());
                map_ui(ui, &grid(result, path), path, egui::vec2(width, map_height - 24.0));
            });
        });
    };
    if side_by_side {
        ui.horizontal_top(|ui| {
            for m in maps {
                draw(ui, m);
            }
        });
    } else {
        let id = egui::Id::unique("graylab win map shown");
        let mut resident = ui.data(|d| d.get_temp::<bool>(id)).unwrap_or(false);
        ui.horizontal(|ui| {
            ui.selectable_value(&mut resident, false, "End to end");
            ui.selectable_value(&mut resident, true, "Input kept on the GPU");
        });
        ui.data_mut(|d| d.insert_temp(id, resident));
        draw(ui, maps[usize::from(resident)]);
    }
    let dark = ui.visuals().dark_mode;
    let line = if dark { Color32::WHITE } else { Color32::BLACK };
    keys_ui(
        ui,
        &[
            (
                Key::Line { colour: line, dashed: false },
                "measured frontier: the GPU wins above it".to_owned(),
            ),
            (Key::Line { colour: line, dashed: true }, "modelled frontier (from the ceilings)".to_owned()),
            swatch(ui.visuals(), 0.1, "CPU 10x faster"),
            swatch(ui.visuals(), 1.0, "even (1x)"),
            swatch(ui.visuals(), 10.0, "GPU 10x faster"),
        ],
    );
    let levels = match result.axis {
        GridAxis::WorkRounds => "Work per pixel is synthetic: 3 integer operations per round.",
        GridAxis::BlurRadius => {
            "Each row blurs with its radius R at 0 rounds: 4 (2R + 1) integer operations per pixel, timed with \
             the kernel (the GPU end to end includes the blur's own copies)."
        }
    };
    ui.label(
        RichText::new(format!(
            "Each cell: the GPU's speed-up over the best CPU there (1 or all threads), the CPU's time over the \
             GPU's: 3.4x means the GPU took 1/3.4 of the CPU's time, the CPU and the GPU end to end on the CPU \
             clock. End to end, the two ran in turns until one was decided faster, and the cell is the median \
             of those rounds (hover it for its interval): \"~\" marks a cell where they are within the noise, \
             \"?\" one with too few rounds in the time budget to decide (no win either way). \"*\" marks one \
             not run in turns, from the medians of the warm runs, as every cell with the input kept on the GPU \
             is. {levels}"
        ))
        .small(),
    );
}

/// Room for the row labels left of the cells, points.
const LEFT: f32 = 46.0;
/// Room for the axis title above the cells, points.
const TOP: f32 = 16.0;
/// Room for the size labels and the axis title under the cells, points.
const BELOW: f32 = 34.0;

/// One map in `size`: the row labels on the left, the size labels under it.
fn map_ui(ui: &mut Ui, g: &Grid, path: Path, size: egui::Vec2) {
    let (rows, cols) = (g.levels.len(), g.sizes_mp.len());
    let (rect, _) = ui.allocate_exact_size(size.max(egui::vec2(120.0, 80.0)), egui::Sense::hover());
    if rows == 0 || cols == 0 {
        return;
    }
    let font = egui::FontId::proportional(crate::app::look::SMALL_TEXT);
    let cells = Rect::from_min_max(rect.min + egui::vec2(LEFT, TOP), rect.max - egui::vec2(4.0, BELOW));
    let (cw, ch) = (cells.width() / cols as f32, cells.height() / rows as f32);
    let dark = ui.visuals().dark_mode;
    let text = ui.visuals().text_color();
    let painter = ui.painter_at(rect);
    let at = |col: f32, row: f32| Pos2::new(cells.left() + col * cw, cells.bottom() - row * ch);
    let title = match g.axis {
        GridAxis::WorkRounds => "rounds per pixel",
        GridAxis::BlurRadius => "blur radius, pixels",
    };
    painter.text(rect.left_top(), egui::Align2::LEFT_TOP, title, font.clone(), text);
    painter.text(
        egui::pos2(cells.center().x, rect.bottom()),
        egui::Align2::CENTER_BOTTOM,
        "image size, megapixels",
        font.clone(),
        text,
    );
    // The ratios are written over the frontiers, on their cell's colour, so a line never hides one.
    let mut ratios: Vec<(Pos2, String, Color32)> = Vec::new();
    for (r, level) in g.levels.iter().enumerate() {
        let y = at(0.0, r as f32 + 0.5).y;
        painter.text(
            egui::pos2(cells.left() - 6.0, y),
            egui::Align2::RIGHT_CENTER,
            level.to_string(),
            font.clone(),
            text,
        );
        for c in 0..cols {
            let cell_rect =
                Rect::from_min_max(at(c as f32, r as f32 + 1.0), at(c as f32 + 1.0, r as f32)).shrink(1.0);
            let cell = g.cells[r * cols + c];
            let (fill, label) = match cell {
                Some(x) => {
                    let mark = x.compared.map_or("", |c| c.winner.mark());
                    // "*": end to end from the medians (the input kept always is, as the legend says).
                    let medians = if path == Path::EndToEnd { x.figure.mark() } else { "" };
                    let figure = format!("{}{mark}{medians}", ratio_text(x.speed_up()));
                    (ratio_colour(x.speed_up(), dark), figure)
                }
                None => (ui.visuals().faint_bg_color, "-".to_owned()),
            };
            painter.rect_filled(cell_rect, 2.0, fill);
            ratios.push((cell_rect.center(), label.clone(), fill));
            let id = ui.scope_id().with(("win map cell", path == Path::Resident, r, c));
            let response = ui.interact(cell_rect, id, egui::Sense::hover());
            response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Label, true, &label));
            if let Some(x) = cell {
                let sampled = x.compared.map_or_else(String::new, |c| {
                    format!("\nrun in turns: {}, {} rounds", c.label(), c.rounds)
                });
                response.on_hover_text(format!(
                    "{:.2} MP, {}: {label}\nmedians of the warm runs: GPU {}, best CPU ({}) {}{sampled}",
                    g.sizes_mp[c],
                    g.axis.level_text(f64::from(*level)),
                    crate::app::look::duration(x.gpu_ns),
                    x.cpu.0.label(),
                    crate::app::look::duration(x.cpu.1),
                ));
            }
        }
    }
    for (c, mp) in g.sizes_mp.iter().enumerate() {
        let x = at(c as f32 + 0.5, 0.0).x;
        let label = if *mp >= 10.0 {
            format!("{mp:.0}")
        } else {
            format!("{mp:.2}").trim_end_matches('0').trim_end_matches('.').to_owned()
        };
        painter.text(
            egui::pos2(x, cells.bottom() + 3.0),
            egui::Align2::CENTER_TOP,
            label,
            font.clone(),
            text,
        );
    }
    let line = Stroke::new(2.5, if dark { Color32::WHITE } else { Color32::BLACK });
    frontiers_ui(&painter, g, &at, line);
    for (centre, label, fill) in ratios {
        let galley = painter.layout_no_wrap(label, font.clone(), text_on(fill));
        let text_rect = Rect::from_center_size(centre, galley.size());
        painter.rect_filled(text_rect.expand2(egui::vec2(2.0, 0.0)), 2.0, fill);
        painter.galley(text_rect.min, galley, text_on(fill));
    }
}

/// The measured frontier (a step line along the cells' edges) and the modelled one (dashed,
/// through the column centres where it is in range; a short dash where a column is alone).
fn frontiers_ui(painter: &egui::Painter, g: &Grid, at: &dyn Fn(f32, f32) -> Pos2, line: Stroke) {
    // The measured frontier: across each column at its row's bottom edge, up or down between them.
    let mut steps: Vec<Pos2> = Vec::new();
    for (c, row) in g.measured.iter().enumerate() {
        steps.push(at(c as f32, *row as f32));
        steps.push(at(c as f32 + 1.0, *row as f32));
    }
    painter.add(egui::Shape::line(steps, line));
    // The modelled frontier: through the column centres where it is in range.
    for pair in g.modelled.windows(2).enumerate() {
        if let (c, [Some(a), Some(b)]) = pair {
            let points = [at(c as f32 + 0.5, *a as f32), at(c as f32 + 1.5, *b as f32)];
            painter.extend(egui::Shape::dashed_line(&points, line, 6.0, 4.0));
        }
    }
    for (c, y) in g.modelled.iter().enumerate() {
        let lonely = y.is_some()
            && (c == 0 || g.modelled[c - 1].is_none())
            && g.modelled.get(c + 1).is_none_or(Option::is_none);
        if let (true, Some(y)) = (lonely, y) {
            let points = [at(c as f32 + 0.2, *y as f32), at(c as f32 + 0.8, *y as f32)];
            painter.extend(egui::Shape::dashed_line(&points, line, 6.0, 4.0));
        }
    }
}

#[cfg(test)]
#[path = "win_map_tests.rs"]
mod tests;
