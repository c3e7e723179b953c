//! Tests of the ceilings cache (`cache.rs`).

use super::*;

#[test]
fn ceilings_measured_busy_are_measured_again_once_the_machine_is_quiet() {
    let asked = std::cell::Cell::new(false);
    let now = |busy: Option<bool>| {
        asked.set(true);
        busy
    };
    assert!(reuse(false, "x", || now(Some(false))) && !asked.get(), "quiet ones are kept without asking");
    assert!(!reuse(true, "x", || now(Some(false))), "busy ones, on a quiet machine: measured again");
    assert!(reuse(true, "x", || now(Some(true))), "busy ones, still busy: kept");
    assert!(reuse(true, "x", || now(None)), "busy ones, load unknown: kept");
}

/// The rates of a run that staged 1 MP of RGB8 at 64 GB/s: twice the example ceilings'
/// host→staging step (32 GB/s), with as many bytes as its probe (it proves the step low).
fn rates_of_a_run_at_64_gb_per_s() -> Vec<super::super::PhaseRate> {
    use crate::engine::report::RunReport;
    use crate::engine::{Backend, Phase, Span, Track};
    let mut r = RunReport::new(Backend::Gpu, crate::pixel::Formula::Bt601, (1000, 1000), Vec::new());
    r.kernel = Some(crate::pixel::Kernel::Rgb8ToL8);
    let copy = Span { phase: Some(Phase::Upload), ..Span::cpu(Track::HostCopy { thread: None }, 0, 46_875) };
    r.spans = vec![copy, Span::cpu(Track::Upload, 46_875, 80_000)];
    r.finish(100_000);
    let gpu = Some(super::super::rates::example_ceilings());
    super::super::phase_rates(&r, &super::super::Ceilings { gpu, cpu_stream_gb_per_s: None })
}

#[test]
fn a_raise_is_merged_into_the_ceilings_file_as_it_is_now() {
    use super::super::rates::{example_ceilings, raise_beaten};
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("ceilings.json");
    let rates = rates_of_a_run_at_64_gb_per_s();
    let raise = |c: &mut GpuCeilings| {
        raise_beaten(c, &rates);
    };
    // A (a long bench) read ceilings measured 3 days before, quiet, host→staging at 32 GB/s,
    // and its run beat that step.
    let mut held = KnownCeilings {
        ceilings: example_ceilings(),
        origin: super::Origin { measured_now: false, measured_unix_s: 1_000, busy: false },
        cache_path: None,
        cache_error: None,
    };
    raise(&mut held.ceilings);
    assert!((held.ceilings.host_to_staging.gb_per_s() - 64.0).abs() < 0.01, "{:?}", held.ceilings);
    // Meanwhile B (`info --probe`) measured them again on a busy machine: host→staging at 16
    // GB/s, staging→device at 100, and a compute ceiling.
    let mut b = example_ceilings();
    (b.host_to_staging.best_ns, b.host_to_staging.median_ns) = (2_000, 2_000);
    (b.staging_to_device.best_ns, b.staging_to_device.median_ns) = (1_280, 1_300);
    b.compute = Some(GpuCompute {
        rounds: 4096,
        invocations: 1 << 20,
        ops: 3 << 32,
        best_ns: 2_000_000,
        median_ns: 2_100_000,
        clock: crate::system::clock::Clock::GpuTimestamp,
    });
    store_json(Some(path.clone()), &CacheFile::of(&b, 2_000_000, true)).expect("B's probe");
    change_in_file(Some(path.clone()), &held, raise).expect("merged");
    let now: CacheFile = load_json(&path, "the test's cache").expect("readable");
    assert_eq!((now.measured_unix_s, now.busy), (2_000_000, true), "B's time and busy mark");
    assert_eq!(now.ceilings.staging_to_device, b.staging_to_device, "B's figure, not A's");
    assert_eq!(now.ceilings.compute, b.compute, "B's compute ceiling");
    assert!((now.ceilings.host_to_staging.gb_per_s() - 64.0).abs() < 0.01, "the step A's run beat, raised");
    assert_eq!(now.ceilings.readback_to_host, b.readback_to_host);
    // B's probe beat A's run (128 GB/s): the file is left as B wrote it.
    let mut fast = b.clone();
    (fast.host_to_staging.best_ns, fast.host_to_staging.median_ns) = (250, 250);
    store_json(Some(path.clone()), &CacheFile::of(&fast, 2_000_000, true)).expect("B's probe");
    let before = std::fs::read(&path).expect("read");
    change_in_file(Some(path.clone()), &held, raise).expect("nothing to merge");
    assert_eq!(std::fs::read(&path).expect("read"), before, "not rewritten");
    // No usable file (removed, or another adapter's): A's ceilings as raised, with A's time.
    std::fs::remove_file(&path).expect("remove");
    change_in_file(Some(path.clone()), &held, raise).expect("written");
    let now: CacheFile = load_json(&path, "the test's cache").expect("readable");
    assert_eq!((now.measured_unix_s, now.busy, &now.ceilings), (1_000, false, &held.ceilings));
}

#[test]
fn cache_files_are_named_by_the_whole_key_and_the_thread_count() {
    let Some(dir) = cache_dir() else { return };
    let key = "llvmpipe (LLVM 15.0.6, 256 bits) | Mesa 22.3.6 | vulkan";
    let a = cache_file(key, 2).expect("path");
    assert_eq!(a.parent(), Some(dir.as_path()));
    let name = a.file_name().and_then(|n| n.to_str()).expect("name");
    assert!(name.starts_with("ceilings-llvmpipe-llvm-15.0.6-256-bits-mesa-22.3.6-vulkan-2t-"), "{name}");
    let b = cache_file("llvmpipe (LLVM 15.0.6, 256 bits) | Mesa 22.3.6 | gl", 2).expect("path");
    assert_ne!(a, b);
    assert_ne!(a, cache_file(key, 1).expect("path"), "one file per thread count");
}

#[test]
fn updates_under_the_file_lock_never_lose_each_other() {
    // Two writers each add 1, twenty times, reading the file and writing it back with a pause
    // between: without the lock (one open file each, as two processes have) updates are lost.
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("counter.json");
    std::fs::write(&path, "0").expect("write");
    let add = || {
        for _ in 0..20 {
            under_file_lock(&path, || {
                let n: u32 = std::fs::read_to_string(&path).expect("read").parse().expect("a number");
                std::thread::sleep(std::time::Duration::from_millis(1));
                std::fs::write(&path, (n + 1).to_string()).expect("write");
            });
        }
    };
    std::thread::scope(|s| {
        for i in 0..2 {
            std::thread::Builder::new().name(format!("writer {i}")).spawn_scoped(s, add).expect("thread");
        }
    });
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "40");
    assert!(dir.path().join("locks/counter.json.lock").is_file(), "the lock file in locks/");
}
