//! The size sweep: the result types (a leaf the others use), the work grid's frontier and
//! roofline types (another leaf), the sweep itself, the crossover modelled from the ceilings, and
//! the verdict that says what the sweep means.

pub(super) mod grid;
pub(super) mod model;
pub(super) mod result;
pub(super) mod round_trip;
pub(super) mod run;
pub(super) mod verdict;
