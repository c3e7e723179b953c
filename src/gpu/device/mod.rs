//! The device layer: finding an adapter, the [`GpuContext`](crate::gpu::GpuContext) (device, queue
//! and what the adapter can do), workgroup shapes, error scopes, waiting for the GPU, host copies
//! into mapped buffers, and the backend's error type.

pub(super) mod adapters;
pub(super) mod context;
pub(super) mod error;
pub(super) mod host_copy;
pub(super) mod scopes;
pub(super) mod wait;
pub(super) mod workgroup;
