//! The sweep's roofline (issue #18): integer operations per second against operations per byte
//! moved, both log10 (`egui_plot` has no log axis: the plot holds log10 values and the ticks read
//! `10`, `1 k`, `1 G`). Each roof is a bandwidth slope capped by a compute flat, from the sweep's
//! ceilings, drawn where known and named under the chart where not (never guessed). The runs sit
//! under their roofs, one marker per series. Where the GPU's end-to-end roof (bounded by the
//! host-GPU transfers) rises over the CPU's, a labelled line marks the intensity from which the
//! GPU can win end to end on the machine the sweep ran on. The notes say why a run stands above
//! its roof only from what the sweep holds (how busy the machine was; for this machine's own
//! sweep, whether an image fits its CPU's last-level cache), and name the adapter panel only
//! for this machine's sweep. Uses only the engine's sweep types.

use egui::Ui;
use egui_plot::{HoverPosition, Line, LineStyle, Plot, PlotPoints, Points, VLine};

use super::roofs::{
    ChartRoof, Crossing, Key, ROOF_NAMES, bytes_per_pixel, crossing, keys_ui, log_marks, roofs, rounds_at,
    series_clock, series_colour, series_marker, si,
};
use super::{notes_height, notes_open, notes_ui};
use crate::engine::sweep::{Roofline, RooflinePoint, Series, SweepResult, cell_ops_per_pixel};
use crate::system::units::human_bytes;

/// The plot is never squeezed below this height, in points.
const MIN_PLOT_HEIGHT: f32 = 140.0;

/// Draws the roofline of `result` (this machine's sweep where `own`, else one loaded), its
/// legend above and its notes under, ending near `bottom_y` (the lowest the window may reach):
/// the plot gives way to the notes down to 140 points, and below that the notes fold into one
/// line that opens on a click.
pub fn roofline_ui(ui: &mut Ui, result: &SweepResult, bottom_y: f32, own: bool) {
    let Some(roofline) = &result.roofline else {
        ui.label("This sweep carries no roofline (saved by an earlier graylab): run a new sweep.");
        return;
    };
    let dark = ui.visuals().dark_mode;
    let roof_colours = [Series::CpuAll, Series::GpuKernel, Series::GpuTotal].map(|s| series_colour(s, dark));
    let line_colour = crate::app::look::crossover(ui.visuals());
    let all_roofs = roofs(roofline);
    // A blur's CPU and GPU points of one cell sit at different intensities (the GPU moves its
    // intermediate through device memory): one x is not one cell on both roofs, so no crossing.
    let cross = if intensities_differ(&roofline.points) {
        Crossing::Unknown
    } else {
        crossing(all_roofs[0], all_roofs[2])
    };
    let bytes = bytes_per_pixel(&roofline.points);
    let series: Vec<Series> =
        Series::ALL.into_iter().filter(|s| roofline.points.iter().any(|p| p.series == *s)).collect();

    keys_ui(ui, &legend(&all_roofs, &series, cross, bytes, ui.visuals()));
    let notes = notes(result, roofline, (cross, bytes), &Machine::of(result, own));
    let (height, fold) = plot_height(ui, &notes, bottom_y);
    let (x_lo, x_hi, y_lo, y_hi) = bounds(roofline, &all_roofs, cross);
    let xs: Vec<f64> = (0..=160).map(|i| x_lo + (x_hi - x_lo) * f64::from(i) / 160.0).collect();
    let points_of = |s: Series| -> Vec<&RooflinePoint> {
        roofline
            .points
            .iter()
            .filter(|p| p.series == s && p.ops_per_byte > 0.0 && p.ops_per_s > 0.0)
            .collect()
    };
    let hover = |h: &HoverPosition<'_>| -> Option<String> {
        let (name, position, index) = match h {
            HoverPosition::NearDataPoint { plot_name, position, index } => {
                (*plot_name, *position, Some(*index))
            }
            HoverPosition::Elsewhere { position } => ("", *position, None),
        };
        if let Some(s) = series.iter().find(|s| series_marker(**s).1 == name)
            && let Some(p) = index.and_then(|i| points_of(*s).get(i).copied())
        {
            return Some(format!(
                "{name} ({})\nk = {} rounds{}, {:.2} MP\n{} ops/s at {} ops/byte",
                series_clock(*s, result),
                p.work_rounds,
                if p.op.is_none() { String::new() } else { format!(", {}", p.op) },
                p.megapixels,
                si(p.ops_per_s),
                si(p.ops_per_byte)
            ));
        }
        let (x, y) = (10f64.powf(position.x), 10f64.powf(position.y));
        Some(format!("{name}\n{} ops/s at {} ops/byte", si(y), si(x)))
    };
    Plot::new("roofline")
        .height(height)
        .show_background(false)
        .x_axis_label("integer operations per byte moved (log)")
        .y_axis_label("integer ops/s (log)")
        .x_grid_spacer(|input| log_marks(&input))
        .y_grid_spacer(|input| log_marks(&input))
        .x_axis_formatter(|mark, _| si(10f64.powf(mark.value)))
        .y_axis_formatter(|mark, _| si(10f64.powf(mark.value)))
        .include_x(x_lo)
        .include_x(x_hi)
        .include_y(y_lo)
        .include_y(y_hi)
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .allow_boxed_zoom(false)
        .label_formatter(hover)
        .show(ui, |plot| {
            for ((roof, name), colour) in all_roofs.iter().zip(ROOF_NAMES).zip(roof_colours) {
                let line: Vec<[f64; 2]> =
                    xs.iter().filter_map(|x| Some([*x, roof.at(10f64.powf(*x))?.log10()])).collect();
                if !line.is_empty() {
                    plot.line(Line::new(name, PlotPoints::from(line)).color(colour).width(1.5));
                }
            }
            if let Crossing::From(x) = cross {
                plot.vline(
                    VLine::new("GPU can win end to end from here", x.log10())
                        .color(line_colour)
                        .style(LineStyle::dashed_dense())
                        .width(1.5),
                );
            }
            for s in &series {
                let (shape, name) = series_marker(*s);
                let pts: Vec<[f64; 2]> =
                    points_of(*s).iter().map(|p| [p.ops_per_byte.log10(), p.ops_per_s.log10()]).collect();
                plot.points(
                    Points::new(name, PlotPoints::from(pts))
                        .shape(shape)
                        .color(series_colour(*s, dark))
                        .filled(true)
                        .radius(4.0),
                );
            }
        });
    notes_ui(ui, "roofline notes", &notes, fold);
}

/// The plot's height: what is left above `bottom_y` once the notes have their room, and whether
/// the notes fold into one line (then the plot takes their room while they are closed).
fn plot_height(ui: &Ui, notes: &[(String, bool)], bottom_y: f32) -> (f32, bool) {
    // The room under the legend, less a little slack.
    let room = bottom_y - ui.cursor().top() - 8.0;
    let fold = room - notes_height(ui, notes) < MIN_PLOT_HEIGHT;
    let height = if fold && !notes_open(ui, "roofline notes") {
        room - ui.spacing().interact_size.y - ui.spacing().item_spacing.y
    } else {
        room - notes_height(ui, notes)
    };
    (height.clamp(MIN_PLOT_HEIGHT, 360.0), fold)
}

/// The legend: the roofs that are known, the series drawn, the crossing if there is one.
fn legend(
    roofs: &[ChartRoof; 3],
    series: &[Series],
    cross: Crossing,
    bytes: f64,
    visuals: &egui::Visuals,
) -> Vec<(Key, String)> {
    let dark = visuals.dark_mode;
    let roof_colours = [Series::CpuAll, Series::GpuKernel, Series::GpuTotal].map(|s| series_colour(s, dark));
    let mut keys: Vec<(Key, String)> = Vec::new();
    for ((roof, name), colour) in roofs.iter().zip(ROOF_NAMES).zip(roof_colours) {
        if roof.at(1.0).is_some() {
            keys.push((Key::Line { colour, dashed: false }, name.to_owned()));
        }
    }
    for s in series {
        let (shape, name) = series_marker(*s);
        keys.push((Key::Marker { colour: series_colour(*s, dark), shape }, name.to_owned()));
    }
    if let Crossing::From(x) = cross {
        let label = format!(
            "GPU can win end to end from {} ops/byte (about {:.0} rounds per pixel)",
            si(x),
            rounds_at(x, bytes)
        );
        keys.push((Key::Line { colour: crate::app::look::crossover(visuals), dashed: true }, label));
    }
    keys
}

/// The plot's bounds in log10 units: the points, the crossing and every ridge, with room
/// around them, at least two decades wide.
fn bounds(r: &Roofline, roofs: &[ChartRoof; 3], cross: Crossing) -> (f64, f64, f64, f64) {
    let mut xs: Vec<f64> = r.points.iter().map(|p| p.ops_per_byte).collect();
    xs.extend(roofs.iter().filter_map(|roof| roof.ridge()));
    if let Crossing::From(x) = cross {
        xs.push(x);
    }
    let xs: Vec<f64> = xs.into_iter().filter(|x| x.is_finite() && *x > 0.0).map(f64::log10).collect();
    let (mut x_lo, mut x_hi) = min_max(&xs).unwrap_or((0.0, 3.0));
    x_lo -= 0.3;
    x_hi += 0.3;
    if x_hi - x_lo < 2.0 {
        let mid = f64::midpoint(x_lo, x_hi);
        (x_lo, x_hi) = (mid - 1.0, mid + 1.0);
    }
    let mut ys: Vec<f64> = r.points.iter().map(|p| p.ops_per_s).collect();
    for roof in roofs {
        ys.extend([x_lo, x_hi].iter().filter_map(|x| roof.at(10f64.powf(*x))));
    }
    let ys: Vec<f64> = ys.into_iter().filter(|y| y.is_finite() && *y > 0.0).map(f64::log10).collect();
    let (mut y_lo, mut y_hi) = min_max(&ys).map_or((8.0, 12.0), |(lo, hi)| (lo - 0.3, hi + 0.3));
    // Three decades at least, so that three powers of ten are labelled on the shortest plot.
    if y_hi - y_lo < 3.0 {
        let mid = f64::midpoint(y_lo, y_hi);
        (y_lo, y_hi) = (mid - 1.5, mid + 1.5);
    }
    (x_lo, x_hi, y_lo, y_hi)
}

fn min_max(v: &[f64]) -> Option<(f64, f64)> {
    let lo = v.iter().copied().reduce(f64::min)?;
    let hi = v.iter().copied().reduce(f64::max)?;
    Some((lo, hi))
}

/// What the notes may say of the machine a sweep ran on.
struct Machine {
    /// This machine's own sweep: the adapter panel here measures its ceilings.
    own: bool,
    /// The CPU's last-level cache in bytes: known for this machine's own sweep only.
    llc_bytes: Option<u64>,
    /// How busy the machine was while the sweep ran, as the sweep says.
    load: Load,
}

/// How busy a sweep's machine was, as the sweep says.
#[derive(Clone, Debug, PartialEq)]
enum Load {
    /// Busy: how, in words.
    Busy(String),
    /// Measured, and not busy.
    Quiet,
    /// Not measured (a sweep saved before it was, or too short to tell).
    Unknown,
}

impl Machine {
    /// The machine `result` ran on: this one where `own`.
    fn of(result: &SweepResult, own: bool) -> Self {
        let load = match result.busy_text() {
            Some(text) => Load::Busy(text),
            None if result.busy.is_some() || result.points.iter().any(|p| p.busy.is_some()) => Load::Quiet,
            None => Load::Unknown,
        };
        let llc_bytes = own
            .then(crate::system::cpu_caches::cpu_cache_bytes)
            .and_then(|caches| caches.into_iter().max_by_key(|(level, _)| *level).map(|(_, bytes)| bytes));
        Self { own, llc_bytes, load }
    }

    /// Where the ceilings are measured again: the adapter panel here, the command elsewhere.
    fn measure_again(&self) -> &'static str {
        if self.own {
            "measure them again (the adapter panel, or graylab info --probe)"
        } else {
            "graylab info --probe measures them again on the machine it ran on"
        }
    }

    /// "this machine", or the loaded sweep's.
    fn name(&self) -> &'static str {
        if self.own { "this machine" } else { "the machine it ran on" }
    }
}

/// What the chart shows, in a few sentences: the roofs, the crossing, the ceilings not known;
/// each with whether it is a warning.
fn notes(
    result: &SweepResult,
    r: &Roofline,
    (cross, bytes): (Crossing, f64),
    machine: &Machine,
) -> Vec<(String, bool)> {
    let mut notes = Vec::new();
    let mut small = |text: String| notes.push((text, false));
    small(
        "Each roof is the most a path can do: a bandwidth slope, then a compute ceiling. More work per pixel \
         moves the points right; the GPU end to end never rises above its transfer slope, however fast its \
         kernel. Medians of the warm runs; the GPU kernel on GPU timestamps where the adapter has them, the rest \
         on the CPU clock."
            .to_owned(),
    );
    let gpu_ops = r.gpu_ops_per_s.map_or_else(|| "unknown".to_owned(), si);
    let cpu_ops = r.cpu_ops_per_s.map_or_else(|| "unknown".to_owned(), si);
    match cross {
        Crossing::From(x) => small(format!(
            "Right of the dashed line ({} ops/byte, about {:.0} rounds per pixel at {bytes:.0} bytes a pixel) \
             the GPU's round-trip roof is over the CPU's: only there can it win end to end on {}; the \
             triangles show whether it does.",
            si(x),
            rounds_at(x, bytes),
            machine.name()
        )),
        Crossing::Never => small(format!(
            "The GPU's end-to-end roof never rises over the CPU's: its compute ceiling ({gpu_ops} ops/s) is not \
             above the CPU's ({cpu_ops} ops/s), so end to end the GPU cannot beat the CPU's roof here at any work \
             per pixel (a cell can still win where the CPU runs under its roof)."
        )),
        Crossing::Always => small(
            "The host-GPU transfers are faster than the CPU's memory stream: the GPU's end-to-end roof is over \
             the CPU's at every intensity."
                .to_owned(),
        ),
        Crossing::Unknown => {}
    }
    if let Some(note) = cpu_above_note(r, machine) {
        notes.push((note, true));
    }
    if let Some(note) = gpu_above_note(r, machine) {
        notes.push((note, true));
    }
    let unknown: Vec<&str> = [
        (r.cpu_bytes_per_s, "the CPU memory stream"),
        (r.cpu_ops_per_s, "the CPU compute ceiling"),
        (r.gpu_device_bytes_per_s, "the GPU device bandwidth"),
        (r.gpu_ops_per_s, "the GPU compute ceiling"),
        (r.transfer_bytes_per_s, "the host-GPU transfers"),
    ]
    .into_iter()
    .filter(|(v, _)| v.is_none())
    .map(|(_, name)| name)
    .collect();
    if result.adapter.is_none() {
        notes.push(("No GPU in this sweep: only the CPU's roof and points.".to_owned(), false));
    } else if !unknown.is_empty() {
        notes.push((
            format!(
                "Not measured for this sweep: {}. Their parts of the roofs are left out, not guessed{}.",
                unknown.join(", "),
                if cross == Crossing::Unknown { ", and so is where the GPU could win" } else { "" }
            ),
            false,
        ));
    }
    notes
}

/// Why GPU kernel runs sit above the GPU's roof (by more than 5%), where any do, from what the
/// sweep holds: its ceilings were measured low on a busy machine only where the sweep says it
/// was busy; on a quiet one the ceilings are not this kernel's limit.
fn gpu_above_note(r: &Roofline, machine: &Machine) -> Option<String> {
    let above = r.points.iter().filter(|p| p.series == Series::GpuKernel).any(|p| {
        Roofline::roof(r.gpu_device_bytes_per_s, r.gpu_ops_per_s, p.ops_per_byte)
            .is_some_and(|roof| p.ops_per_s > roof * 1.05)
    });
    if !above {
        return None;
    }
    let again = machine.measure_again();
    Some(match &machine.load {
        Load::Busy(how) => format!(
            "Runs above the GPU's roof: its ceilings were measured low, the machine busy ({how}); {again} on a \
             quiet one."
        ),
        Load::Quiet => format!(
            "Runs above the GPU's roof: the kernel went faster than the ceilings the roof is drawn from (a device \
             copy, a compute probe), on a machine that was not busy: those ceilings are not this kernel's limit, \
             so its share of them reads high; {again} to see whether they hold."
        ),
        Load::Unknown => format!(
            "Runs above the GPU's roof: the kernel went faster than the ceilings the roof is drawn from (a device \
             copy, a compute probe); the sweep does not say whether the machine was busy; {again} to see whether \
             they hold."
        ),
    })
}

/// Why CPU runs sit above the CPU's roof (by more than 5%), where any do, saying only what
/// holds for them: a run on the roof's slope at a size smaller than the stream's (the sweep's
/// largest) whose image fits the last-level cache (known for this machine's sweep) ran in the
/// CPU's caches; one that does not fit, or of a machine whose caches are not known, beat the
/// stream for a reason the sweep does not show; one on the slope at the stream's size beat the
/// fastest stream measured there (slowed by other work where the sweep was busy); one on the
/// flat beat the compute ceiling, measured low.
fn cpu_above_note(r: &Roofline, machine: &Machine) -> Option<String> {
    let cpu: Vec<&RooflinePoint> = r.points.iter().filter(|p| p.series == Series::CpuAll).collect();
    let stream_mp = r.cpu_stream_mp.or_else(|| cpu.iter().map(|p| p.megapixels).reduce(f64::max))?;
    let (mut cached, mut beat, mut at_stream, mut compute) = (Vec::new(), Vec::new(), false, false);
    for p in cpu {
        let Some(roof) = Roofline::roof(r.cpu_bytes_per_s, r.cpu_ops_per_s, p.ops_per_byte) else { continue };
        if p.ops_per_s <= roof * 1.05 {
            continue;
        }
        if r.cpu_ops_per_s.is_some_and(|ops| roof >= ops) {
            compute = true;
        } else if p.megapixels < stream_mp * (1.0 - 1e-9) {
            // The bytes the run moved: its operations over its operations per byte.
            let bytes = p.megapixels * 1e6 * cell_ops_per_pixel(p.work_rounds, p.op) as f64 / p.ops_per_byte;
            let fits = machine.llc_bytes.is_some_and(|llc| bytes <= llc as f64);
            if fits { cached.push(p.megapixels) } else { beat.push(p.megapixels) }
        } else {
            at_stream = true;
        }
    }
    let sizes = |mut mps: Vec<f64>| {
        mps.sort_by(f64::total_cmp);
        mps.dedup();
        mps.iter().map(|mp| format!("{mp:.2}")).collect::<Vec<_>>().join(", ")
    };
    let busy = match &machine.load {
        Load::Busy(how) => Some(how.as_str()),
        Load::Quiet | Load::Unknown => None,
    };
    let mut why = Vec::new();
    if !cached.is_empty() {
        let llc = machine.llc_bytes.map_or_else(String::new, |b| format!(" ({})", human_bytes(b)));
        why.push(format!(
            "at {} MP the image fits the CPU's last-level cache{llc}, faster than the memory stream the roof was \
             measured at ({stream_mp:.2} MP, the largest size)",
            sizes(cached)
        ));
    }
    if !beat.is_empty() {
        let reason = busy.map_or_else(
            || "the sweep does not show why".to_owned(),
            |how| format!("the stream may have been slowed: the machine was busy ({how})"),
        );
        why.push(format!(
            "at {} MP runs beat the memory stream the roof was measured at ({stream_mp:.2} MP, the largest size): \
             {reason}",
            sizes(beat)
        ));
    }
    if at_stream {
        let reason = busy.map_or_else(
            || {
                "the stream is not this kernel's limit there (the sweep does not show the machine busy)"
                    .to_owned()
            },
            |how| {
                format!("the stream's runs were slowed by other work ({how}; sweep again on a quiet machine)")
            },
        );
        why.push(format!(
            "at {stream_mp:.2} MP, the size of the roof's memory stream, a run beat the fastest stream measured \
             there: {reason}"
        ));
    }
    if compute {
        let on = if busy.is_some() { ", on a busy machine" } else { "" };
        why.push(format!(
            "a run beat the compute ceiling: it was measured low{on} ({})",
            machine.measure_again()
        ));
    }
    (!why.is_empty()).then(|| format!("Runs above the CPU's roof: {}.", why.join("; ")))
}

/// Whether the CPU's and the GPU's end-to-end points of one cell (its work level and op) sit at
/// different operations per byte, as a blur's do.
fn intensities_differ(points: &[RooflinePoint]) -> bool {
    let at = |s: Series| points.iter().filter(move |p| p.series == s);
    at(Series::CpuAll).any(|c| {
        at(Series::GpuTotal).any(|g| {
            g.op == c.op
                && g.work_rounds == c.work_rounds
                && (g.ops_per_byte - c.ops_per_byte).abs() > 1e-9 * c.ops_per_byte.abs().max(1.0)
        })
    })
}

#[cfg(test)]
#[path = "roofline_tests.rs"]
mod tests;
