//! What each cell of a sweep runs after the grayscale ([`CellOps`]). Uses only the grid's leaf;
//! what depends on the options (levels, whether a grid) is in `plan.rs`.

use crate::engine::sweep::grid::GridAxis;
use crate::pixel::{MAX_BLUR_RADIUS, MIN_BLUR_RADIUS, Op};

/// What each cell of a sweep runs after the grayscale: one op on every cell (the work axis), or
/// `blur:R` at 0 rounds with the blur's radius as the grid's second axis.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CellOps {
    /// The op of every cell on the work axis (`none`: the grayscale alone).
    pub op: Op,
    /// The blur radii of the radius axis; empty: the axis is the work rounds.
    pub blur_radii: Vec<u32>,
}

impl CellOps {
    /// The radius axis over `radii`.
    #[must_use]
    pub fn blur_radii(radii: Vec<u32>) -> Self {
        Self { op: Op::None, blur_radii: radii }
    }

    /// The grid's second axis: the blur's radius when radii are given, else the work rounds.
    #[must_use]
    pub fn axis(&self) -> GridAxis {
        if self.radii().is_empty() { GridAxis::WorkRounds } else { GridAxis::BlurRadius }
    }

    /// The radii measured: within 1..=64, lowest first, each once.
    pub(crate) fn radii(&self) -> Vec<u32> {
        let mut radii = self.blur_radii.clone();
        radii.retain(|r| (MIN_BLUR_RADIUS..=MAX_BLUR_RADIUS).contains(r));
        radii.sort_unstable();
        radii.dedup();
        radii
    }
}
