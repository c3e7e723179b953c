//! Measuring the GPU: timestamp queries by name, and the probe of this machine's ceilings (every
//! copy of the GPU path at its best). Uses only [`super::device`].

pub(super) mod probe;
pub(super) mod timestamps;
