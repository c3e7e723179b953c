//! The size sweep and the grid over work rounds or the blur's radius: the plan, the runs, each
//! point compared in turns, the workgroup race, the model, the frontier, the roofline and the
//! verdict, one file each.

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
    AxisLevel, CellNotRun, FORMULA_OPS_PER_PIXEL, Frontier, FrontierPoint, GridAxis, Roofline, RooflinePoint,
    Series, cell_ops_per_pixel,
};
pub use model::crossover_mp;
pub use plan::{
    CALIBRATION_MP, CALIBRATION_ROUNDS, CELL_SERIES_BUDGET_NS, Calibration, CellPlan, DEFAULT_SIZES_MP,
    DEFAULT_WORK_SIZES_MP, GridEstimate, SweepOptions, calibrate, size_for, teach_pace,
};
pub use result::{
    CellSpeedUp, CostModel, ModelledPoint, Speedup, SweepModel, SweepPoint, SweepResult, Winner,
};
pub use roofline::roofline;
pub use run::{sweep, sweep_planned};
pub use verdict::{analyse, to_csv};
pub use workgroups::{ShapeTime, WorkgroupRace, race_parts, workgroups};
