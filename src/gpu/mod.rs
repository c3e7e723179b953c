//! The GPU backend (wgpu compute). [`GpuContext`] is a small leaf: the device, its queue and what
//! the adapter can do, owned or borrowed from eframe. [`GpuConverter`] holds the components that
//! borrow it, as the wgpu examples do: the pipelines per (kernel, formula, workgroup shape), the
//! buffer ring, the display pipeline and the learnt submission budget.
//!
//! A conversion is cut into row bands that fit one storage binding and chunks of rows within one
//! submission's GPU-time budget; with encoder timestamps the chunks are pipelined (host copies
//! beside GPU work), otherwise each step is a submit-and-wait on the CPU clock.
//!
//! The layers within (`device` -> `plan` -> `timing` -> `memory` -> `pipelines` -> `display` ->
//! `run` -> `ops` -> `converter`, each using only those before it) are on `ARCHITECTURE.md`'s map.

mod converter;
mod device;
mod display;
mod memory;
mod ops;
mod pipelines;
mod plan;
mod run;
mod timing;

pub use converter::{GpuConverter, TimingMode};
pub use device::adapters::{
    ADAPTER_NAME_ENV, AdapterReport, choose_adapter, choose_window_adapter, list_adapters,
    wanted_adapter_name,
};
pub use device::context::{GpuContext, TimestampSupport};
pub use device::error::{GpuError, MapFailure};
pub use device::host_copy::PIECE_BYTES;
pub use device::workgroup::{ParseWorkgroupError, WorkgroupSize};
pub use display::{GpuTile, GpuTiles};
pub use ops::{DitherWavefront, OpTimings};
pub use plan::bands::BandPlan;
pub use plan::host_memory::GpuHostMemory;
pub use plan::submission_budget::{CeilingRates, GpuRates, PLAIN_OPS_PER_PIXEL, SUBMISSION_BUDGET_NS};
pub use run::job::{GpuJob, GpuSpan, GpuStep, GpuTimings, StepTime};
pub use run::resident::ResidentPass;
pub use run::round_trip::{RoundTripTime, WarmRoundTrip};
pub use timing::compute::GpuCompute;
pub use timing::paths::{
    Bandwidth, HELD_BUFFERS, Hockney, LARGEST_BYTES, PathKind, PathPoint, TransferPath, copy_latency_ns,
    repeats as path_repeats, sizes as path_sizes,
};
pub use timing::probe::{GpuCeilings, PROBE_BYTES, PROBE_HOLD_BYTES};
