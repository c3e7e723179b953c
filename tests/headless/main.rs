//! The headless tests, one binary: the CPU kernels exactly, the readers and writers against
//! hostile and hand-built files, and the real `graylab` binary end to end (arguments, folders,
//! streams, filesystems, signals), plus the tree's own rules (`architecture`). The real binary
//! may reach the GPU through `--backend gpu`; nothing here opens one in-process.

#[path = "../common/mod.rs"]
mod common;
mod hostile_gen;

mod architecture;
mod cli;
mod cli_args;
mod cli_batch;
mod cli_compare;
mod cli_fs;
mod cli_ops;
mod cli_outputs;
mod cli_streams;
mod cli_sweep_radius;
mod cli_sweep_text;
mod cli_trace;
mod codecs;
mod cpu_exhaustive;
mod density;
mod exif;
mod hostile;
mod io;
mod jpeg;
mod jpeg_faults;
mod jpeg_restarts;
mod shards;
mod signals;
mod tiff;
