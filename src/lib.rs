//! graylab converts large photos to grayscale on the GPU (a wgpu compute shader) or the CPU
//! (rayon), and measures, honestly, where the time goes: decode, upload, kernel, download, encode.
//!
//! # Where things live
//!
//! | module | owns | may use |
//! |---|---|---|
//! | [`pixel`] | the formulas, their integer tables, the pixel layouts (kernels), the work per pixel | nothing |
//! | [`system`] | memory limits and the budget, huge pages, temporary files, load, progress, one-time work | nothing |
//! | [`shaders`] | every WGSL source, included from one place | nothing |
//! | [`cpu`] | scalar reference + SIMD/rayon kernel, the memory-stream baseline | `pixel`, `system` |
//! | [`gpu`] | wgpu device, planning, timing, GPU memory, display, drivers | `pixel`, `system`, `shaders` |
//! | [`io`] | decode within the memory budget, atomic export, PNG and JPEG encoders | `system` |
//! | [`engine`] | backend choice, phase reports, bench, sweep, ceilings, claims, sampling, estimates | the five above |
//! | [`cli`] | `graylab convert / bench / sweep / info / claims` | `engine` |
//! | `app` | the eframe desktop app (feature `gui`) | `engine`, `shaders` |
//!
//! `app`/`cli` -> `engine` -> {`cpu`, `gpu`, `io`} -> `pixel`, never backwards; `system` and
//! `shaders` are leaves. The rule is stated in full in `ARCHITECTURE.md`, with a row per folder,
//! the path of one image and where a change goes; `tests/headless/architecture.rs` checks it.

pub mod cli;
pub mod cpu;
pub mod engine;
pub mod gpu;
pub mod io;
pub mod pixel;
pub mod shaders;
pub mod system;

#[cfg(feature = "gui")]
pub mod app;
