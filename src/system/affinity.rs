//! One core per thread for a pool as large as the machine: each of its threads is pinned to a
//! core of its own, so that a pass of a fraction of a millisecond is not run by two threads
//! stacked on one core while another core idles. A 2 MP pass on 2 threads and 2 cores took
//! 1.6–2.3x its usual 0.14 ms in 9 of 24 readings unpinned, in 1 of 24 pinned (2026-12-05,
//! `bench --synthetic 1732x1155 --passes 1,4,16`); an 8K pass was the same either way. A smaller
//! pool is left to the scheduler: pinned, it would keep off the cores that are idle.

/// Pins the calling thread, the `index`th of a pool of `threads`, to the `index`th core this
/// process may run on, when the pool has exactly one thread per such core; otherwise it may run
/// on any of them. The cores are the process's (its main thread's), not the creating thread's: a
/// pool made from a pinned thread would inherit that one core. Where the platform cannot pin or
/// the call fails, the thread stays where the scheduler puts it.
pub fn pin_pool_thread(index: usize, threads: usize) {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::thread::{CpuSet, sched_getaffinity, sched_setaffinity};
        let Ok(allowed) = sched_getaffinity(Some(rustix::process::getpid())) else { return };
        let cores: Vec<usize> = (0..CpuSet::MAX_CPU).filter(|&c| allowed.is_set(c)).collect();
        let mask = match (cores.len() == threads, cores.get(index)) {
            (true, Some(&core)) => {
                let mut one = CpuSet::new();
                one.set(core);
                one
            }
            _ => allowed,
        };
        if let Err(e) = sched_setaffinity(None, &mask) {
            log::debug!("pool thread {index} of {threads} keeps the cores it was given: {e}");
        }
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let _ = (index, threads);
}

#[cfg(all(test, any(target_os = "linux", target_os = "android")))]
mod tests {
    use rustix::thread::{CpuSet, sched_getaffinity};

    /// The cores this thread may run on.
    fn cores() -> Vec<usize> {
        let allowed = sched_getaffinity(None).expect("affinity");
        (0..CpuSet::MAX_CPU).filter(|&c| allowed.is_set(c)).collect()
    }

    /// The cores a thread of its own may run on after `pin_pool_thread(index, threads)`.
    fn after_pinning(index: usize, threads: usize) -> Vec<usize> {
        let thread = std::thread::Builder::new().name("affinity-test".into()).spawn(move || {
            super::pin_pool_thread(index, threads);
            cores()
        });
        thread.expect("spawns").join().expect("joins")
    }

    #[test]
    fn a_pool_as_large_as_the_machine_gets_a_core_per_thread_a_smaller_one_none() {
        let all = cores();
        let last = all.len() - 1;
        assert_eq!(after_pinning(last, all.len()), vec![all[last]]);
        assert_eq!(after_pinning(0, all.len() + 1), all, "a pool larger than the machine is not pinned");
        if all.len() > 1 {
            assert_eq!(after_pinning(0, last), all, "a smaller pool is not pinned");
        }
    }
}
