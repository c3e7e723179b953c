//! graylab converts large photos to grayscale on the GPU (a wgpu compute shader) or the CPU
//! (rayon), and measures, honestly, where the time goes: decode, upload, kernel, download, encode.
//!
//! # Where things live
//!
//! | module | owns |
//! |---|---|
//! | [`pixel`] | the formulas, their integer tables, the pixel layouts (kernels), the work per pixel, the ops (blur, dither) |
//! | [`system`] | memory limits and the budget, huge pages, temporary files, load, progress, clocks, units |
//! | [`shaders`] | every WGSL source, included from one place |
//! | [`cpu`] | scalar reference + SIMD/rayon kernel, the ops, the memory-stream baseline, the compute ceiling |
//! | [`gpu`] | wgpu device, planning, timing, GPU memory, the ops' passes, display, drivers |
//! | [`io`] | decode within the memory budget, atomic export, the encoders, result files and their marks |
//! | [`engine`] | backend choice, phase reports, bench, sweep, ceilings, claims, sampling, estimates, comparing results |
//! | [`cli`] | `graylab convert / bench / sweep / info / claims / compare` |
//! | `app` | the eframe desktop app (feature `gui`) |
//!
//! Which module may use which is stated once, in `ARCHITECTURE.md` (its folder table's last
//! column, with the path of one image and where a change goes); `tests/headless/architecture.rs`
//! reads the rule from there and checks the sources against it.

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
