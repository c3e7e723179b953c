//! The GPU tests, one binary, on whatever adapter wgpu finds (lavapipe in CI): GPU = CPU byte for
//! byte, the engine's reports and clocks, the input kept on the GPU, the compute ceilings, round
//! trips and the work grid. Without an adapter each test says SKIPPED on the terminal, and with
//! `GRAYLAB_REQUIRE_GPU=1` (CI) it fails instead (`common::gpu`).

#[path = "../common/mod.rs"]
mod common;

mod ceilings;
mod compute_ceilings;
mod engine;
mod ops;
mod parity;
mod round_trips;
mod sweep_grid;
