//! Pixel definitions shared by every backend: the luma formulas, their integer lookup tables,
//! the pixel layouts a conversion reads and writes, and the synthetic work per pixel.
//!
//! This is the leaf of the crate: it depends on nothing else in graylab, so the CPU kernels, the
//! GPU shader host code and the tests all agree on one definition of "the right answer".

mod formula;
mod layout;
mod tables;
mod work;

pub(crate) use formula::{BT601_WEIGHTS, BT709_WEIGHTS, weighted};
pub use formula::{Formula, ParseFormulaError};
pub use layout::Kernel;
pub use tables::{LumaTables, luma_tables};
pub(crate) use work::round;
pub use work::{OPS_PER_ROUND, WORK_MULTIPLIER, WORK_SEED, Work, scalar_rounds};
