//! The pace kept between runs of the CLI: one JSON file per machine in graylab's cache folder
//! ([`crate::engine::ceilings::cache_dir`]), written atomically (a temporary file renamed over the old).
//! A missing file is a machine not seen yet; a damaged one is said in a warning (once per process,
//! however often it is read) and counts as nothing seen, never as an error. Figures no run can
//! give (a hand-edited or damaged file: infinite, negative, a run of over a day) are dropped as
//! the file is read, as the ceilings cache drops its implausible figures: the estimate then rests
//! on what is left, and says so.

use std::path::{Path, PathBuf};

use super::{Pace, Task};

/// The most bytes a pace file is read for (one is a few KiB); a larger one is not a pace.
const MAX_PACE_BYTES: u64 = 1 << 20;

/// How a kept pace prices its jobs: raise it when a change prices them differently, so that an
/// older pace starts over (grid overheads kept by an older pricing put a 16-s grid at 5 min 07 s).
/// 2: the claims rest on their wall times; a run over 2x from the one kept replaces it.
/// 3: a grid's overhead is seconds a cell beyond its runs, not a share of them.
pub(super) const PACE_FORMAT: u32 = 3;

/// The machine a pace belongs to: its adapter (or "CPU only"), named as the ceilings are kept
/// (name, driver and backend: a new driver is paced afresh), and this process's CPU threads.
#[must_use]
pub fn machine_name(adapter: Option<&str>) -> String {
    format!("{} · {} threads", adapter.unwrap_or("CPU only"), crate::engine::available_threads())
}

/// The file of `machine`'s pace in `dir`: unique through a checksum of its name.
fn pace_file(dir: &Path, machine: &str) -> PathBuf {
    let sum = crc32fast::hash(machine.as_bytes());
    dir.join(format!("pace-{sum:08x}.json"))
}

/// The pace kept for `machine`, or a new one with nothing seen: when none was kept, when the
/// file cannot be read or parsed (a warning says so), or when it holds another machine's or
/// another pricing format's (`PACE_FORMAT`).
#[must_use]
pub fn load_pace(machine: &str) -> Pace {
    crate::engine::ceilings::cache_dir().map_or_else(|| Pace::new(machine), |dir| load_pace_in(&dir, machine))
}

fn load_pace_in(dir: &Path, machine: &str) -> Pace {
    let path = pace_file(dir, machine);
    match crate::io::read_json::<Pace>(&path, MAX_PACE_BYTES) {
        Ok(Some(pace)) if pace.machine == machine && pace.format == PACE_FORMAT => plausible(pace),
        Ok(_) => Pace::new(machine),
        Err(e) => {
            let warning = format!("the kept pace is not readable, estimates start over: {e}");
            if first_time(&warning) {
                log::warn!("{warning}");
            }
            Pace::new(machine)
        }
    }
}

/// The longest one run, one job's wall time or one job's fixed overhead can take, in seconds: a
/// day. A figure beyond it is no run's.
const LONGEST_S: f64 = 86_400.0;

/// The widest a job's overhead can be as a share of its runs: [`Pace::finished`] keeps at
/// least 0.05; a job that took 100x what its runs did is no job's.
const SHARES: std::ops::RangeInclusive<f64> = 0.05..=100.0;

/// `pace` without the figures no run can give (see the module's doc), said in the log.
fn plausible(mut pace: Pace) -> Pace {
    let seconds = |s: f64| s.is_finite() && s > 0.0 && s <= LONGEST_S;
    let before = (pace.seen.len(), pace.overheads.len(), pace.walls.len(), pace.roofs.len());
    pace.seen.retain(|s| seconds(s.seconds) && s.megapixels.is_finite() && s.megapixels > 0.0);
    pace.overheads.retain(|&(task, o)| plausible_overhead(task, o));
    pace.walls.retain(|&(_, s)| seconds(s));
    pace.roofs.retain(|(_, r)| {
        let rate = |x: f64| x.is_finite() && x > 0.0;
        rate(r.bytes_per_s)
            && rate(r.ops_per_s)
            && r.fixed_s.is_none_or(|s| s.is_finite() && (0.0..=LONGEST_S).contains(&s))
    });
    let after = (pace.seen.len(), pace.overheads.len(), pace.walls.len(), pace.roofs.len());
    if after != before {
        log::debug!(
            "the kept pace holds figures no run gives (seen, overheads, walls, roofs: {before:?} kept {after:?}), dropped"
        );
    }
    pace
}

/// Whether `overhead` is one a job of kind `task` can have: seconds beyond its runs for a kind
/// with a fixed overhead, else a share of its runs.
fn plausible_overhead(task: Task, overhead: f64) -> bool {
    if task.fixed_overhead() {
        overhead.is_finite() && (0.0..=LONGEST_S).contains(&overhead)
    } else {
        SHARES.contains(&overhead)
    }
}

/// Whether `warning` is said for the first time in this process: a command reads the pace
/// before its job and again to keep it, the app at launch and at each keep, and one cause is
/// said once.
fn first_time(warning: &str) -> bool {
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if said.iter().any(|w| w == warning) {
        return false;
    }
    said.push(warning.to_owned());
    true
}

/// Something a pace learned (a run seen, a job's overhead), kept to be taught again.
pub type Lesson = Box<dyn Fn(&mut Pace) + Send>;

/// Keeps what `lessons` taught a pace of `machine` since it was read: they are taught again to
/// the pace kept now, which another process may have taught meanwhile (the app, open for an
/// hour, kept what it read at launch over the CLI's sweeps), and that pace is kept and returned.
#[must_use]
pub fn keep_lessons(machine: &str, lessons: &[Lesson]) -> Pace {
    let Some(dir) = crate::engine::ceilings::cache_dir() else {
        let mut pace = Pace::new(machine);
        for lesson in lessons {
            lesson(&mut pace);
        }
        return pace;
    };
    // Read, taught and written under the file's lock: two processes keeping lessons at once
    // each keep the other's.
    crate::engine::ceilings::under_file_lock(&pace_file(&dir, machine), || {
        let mut pace = load_pace_in(&dir, machine);
        for lesson in lessons {
            lesson(&mut pace);
        }
        save_pace_in(&dir, &pace);
        pace
    })
}

/// Keeps `pace` for its machine, replacing the file atomically; a failure is a warning (the
/// next run estimates from less), never an error.
fn save_pace_in(dir: &Path, pace: &Pace) {
    let pace = Pace { format: PACE_FORMAT, ..pace.clone() };
    if let Err(e) = crate::engine::ceilings::store_json(Some(pace_file(dir, &pace.machine)), &pace) {
        log::warn!("the pace could not be kept: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::estimate::{Basis, Lane, Part, Task};

    #[test]
    fn a_kept_pace_is_read_back_and_a_damaged_one_is_a_new_one() {
        let dir = tempfile::tempdir().expect("temp dir");
        let dir = dir.path();
        let machine = machine_name(Some("test adapter"));
        assert_eq!(load_pace_in(dir, &machine), Pace::new(machine.clone()), "nothing kept: a new pace");
        let mut pace = Pace::new(machine.clone());
        pace.observe(Lane::Gpu, 2.0, 0, 0.5);
        let grid = Part {
            lane: Lane::Gpu,
            megapixels: 1.0,
            rounds: 16,
            op: crate::pixel::Op::None,
            runs: 4.0,
            height_per_width: crate::engine::estimate::THREE_TWO,
        };
        pace.finished(Task::Grid, &[grid], 3.0, None);
        save_pace_in(dir, &pace);
        let read = load_pace_in(dir, &machine);
        assert_eq!(read, pace);
        assert_eq!(read.run(Lane::Gpu, 2.0, 0).basis, Basis::Seen);
        // A grid ran to its end here: its next estimate is the pace's, not a calibration's alone.
        assert!(read.has_seen(Task::Grid) && !read.has_seen(Task::Sweep));
        // Another machine's pace is not this one's.
        assert_eq!(load_pace_in(dir, "another"), Pace::new("another"));
        // A damaged file: a new pace, and the next save replaces it.
        let path = pace_file(dir, &machine);
        std::fs::write(&path, b"{ not json").expect("write");
        assert_eq!(load_pace_in(dir, &machine), Pace::new(machine.clone()));
        save_pace_in(dir, &pace);
        assert_eq!(load_pace_in(dir, &machine), pace);
        // A pace kept by an estimator that priced jobs differently starts over.
        let text = std::fs::read_to_string(&path).expect("read");
        let older = text.replace(&format!("\"format\": {PACE_FORMAT}"), "\"format\": 1");
        assert_ne!(older, text, "the format is kept in the file");
        std::fs::write(&path, older).expect("write");
        assert_eq!(load_pace_in(dir, &machine), Pace::new(machine.clone()));
        std::fs::write(&path, text.replace(&format!("\"format\": {PACE_FORMAT},"), "")).expect("write");
        assert_eq!(load_pace_in(dir, &machine), Pace::new(machine.clone()), "a pace from before formats");
    }

    #[test]
    fn a_damaged_pace_is_said_once_per_process() {
        let warning = "the kept pace is not readable, estimates start over: test cause 7f3a";
        assert!(first_time(warning), "said the first time");
        assert!(!first_time(warning), "not the second: JobPace::read, then keep_lessons");
        assert!(first_time("the kept pace is not readable, estimates start over: another cause 7f3a"));
    }

    /// A sweep's parts: 2 runs each at 0.25 and 1 MP on the GPU, plain.
    fn sweep_parts() -> Vec<Part> {
        let part = |megapixels| Part {
            lane: Lane::Gpu,
            megapixels,
            rounds: 0,
            op: crate::pixel::Op::None,
            runs: 2.0,
            height_per_width: crate::engine::estimate::THREE_TWO,
        };
        vec![part(0.25), part(1.0)]
    }

    #[test]
    fn a_pace_edited_to_figures_no_run_gives_is_read_without_them() {
        let dir = tempfile::tempdir().expect("temp dir");
        let dir = dir.path();
        let machine = machine_name(Some("edited adapter"));
        let mut pace = Pace::new(machine.clone());
        pace.observe(Lane::Gpu, 1.0, 0, 0.5);
        pace.finished(Task::Sweep, &sweep_parts(), 3.0, None);
        save_pace_in(dir, &pace);
        let good = load_pace_in(dir, &machine);
        assert_eq!(good, pace, "plausible figures are kept");
        let good_estimate = good.job(Task::Sweep, &sweep_parts());
        assert_eq!(good_estimate.basis, Basis::Seen);
        let path = pace_file(dir, &machine);
        let text = std::fs::read_to_string(&path).expect("read");
        let mut v: serde_json::Value = serde_json::from_str(&text).expect("json");
        // As the tester's files had them: a run of 1e300 s, a sweep's share of 1e300, a claims
        // run of -5 s.
        v["seen"][0]["seconds"] = serde_json::json!(1e300);
        v["overheads"] = serde_json::json!([["Sweep", 1e300]]);
        v["walls"] = serde_json::json!([["ClaimsQuick", -5.0]]);
        std::fs::write(&path, serde_json::to_vec(&v).expect("json")).expect("write");
        let read = load_pace_in(dir, &machine);
        assert!(read.seen.is_empty() && read.overheads.is_empty() && read.walls.is_empty(), "{read:?}");
        // The estimate falls back to what is left, and says so: a guess, not "seen".
        let e = read.job(Task::Sweep, &sweep_parts());
        assert!(e.seconds.is_finite() && e.seconds > 0.0 && e.seconds < 60.0, "{e:?}");
        assert_eq!(e.basis, Basis::Guess, "{e:?}");
        assert!(
            !e.sentence().contains("from runs seen") && !e.sentence().contains("inf"),
            "{}",
            e.sentence()
        );
        let claims = read.job(Task::ClaimsQuick, &sweep_parts());
        assert_ne!(claims.basis, Basis::Seen, "a wall of -5 s is no claims run seen: {claims:?}");
        // A run of a day and a half, a fixed overhead of -1 s: dropped too; a share of 0.5 kept.
        assert!(!plausible_overhead(Task::Sweep, f64::NAN) && plausible_overhead(Task::Sweep, 0.5));
        assert!(!plausible_overhead(Task::Sweep, 1e4));
    }
}
