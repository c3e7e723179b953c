//! Operations per round trip: the time per operation against the count `n` of operations per
//! round trip (log x), for the GPU (its whole round trip, upload and download included, divided
//! by `n`) and the CPU (`n` passes on every thread, divided by `n`), the GPU's passes alone
//! (timestamps) dotted where measured, and a line from the count where the GPU starts to win
//! (decided wins only). The legend, with each series' clock, and the verdict at each count (the
//! GPU's speed-up with its 95% interval, or "inconclusive here") sit above the plot; hovering a
//! count names its verdict too.

use egui::{Color32, RichText, Ui};
use egui_plot::{Line, LineStyle, PlotPoints, Points, VLine};

use super::{CPU_COLOUR, GPU_COLOUR, KEPT_COLOUR, fixed_plot, legend_ui, marks_at, nice_spacer};
use crate::engine::round_trip::{RoundTripPoint, RoundTripResult};
use crate::engine::sweep::Winner;

/// The x of a count: log2, so 1, 2, 4, 8, 16 are evenly spaced.
fn x_of(n: u32) -> f64 {
    f64::from(n.max(1)).log2()
}

/// The verdict at one count, in a line: "n = 4: GPU faster: 1.80x (1.50–2.10), 6 rounds", or
/// "n = 2: inconclusive here, within the noise (±4%): 0.97x (0.90–1.05), 42 rounds".
fn point_verdict(p: &RoundTripPoint) -> String {
    let rounds = p.comparison.rounds;
    let rounds = if rounds == 1 { "1 round".to_owned() } else { format!("{rounds} rounds") };
    let decided = matches!(p.comparison.winner, Winner::GpuFaster | Winner::CpuFaster);
    let inconclusive = if decided { "" } else { "inconclusive here, " };
    format!("n = {}: {inconclusive}{}, {rounds}", p.passes, p.comparison.label())
}

/// One series: its name, colour, style and (x, ms per operation) points.
type Series = (String, Color32, LineStyle, Vec<[f64; 2]>);

/// The series of `r`: the GPU's whole round trip per operation, the CPU's, and the GPU's passes
/// alone where they were timed.
fn series(r: &RoundTripResult) -> Vec<Series> {
    let gpu = r.points.iter().map(|p| [x_of(p.passes), p.gpu_per_op_ns / 1e6]).collect();
    let cpu = r.points.iter().map(|p| [x_of(p.passes), p.cpu_per_op_ns.median_ns as f64 / 1e6]).collect();
    let kernel: Vec<[f64; 2]> = r
        .points
        .iter()
        .filter_map(|p| Some([x_of(p.passes), p.gpu_kernel_ns?.median_ns as f64 / f64::from(p.passes) / 1e6]))
        .collect();
    let mut all = vec![
        (format!("GPU: whole round trip / n ({})", r.clocks.gpu_total), GPU_COLOUR, LineStyle::Solid, gpu),
        (format!("CPU: n passes / n ({})", r.clocks.cpu), CPU_COLOUR, LineStyle::Solid, cpu),
    ];
    if let (false, Some(clock)) = (kernel.is_empty(), &r.clocks.gpu_kernel) {
        all.push((format!("GPU passes alone / n ({clock})"), KEPT_COLOUR, LineStyle::dotted_dense(), kernel));
    }
    all
}

/// Draws the chart of `r`, at most `max_height` points tall with its axes, and ending above
/// `bottom_y` (the lowest its window may reach), measured once its note and legend are laid out:
/// a height taken before them pushed the x axis past the window's edge at 1024x640.
pub fn round_trips_chart_ui(ui: &mut Ui, r: &RoundTripResult, max_height: f32, bottom_y: f32) {
    let all = series(r);
    let mut legend: Vec<(Color32, String)> = all.iter().map(|(name, c, ..)| (*c, name.clone())).collect();
    if let Some(n) = r.gpu_wins_from_passes {
        legend.push((Color32::YELLOW, format!("the GPU wins from n = {n} (decided)")));
    }
    ui.label(
        RichText::new(
            "Each GPU point is one round trip (one upload, n passes over the kept input, one download) \
             divided by n; each CPU point is n passes on every thread divided by n. Medians of the warm \
             rounds, the two taken in turns until the GPU's speed-up per operation (CPU over GPU, 95% \
             interval) lies clear of 1.",
        )
        .small()
        .weak(),
    );
    legend_ui(ui, &legend);
    let verdicts: Vec<(u32, String)> = r.points.iter().map(|p| (p.passes, point_verdict(p))).collect();
    // One flow of short verdicts, not a line each: at 1024x640 five lines squeezed the plot.
    ui.horizontal_wrapped(|ui| {
        for (i, (_, line)) in verdicts.iter().enumerate() {
            if i > 0 {
                ui.label(RichText::new("·").small().weak());
            }
            ui.label(RichText::new(line).small());
        }
    });
    let rising = rising_note(r);
    // Room under the plot for the x axis's title (a line of its own: on the axis it ran into the
    // middle tick) and the note on a rise.
    let below = ui.text_style_height(&egui::TextStyle::Small) * if rising.is_some() { 3.2 } else { 1.2 };
    let height =
        (bottom_y - ui.cursor().top() - ui.spacing().item_spacing.y - below).min(max_height).max(120.0);
    let counts: Vec<f64> = r.points.iter().map(|p| x_of(p.passes)).collect();
    let top = all.iter().flat_map(|s| s.3.iter().map(|p| p[1])).fold(0.0, f64::max);
    let last = counts.last().copied().unwrap_or(1.0);
    let plot = fixed_plot(ui, "round trips", "", "ms per operation")
        .height(height)
        .x_grid_spacer(marks_at(counts, 1.0))
        .x_axis_formatter(|mark, _| format!("{:.0}", 2f64.powf(mark.value)))
        .y_grid_spacer(nice_spacer(30.0, false))
        .include_x(-0.3)
        .include_x(last + 0.3)
        .include_y(0.0)
        .include_y(top * 1.1)
        .label_formatter(move |h| {
            let (name, p) = match h {
                egui_plot::HoverPosition::NearDataPoint { plot_name, position, .. } => {
                    (*plot_name, *position)
                }
                egui_plot::HoverPosition::Elsewhere { position } => ("", *position),
            };
            let n = 2f64.powf(p.x).round();
            // The count's verdict without its "n = 4: ", which the line above already says.
            let verdict = verdicts
                .iter()
                .find(|(passes, _)| (f64::from(*passes) - n).abs() < 0.5)
                .and_then(|(_, v)| v.split_once(": ").map(|(_, rest)| rest));
            Some(format!("{name}\nn = {n:.0}: {:.3} ms per operation\n{}", p.y, verdict.unwrap_or_default()))
        });
    plot.show(ui, |plot| {
        for (name, colour, style, points) in all {
            plot.points(
                Points::new(name.clone(), PlotPoints::from(points.clone())).color(colour).radius(3.0),
            );
            plot.line(Line::new(name, PlotPoints::from(points)).color(colour).style(style).width(2.0));
        }
        if let Some(n) = r.gpu_wins_from_passes {
            plot.vline(VLine::new("the GPU wins from here", x_of(n)).color(Color32::YELLOW));
        }
    });
    ui.vertical_centered(|ui| ui.label(RichText::new("operations per round trip, n (log scale)").small()));
    if let Some(note) = rising {
        ui.label(RichText::new(note).small().weak());
    }
}

/// A sentence under the chart when a backend's time per operation rises with `n` by more than
/// a tenth from the first count to the last (it should fall, or stay level).
fn rising_note(r: &RoundTripResult) -> Option<String> {
    let (first, last) = (r.points.first()?, r.points.last()?);
    let gpu = (first.gpu_per_op_ns, last.gpu_per_op_ns);
    let cpu = (first.cpu_per_op_ns.median_ns as f64, last.cpu_per_op_ns.median_ns as f64);
    let risen: Vec<String> = [("GPU", gpu), ("CPU", cpu)]
        .iter()
        .filter(|(_, (a, b))| *a > 0.0 && *b > *a * 1.1)
        .map(|(name, (a, b))| format!("{name} {:.1} ms to {:.1} ms", a / 1e6, b / 1e6))
        .collect();
    (!risen.is_empty()).then(|| {
        format!(
            "The time per operation rises with n ({} from n = {} to {}): more passes share one upload and one \
             download, so it should fall; a rise means each pass itself took longer in the longer round trips \
             (the machine busier, slower or throttled then): a reason to measure again, not a property of the \
             backend.",
            risen.join(", "),
            first.passes,
            last.passes
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_evenly_spaced() {
        assert!((x_of(1) - 0.0).abs() < 1e-12);
        assert!((x_of(16) - 4.0).abs() < 1e-12);
        assert!((x_of(8) - x_of(4) - (x_of(2) - x_of(1))).abs() < 1e-12);
        assert!((x_of(0)).abs() < 1e-12);
    }
}
