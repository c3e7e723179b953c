//! graylab converts large photos to grayscale on the GPU (a wgpu compute shader) or the CPU
//! (rayon), and measures, honestly, where the time goes: decode, upload, kernel, download, encode.
//!
//! # Where things live
//!
//! | module | owns | may use |
//! |---|---|---|
//! | [`pixel`] | the formulas, their integer tables, the pixel layouts (kernels) | nothing |
//! | [`cpu`] | scalar reference + SIMD/rayon kernel | `pixel` |
//! | [`gpu`] | wgpu device, pipelines, banding, timestamps | `pixel`, `shaders` |
//! | [`io`] | decode (orientation, memory budget), atomic export | nothing |
//! | [`engine`] | backend choice, phase reports, benchmarks, file jobs | `cpu`, `gpu`, `io`, `pixel` |
//! | [`cli`] | `graylab convert / bench / info` | `engine` |
//! | `app` | the eframe desktop app (feature `gui`) | `engine` |
//!
//! The rule: `app`/`cli` -> `engine` -> {`cpu`, `gpu`, `io`} -> `pixel`, never backwards. The
//! engine knows nothing of the UI. See `ARCHITECTURE.md` for the path of one image.
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

#[cfg(feature = "gui")]
pub mod app;
