//! The GPU path's host copies (into the mapped upload staging, out of the mapped download
//! staging, with every rayon thread in 1 MiB pieces) against a plain parallel `memcpy` of the
//! same bytes with the same threads and pieces, interleaved round by round in one process.
//!
//! `cargo bench --bench gpu_transfer` (8K RGB; `GRAYLAB_ROUNDS=N` for more rounds). Two GPU
//! timing modes: `cpu-clock` runs each step alone (nothing else competes with the host copies),
//! `auto` pipelines them beside the GPU's work, which on a software adapter is the same cores.
//! See BENCHMARKS.md.

use std::sync::Arc;
use std::time::Instant;

use graylab::engine::synthetic_rgb;
use graylab::gpu::{GpuContext, GpuConverter, GpuJob, PIECE_BYTES, TimingMode, WorkgroupSize};
use graylab::pixel::{Formula, Kernel};
use rayon::prelude::*;

const W: u32 = 7680;
const H: u32 = 4320;

fn memcpy(src: &[u8], dst: &mut [u8]) -> u64 {
    let started = Instant::now();
    dst.par_chunks_mut(PIECE_BYTES).zip(src.par_chunks(PIECE_BYTES)).for_each(|(d, s)| d.copy_from_slice(s));
    graylab::system::clock::nanos_since(started)
}

fn median(v: &mut [u64]) -> f64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0) as f64
}

fn main() {
    let ctx = match GpuContext::new() {
        Ok(ctx) => Arc::new(ctx),
        Err(e) => {
            eprintln!("gpu_transfer: skipped ({e})");
            return;
        }
    };
    let rounds: usize = std::env::var("GRAYLAB_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(15);
    let src = synthetic_rgb(W, H, 1).into_bytes();
    let mut out = vec![0u8; (W * H) as usize];
    // The yardstick's buffers, touched once so page faults are not timed.
    let mut plain_in = vec![1u8; src.len()];
    let mut plain_out = vec![1u8; out.len()];
    let (in_gb, out_gb) = (src.len() as f64 / 1e9, out.len() as f64 / 1e9);
    println!(
        "{} ({:?}), {} rayon threads, 8K RGB: {:.1} MB up, {:.1} MB down, median of {rounds} rounds",
        ctx.adapter_info().name,
        ctx.adapter_info().device_type,
        rayon::current_num_threads(),
        in_gb * 1e3,
        out_gb * 1e3
    );
    println!(
        "| mode | host -> upload staging | memcpy, same bytes | ratio | download staging -> host | memcpy, same bytes | ratio |"
    );
    println!("|---|---|---|---|---|---|---|");
    for mode in [TimingMode::CpuClock, TimingMode::Auto] {
        let mut conv = GpuConverter::new(Arc::clone(&ctx));
        conv.set_timing_mode(mode);
        let job = GpuJob::new(Kernel::Rgb8ToL8, Formula::Bt601, WorkgroupSize::DEFAULT, &src, (W, H));
        // Cold run: pipeline, buffers, the submission budget learnt.
        conv.convert(&job, &mut out).expect("GPU conversion");
        memcpy(&src, &mut plain_in);
        memcpy(&out, &mut plain_out);
        let (mut up, mut down, mut mem_up, mut mem_down) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            let t = conv.convert(&job, &mut out).expect("GPU conversion");
            up.push(t.upload_host().ns);
            down.push(t.download_host().ns);
            mem_up.push(memcpy(&src, &mut plain_in));
            mem_down.push(memcpy(&out, &mut plain_out));
        }
        let gbps = |gb: f64, ns: f64| gb / ns * 1e9;
        let (up, mem_up, down, mem_down) =
            (median(&mut up), median(&mut mem_up), median(&mut down), median(&mut mem_down));
        println!(
            "| {} | {:.1} ms ({:.1} GB/s) | {:.1} ms ({:.1} GB/s) | {:.0}% | {:.1} ms ({:.1} GB/s) | {:.1} ms ({:.1} GB/s) | {:.0}% |",
            if mode == TimingMode::Auto { "auto (pipelined)" } else { "cpu-clock (steps alone)" },
            up / 1e6,
            gbps(in_gb, up),
            mem_up / 1e6,
            gbps(in_gb, mem_up),
            mem_up / up * 100.0,
            down / 1e6,
            gbps(out_gb, down),
            mem_down / 1e6,
            gbps(out_gb, mem_down),
            mem_down / down * 100.0,
        );
    }
}
