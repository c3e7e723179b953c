//! Measuring the GPU: timestamp queries by name, and the probe of this machine's ceilings (every
//! copy of the GPU path at its best, and the compute ceiling of the synthetic work). Uses only
//! [`super::device`].

pub(super) mod compute;
pub(super) mod probe;
pub(super) mod timestamps;
