//! The submission budget and the run plan on the two machines graylab was measured on, as pure
//! arithmetic: each machine's measured ceilings plan a run, and the rates its runs really
//! measured time each submission of that plan. The figures are constants here, each with where
//! it was read, so the tests need no file and no GPU.

use super::run_plan::{Limits, RunPlan};
use super::submission_budget::{CeilingRates, GROWTH, LearntRates, SUBMISSION_BUDGET_NS, Sample, rounds};
use crate::gpu::WorkgroupSize;
use crate::pixel::{Kernel, Work};

/// What a machine's runs really measured, per byte (the download's per output byte).
struct Real {
    upload_ns_per_byte: f64,
    plain_kernel_ns_per_byte: f64,
    ns_per_byte_round: f64,
    download_ns_per_byte: f64,
}

/// One machine: its ceilings, what its runs measured, its largest storage binding.
struct Machine {
    name: &'static str,
    ceilings: CeilingRates,
    real: Real,
    band_bytes: u64,
}

/// An 8K RGB frame's input bytes (7680 x 4320 x 3).
const FRAME_8K_BYTES: f64 = 99_532_800.0;

/// An NVIDIA H200, 2026-12-04. Ceilings from `../gpu-h200/probe.json` (`ceilings.ceilings`): the
/// staging-to-device copy 67,108,864 B in 164,096 ns, the device copy 134,217,728 B in
/// 164,064 ns, device-to-readback 67,108,864 B in 1,275,104 ns, the compute ceiling
/// 125,615,210,496 operations in 18,993,952 ns. Runs of 8K: the kernel 0.060 ms plain
/// (`work.txt`) and 65.417 ms at 4096 rounds, the upload's GPU copy 175 GB/s, the download's
/// 36.4 GB/s (`work4096.txt`).
fn h200() -> Machine {
    Machine {
        name: "H200",
        ceilings: CeilingRates::new(
            164_096.0 / 67_108_864.0,
            164_064.0 / 134_217_728.0,
            1_275_104.0 / 67_108_864.0,
            Some(125_615_210_496.0 / 18_993_952.0 * 1e9),
        ),
        real: Real {
            upload_ns_per_byte: 1.0 / 175.0,
            plain_kernel_ns_per_byte: 60_000.0 / FRAME_8K_BYTES,
            ns_per_byte_round: 65_417_000.0 / FRAME_8K_BYTES / 4096.0,
            download_ns_per_byte: 1.0 / 36.4,
        },
        band_bytes: 2_147_483_632,
    }
}

/// Lavapipe on this project's two cores (BENCHMARKS.md). Ceilings: staging to device 8.57 GB/s,
/// the device copy 18.5 GB/s, device to readback 8.6 GB/s (the download's GPU copy, 3.36 GB/s,
/// was 39% of it), compute 8.5 Gop/s ("GPU path on lavapipe", "Compute ceilings"). Runs of 8K:
/// the kernel 134 ms plain, 3894 ms at 256 rounds, the upload's GPU copy 7.07 GB/s, the
/// download's 3.36 GB/s.
fn lavapipe() -> Machine {
    Machine {
        name: "lavapipe",
        ceilings: CeilingRates::new(1.0 / 8.57, 1.0 / 18.5, 1.0 / 8.6, Some(8.5e9)),
        real: Real {
            upload_ns_per_byte: 1.0 / 7.07,
            plain_kernel_ns_per_byte: 134e6 / FRAME_8K_BYTES,
            ns_per_byte_round: 3894e6 / FRAME_8K_BYTES / 256.0,
            download_ns_per_byte: 1.0 / 3.36,
        },
        band_bytes: 128 << 20,
    }
}

/// A bench's run (downloaded, not drawn) of `size` at `work`, planned by `budget`.
fn plan(machine: &Machine, budget: &LearntRates, size: (u32, u32), work: Work) -> RunPlan {
    let (chunk_bytes, slice_bytes) = budget.chunk_and_slice_bytes(Kernel::Rgb8ToL8, work, false, true);
    let limits = Limits::pipelined(machine.band_bytes, chunk_bytes, slice_bytes);
    RunPlan::new(Kernel::Rgb8ToL8, size, WorkgroupSize::DEFAULT, limits).expect("plan")
}

/// A budget started from `machine`'s ceilings.
fn started(machine: &Machine) -> LearntRates {
    let budget = LearntRates::new();
    budget.start_from(&machine.ceilings);
    budget
}

/// Each submission of `plan` at `machine`'s real rates, ns, with the rows it carries: the
/// first slice of a chunk uploads it, the last downloads it.
fn submissions_ns(machine: &Machine, plan: &RunPlan, work: Work) -> Vec<(f64, u32)> {
    let r = &machine.real;
    let row_bytes = f64::from(plan.size.0) * 3.0;
    let kernel = r.plain_kernel_ns_per_byte + r.ns_per_byte_round * f64::from(work.rounds);
    let mut out = Vec::new();
    for chunk in &plan.chunks {
        let slices = plan.slices_of(chunk);
        for (nth, slice) in slices.iter().enumerate() {
            let mut ns = f64::from(slice.rows.len() as u32) * row_bytes * kernel;
            if nth == 0 {
                ns += chunk.src.len() as f64 * r.upload_ns_per_byte;
            }
            if nth + 1 == slices.len() {
                ns += chunk.dst.len() as f64 * r.download_ns_per_byte;
            }
            out.push((ns, slice.rows.len() as u32));
        }
    }
    out
}

#[test]
fn a_megapixel_at_4096_rounds_is_two_submissions_on_the_h200_not_1024() {
    let h200 = h200();
    let heavy = rounds(4096);
    // Planned from the H200's ceilings: two chunks for the pipeline, one slice each.
    let p = plan(&h200, &started(&h200), (1024, 1024), heavy);
    assert_eq!((p.chunks.len(), p.slices.len(), p.rows_per_chunk), (2, 2, 682));
    let ns = submissions_ns(&h200, &p, heavy);
    // At what the H200 really did: 1.4 ms and 0.7 ms of the 8 ms budget.
    assert!(ns.iter().all(|(ns, _)| (0.5e6..2.0e6).contains(ns)), "{ns:?}");
    // Started from rates slower than any GPU, as every process did: 1,024 one-row submissions
    // of 2 µs of work each (measured there: 103 to 508 ms for the 1.95 ms the ceiling predicts).
    let p = plan(&h200, &LearntRates::new(), (1024, 1024), heavy);
    assert_eq!(p.slices.len(), 1024);
}

#[test]
fn every_submission_fits_the_budget_on_both_machines() {
    for machine in [h200(), lavapipe()] {
        let budget = started(&machine);
        for size in [(1024, 1024), (7680, 4320)] {
            for work in [0, 16, 256, 4096].map(rounds) {
                let p = plan(&machine, &budget, size, work);
                let ns = submissions_ns(&machine, &p, work);
                let what = format!("{} {size:?} at {} rounds", machine.name, work.rounds);
                // A submission carries at least one row: lavapipe's 8K row at 4096 rounds takes
                // 14 ms, and cannot be cut.
                let over: Vec<_> =
                    ns.iter().filter(|(ns, rows)| *ns > SUBMISSION_BUDGET_NS as f64 && *rows > 1).collect();
                assert!(over.is_empty(), "{what}: {over:?}");
                // And they are no slivers: on average at least an eighth of the budget (sizes in
                // powers of two, the start's margin and whole rows each cost up to half), unless
                // the run is cut only for the pipeline.
                let total: f64 = ns.iter().map(|(ns, _)| ns).sum();
                let mean = total / ns.len() as f64;
                assert!(mean >= SUBMISSION_BUDGET_NS as f64 / 8.0 || ns.len() <= 4, "{what}: {ns:?}");
            }
        }
    }
}

#[test]
fn without_ceilings_the_submissions_grow_geometrically_to_the_budget() {
    // A process with no ceilings cached: a run at 4096 rounds on the H200 starts from one row
    // and each chunk's reading lets the next submission grow at most GROWTH times.
    let h200 = h200();
    let heavy = rounds(4096);
    let budget = LearntRates::new();
    let kernel_ns_per_byte = h200.real.plain_kernel_ns_per_byte + h200.real.ns_per_byte_round * 4096.0;
    let mut slice_bytes = budget.chunk_and_slice_bytes(Kernel::Rgb8ToL8, heavy, false, true).1;
    assert_eq!(slice_bytes, 1024);
    let mut readings = 0;
    while (slice_bytes as f64) * kernel_ns_per_byte < SUBMISSION_BUDGET_NS as f64 / 4.0 {
        let in_bytes = 3 << 20;
        budget.learn(heavy, &Sample::kernel_only(in_bytes, (in_bytes as f64 * kernel_ns_per_byte) as u64));
        readings += 1;
        let next = budget.chunk_and_slice_bytes(Kernel::Rgb8ToL8, heavy, false, true).1;
        assert!(next > slice_bytes && next as f64 <= slice_bytes as f64 * GROWTH, "{slice_bytes} -> {next}");
        // Never beyond the budget at the rate really measured.
        assert!(next as f64 * kernel_ns_per_byte <= SUBMISSION_BUDGET_NS as f64, "{next}");
        slice_bytes = next;
    }
    // 4096 ns per byte believed, 0.66 measured: from 1 KiB to 4 MiB in six readings.
    assert_eq!((readings, slice_bytes), (6, 4 << 20));
}
