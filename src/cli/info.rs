//! `graylab info`: the CPU, the build and every GPU adapter.

use std::process::ExitCode;

use clap::Args;

use crate::engine::{available_threads, list_adapters, simd_level};

/// Arguments of `graylab info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(serde::Serialize)]
struct Info {
    version: &'static str,
    build: &'static str,
    cpu_threads: usize,
    cpu_simd: crate::engine::SimdLevel,
    memory_budget_bytes: u64,
    memory_budget_source: crate::io::BudgetSource,
    adapters: Vec<crate::engine::AdapterReport>,
}

pub(super) fn run(args: &InfoArgs) -> anyhow::Result<ExitCode> {
    let (memory_budget_bytes, memory_budget_source) = crate::engine::budget().capacity();
    let info = Info {
        version: env!("CARGO_PKG_VERSION"),
        build: if cfg!(debug_assertions) { "debug" } else { "release" },
        cpu_threads: available_threads(),
        cpu_simd: simd_level(),
        memory_budget_bytes,
        memory_budget_source,
        adapters: list_adapters(),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&info)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("graylab {} ({} build)", info.version, info.build);
    println!("CPU: {} threads, kernel uses {:?}", info.cpu_threads, info.cpu_simd);
    println!(
        "memory budget for images: {} ({})",
        crate::io::human_bytes(info.memory_budget_bytes),
        info.memory_budget_source
    );
    if let Some(w) = super::build_warning() {
        println!("{w}");
    }
    if info.adapters.is_empty() {
        println!(
            "GPU: no adapter found (install a Vulkan driver, e.g. mesa-vulkan-drivers); the CPU backend still works"
        );
    }
    for a in &info.adapters {
        println!();
        println!("{} {}", if a.selected { "* GPU (selected):" } else { "  GPU:" }, a.name);
        println!("    backend {}, type {}, driver {}", a.backend, a.device_type, a.driver);
        if a.device_type == "Cpu" {
            println!("    note: a software rasteriser on the CPU: its timings say nothing about GPUs");
        }
        println!(
            "    max storage binding {} (one band), max buffer {}, max texture {} px",
            crate::io::human_bytes(a.max_storage_buffer_binding_bytes),
            crate::io::human_bytes(a.max_buffer_bytes),
            a.max_texture_dimension_2d
        );
        println!(
            "    max {} invocations per workgroup, {} workgroups per dimension",
            a.max_invocations_per_workgroup, a.max_workgroups_per_dimension
        );
        let ts = match (a.timestamps_in_passes, a.timestamps_in_encoders) {
            (true, true) => "yes (compute passes and encoders: kernel and copies timed on the GPU)",
            (true, false) => "compute passes only (kernel on the GPU clock, copies on the CPU clock)",
            _ => "no (every GPU figure falls back to the CPU clock)",
        };
        println!("    timestamps: {ts}");
        println!("    workgroup sizes: {}", a.valid_workgroups.join(", "));
    }
    Ok(ExitCode::SUCCESS)
}
