//! The sweep's series and the grid's figures, a leaf: its second axis ([`GridAxis`], each level
//! with its operations per pixel), who wins at each size and level ([`Frontier`]), and the
//! roofline the runs sit on ([`Roofline`]).

use crate::pixel::{OPS_PER_ROUND, Op};

/// One measured series of a sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Series {
    /// CPU kernel on one thread.
    Cpu1,
    /// CPU kernel on every thread.
    CpuAll,
    /// GPU upload + kernel + download, wall time on the CPU clock: data starts and ends in host
    /// memory, like the CPU's.
    GpuTotal,
    /// GPU kernel alone (timestamps where available).
    GpuKernel,
    /// GPU with the input already on the GPU and the output left there (as when it is shown
    /// anyway): submit and wait for the kernel, CPU clock, so dispatch latency is included.
    GpuResident,
}

impl Series {
    /// Every series, in legend order.
    pub const ALL: [Self; 5] = [Self::Cpu1, Self::CpuAll, Self::GpuTotal, Self::GpuKernel, Self::GpuResident];

    /// The legend name.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::Cpu1 => "CPU, 1 thread",
            Self::CpuAll => "CPU, all threads",
            Self::GpuTotal => "GPU total (upload + kernel + download, wall clock)",
            Self::GpuKernel => "GPU kernel only",
            Self::GpuResident => "GPU, data resident",
        }
    }
}

pub use crate::pixel::FORMULA_OPS_PER_PIXEL;

/// What a grid's second axis (beside the size) varies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GridAxis {
    /// Synthetic work rounds per pixel (`--work`), with one op (or none) on every cell.
    #[default]
    WorkRounds,
    /// The blur's radius (`--radii`): each cell runs `blur:R` at 0 rounds.
    BlurRadius,
}

impl GridAxis {
    /// Its name in words: "work rounds" or "blur radius".
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::WorkRounds => "work rounds",
            Self::BlurRadius => "blur radius",
        }
    }

    /// A level in words: "256 rounds per pixel" or "blur radius 16".
    #[must_use]
    pub fn level_text(self, level: f64) -> String {
        match self {
            Self::WorkRounds => format!("{level:.0} rounds per pixel"),
            Self::BlurRadius => format!("blur radius {level:.0}"),
        }
    }

    /// A level in a table's header: "256 rounds" or "radius 16".
    #[must_use]
    pub fn short(self, level: u32) -> String {
        match self {
            Self::WorkRounds => format!("{level} rounds"),
            Self::BlurRadius => format!("radius {level}"),
        }
    }

    /// The level of a cell at `work_rounds` running `op`: its rounds, or its blur's radius (0
    /// without one).
    #[must_use]
    pub fn level_of(self, work_rounds: u32, op: Op) -> u32 {
        match (self, op) {
            (Self::WorkRounds, _) => work_rounds,
            (Self::BlurRadius, Op::Blur { radius }) => radius,
            (Self::BlurRadius, _) => 0,
        }
    }

    /// What a cell at `level` runs beyond the grayscale: its work rounds and its op (`blur:level`
    /// at 0 rounds on the radius axis).
    #[must_use]
    pub fn cell(self, level: u32, op: Op) -> (u32, Op) {
        match self {
            Self::WorkRounds => (level, op),
            Self::BlurRadius => (0, Op::Blur { radius: level }),
        }
    }
}

/// One level of a grid's second axis and what a pixel costs there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AxisLevel {
    /// The level: rounds per pixel, or the blur's radius.
    pub level: u32,
    /// The synthetic work rounds of its cells.
    pub work_rounds: u32,
    /// The op of its cells.
    pub op: Op,
    /// The op's integer operations per pixel ([`Op::ops_per_pixel`]: 4 (2R + 1) for a blur).
    pub op_ops_per_pixel: u64,
    /// Every integer operation a pixel of its cells costs ([`cell_ops_per_pixel`]).
    pub ops_per_pixel: u64,
}

impl AxisLevel {
    /// The level `level` of `axis`, every cell of the work axis running `op`.
    #[must_use]
    pub fn of(axis: GridAxis, level: u32, op: Op) -> Self {
        let (work_rounds, op) = axis.cell(level, op);
        Self {
            level,
            work_rounds,
            op,
            op_ops_per_pixel: op.ops_per_pixel(),
            ops_per_pixel: cell_ops_per_pixel(work_rounds, op),
        }
    }
}

/// A cell a stopped sweep did not measure (a signal or the app's Stop came first, or inside it):
/// its size and level, and no figure, so neither a win nor a loss.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CellNotRun {
    /// The size it would have measured, megapixels (width x height / 1e6, as a point's).
    pub megapixels: f64,
    /// Its image's width.
    pub width: u32,
    /// Its image's height.
    pub height: u32,
    /// Its work level, rounds per pixel.
    pub work_rounds: u32,
    /// The op it would have run after the grayscale (`none`: none).
    #[serde(default)]
    pub op: Op,
}

impl CellNotRun {
    /// This cell's level on `axis`: its work rounds, or its blur's radius.
    #[must_use]
    pub fn level(&self, axis: GridAxis) -> u32 {
        axis.level_of(self.work_rounds, self.op)
    }
}

/// Integer operations of one pixel of a cell at `rounds` running `op`: the formula's, the
/// rounds' ([`OPS_PER_ROUND`] each) and the op's ([`Op::ops_per_pixel`]).
#[must_use]
pub fn cell_ops_per_pixel(rounds: u32, op: Op) -> u64 {
    FORMULA_OPS_PER_PIXEL + u64::from(rounds) * u64::from(OPS_PER_ROUND) + op.ops_per_pixel()
}

/// The `sizes` (megapixels) finite and above 0, smallest first, each once.
pub(crate) fn sorted_sizes(sizes: impl IntoIterator<Item = f64>) -> Vec<f64> {
    let mut sizes: Vec<f64> = sizes.into_iter().filter(|s| s.is_finite() && *s > 0.0).collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    sizes
}

/// From which work level the GPU wins at one size.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FrontierPoint {
    /// The size, megapixels.
    pub megapixels: f64,
    /// The smallest level from which the GPU end to end beats the fastest CPU series at this
    /// size, and at every higher level; `None`: not at the largest level asked. Measured: one of
    /// the levels; modelled: continuous.
    pub end_to_end_from_rounds: Option<f64>,
    /// The same with the input kept on the GPU and the output left there (the resident series).
    pub resident_from_rounds: Option<f64>,
}

/// Where the GPU starts to win, measured and modelled.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Frontier {
    /// From the measured cells, one point per size: levels are the measured ones.
    pub measured: Vec<FrontierPoint>,
    /// From the ceilings, one point per size: levels are continuous. Empty when unknown; the
    /// verdict says why.
    pub modelled: Vec<FrontierPoint>,
}

/// One measured run on the roofline.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RooflinePoint {
    /// The series it comes from (CPU all threads, GPU kernel, GPU resident, GPU total).
    pub series: Series,
    /// Work level, rounds per pixel.
    pub work_rounds: u32,
    /// The op the cell ran (a blur point beside the synthetic ones).
    #[serde(default)]
    pub op: Op,
    /// The size, megapixels.
    pub megapixels: f64,
    /// Integer operations ([`cell_ops_per_pixel`]) per byte read and written through the memory
    /// of the series' roof.
    pub ops_per_byte: f64,
    /// Integer operations per second achieved at the series' median time.
    pub ops_per_s: f64,
}

/// The roofline: this machine's roofs and the runs on it. Operations per byte on x, operations
/// per second on y, both log; a roof with a slope is a bandwidth (bytes per second), a flat one
/// is a compute ceiling.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Roofline {
    /// CPU memory bandwidth (the memory-stream baseline, all threads), bytes per second.
    pub cpu_bytes_per_s: Option<f64>,
    /// The size that stream was measured at, megapixels: the sweep's largest (absent from
    /// sweeps saved before it was kept).
    #[serde(default)]
    pub cpu_stream_mp: Option<f64>,
    /// CPU compute ceiling, operations per second.
    pub cpu_ops_per_s: Option<f64>,
    /// GPU device-memory bandwidth (the device-copy ceiling), bytes per second.
    pub gpu_device_bytes_per_s: Option<f64>,
    /// GPU compute ceiling, operations per second.
    pub gpu_ops_per_s: Option<f64>,
    /// The round trip's roof: the host-to-GPU and GPU-to-host ceilings one after the other, in
    /// pixels per second times the bytes a GPU point counts a pixel (its x axis: 4, 14 with the
    /// blur), which the GPU end to end never beats.
    pub transfer_bytes_per_s: Option<f64>,
    /// The measured runs.
    pub points: Vec<RooflinePoint>,
}

impl Roofline {
    /// The best operations per second a roof of `bytes_per_s` and `ops_per_s` allows at
    /// `ops_per_byte` (the lower of the slope and the flat); `None` when either is unknown.
    #[must_use]
    pub fn roof(bytes_per_s: Option<f64>, ops_per_s: Option<f64>, ops_per_byte: f64) -> Option<f64> {
        Some((bytes_per_s? * ops_per_byte).min(ops_per_s?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_roof_is_the_lower_of_its_slope_and_its_flat() {
        assert_eq!(Roofline::roof(Some(10.0), Some(100.0), 2.0), Some(20.0));
        assert_eq!(Roofline::roof(Some(10.0), Some(100.0), 50.0), Some(100.0));
        assert_eq!(Roofline::roof(None, Some(100.0), 50.0), None);
    }
}
