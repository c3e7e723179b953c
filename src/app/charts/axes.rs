//! Axis ticks on a 1-2-5 scale, at least three to an axis where the room allows.

use egui_plot::{GridInput, GridMark};

/// The smallest of 1, 2, 5 x 10^k not below `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let power = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * power).find(|s| *s >= raw * 0.999).unwrap_or(10.0 * power)
}

/// The next smaller step of the 1-2-5 scale.
fn smaller_step(step: f64) -> f64 {
    let power = 10f64.powf(step.log10().floor());
    let mantissa = (step / power).round();
    if mantissa >= 5.0 {
        2.0 * power
    } else if mantissa >= 2.0 {
        power
    } else {
        0.5 * power
    }
}

/// How close to the top or right end of an axis a mark may sit, in points: a label centred on a
/// mark nearer the end than half its size runs out of the chart (a "200" at the right end of a
/// time axis is cut by the plot's edge; a "90" at the top of a y axis runs into the line above).
const END_ROOM_POINTS: f64 = 12.0;

/// Grid marks about `target_points` apart on a 1-2-5 scale, denser where that is needed for at
/// least three marks; whole numbers only when `integers`. No mark sits within
/// `END_ROOM_POINTS` of the axis's upper end, where its label would be cut, and no two closer
/// than `END_ROOM_POINTS` (a label's height on a y axis).
pub fn nice_spacer(target_points: f64, integers: bool) -> impl Fn(GridInput) -> Vec<GridMark> {
    move |input: GridInput| spaced(&input, target_points, integers, |_| END_ROOM_POINTS)
}

/// As [`nice_spacer`], for an x axis, where labels stand side by side: marks never closer than
/// their labels are wide ("2000" and "4000" ran into one another as "20004000" on a 130-point
/// timeline).
pub fn nice_x_spacer(target_points: f64, integers: bool) -> impl Fn(GridInput) -> Vec<GridMark> {
    move |input: GridInput| {
        let (lo, hi) = input.bounds;
        let label_points = move |step: f64| {
            let chars = [lo, hi]
                .into_iter()
                .map(|v| step_label(&GridMark { value: (v / step).round() * step, step_size: step }).len())
                .max()
                .unwrap_or(1);
            chars as f64 * LABEL_CHAR_POINTS + LABEL_GAP_POINTS
        };
        spaced(&input, target_points, integers, label_points)
    }
}

/// The width of one digit of an axis label, in points, and the least gap between two labels.
const LABEL_CHAR_POINTS: f64 = 7.0;
const LABEL_GAP_POINTS: f64 = 10.0;

/// Marks on a 1-2-5 scale about `target_points` apart, at least `least_points(step)` apart.
fn spaced(
    input: &GridInput,
    target_points: f64,
    integers: bool,
    least_points: impl Fn(f64) -> f64,
) -> Vec<GridMark> {
    // egui_plot's base step is the value of its minimum grid spacing (8 points).
    let per_point = input.base_step_size / 8.0;
    let (lo, hi) = input.bounds;
    let top = hi - END_ROOM_POINTS * per_point;
    let marks = |step: f64| {
        let (first, last) = ((lo / step).ceil() as i64, (top / step).floor() as i64);
        (first..=last).map(|k| GridMark { value: k as f64 * step, step_size: step }).collect::<Vec<_>>()
    };
    let floor = if integers { 1.0 } else { f64::MIN_POSITIVE };
    let fits = |step: f64| step / per_point >= least_points(step);
    let mut step = nice_step(per_point * target_points).max(floor);
    for _ in 0..8 {
        if fits(step) {
            break;
        }
        step = nice_step(step * 1.5);
    }
    while marks(step).len() < 3 && smaller_step(step) >= floor && fits(smaller_step(step)) {
        step = smaller_step(step);
    }
    marks(step)
}

/// Grid marks at exactly `values`, those inside the axis's bounds: an axis of measured points
/// (counts per round trip, transfer sizes) marks each point and nothing between.
pub fn marks_at(values: Vec<f64>, step_size: f64) -> impl Fn(GridInput) -> Vec<GridMark> {
    move |input: GridInput| {
        let (lo, hi) = input.bounds;
        values
            .iter()
            .copied()
            .filter(|x| (lo..=hi).contains(x))
            .map(|value| GridMark { value, step_size })
            .collect()
    }
}

/// A mark's value with as many decimals as its step needs: marks 0.5 apart read "0.5" and
/// "1.5", never "0" and "1" twice.
#[must_use]
pub fn step_label(mark: &GridMark) -> String {
    let decimals = if mark.step_size >= 1.0 || mark.step_size <= 0.0 {
        0
    } else {
        (-(mark.step_size.log10() + 1e-9).floor()) as usize
    };
    format!("{:.*}", decimals, mark.value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_read_with_the_decimals_of_their_step() {
        let label = |value: f64, step_size: f64| step_label(&GridMark { value, step_size });
        assert_eq!([label(0.0, 0.5), label(0.5, 0.5), label(1.0, 0.5)], ["0.0", "0.5", "1.0"]);
        assert_eq!([label(0.1, 0.1), label(0.25, 0.05), label(20.0, 10.0)], ["0.1", "0.25", "20"]);
    }

    #[test]
    fn nice_steps_are_one_two_five() {
        for (raw, step) in [(0.7, 1.0), (1.3, 2.0), (3.0, 5.0), (7.0, 10.0), (0.013, 0.02), (f64::NAN, 1.0)] {
            assert!((nice_step(raw) - step).abs() < 1e-12, "{raw}: {step}");
        }
    }

    #[test]
    fn the_spacer_gives_several_marks() {
        // 0..47 ms on 150 points, marks about 30 points apart: 10 ms steps.
        let marks =
            nice_spacer(30.0, false)(GridInput { bounds: (0.0, 47.0), base_step_size: 47.0 / 150.0 * 8.0 });
        assert_eq!(marks.iter().map(|m| m.value).collect::<Vec<_>>(), vec![0.0, 10.0, 20.0, 30.0, 40.0]);
        // Run numbers 0.5..5.5 on 300 points: 2 would give two marks, so 1; whole numbers only.
        let marks =
            nice_spacer(70.0, true)(GridInput { bounds: (0.5, 5.5), base_step_size: 5.0 / 300.0 * 8.0 });
        assert_eq!(marks.iter().map(|m| m.value).collect::<Vec<_>>(), vec![1.0, 2.0, 3.0, 4.0, 5.0]);
        // One run: still whole numbers, never 0.5 steps.
        let marks =
            nice_spacer(70.0, true)(GridInput { bounds: (0.5, 1.5), base_step_size: 1.0 / 300.0 * 8.0 });
        assert_eq!(marks.iter().map(|m| m.value).collect::<Vec<_>>(), vec![1.0]);
        // A time axis ending at 201 ms on 250 points: no "200" half out of the chart's right end.
        let marks =
            nice_spacer(44.0, false)(GridInput { bounds: (0.0, 201.0), base_step_size: 201.0 / 250.0 * 8.0 });
        assert_eq!(marks.iter().map(|m| m.value).collect::<Vec<_>>(), vec![0.0, 50.0, 100.0, 150.0]);
        for (step, smaller) in [(5.0, 2.0), (2.0, 1.0), (1.0, 0.5)] {
            assert!((smaller_step(step) - smaller).abs() < 1e-12, "{step}: {smaller}");
        }
    }

    #[test]
    fn x_marks_stay_apart_by_their_labels_width() {
        // 0..8700 ms on 130 points: 2000 ms steps are 30 points, narrower than "2000" and its gap.
        let input = || GridInput { bounds: (0.0, 8700.0), base_step_size: 8700.0 / 130.0 * 8.0 };
        let marks = nice_x_spacer(44.0, false)(input());
        assert_eq!(marks.iter().map(|m| m.value).collect::<Vec<_>>(), vec![0.0, 5000.0]);
        // A y axis of the same span keeps 2000 ms steps: its labels stand one above another.
        let marks = nice_spacer(44.0, false)(input());
        assert_eq!(marks.iter().map(|m| m.value).collect::<Vec<_>>(), vec![0.0, 2000.0, 4000.0, 6000.0]);
        // Room enough: the x spacer is the plain one.
        let wide = || GridInput { bounds: (0.0, 201.0), base_step_size: 201.0 / 250.0 * 8.0 };
        assert_eq!(nice_x_spacer(44.0, false)(wide()), nice_spacer(44.0, false)(wide()));
    }
}
