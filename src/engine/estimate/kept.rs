//! The pace kept between runs of the CLI: one JSON file per machine in graylab's cache folder
//! ([`crate::engine::ceilings::cache_dir`]), written atomically (a temporary file renamed over the old).
//! A missing file is a machine not seen yet; a damaged one is said in a warning and counts as
//! nothing seen, never as an error.

use std::path::{Path, PathBuf};

use super::Pace;

/// The most bytes a pace file is read for (one is a few KiB); a larger one is not a pace.
const MAX_PACE_BYTES: u64 = 1 << 20;

/// How a kept pace prices its jobs: raise it when a change prices them differently, so that an
/// older pace starts over (grid overheads kept by an older pricing put a 16-s grid at 5 min 07 s).
/// 2: the claims rest on their wall times; a run over 2x from the one kept replaces it.
/// 3: a grid's overhead is seconds a cell beyond its runs, not a share of them.
pub(super) const PACE_FORMAT: u32 = 3;

/// The machine a pace belongs to: its adapter (or "CPU only") and this process's CPU threads.
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
        Ok(Some(pace)) if pace.machine == machine && pace.format == PACE_FORMAT => pace,
        Ok(_) => Pace::new(machine),
        Err(e) => {
            log::warn!("the kept pace is not readable, estimates start over: {e}");
            Pace::new(machine)
        }
    }
}

/// Keeps `pace` for its machine, replacing the file atomically; a failure is a warning (the
/// next run estimates from less), never an error.
pub fn save_pace(pace: &Pace) {
    match crate::engine::ceilings::cache_dir() {
        Some(dir) => save_pace_in(&dir, pace),
        None => log::debug!("no cache folder (neither XDG_CACHE_HOME nor HOME is set): the pace is not kept"),
    }
}

/// Something a pace learned (a run seen, a job's overhead), kept to be taught again.
pub type Lesson = Box<dyn Fn(&mut Pace) + Send>;

/// Keeps what `lessons` taught a pace of `machine` since it was read: they are taught again to
/// the pace kept now, which another process may have taught meanwhile (the app, open for an
/// hour, kept what it read at launch over the CLI's sweeps), and that pace is kept and returned.
#[must_use]
pub fn keep_lessons(machine: &str, lessons: &[Lesson]) -> Pace {
    let mut pace = load_pace(machine);
    for lesson in lessons {
        lesson(&mut pace);
    }
    save_pace(&pace);
    pace
}

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
}
