//! The roofline's arithmetic and keys, shared by the roofline and the map of who wins: a roof
//! from its two ceilings, where the GPU's end-to-end roof crosses the CPU's, the rounds per
//! pixel of an intensity, SI tick labels, the series' colours and markers, and legend keys that
//! the accessibility tree (and so the UI tests) can read. Uses only the engine's sweep types.

use egui::{Color32, Ui};
use egui_plot::{GridInput, GridMark, MarkerShape};

use crate::engine::sweep::{FORMULA_OPS_PER_PIXEL, Roofline, RooflinePoint, Series, SweepResult};
use crate::pixel::OPS_PER_ROUND;

/// One roof: a bandwidth slope capped by a compute flat, either of them unknown.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct ChartRoof {
    /// Bytes per second (the slope), when measured.
    pub bytes_per_s: Option<f64>,
    /// Operations per second (the flat), when measured.
    pub ops_per_s: Option<f64>,
}

impl ChartRoof {
    /// The most operations per second this roof allows at `ops_per_byte`, from what is known of
    /// it; `None` when nothing is.
    pub fn at(self, ops_per_byte: f64) -> Option<f64> {
        match (self.bytes_per_s, self.ops_per_s) {
            (Some(_), Some(_)) => Roofline::roof(self.bytes_per_s, self.ops_per_s, ops_per_byte),
            (Some(b), None) => Some(b * ops_per_byte),
            (None, Some(o)) => Some(o),
            (None, None) => None,
        }
    }

    /// Where the slope meets the flat, operations per byte, when both are known.
    pub fn ridge(self) -> Option<f64> {
        Some(self.ops_per_s? / self.bytes_per_s?)
    }
}

/// The three roofs of a roofline: the CPU, the GPU on its own memory, the GPU end to end.
pub(super) fn roofs(r: &Roofline) -> [ChartRoof; 3] {
    [
        ChartRoof { bytes_per_s: r.cpu_bytes_per_s, ops_per_s: r.cpu_ops_per_s },
        ChartRoof { bytes_per_s: r.gpu_device_bytes_per_s, ops_per_s: r.gpu_ops_per_s },
        ChartRoof { bytes_per_s: r.transfer_bytes_per_s, ops_per_s: r.gpu_ops_per_s },
    ]
}

/// The roofs' legend names, in the order of [`roofs`].
pub(super) const ROOF_NAMES: [&str; 3] = [
    "CPU roof (memory stream, then compute)",
    "GPU device roof (device memory, then compute)",
    "GPU end-to-end roof (host-GPU transfers, then compute)",
];

/// Where the GPU's end-to-end roof stands against the CPU's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Crossing {
    /// A ceiling of either roof is unknown.
    Unknown,
    /// The end-to-end roof never rises over the CPU's (the GPU's compute is not above the CPU's).
    Never,
    /// The end-to-end roof is over the CPU's at every intensity.
    Always,
    /// Over the CPU's from this many operations per byte on.
    From(f64),
}

/// Where the end-to-end roof `e2e` rises over `cpu` and stays over it. Both flat at high
/// intensity, so it must have the higher compute; if its slope is also the steeper it is over
/// everywhere; else it crosses on its slope, where that meets the CPU's flat.
pub(super) fn crossing(cpu: ChartRoof, e2e: ChartRoof) -> Crossing {
    let (Some(cpu_bytes), Some(cpu_ops), Some(e2e_bytes), Some(e2e_ops)) =
        (cpu.bytes_per_s, cpu.ops_per_s, e2e.bytes_per_s, e2e.ops_per_s)
    else {
        return Crossing::Unknown;
    };
    if e2e_ops <= cpu_ops {
        Crossing::Never
    } else if e2e_bytes >= cpu_bytes {
        Crossing::Always
    } else {
        Crossing::From(cpu_ops / e2e_bytes)
    }
}

/// The bytes each pixel of the conversion moves, read from the points without an op (every
/// such point of a sweep moves the same); 4 (RGB8 in, gray out) when there is none.
pub(super) fn bytes_per_pixel(points: &[RooflinePoint]) -> f64 {
    points.iter().find(|p| p.ops_per_byte > 0.0 && p.op.is_none()).map_or(4.0, |p| {
        (f64::from(p.work_rounds) * f64::from(OPS_PER_ROUND) + FORMULA_OPS_PER_PIXEL as f64) / p.ops_per_byte
    })
}

/// The rounds per pixel that give `ops_per_byte` when each pixel moves `bytes_per_pixel`.
pub(super) fn rounds_at(ops_per_byte: f64, bytes_per_pixel: f64) -> f64 {
    ((ops_per_byte * bytes_per_pixel - FORMULA_OPS_PER_PIXEL as f64) / f64::from(OPS_PER_ROUND)).max(0.0)
}

/// `v` with an SI prefix: `1 k`, `10 G`, `2.5 T`; plain below 1000.
pub(super) fn si(v: f64) -> String {
    const PREFIXES: [&str; 6] = ["", " k", " M", " G", " T", " P"];
    if !(v.is_finite() && v > 0.0) {
        return "0".to_owned();
    }
    let (mut group, mut mantissa) = (0, v);
    while mantissa >= 1000.0 * (1.0 - 1e-12) && group < PREFIXES.len() - 1 {
        mantissa /= 1000.0;
        group += 1;
    }
    let digits = if mantissa >= 10.0 {
        format!("{mantissa:.0}")
    } else if mantissa >= 1.0 {
        format!("{mantissa:.1}").trim_end_matches(".0").to_owned()
    } else {
        format!("{mantissa:.2}").trim_end_matches('0').trim_end_matches('.').to_owned()
    };
    format!("{digits}{}", PREFIXES[group])
}

/// Marks at each power of ten (log10 units), and at 2 and 5 times it when the axis spans at
/// most three decades; none within about 12 points of either end, where a label centred on its
/// mark would hang past the plot into the other axis's labels (a y mark at the bottom ran into
/// the x mark at the left at 1024x640).
pub(super) fn log_marks(input: &GridInput) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    let dense = hi - lo <= 3.0;
    // `base_step_size` is egui_plot's smallest grid spacing (8 points) in axis units.
    let inset = (0.03 * (hi - lo)).max(1.5 * input.base_step_size);
    let mut marks = Vec::new();
    for k in (lo.floor() as i32)..=(hi.ceil() as i32) {
        for (m, decade) in [(1.0f64, true), (2.0, false), (5.0, false)] {
            let value = f64::from(k) + m.log10();
            if (decade || dense) && (lo + inset..=hi - inset).contains(&value) {
                marks.push(GridMark { value, step_size: if decade { 1.0 } else { 0.3 } });
            }
        }
    }
    marks
}

/// A series' colour, as in the sizes chart; the CPU on all threads dark on a light theme.
pub(super) fn series_colour(series: Series, dark_mode: bool) -> Color32 {
    match series {
        Series::Cpu1 => Color32::from_rgb(150, 150, 150),
        Series::CpuAll if dark_mode => Color32::from_rgb(230, 230, 230),
        Series::CpuAll => Color32::from_rgb(45, 45, 45),
        Series::GpuTotal => Color32::from_rgb(230, 140, 60),
        Series::GpuKernel => Color32::from_rgb(80, 170, 90),
        Series::GpuResident => Color32::from_rgb(70, 140, 220),
    }
}

/// A series' marker and short name on the roofline.
pub(super) fn series_marker(series: Series) -> (MarkerShape, &'static str) {
    match series {
        Series::Cpu1 => (MarkerShape::Cross, "CPU, 1 thread"),
        Series::CpuAll => (MarkerShape::Circle, "CPU, all threads"),
        Series::GpuKernel => (MarkerShape::Diamond, "GPU kernel only"),
        Series::GpuResident => (MarkerShape::Square, "GPU, input kept"),
        Series::GpuTotal => (MarkerShape::Up, "GPU end to end"),
    }
}

/// The clock a series' medians were taken on.
pub(super) fn series_clock(series: Series, result: &SweepResult) -> &'static str {
    match series {
        Series::GpuKernel if result.gpu_timestamps => "gpu-timestamp",
        _ => "cpu-clock",
    }
}

/// What a legend entry shows before its name.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Key {
    /// A line, solid or dashed.
    Line { colour: Color32, dashed: bool },
    /// A plot marker.
    Marker { colour: Color32, shape: MarkerShape },
    /// A filled square with an edge.
    Swatch { colour: Color32, edge: Color32 },
}

/// Legend rows: each key and its name as one widget, wrapped to the width there is, its name in
/// the accessibility tree.
pub(super) fn keys_ui(ui: &mut Ui, keys: &[(Key, String)]) {
    crate::app::charts::key_rows(ui, keys, (12.0, 18.0, 5.0, 12.0), true, |painter, key, centre| {
        draw_key(painter, *key, centre, 18.0);
    });
}

/// One key, `width` points wide, centred on `centre`.
fn draw_key(painter: &egui::Painter, key: Key, centre: egui::Pos2, width: f32) {
    let (left, right) = (centre - egui::vec2(width / 2.0, 0.0), centre + egui::vec2(width / 2.0, 0.0));
    match key {
        Key::Line { colour, dashed: false } => {
            painter.line_segment([left, right], egui::Stroke::new(2.0, colour));
        }
        Key::Line { colour, dashed: true } => {
            painter.extend(egui::Shape::dashed_line(
                &[left, right],
                egui::Stroke::new(2.0, colour),
                4.0,
                3.0,
            ));
        }
        Key::Marker { colour, shape } => {
            let r = 4.5;
            let at = |dx: f32, dy: f32| centre + egui::vec2(dx * r, dy * r);
            let fill = |points: Vec<egui::Pos2>| {
                painter.add(egui::Shape::convex_polygon(points, colour, egui::Stroke::NONE));
            };
            match shape {
                MarkerShape::Circle => {
                    painter.circle_filled(centre, r, colour);
                }
                MarkerShape::Square => fill(vec![at(-1.0, -1.0), at(1.0, -1.0), at(1.0, 1.0), at(-1.0, 1.0)]),
                MarkerShape::Diamond => fill(vec![at(0.0, -1.0), at(1.0, 0.0), at(0.0, 1.0), at(-1.0, 0.0)]),
                MarkerShape::Up => fill(vec![at(0.0, -1.0), at(1.0, 0.8), at(-1.0, 0.8)]),
                _ => {
                    let stroke = egui::Stroke::new(1.5, colour);
                    painter.line_segment([at(-1.0, -1.0), at(1.0, 1.0)], stroke);
                    painter.line_segment([at(-1.0, 1.0), at(1.0, -1.0)], stroke);
                }
            }
        }
        Key::Swatch { colour, edge } => {
            let rect = egui::Rect::from_center_size(centre, egui::vec2(12.0, 12.0));
            painter.rect_filled(rect, 2.0, colour);
            painter.rect_stroke(rect, 2.0, egui::Stroke::new(1.0, edge), egui::StrokeKind::Inside);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roof(bytes_per_s: f64, ops_per_s: f64) -> ChartRoof {
        ChartRoof { bytes_per_s: Some(bytes_per_s), ops_per_s: Some(ops_per_s) }
    }

    #[test]
    fn a_roof_is_its_slope_then_its_flat_and_only_what_is_known() {
        let cpu = roof(20e9, 60e9);
        assert_eq!(cpu.at(1.0), Some(20e9));
        assert_eq!(cpu.at(10.0), Some(60e9));
        assert_eq!(cpu.ridge(), Some(3.0));
        assert_eq!(ChartRoof { bytes_per_s: Some(5.0), ops_per_s: None }.at(2.0), Some(10.0));
        assert_eq!(ChartRoof { bytes_per_s: None, ops_per_s: Some(7.0) }.at(2.0), Some(7.0));
        assert_eq!(ChartRoof { bytes_per_s: None, ops_per_s: None }.at(2.0), None);
    }

    #[test]
    fn the_end_to_end_roof_crosses_the_cpus_where_its_slope_meets_the_cpu_flat() {
        // A real GPU: transfers 10 GB/s under the CPU's 20 GB/s, compute 100x the CPU's.
        let (cpu, e2e) = (roof(20e9, 60e9), roof(10e9, 6e12));
        assert_eq!(crossing(cpu, e2e), Crossing::From(6.0));
        // At 6 ops/byte the two roofs meet; above it the GPU's is higher.
        assert_eq!(e2e.at(6.0), cpu.at(6.0));
        assert!(e2e.at(7.0) > cpu.at(7.0) && e2e.at(5.0) < cpu.at(5.0));
        // lavapipe: the "GPU" is the CPU's own cores, no more compute.
        assert_eq!(crossing(cpu, roof(8e9, 50e9)), Crossing::Never);
        assert_eq!(crossing(cpu, roof(30e9, 6e12)), Crossing::Always);
        assert_eq!(crossing(cpu, ChartRoof { bytes_per_s: None, ops_per_s: Some(1e12) }), Crossing::Unknown);
    }

    #[test]
    fn rounds_and_bytes_come_back_from_the_points() {
        // RGB8 in, gray out: 4 bytes; 256 rounds are 3 * 256 + 7 operations.
        let p = RooflinePoint {
            series: Series::CpuAll,
            work_rounds: 256,
            op: crate::pixel::Op::None,
            megapixels: 33.2,
            ops_per_byte: 775.0 / 4.0,
            ops_per_s: 1e10,
        };
        assert!((bytes_per_pixel(&[p]) - 4.0).abs() < 1e-9);
        assert!((bytes_per_pixel(&[]) - 4.0).abs() < 1e-9);
        assert!((rounds_at(775.0 / 4.0, 4.0) - 256.0).abs() < 1e-9);
        assert!(rounds_at(0.1, 4.0).abs() < 1e-12, "never below 0 rounds");
    }

    #[test]
    fn ticks_read_with_si_prefixes() {
        let texts =
            [(1.0, "1"), (10.0, "10"), (500.0, "500"), (1e3, "1 k"), (2.5e9, "2.5 G"), (1e10, "10 G")];
        let more = [(1e11, "100 G"), (1e12, "1 T"), (0.5, "0.5"), (1.75, "1.8")];
        for (v, text) in texts.into_iter().chain(more) {
            assert_eq!(si(v), text);
        }
        let marks = log_marks(&GridInput { bounds: (8.5, 13.2), base_step_size: 0.1 });
        assert_eq!(marks.iter().map(|m| m.value).collect::<Vec<_>>(), vec![9.0, 10.0, 11.0, 12.0, 13.0]);
        let marks = log_marks(&GridInput { bounds: (-0.1, 1.1), base_step_size: 0.01 });
        assert_eq!(marks.len(), 4, "1, 2, 5, 10 on one decade");
        // Within 1.5 grid steps (12 points) of an end, no mark: its label would hang past it.
        let marks = log_marks(&GridInput { bounds: (0.0, 1.0), base_step_size: 0.1 });
        assert_eq!(marks.iter().map(|m| m.value).collect::<Vec<_>>(), vec![2f64.log10(), 5f64.log10()]);
    }
}
