//! The size sweep and the grid (over work rounds or the blur's radius): the result types (a
//! leaf the others use), the grid's axis, frontier and roofline types (another leaf), the plan
//! (options, the op of each cell, sizes, the calibration and the estimate), the sweep itself,
//! each point's comparison sampled until decided, the race of the workgroup shapes, the
//! crossover modelled from the ceilings, the frontier and the roofline built from the cells, and
//! the verdict that says what the sweep means.

pub(super) mod cell_ops;
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

pub use cell_ops::CellOps;
pub use compare::{Sides, compare};
pub use frontier::{frontier_sentence, measured_frontier, modelled_frontier};
pub use grid::{
    AxisLevel, FORMULA_OPS_PER_PIXEL, Frontier, FrontierPoint, GridAxis, Roofline, RooflinePoint, Series,
    cell_ops_per_pixel,
};
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
