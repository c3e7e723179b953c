//! SIGINT, SIGTERM and SIGHUP: what the process does before the signal ends it. Work not yet
//! begun is not begun ([`stopping`]), graylab's temporary files in flight are removed
//! (`system::temps`), the last words a command left are said on stderr (a batch's summary,
//! [`say_on_signal`], which may first tidy what the command made), and then the signal ends the
//! process as it would have (exit status "killed by signal"). Files being written are abandoned,
//! never left half written: their unnamed or temporary files go with the process. A command
//! that stops gently ([`stop_gently`], the claims and the sweep) is told instead, stops its
//! work early and says what it finished; the desktop app ([`stop_gently_waking`]) closes its
//! window as its close button does, saving its settings; a second signal ends either at once,
//! and so does the first once the app's window has closed.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Mutex, PoisonError};

/// The signal ending the process, or 0 while none has arrived.
static STOPPED_BY: AtomicI32 = AtomicI32::new(0);

/// What a command that stops gently says when the first signal arrives (`None`: it does not).
static GENTLE: Mutex<Option<&'static str>> = Mutex::new(None);

/// Set by the first signal while a command stops gently: its work in flight ends early and
/// it says what it finished.
static STOP_ASKED: AtomicBool = AtomicBool::new(false);

/// What the first signal calls while a command stops gently, for one that does not poll
/// [`stop_asked`] (the app, idle between events, is asked to close its window).
type Wake = Box<dyn Fn() + Send>;

/// The wake of the command that stops gently, if it left one.
static WAKE: Mutex<Option<Wake>> = Mutex::new(None);

/// What a command says when a signal ends it, given the signal's name.
type LastWords = Box<dyn Fn(&str) -> String + Send>;

/// The last words of the command running, if it left any.
static LAST_WORDS: Mutex<Option<LastWords>> = Mutex::new(None);

/// The name of the signal that is ending the process ("SIGINT"), once one has arrived: work
/// not yet begun should not begin.
#[must_use]
pub fn stopping() -> Option<&'static str> {
    match STOPPED_BY.load(Ordering::Acquire) {
        0 => None,
        signal => Some(signal_name(signal)),
    }
}

/// Says what `words` returns (given the signal's name; nothing when it is empty) on stderr if
/// a signal ends the process before the returned guard is dropped. `words` runs after the
/// temporary files are removed, so it may tidy what the command made.
#[must_use = "the words are said only while the guard lives"]
pub fn say_on_signal(words: impl Fn(&str) -> String + Send + 'static) -> LastWordsGuard {
    *LAST_WORDS.lock().unwrap_or_else(PoisonError::into_inner) = Some(Box::new(words));
    LastWordsGuard(())
}

/// Keeps the words of [`say_on_signal`] until dropped.
pub struct LastWordsGuard(());

impl Drop for LastWordsGuard {
    fn drop(&mut self) {
        *LAST_WORDS.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

/// Until the returned guard is dropped, the first signal does not end the process: it says
/// `notice` on stderr and sets [`stop_asked`], for the command to stop its work early and keep
/// what it finished (the claims print the claims done); a second signal ends it at once.
#[must_use = "the process stops gently only while the guard lives"]
pub fn stop_gently(notice: &'static str) -> GentleGuard {
    *GENTLE.lock().unwrap_or_else(PoisonError::into_inner) = Some(notice);
    GentleGuard(())
}

/// [`stop_gently`], and the first signal also calls `wake`: for the desktop app, which asks its
/// window to close (eframe then saves the settings, the recent files and the kept sweep, as
/// for its close button; a SIGTERM at logout lost them).
#[must_use = "the process stops gently only while the guard lives"]
pub fn stop_gently_waking(notice: &'static str, wake: impl Fn() + Send + 'static) -> GentleGuard {
    *WAKE.lock().unwrap_or_else(PoisonError::into_inner) = Some(Box::new(wake));
    stop_gently(notice)
}

/// Whether the first signal now stops the process gently (a [`GentleGuard`] lives) rather than
/// ending it at once.
#[must_use]
pub fn stops_gently() -> bool {
    GENTLE.lock().unwrap_or_else(PoisonError::into_inner).is_some()
}

/// The exit status of a process that a signal stopped (128 + its number, as a shell reports
/// it), once one arrived: a command that stopped gently exits with it.
#[must_use]
pub fn stop_status() -> Option<u8> {
    let signal = STOPPED_BY.load(Ordering::Acquire);
    (signal > 0).then(|| u8::try_from(128 + signal).unwrap_or(u8::MAX))
}

/// The flag the first signal sets while a command stops gently ([`stop_gently`]).
#[must_use]
pub fn stop_asked() -> &'static AtomicBool {
    &STOP_ASKED
}

/// Set to a path: a command that stops gently waits before each of its steps after the first
/// (a sweep's next cell) until that path exists (and removes it) or a signal asks it to stop,
/// so that a test signals it between two steps by construction, not by racing them.
pub const HOLD_STEP_ENV: &str = "GRAYLAB_HOLD_STEP";

/// Waits as [`HOLD_STEP_ENV`] asks, at a step after the first; at once where it is not set.
pub fn hold_step_for_tests() {
    let Some(release) = std::env::var_os(HOLD_STEP_ENV) else { return };
    while !STOP_ASKED.load(Ordering::Acquire) && std::fs::remove_file(&release).is_err() {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Keeps [`stop_gently`] in force until dropped.
pub struct GentleGuard(());

impl Drop for GentleGuard {
    fn drop(&mut self) {
        *GENTLE.lock().unwrap_or_else(PoisonError::into_inner) = None;
        *WAKE.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

fn signal_name(signal: i32) -> &'static str {
    #[cfg(unix)]
    if let Some(name) = signal_hook::low_level::signal_name(signal) {
        return name;
    }
    let _ = signal;
    "a signal"
}

/// Installs the handler that, on SIGINT, SIGTERM or SIGHUP, stops new work, removes every
/// graylab temporary file in flight, says the command's last words, and then lets the signal
/// end the process as it would have. Call once, early, from the binary.
#[cfg(unix)]
pub fn remove_temp_files_on_signals() -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new().name("graylab-signals".into()).spawn(move || {
        use std::io::Write as _;
        for signal in signals.forever() {
            let first = STOPPED_BY.compare_exchange(0, signal, Ordering::AcqRel, Ordering::Acquire).is_ok();
            let gentle = *GENTLE.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(notice) = gentle.filter(|_| first) {
                STOP_ASKED.store(true, Ordering::Release);
                let _ = writeln!(
                    std::io::stderr(),
                    "\n{}: {notice} (again to quit at once)",
                    signal_name(signal)
                );
                if let Some(wake) = WAKE.lock().unwrap_or_else(PoisonError::into_inner).as_ref() {
                    wake();
                }
                continue;
            }
            STOPPED_BY.store(signal, Ordering::Release);
            // Held until the process is gone: no new temporary file can appear meanwhile.
            let _files = super::temps::remove_in_flight();
            let words = LAST_WORDS.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(words) = words.as_ref().map(|words| words(signal_name(signal))) {
                // Best effort: a failing stderr has nowhere to report to.
                if !words.is_empty() {
                    let _ = writeln!(std::io::stderr(), "{words}");
                }
            }
            let _ = signal_hook::low_level::emulate_default_handler(signal);
            // Not reached for these signals; exit the conventional way if it is.
            std::process::exit(128 + signal);
        }
    })?;
    Ok(())
}

/// Does nothing where there are no Unix signals.
#[cfg(not(unix))]
pub fn remove_temp_files_on_signals() -> std::io::Result<()> {
    Ok(())
}
