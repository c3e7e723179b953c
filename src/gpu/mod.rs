//! The GPU backend (wgpu compute). [`GpuContext`] is a small leaf: the device, its queue and what
//! the adapter can do, owned or borrowed from eframe. [`GpuConverter`] holds the components that
//! borrow it, as the wgpu examples do: the pipelines per (kernel, formula, workgroup shape), the
//! buffer ring, the display pipeline and the learnt submission budget.
//!
//! A conversion is cut into row bands that fit one storage binding and chunks of rows within one
//! submission's GPU-time budget; with encoder timestamps the chunks are pipelined (host copies
//! beside GPU work), otherwise each step is a submit-and-wait on the CPU clock.
//!
//! Files, each using only files before it: `error`, `workgroup`, `adapters`, `bands`, `budget`,
//! `transfer`, `wait`, `scopes`, `job` -> `context` -> `timestamps`, `pipelines` -> `grid`,
//! `display`, `ring`, `resident_input` -> `buffers`, `plan`, `probe` -> `encode` -> `run` -> `pipelined`,
//! `stepwise` -> `resident` -> `converter`.
//! Depends only on [`crate::pixel`] and [`crate::shaders`].

mod adapters;
mod bands;
mod budget;
mod buffers;
mod context;
mod converter;
mod display;
mod encode;
mod error;
mod grid;
mod job;
mod pipelined;
mod pipelines;
mod plan;
mod probe;
mod resident;
mod resident_input;
mod ring;
mod run;
mod scopes;
mod stepwise;
mod timestamps;
mod transfer;
mod wait;
mod workgroup;

pub use adapters::{AdapterReport, list_adapters};
pub use bands::BandPlan;
pub use budget::{GpuRates, SUBMISSION_BUDGET_NS};
pub use context::{GpuContext, TimestampSupport};
pub use converter::{GpuConverter, TimingMode};
pub use display::{GpuTile, GpuTiles};
pub use error::GpuError;
pub use job::{GpuJob, GpuTimings};
pub use probe::{Bandwidth, GpuCeilings, PROBE_BYTES, PROBE_HOLD_BYTES, ProbeClock};
pub use transfer::PIECE_BYTES;
pub use workgroup::{ParseWorkgroupError, WorkgroupSize};
