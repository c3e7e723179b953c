//! The CPU kernel on an 8K frame at 1 and 2 threads, beside a memory-bandwidth baseline (read 3
//! bytes, write 1 byte per pixel, no arithmetic) run the same way, so the ratio is self-contained.
//!
//! `cargo bench --bench cpu_kernel` (add `-- --quick` for a fast look). See BENCHMARKS.md.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use graylab::cpu::{par_convert, stream_baseline, zeroed_buffer};
use graylab::engine::synthetic_rgb;
use graylab::pixel::{Formula, Kernel};

const W: usize = 7680;
const H: usize = 4320;

fn kernels(c: &mut Criterion) {
    let rgb = synthetic_rgb(W as u32, H as u32, 1).into_bytes();
    // Every buffer on huge pages, as the engine allocates them (see cpu::zeroed_buffer).
    let mut rgba: Vec<u8> = zeroed_buffer(W * H * 4);
    for (d, s) in rgba.chunks_exact_mut(4).zip(rgb.chunks_exact(3)) {
        d.copy_from_slice(&[s[0], s[1], s[2], 255]);
    }
    let mut out: Vec<u8> = zeroed_buffer(W * H);
    let mut group = c.benchmark_group("8k");
    group.sample_size(30);
    group.throughput(Throughput::Elements((W * H) as u64));
    for threads in [1, 2] {
        group.bench_with_input(BenchmarkId::new("stream_baseline_rgb", threads), &threads, |b, &t| {
            b.iter(|| stream_baseline(black_box(&rgb), black_box(&mut out), t));
        });
        for formula in [Formula::Bt601, Formula::Bt709, Formula::Linear] {
            group.bench_with_input(
                BenchmarkId::new(format!("rgb8_to_l8_{formula}"), threads),
                &threads,
                |b, &t| {
                    b.iter(|| {
                        par_convert(Kernel::Rgb8ToL8, formula, black_box(&rgb), black_box(&mut out), t)
                    });
                },
            );
        }
        group.bench_with_input(BenchmarkId::new("rgba8_to_l8_bt601", threads), &threads, |b, &t| {
            b.iter(|| {
                par_convert(Kernel::Rgba8ToL8, Formula::Bt601, black_box(&rgba), black_box(&mut out), t)
            });
        });
    }
    group.finish();
}

criterion_group!(benches, kernels);
criterion_main!(benches);
