//! The grid's frontier: from which level (work rounds, or the blur's radius) the GPU beats the
//! best CPU at each size, measured from the cells and, for work rounds without an op, modelled
//! from the ceilings ([`WorkCost`]: `model.rs`'s costs, the rounds at the compute ceilings), and
//! the sentence that names it. Each side is piecewise linear in the rounds `k`, so the level
//! from which the GPU wins (up to the grid's largest) is solved exactly on each piece.

use crate::engine::ceilings::ComputeCeilings;
use crate::engine::estimate::steps_ns_per_pixel;
use crate::engine::sweep::grid::{Frontier, FrontierPoint, GridAxis, Series, sorted_sizes};
use crate::engine::sweep::result::{CostModel, SweepPoint, SweepResult, Winner};
use crate::pixel::OPS_PER_ROUND;

/// What a pixel costs at `k` work rounds of 3 integer operations: the plain grayscale's cost
/// model with the CPU at max(4 bytes / stream, 3k / CPU compute), the kernel at max(4 bytes /
/// device bandwidth, 3k / GPU compute), end to end the copies plus the kernel, resident the
/// kernel alone, each with the latency over the pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct WorkCost {
    /// The plain grayscale's costs (the kernel at the device-copy rate, the CPU at the stream).
    pub cost: CostModel,
    /// The host copies alone, ns per pixel (the part that overlaps the GPU's in the best case).
    pub host_ns_per_pixel: f64,
    /// One round on the CPU, all threads, ns per pixel.
    pub cpu_ns_per_round: f64,
    /// One round on the GPU, ns per pixel.
    pub gpu_ns_per_round: f64,
}

impl WorkCost {
    /// The costs of `r`'s model with `compute`; `None` without a model or a GPU compute ceiling.
    pub fn of(r: &SweepResult, compute: &ComputeCeilings) -> Option<Self> {
        let cost = r.model.as_ref()?.cost;
        let ceilings = r.ceilings.as_ref()?;
        let gpu_ops = compute.gpu_ops_per_s.filter(|v| *v > 0.0 && v.is_finite())?;
        let cpu_ops = Some(compute.cpu_ops_per_s).filter(|v| *v > 0.0 && v.is_finite())?;
        let ops = f64::from(OPS_PER_ROUND);
        Some(Self {
            cost,
            host_ns_per_pixel: steps_ns_per_pixel(ceilings).0,
            cpu_ns_per_round: ops / cpu_ops * 1e9,
            gpu_ns_per_round: ops / gpu_ops * 1e9,
        })
    }

    /// The CPU on all threads, ns per pixel at `k` rounds.
    pub fn cpu_ns_per_pixel(&self, k: f64) -> f64 {
        self.cost.cpu_ns_per_pixel.max(k * self.cpu_ns_per_round)
    }

    /// The GPU kernel, ns per pixel at `k` rounds.
    pub fn kernel_ns_per_pixel(&self, k: f64) -> f64 {
        self.cost.gpu_resident_ns_per_pixel.max(k * self.gpu_ns_per_round)
    }

    /// The GPU end to end, steps one after the other, ns per pixel at `k` rounds (no latency).
    pub fn total_ns_per_pixel(&self, k: f64) -> f64 {
        self.cost.gpu_ns_per_pixel - self.cost.gpu_resident_ns_per_pixel + self.kernel_ns_per_pixel(k)
    }

    /// The plain grayscale's cost model at `k` rounds, its latencies kept.
    pub fn at(&self, k: f64) -> CostModel {
        let total = self.total_ns_per_pixel(k);
        CostModel {
            gpu_ns_per_pixel: total,
            gpu_overlapped_ns_per_pixel: self.host_ns_per_pixel.max(total - self.host_ns_per_pixel),
            gpu_resident_ns_per_pixel: self.kernel_ns_per_pixel(k),
            cpu_ns_per_pixel: self.cpu_ns_per_pixel(k),
            ..self.cost
        }
    }

    /// The modelled frontier at `megapixels`, up to `max_rounds`.
    pub fn frontier_at(&self, megapixels: f64, max_rounds: f64) -> FrontierPoint {
        let latency = self.cost.gpu_latency_ns / (megapixels * 1e6).max(1.0);
        let end_to_end = self.cost.end_to_end_latency_ns() / (megapixels * 1e6).max(1.0);
        // Where each side turns from its bandwidth roof to its compute roof.
        let breaks = [
            self.cost.cpu_ns_per_pixel / self.cpu_ns_per_round,
            self.cost.gpu_resident_ns_per_pixel / self.gpu_ns_per_round,
        ];
        let e2e = |k: f64| self.cpu_ns_per_pixel(k) - end_to_end - self.total_ns_per_pixel(k);
        let resident = |k: f64| self.cpu_ns_per_pixel(k) - latency - self.kernel_ns_per_pixel(k);
        FrontierPoint {
            megapixels,
            end_to_end_from_rounds: wins_from(e2e, &breaks, max_rounds),
            resident_from_rounds: wins_from(resident, &breaks, max_rounds),
        }
    }
}

/// The smallest `k` in `[0, max]` from which `margin(k) > 0` up to `max`, for a `margin` linear
/// between the `breaks`; `None` when `margin(max) <= 0`.
fn wins_from(margin: impl Fn(f64) -> f64, breaks: &[f64], max: f64) -> Option<f64> {
    let max = max.max(0.0);
    let mut knots: Vec<f64> =
        breaks.iter().copied().filter(|b| b.is_finite() && *b > 0.0 && *b < max).collect();
    knots.push(0.0);
    knots.push(max);
    knots.sort_by(f64::total_cmp);
    knots.dedup();
    let mut high = *knots.last()?;
    if margin(high) <= 0.0 {
        return None;
    }
    for &low in knots.iter().rev().skip(1) {
        let (m_low, m_high) = (margin(low), margin(high));
        if m_low <= 0.0 {
            // Linear between the knots: the root where the margin turns positive.
            return Some(low + (high - low) * (-m_low) / (m_high - m_low));
        }
        high = low;
    }
    Some(0.0)
}

/// The sizes of `r`'s points, smallest first, each once.
fn sizes(r: &SweepResult) -> Vec<f64> {
    sorted_sizes(r.points.iter().map(|p| p.megapixels))
}

/// The measured frontier: for each size, the smallest measured level from which the GPU end to
/// end (and, apart, resident) beats the best CPU series at that level and every higher one. A
/// size a stopped sweep did not measure at every level has none to tell: it is left out.
#[must_use]
pub fn measured_frontier(r: &SweepResult) -> Vec<FrontierPoint> {
    let from = |cells: &[&SweepPoint], series: Series| {
        let mut level = None;
        for p in cells.iter().rev() {
            // A cell not measured in the time budget is neither a win nor a loss: passed over.
            if series == Series::GpuTotal && p.end_to_end.is_some_and(|c| c.winner == Winner::Undecided) {
                continue;
            }
            if !p.gpu_wins(series) {
                break;
            }
            level = Some(f64::from(p.level(r.axis)));
        }
        level
    };
    let whole = |mp: &f64| !r.not_run.iter().any(|c| c.megapixels.total_cmp(mp).is_eq());
    sizes(r)
        .into_iter()
        .filter(whole)
        .map(|mp| {
            let mut cells: Vec<&SweepPoint> =
                r.points.iter().filter(|p| p.megapixels.total_cmp(&mp).is_eq()).collect();
            cells.sort_by_key(|p| p.level(r.axis));
            FrontierPoint {
                megapixels: mp,
                end_to_end_from_rounds: from(&cells, Series::GpuTotal),
                resident_from_rounds: from(&cells, Series::GpuResident),
            }
        })
        .collect()
}

/// The modelled frontier, one point per measured size, up to the grid's largest level; `None`
/// when it is unknown (`modelled_unknown_because` says why).
#[must_use]
pub fn modelled_frontier(r: &SweepResult) -> Option<Vec<FrontierPoint>> {
    if r.axis != GridAxis::WorkRounds || r.has_op() {
        return None;
    }
    let cost = WorkCost::of(r, r.compute.as_ref()?)?;
    let max = f64::from(r.work_levels.iter().copied().max().unwrap_or(0));
    Some(sizes(r).into_iter().map(|mp| cost.frontier_at(mp, max)).collect())
}

/// Why the modelled frontier is unknown, as the end of a sentence.
pub(crate) fn modelled_unknown_because(r: &SweepResult) -> &'static str {
    if r.has_op() {
        "the model prices the grayscale and the synthetic rounds, not an op such as the blur or the dither"
    } else if r.adapter.is_none() {
        "no GPU was measured"
    } else if r.ceilings.is_none() {
        "this GPU's bandwidth ceilings were not probed"
    } else if r.model.is_none() {
        "the sweep has no memory-stream baseline of the CPU"
    } else if r.compute.and_then(|c| c.gpu_ops_per_s).is_none() {
        "this machine's compute ceilings (integer operations per second) were not measured"
    } else {
        "the compute ceilings are not usable (zero or not finite)"
    }
}

/// Fills `r.frontier` and, where the compute ceilings are known, the modelled times of the
/// points above 0 rounds.
pub(crate) fn fill_frontier(r: &mut SweepResult) {
    let modelled = modelled_frontier(r);
    if let Some(cost) = r.compute.as_ref().and_then(|c| WorkCost::of(r, c)) {
        for p in r.points.iter_mut().filter(|p| p.work_rounds > 0 && p.op.is_none()) {
            p.modelled = Some(cost.at(f64::from(p.work_rounds)).at(p.megapixels * 1e6));
        }
    }
    r.frontier = Some(Frontier { measured: measured_frontier(r), modelled: modelled.unwrap_or_default() });
}

/// The cells where `series` beats the best CPU, as "1.00 MP at 16 rounds" (the first four, then
/// how many more), in the points' order; empty where none does.
fn winning_cells(r: &SweepResult, series: Series) -> String {
    let cells: Vec<String> = r
        .points
        .iter()
        .filter(|p| p.gpu_wins(series))
        .map(|p| format!("{:.2} MP at {}", p.megapixels, r.axis.short(p.level(r.axis))))
        .collect();
    match cells.len() {
        0..=4 => cells.join(", "),
        n => format!("{} and {} more", cells[..4].join(", "), n - 4),
    }
}

/// The verdict's sentences on the frontier of a work grid (filled by `fill_frontier`):
/// measured at the largest size where the GPU wins (else the largest size), then modelled. The
/// frontier is a level from which the GPU wins at it and every higher one: where there is none,
/// the cells that win on their own are named, never "never".
#[must_use]
pub fn frontier_sentence(r: &SweepResult) -> String {
    let Some(frontier) = &r.frontier else { return String::new() };
    let axis = r.axis;
    let max = axis.level_text(f64::from(r.grid_levels().into_iter().max().unwrap_or(0)));
    let largest = frontier.measured.last().map_or(0.0, |p| p.megapixels);
    let machine =
        r.adapter.as_ref().map_or_else(|| "this machine".to_owned(), |a| format!("this machine ({a})"));
    let e2e = frontier.measured.iter().rev().find(|p| p.end_to_end_from_rounds.is_some());
    let resident = frontier.measured.iter().rev().find(|p| p.resident_from_rounds.is_some());
    let lv = |v: f64| axis.level_text(v);
    let grid = match axis {
        GridAxis::WorkRounds => "work grid",
        GridAxis::BlurRadius => "blur radius grid",
    };
    let (e2e_cells, kept_cells) = (winning_cells(r, Series::GpuTotal), winning_cells(r, Series::GpuResident));
    let no_level = format!("there is no level in this {grid} (up to {max} and {largest:.2} MP)");
    let mut text = match (e2e, resident) {
        _ if r.adapter.is_none() => format!(
            "The {grid} measured the CPU only (up to {max} and {largest:.2} MP): there is \
             no GPU to say who wins."
        ),
        (Some(p), _) => {
            let k = p.end_to_end_from_rounds.map_or_else(String::new, lv);
            let kept = p.resident_from_rounds.map_or_else(String::new, |v| {
                format!(", and from {} with the data kept on the GPU", again(axis, v))
            });
            format!("On {machine} the GPU wins end to end from about {k} at {:.2} MP{kept}.", p.megapixels)
        }
        (None, Some(p)) => {
            let kept = format!(
                "with the data kept on the GPU it wins from about {} at {:.2} MP",
                p.resident_from_rounds.map_or_else(String::new, lv),
                p.megapixels
            );
            if e2e_cells.is_empty() {
                format!(
                    "On {machine} the GPU never wins end to end in this grid (up to {max} and {largest:.2} MP); {kept}."
                )
            } else {
                format!(
                    "On {machine} {no_level} from which the GPU wins end to end at it and every higher one, \
                     though it wins end to end on its own at {e2e_cells}; {kept}."
                )
            }
        }
        (None, None) if e2e_cells.is_empty() && kept_cells.is_empty() => format!(
            "On {machine} the GPU never beats the best CPU in this grid, up to {max} and \
             {largest:.2} MP, not even with the data kept on the GPU."
        ),
        (None, None) => {
            let alone: Vec<String> =
                [(e2e_cells, "end to end"), (kept_cells, "with the data kept on the GPU")]
                    .into_iter()
                    .filter(|(cells, _)| !cells.is_empty())
                    .map(|(cells, how)| format!("{how} at {cells}"))
                    .collect();
            format!(
                "On {machine} {no_level} from which the GPU beats the best CPU at it and every higher one, \
                 not even with the data kept on the GPU; it wins only in cells on their own: {}.",
                alone.join("; ")
            )
        }
    };
    if r.software_adapter {
        text.push_str(
            " The adapter is a software rasteriser: its \"GPU\" is this CPU's own cores running an \
             emulation, so it is not expected to win here at any level.",
        );
    }
    if r.adapter.is_none() {
        return text;
    }
    let at = e2e.map_or(largest, |p| p.megapixels);
    text.push_str(&modelled_sentence(r, frontier, at, &max));
    text
}

/// A level mentioned again in the same sentence: its figure alone (the radius named).
fn again(axis: GridAxis, v: f64) -> String {
    match axis {
        GridAxis::WorkRounds => format!("{v:.0}"),
        GridAxis::BlurRadius => axis.short(v.round() as u32),
    }
}

/// The modelled frontier at `at` megapixels in a sentence (with a space before it): where it
/// is, or that there is none up to `max` and the grid's levels at which the model still has the
/// GPU win end to end (the 0-round cells' modelled crossover over sizes among them), or why it
/// is unknown.
fn modelled_sentence(r: &SweepResult, frontier: &Frontier, at: f64, max: &str) -> String {
    let axis = r.axis;
    let Some(model) = frontier.modelled.iter().find(|p| p.megapixels.total_cmp(&at).is_eq()) else {
        return format!(" The modelled frontier is unknown: {}.", modelled_unknown_because(r));
    };
    let kept = model.resident_from_rounds.map_or_else(
        || " (not even resident)".to_owned(),
        |v| format!(" ({} with the data kept on the GPU)", again(axis, v)),
    );
    if let Some(k) = model.end_to_end_from_rounds {
        return format!(
            " From the ceilings it should win end to end from about {} at {at:.2} MP{kept}.",
            axis.level_text(k)
        );
    }
    let mut winning: Vec<u32> = r
        .points
        .iter()
        .filter(|p| p.megapixels.total_cmp(&at).is_eq())
        .filter(|p| p.modelled.is_some_and(|m| m.gpu_total_ns < m.cpu_ns))
        .map(|p| p.level(axis))
        .collect();
    winning.sort_unstable();
    winning.dedup();
    if winning.is_empty() {
        return format!(" From the ceilings it should not win end to end up to {max} at {at:.2} MP{kept}.");
    }
    let levels: Vec<String> = winning.iter().map(|k| axis.short(*k)).collect();
    format!(
        " From the ceilings there is no level up to {max} from which it should win end to end at \
         every higher one at {at:.2} MP{kept}, though it should win end to end at {}.",
        levels.join(", ")
    )
}

#[cfg(test)]
#[path = "frontier_tests.rs"]
mod tests;
