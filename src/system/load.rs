//! How busy this machine is while graylab measures: the CPU time other processes took (and the
//! time a hypervisor stole) between two snapshots, from Linux's `/proc`, so that a figure taken
//! on a busy machine can say so. Elsewhere nothing is known and nothing is claimed.

/// Other processes' share of all cores above which a measurement counts as taken on a busy
/// machine (a quarter: on two cores, half of one core's time).
pub const BUSY_SHARE: f64 = 0.25;

/// The fewest clock ticks (summed over all cores: one core-second at Linux's usual 100 a
/// second) a single run must span to say how busy the machine was: over fewer, one tick of
/// another process is several percent (a 0.1-s run on two cores spans about 20 ticks, and four
/// of them stolen read "20%").
pub const MIN_TICKS: u64 = 100;

/// CPU time counters at one moment, each in clock ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuSnapshot {
    /// All cores' time, every state.
    total: u64,
    /// All cores' time outside idle and I/O wait.
    busy: u64,
    /// Time a hypervisor gave to other guests.
    steal: u64,
    /// This process's own user and system time.
    own: u64,
}

/// How busy the machine was between two snapshots, as shares of all cores' time (0 to 1).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Busy {
    /// Other processes' CPU time.
    pub others_share: f64,
    /// Time stolen by a hypervisor.
    pub steal_share: f64,
}

impl Busy {
    /// The load [`BUSY_VARIABLE`] stands for: others at half the machine when it says busy (busy,
    /// not [`overwhelms`](Self::overwhelms)), nobody when it says quiet.
    fn overridden(busy: bool) -> Self {
        Self { others_share: if busy { 2.0 * BUSY_SHARE } else { 0.0 }, steal_share: 0.0 }
    }

    /// Whether other processes or a hypervisor took enough of the machine to disturb a figure.
    #[must_use]
    pub fn is_busy(&self) -> bool {
        self.others_share > BUSY_SHARE || self.steal_share > BUSY_SHARE / 2.0
    }

    /// Whether other processes (or a hypervisor) took more of the machine than was left: with
    /// more than half of all cores' time gone to others, each thread of a run that uses every
    /// core waits for a core about as long as it runs, and a timing measures the scheduler as
    /// much as the work (a 16 KiB CPU run timed at 3.3 ms instead of microseconds with others
    /// at 82%, on lavapipe with two cores).
    #[must_use]
    pub fn overwhelms(&self) -> bool {
        self.others_share > 2.0 * BUSY_SHARE || self.steal_share > BUSY_SHARE
    }

    /// Its shares in words: "other processes took 12% of the CPU", and the hypervisor's where
    /// it stole any.
    #[must_use]
    pub fn shares_text(&self) -> String {
        let steal = if self.steal_share > 0.005 {
            format!(", a hypervisor {:.0}%", self.steal_share * 100.0)
        } else {
            String::new()
        };
        format!("other processes took {} of the CPU{steal}", share_percent(self.others_share))
    }
}

/// A share as a percentage: "64%", with a decimal where a whole number would read as a
/// threshold it is on either side of ("50.4%" decides, "49.6%" does not, "50%" says neither).
fn share_percent(share: f64) -> String {
    let percent = share * 100.0;
    let at_a_threshold = [BUSY_SHARE, 2.0 * BUSY_SHARE]
        .iter()
        .any(|t| (percent.round() - t * 100.0).abs() < f64::EPSILON && (percent - t * 100.0).abs() > 1e-9);
    if at_a_threshold { format!("{percent:.1}%") } else { format!("{percent:.0}%") }
}

impl CpuSnapshot {
    /// The counters now; `None` where `/proc` cannot be read.
    #[must_use]
    pub fn now() -> Option<Self> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let own = std::fs::read_to_string("/proc/self/stat").ok()?;
        Self::parse(&stat, &own)
    }

    /// The counters from the text of `/proc/stat` and `/proc/self/stat`.
    fn parse(stat: &str, own: &str) -> Option<Self> {
        let cpu = stat.lines().find(|l| l.starts_with("cpu "))?;
        let fields: Vec<u64> = cpu.split_whitespace().skip(1).map_while(|f| f.parse().ok()).collect();
        // user nice system idle iowait irq softirq steal (guest time is inside user already).
        let total: u64 = fields.iter().take(8).sum();
        let idle = fields.get(3)? + fields.get(4).copied().unwrap_or(0);
        let steal = fields.get(7).copied().unwrap_or(0);
        // After the command name in parentheses: fields 3 on, so utime and stime are the 12th and 13th.
        let after = own.rsplit_once(')')?.1;
        let mut own_fields = after.split_whitespace().skip(11);
        let utime: u64 = own_fields.next()?.parse().ok()?;
        let stime: u64 = own_fields.next()?.parse().ok()?;
        Some(Self {
            total,
            busy: total.saturating_sub(idle).saturating_sub(steal),
            steal,
            own: utime + stime,
        })
    }

    /// How busy the machine was from `start` (a snapshot taken earlier, if one could be) to
    /// now; `None` where `/proc` cannot be read or no time passed.
    #[must_use]
    pub fn busy_since(start: Option<Self>) -> Option<Busy> {
        busy_override().map(Busy::overridden).or_else(|| start?.until(&Self::now()?, 1))
    }

    /// How busy one run was, from `start` (a snapshot taken as it began) to now; `None` where
    /// `/proc` cannot be read or the run spanned fewer than [`MIN_TICKS`] (too short to tell).
    #[must_use]
    pub fn busy_of_a_run(start: Option<Self>) -> Option<Busy> {
        busy_override().map(Busy::overridden).or_else(|| start?.until(&Self::now()?, MIN_TICKS))
    }

    /// How busy the machine was from this snapshot to `later`; `None` unless at least
    /// `min_ticks` (1 at least) passed.
    #[must_use]
    pub fn until(&self, later: &Self, min_ticks: u64) -> Option<Busy> {
        let total = later.total.checked_sub(self.total).filter(|t| *t >= min_ticks.max(1))? as f64;
        let busy = later.busy.saturating_sub(self.busy);
        let own = later.own.saturating_sub(self.own);
        Some(Busy {
            others_share: busy.saturating_sub(own) as f64 / total,
            steal_share: later.steal.saturating_sub(self.steal) as f64 / total,
        })
    }
}

/// The environment variable that overrides what the machine's load says (`1`: busy, read as
/// others taking half the machine; `0`: quiet), for every figure that reports its load, so that
/// tests of what graylab does on a busy machine need no load and no timing, and tests of a quiet
/// one hold on a loaded machine.
pub const BUSY_VARIABLE: &str = "GRAYLAB_BUSY";

/// The override of [`BUSY_VARIABLE`], when it is set to `1` or `0`.
fn busy_override() -> Option<bool> {
    match std::env::var(BUSY_VARIABLE).ok()?.trim() {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

/// Whether the machine was busy from `start` to now ([`BUSY_VARIABLE`] first); `None` where it
/// is not known.
#[must_use]
pub fn was_busy_since(start: Option<CpuSnapshot>) -> Option<bool> {
    busy_override().or_else(|| CpuSnapshot::busy_since(start).map(|b| b.is_busy()))
}

/// Whether the machine is busy now, judged over `window` (this thread sleeps meanwhile; the
/// override of [`BUSY_VARIABLE`] answers at once); `None` where it is not known.
#[must_use]
pub fn is_busy_now(window: std::time::Duration) -> Option<bool> {
    if let Some(busy) = busy_override() {
        return Some(busy);
    }
    let start = CpuSnapshot::now()?;
    std::thread::sleep(window);
    was_busy_since(Some(start))
}

/// The share of one core this process's other threads may take and still count as quiet.
const QUIET_CORES: f64 = 0.25;

/// The window each look at this process's CPU time spans.
const QUIET_WINDOW: std::time::Duration = std::time::Duration::from_millis(3);

/// Waits, `at_most`, until this process's other threads are quiet: less than a quarter of a core
/// of CPU time in each of two windows of 3 ms in a row while the calling thread sleeps. The app
/// calls it before each timed run, so that its window's drawing (a whole core or more for a
/// frame on a software renderer) is not timed with the run: on 2 cores with lavapipe a 16 MP CPU
/// kernel read 2–15 ms beside the frames of the run before, 1.9–2.4 ms after them (`graylab
/// bench`: 1.7 ms).
/// Returns how long it waited and whether the threads went quiet (`true` at once where the
/// platform cannot tell).
#[must_use]
pub fn settle_own_threads(at_most: std::time::Duration) -> (std::time::Duration, bool) {
    let started = std::time::Instant::now();
    // Quiet windows in a row: two, so that the gap between two frames is not taken for quiet.
    let mut quiet_windows = 0;
    loop {
        let (Some(cpu_before), before) = (crate::system::clock::process_cpu_ns(), std::time::Instant::now())
        else {
            return (started.elapsed(), true);
        };
        std::thread::sleep(QUIET_WINDOW);
        let Some(cpu_after) = crate::system::clock::process_cpu_ns() else {
            return (started.elapsed(), true);
        };
        let wall_ns = crate::system::clock::nanos_since(before);
        quiet_windows =
            if is_quiet(cpu_after.saturating_sub(cpu_before), wall_ns) { quiet_windows + 1 } else { 0 };
        if quiet_windows == 2 {
            return (started.elapsed(), true);
        }
        if started.elapsed() >= at_most {
            return (started.elapsed(), false);
        }
    }
}

/// Whether `cpu_ns` of this process's CPU time over `wall_ns` is quiet ([`QUIET_CORES`]).
fn is_quiet(cpu_ns: u64, wall_ns: u64) -> bool {
    (cpu_ns as f64) < QUIET_CORES * wall_ns as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWN: &str = "4242 (gray lab) R 1 2 3 4 5 6 7 8 9 10 300 100 0 0 20 0 9 0";

    #[test]
    fn a_quarter_core_or_more_of_the_processs_time_is_not_quiet() {
        // (CPU time, wall time, quiet): over 4 ms up to 0.999 ms of CPU time is quiet, a quarter
        // core is not, nor two threads drawing a frame at once; nothing is quiet over no time.
        let cases = [
            (0, 4_000_000, true),
            (999_999, 4_000_000, true),
            (1_000_000, 4_000_000, false),
            (8_000_000, 4_000_000, false),
            (0, 0, false),
        ];
        for (cpu_ns, wall_ns, quiet) in cases {
            assert_eq!(is_quiet(cpu_ns, wall_ns), quiet, "{cpu_ns} ns of CPU time over {wall_ns} ns");
        }
    }

    #[test]
    fn others_time_is_the_machines_busy_time_less_this_process() {
        let before =
            CpuSnapshot::parse("cpu  1000 0 200 8000 100 0 0 0 0 0\ncpu0 1 2 3", OWN).expect("parses");
        assert_eq!(before.own, 400);
        assert_eq!((before.total, before.busy), (9300, 1200));
        // 1000 ticks later: 600 busy, 400 of them this process's own, 100 stolen.
        let after = CpuSnapshot::parse(
            "cpu  1500 0 300 8300 100 0 0 100 0 0",
            "4242 (gray lab) R 1 2 3 4 5 6 7 8 9 10 600 200 0 0 20 0 9 0",
        )
        .expect("parses");
        let busy = before.until(&after, 1).expect("time passed");
        assert!((busy.others_share - 0.2).abs() < 1e-9, "{busy:?}");
        assert!((busy.steal_share - 0.1).abs() < 1e-9, "{busy:?}");
        assert!(!busy.is_busy());
        assert!(Busy { others_share: 0.3, steal_share: 0.0 }.is_busy());
        assert_eq!(before.until(&before, 1), None);
        // 99 ticks are too few for a run to tell, whatever they hold.
        let short = CpuSnapshot { total: before.total + 99, steal: before.steal + 20, ..before };
        assert_eq!(before.until(&short, MIN_TICKS), None);
        assert!(before.until(&short, 1).is_some());
        assert_eq!(CpuSnapshot::parse("nothing", OWN), None);
    }

    #[test]
    fn a_share_beside_a_threshold_says_which_side_it_is_on() {
        let text = |others_share| Busy { others_share, steal_share: 0.0 }.shares_text();
        assert_eq!(text(0.504), "other processes took 50.4% of the CPU");
        assert_eq!(text(0.496), "other processes took 49.6% of the CPU");
        assert_eq!(text(0.5), "other processes took 50% of the CPU");
        assert_eq!(text(0.64), "other processes took 64% of the CPU");
        assert_eq!(text(0.251), "other processes took 25.1% of the CPU");
    }
}
