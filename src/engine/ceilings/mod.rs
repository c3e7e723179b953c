//! This machine's ceilings and every phase against them: the GPU's (probed, cached per adapter),
//! the CPU kernel's (the memory-stream baseline), the compute ceilings of the synthetic work (CPU
//! and GPU), every transfer path as latency plus bandwidth, and the rates of a run's phases.

pub(super) mod cache;
pub(super) mod compute;
pub(super) mod paths;
pub(super) mod rates;
pub(super) mod stream;

pub use crate::gpu::{Hockney, LARGEST_BYTES as LARGEST_PATH_BYTES, PathKind, PathPoint, TransferPath};
pub use cache::{HeldAgainst, KnownCeilings, Origin, PLAUSIBLE_OPS_PER_S, cache_dir, cached_ceilings};
pub(crate) use cache::{store_json, under_file_lock};
pub use compute::{ComputeCeilings, KnownCpuCompute, compute_ceilings_of, saved_cpu_compute};
pub use paths::CopyLatency;
#[cfg(test)]
pub(crate) use rates::example_ceilings;
pub use rates::{BEATEN_PERCENT, Ceiling, Ceilings, PhasePart, PhaseRate, phase_rates, share_label};
