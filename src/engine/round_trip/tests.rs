//! Tests of [`super`]: from which count the GPU wins, and the verdict sentence.

use super::*;

fn point(passes: u32, gpu: f64, cpu: u64) -> RoundTripPoint {
    let s = |ns| Stats { min_ns: ns, median_ns: ns, max_ns: ns, runs: 1 };
    RoundTripPoint {
        passes,
        gpu_total_ns: s((gpu * f64::from(passes)) as u64),
        gpu_per_op_ns: gpu,
        gpu_kernel_ns: None,
        cpu_total_ns: s(cpu * u64::from(passes)),
        cpu_per_op_ns: s(cpu),
        matches_cpu: true,
        gpu_wins: gpu < cpu as f64,
    }
}

fn result(points: Vec<RoundTripPoint>, software: bool) -> RoundTripResult {
    RoundTripResult {
        version: String::new(),
        build: "release".into(),
        width: 7680,
        height: 4320,
        formula: Formula::Bt601,
        workgroup: WorkgroupSize::DEFAULT,
        cpu_threads: 2,
        work_rounds: 256,
        divergent: false,
        work_mask: 0,
        runs: 3,
        gpu_wins_from_passes: wins_from(&points),
        points,
        clocks: RoundTripClocks { gpu_total: "cpu-clock".into(), gpu_kernel: None, cpu: "cpu-clock".into() },
        adapter: "test".into(),
        software_adapter: software,
        verdict: String::new(),
    }
}

#[test]
fn the_gpu_wins_from_the_first_count_after_its_last_loss() {
    let ms = 1_000_000;
    let p = |n, gpu_ms: f64| point(n, gpu_ms * 1e6, 10 * ms);
    assert_eq!(wins_from(&[p(1, 30.0), p(2, 16.0), p(4, 8.0), p(8, 5.0)]), Some(4));
    assert_eq!(wins_from(&[p(1, 5.0), p(2, 4.0)]), Some(1));
    // A win followed by a loss does not count: the GPU must keep winning.
    assert_eq!(wins_from(&[p(1, 30.0), p(2, 9.0), p(4, 11.0)]), None);
    assert_eq!(wins_from(&[]), None);
    let r = result(vec![p(1, 30.0), p(2, 16.0), p(4, 8.0), p(8, 5.0)], false);
    assert_eq!(
        verdict(&r),
        "At 33 MP (7680x4320) and 256 rounds per pixel the GPU wins from 4 operations per round trip: \
         8.000 ms per operation on the GPU against the CPU's 10.000 ms there."
    );
}

#[test]
fn the_verdict_says_when_the_gpu_never_wins_and_what_it_is() {
    let ms = 1_000_000;
    let r = result(vec![point(1, 30e6, 10 * ms), point(16, 12e6, 10 * ms)], true);
    let v = verdict(&r);
    assert!(v.contains("the GPU does not win up to 16 operations per round trip"), "{v}");
    assert!(v.contains("12.000 ms per operation on the GPU against the CPU's 10.000 ms at 16"), "{v}");
    assert!(v.ends_with("this CPU's own cores)."), "{v}");
    let mut differing = r.clone();
    differing.points[0].matches_cpu = false;
    assert!(verdict(&differing).contains("differed from the CPU's at n = 1"));
    assert_eq!(megapixels(64, 48), "0.0031 MP");
    assert_eq!(megapixels(1920, 1080), "2.1 MP");
    assert_eq!(round_trip_bytes(300, 100, true), 300 + 100 + 800 + 100);
}
