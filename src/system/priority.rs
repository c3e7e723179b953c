//! Work threads (the worker, the launch decoder and the rayon pools they start) yield to the UI
//! thread, so that the window stays live while both cores convert.

/// How much lower than the UI thread the work threads run (nice levels).
#[cfg(target_os = "linux")]
const NICE: i32 = 19;

/// Lets the calling thread, and the threads it starts (rayon pools), yield to the UI thread when
/// the cores are busy, so that the window stays live during long CPU work. Figures measured while
/// the UI repaints therefore include sharing the cores with it, as any figure in a running
/// desktop app does; `graylab bench` measures without it.
pub fn yield_to_ui() {
    // On Linux the nice value belongs to the thread whose id is given, and is inherited by the
    // threads it creates. A refusal leaves the thread as it was, which is only slower for the UI.
    #[cfg(target_os = "linux")]
    if let Err(e) = rustix::process::setpriority_process(Some(rustix::thread::gettid()), NICE) {
        log::debug!("cannot lower the work thread's priority: {e}");
    }
}
