//! The size sweep and the work grid: the result types (a leaf the others use), the grid's
//! frontier and roofline types (another leaf), the plan (options, sizes, the calibration and the
//! estimate), the sweep itself, each point's comparison sampled until decided, the race of the workgroup shapes, the crossover modelled from the ceilings, the frontier and the
//! roofline built from the cells, and the verdict that says what the sweep means.

pub(super) mod compare;
pub(super) mod frontier;
pub(super) mod grid;
pub(super) mod model;
pub(super) mod plan;
pub(super) mod result;
pub(super) mod roofline;
pub(super) mod run;
pub(super) mod verdict;
pub(super) mod workgroups;

pub use compare::{Sides, compare};
pub use frontier::{frontier_sentence, measured_frontier, modelled_frontier};
pub use grid::{FORMULA_OPS_PER_PIXEL, Frontier, FrontierPoint, Roofline, RooflinePoint, Series};
pub use model::crossover_mp;
pub use plan::{
    CALIBRATION_MP, CALIBRATION_ROUNDS, CELL_SERIES_BUDGET_NS, Calibration, CellPlan, DEFAULT_SIZES_MP,
    DEFAULT_WORK_LEVELS, DEFAULT_WORK_SIZES_MP, GridEstimate, SweepOptions, calibrate, estimate_grid,
    size_for, teach_pace,
};
pub use result::{CostModel, ModelledPoint, Speedup, SweepModel, SweepPoint, SweepResult, Winner};
pub use roofline::roofline;
pub use run::{sweep, sweep_planned};
pub use verdict::{analyse, to_csv};
pub use workgroups::{ShapeTime, WorkgroupRace, race_parts, workgroups};
