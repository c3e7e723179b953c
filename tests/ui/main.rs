//! The app's tests, one binary: the real desktop app driven by `egui_kittest` on the wgpu
//! renderer (`harness`), its windows, charts, history and work, every screen audited for cut or
//! overlapping text, the theme and the close (`window`), and the snapshots in `tests/snapshots/`.

#[path = "../common/mod.rs"]
mod common;
mod harness;

mod app;
mod audit;
mod claims;
mod display;
mod files;
mod history;
mod ops;
mod stored_luma;
mod sweep;
mod sweep_map;
mod window;
mod windows;
mod work;
