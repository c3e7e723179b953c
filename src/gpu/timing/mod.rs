//! Measuring the GPU: timestamp queries by name, and the probe of this machine's ceilings (every
//! copy of the GPU path at its best, and the compute ceiling of the synthetic work), and every
//! transfer path as latency plus bandwidth. Uses only
//! [`super::device`].

pub(super) mod compute;
pub(super) mod device_copy;
pub(super) mod paths;
pub(super) mod probe;
pub(super) mod timestamps;
