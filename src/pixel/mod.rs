//! Pixel definitions shared by every backend: the luma formulas, their integer lookup tables,
//! the pixel layouts a conversion reads and writes, the synthetic work per pixel, and the
//! operations on the gray plane after the grayscale ([`Op`]).
//!
//! This is the leaf of the crate: it depends on nothing else in graylab, so the CPU kernels, the
//! GPU shader host code and the tests all agree on one definition of "the right answer".

mod formula;
mod layout;
mod op;
mod op_rates;
mod tables;
mod work;

pub(crate) use formula::{BT601_WEIGHTS, BT709_WEIGHTS, weighted};
pub use formula::{Formula, ParseFormulaError};
pub use layout::Kernel;
pub use op::{
    BLUR_WEIGHT_BITS, BLUR_WEIGHT_SUM, DITHER_OPS_PER_PIXEL, DITHER_THRESHOLD, MAX_BLUR_RADIUS,
    MIN_BLUR_RADIUS, Op, ParseOpError, blur_reference, blur_round, blur_weights, dither_pixel,
    dither_reference,
};
#[cfg(test)]
pub(crate) use op_rates::noise;
pub use op_rates::{OpRates, RATE_BLUR_RADIUS, RATE_PLANE, rate_plane};
pub use tables::{LumaTables, luma_tables};
pub(crate) use work::round;
pub use work::{
    FORMULA_OPS_PER_PIXEL, MAX_WORK_ROUNDS, OPS_PER_ROUND, WORK_MULTIPLIER, WORK_SEED, Work, scalar_rounds,
};
