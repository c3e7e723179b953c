//! Work threads (the worker, the launch decoder and the rayon pools they start) yield to the UI
//! thread, so that the window stays live while both cores convert.

/// Lets the calling thread, and the threads it starts (rayon pools), yield to the UI thread when
/// the cores are busy, so that the window stays live during long CPU work. Figures measured while
/// the UI repaints therefore include sharing the cores with it, as any figure in a running
/// desktop app does; `graylab bench` measures without it.
pub fn yield_to_ui() {
    #[cfg(target_os = "linux")]
    {
        /// How much lower than the UI thread the work threads run (nice levels).
        const NICE: i32 = 19;
        // SAFETY: gettid and setpriority take no pointers; on Linux the nice value belongs to
        // the thread whose id is given, and is inherited by the threads it creates.
        unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            libc::setpriority(libc::PRIO_PROCESS, tid, NICE);
        }
    }
}
