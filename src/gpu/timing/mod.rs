//! Measuring the GPU: timestamp queries by name, every transfer path timed once as latency plus
//! bandwidth with its steps apart (`transfer.rs`), the probe's ceilings read from those paths,
//! and the compute ceiling of the synthetic work.

pub(super) mod compute;
pub(super) mod device_copy;
pub(super) mod paths;
pub(super) mod probe;
pub(super) mod timestamps;
pub(super) mod transfer;
