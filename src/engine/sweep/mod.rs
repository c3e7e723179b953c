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
