//! Every transfer path as achieved bandwidth against size (log x, 4 KiB to the largest size
//! measured, by fours): one line per path from its medians, and each path's n½ (the size at
//! which its fitted bandwidth is half reached) as a diamond on the fitted curve. Left of the
//! diamonds a transfer is mostly its fixed cost.

use egui::{Color32, RichText, Ui};
use egui_plot::{Line, MarkerShape, PlotPoints, Points};

use super::{fixed_plot, legend_ui, marks_at, nice_spacer};
use crate::engine::ceilings::{PathKind, PathPoint, TransferPath};

/// Each path's colour, in [`PathKind::ALL`]'s order.
const COLOURS: [Color32; 10] = [
    Color32::from_rgb(230, 140, 60),
    Color32::from_rgb(200, 170, 70),
    Color32::from_rgb(240, 200, 90),
    Color32::from_rgb(80, 170, 90),
    Color32::from_rgb(150, 210, 110),
    Color32::from_rgb(120, 150, 230),
    Color32::from_rgb(70, 110, 220),
    Color32::from_rgb(190, 110, 200),
    Color32::from_rgb(250, 120, 120),
    Color32::from_rgb(90, 200, 200),
];

/// A path's line colour: the table of fits writes each path's name in it, and is the legend.
pub fn path_colour(path: PathKind) -> Color32 {
    PathKind::ALL
        .iter()
        .position(|p| *p == path)
        .and_then(|i| COLOURS.get(i))
        .copied()
        .unwrap_or(Color32::GRAY)
}

/// The x of a size: log2 of its KiB, so 4 KiB, 16 KiB, … are evenly spaced.
fn x_of(bytes: f64) -> f64 {
    (bytes / 1024.0).max(1e-3).log2()
}

/// A size on the axis: "4K", "16K", "1M", "256M".
fn size_label(x: f64) -> String {
    let kib = 2f64.powf(x).round();
    if kib >= 1024.0 { format!("{:.0}M", kib / 1024.0) } else { format!("{kib:.0}K") }
}

/// Draws the chart of `paths`, at most `max_height` points tall with its axes and ending above
/// `bottom_y` (the lowest its window may reach), measured once its legend is laid out.
pub fn paths_chart_ui(ui: &mut Ui, paths: &[TransferPath], max_height: f32, bottom_y: f32) {
    // Each path's name is written in its colour in the table above: the legend is the diamonds'.
    let legend = [(Color32::WHITE, "diamonds: each path's n½, at half its fitted bandwidth".to_owned())];
    legend_ui(ui, &legend);
    // Room under the plot for the x axis's title.
    let below = ui.text_style_height(&egui::TextStyle::Small) * 1.2;
    let height =
        (bottom_y - ui.cursor().top() - ui.spacing().item_spacing.y - below).min(max_height).max(90.0);
    let sizes: Vec<f64> =
        paths.first().map(|p| p.points.iter().map(|q| x_of(q.bytes as f64)).collect()).unwrap_or_default();
    let last = sizes.last().copied().unwrap_or(2.0);
    let top = paths.iter().flat_map(|p| p.points.iter().map(PathPoint::gb_per_s)).fold(0.0, f64::max);
    let plot = fixed_plot(ui, "transfer paths", "", "GB/s achieved")
        .height(height)
        .x_grid_spacer(marks_at(sizes.clone(), 2.0))
        .x_axis_formatter(|mark, _| size_label(mark.value))
        .y_grid_spacer(nice_spacer(30.0, false))
        .include_x(sizes.first().copied().unwrap_or(2.0) - 0.5)
        .include_x(last + 0.5)
        .include_y(0.0)
        .include_y(top * 1.1)
        .label_formatter(|h| {
            let egui_plot::HoverPosition::NearDataPoint { plot_name, position, .. } = h else { return None };
            let kib = 2f64.powf(position.x);
            let size =
                if kib >= 1024.0 { format!("{:.1} MiB", kib / 1024.0) } else { format!("{kib:.1} KiB") };
            Some(format!("{plot_name}\n{size}: {:.2} GB/s", position.y))
        });
    plot.show(ui, |plot| {
        for p in paths {
            let c = path_colour(p.path);
            let points: Vec<[f64; 2]> =
                p.points.iter().map(|q| [x_of(q.bytes as f64), q.gb_per_s()]).collect();
            plot.points(Points::new(p.path.label(), PlotPoints::from(points.clone())).color(c).radius(2.5));
            plot.line(Line::new(p.path.label(), PlotPoints::from(points)).color(c).width(1.5));
            if let Some(f) = p.fit.filter(|f| f.n_half_bytes > 0.0) {
                let at = [x_of(f.n_half_bytes), f.gb_per_s / 2.0];
                let name = format!("{} n½", p.path.label());
                plot.points(
                    Points::new(name, vec![at]).color(c).shape(MarkerShape::Diamond).filled(true).radius(5.0),
                );
            }
        }
    });
    ui.vertical_centered(|ui| ui.label(RichText::new("bytes per transfer (log scale)").small()));
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_are_evenly_spaced_and_named_in_binary_units() {
        assert!((super::x_of(16.0 * 1024.0) - super::x_of(4.0 * 1024.0) - 2.0).abs() < 1e-12);
        assert_eq!(super::size_label(super::x_of(4096.0)), "4K");
        assert_eq!(super::size_label(super::x_of(256.0 * 1024.0 * 1024.0)), "256M");
    }
}
