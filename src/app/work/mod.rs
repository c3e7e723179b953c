//! The work off the UI thread: the worker thread and its queue, the jobs and replies, the launch
//! decode, and the wgpu device GPU work runs on.

pub(super) mod error;
pub(super) mod gpu_device;
pub(super) mod jobs;
pub(super) mod preload;
pub(super) mod worker;
