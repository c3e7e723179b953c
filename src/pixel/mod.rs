//! Pixel definitions shared by every backend: the luma formulas, their integer lookup tables and
//! the pixel layouts a conversion reads and writes.
//!
//! This is the leaf of the crate: it depends on nothing else in graylab, so the CPU kernels, the
//! GPU shader host code and the tests all agree on one definition of "the right answer".

mod formula;
mod layout;
mod tables;

pub(crate) use formula::{BT601_WEIGHTS, BT709_WEIGHTS, weighted};
pub use formula::{Formula, ParseFormulaError};
pub use layout::Kernel;
pub use tables::{LumaTables, luma_tables};
