//! graylab converts large photos to grayscale on the GPU (a wgpu compute shader) or the CPU
//! (rayon), and measures, honestly, where the time goes: decode, upload, kernel, download, encode.
//!
//! # Where things live
//!
//! | module | owns | may use |
//! |---|---|---|
//! | [`pixel`] | the formulas, their integer tables, the pixel layouts (kernels) | nothing |
//! | [`system`] | memory limits and the memory budget, huge pages, temporary files, pixel progress | nothing |
//! | [`shaders`] | every WGSL source, included from one place | nothing |
//! | [`cpu`] | scalar reference + SIMD/rayon kernel, the memory-stream baseline | `pixel` |
//! | [`gpu`] | wgpu device, planning, timing, GPU memory, display, drivers | `pixel`, `shaders` |
//! | [`io`] | decode within the memory budget, atomic export, PNG and JPEG encoders | nothing |
//! | [`engine`] | backend choice, phase reports, bench, sweep, ceilings, parity, file jobs | `cpu`, `gpu`, `io`, `pixel` |
//! | [`cli`] | `graylab convert / bench / sweep / info` | `engine` |
//! | `app` | the eframe desktop app (feature `gui`) | `engine` |
//!
//! The rule: `app`/`cli` -> `engine` -> {`cpu`, `gpu`, `io`} -> `pixel`, never backwards;
//! `system` and `shaders` are leaves any layer may use. The engine knows nothing of the UI.
//! `tests/architecture.rs` checks the rule and that no import cycle exists; `ARCHITECTURE.md`
//! has the path of one image.
//!
//! A new formula goes in [`pixel`] (and `shaders/grayscale.wgsl`); a new pixel layout is a
//! [`pixel::Kernel`] plus a CPU loop and a shader entry point; a new phase or statistic goes in
//! [`engine`]; a new command in [`cli`]; a new panel in `app`.

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
