//! Runs as a Chrome trace: the JSON that ui.perfetto.dev and `chrome://tracing` open. Each run
//! is a process of its own, starting at 0 µs, with a track per lane of its timeline (the decode,
//! each thread's host copies, the GPU queue's upload copies, kernel passes and download copies,
//! display, encode) and one track for the run as a whole. Every event is a complete event
//! (`"ph": "X"`) in microseconds on the run's CPU clock, and says how it was timed: GPU steps
//! are their lengths from GPU timestamps placed at their submission where the adapter has
//! timestamps, else the CPU clock around a submission of the step alone.

use serde_json::{Value, json};

use crate::engine::{Backend, Lane, RunReport, SpanClock};

/// The track of the run as a whole, above its lanes.
const RUN_TRACK: u64 = 0;

/// A lane's track id and its sort order within its run.
fn track(lane: Lane) -> u64 {
    match lane {
        Lane::Decode => 1,
        Lane::Setup => 2,
        Lane::HostCopy { thread: None } => 3,
        Lane::Upload => 4,
        Lane::Kernel => 5,
        Lane::Display => 6,
        Lane::Download => 7,
        Lane::Encode => 8,
        Lane::HostCopy { thread: Some(t) } => 10 + t as u64,
    }
}

/// A lane's track name: where the step ran (the CPU or the GPU's queue) and what it is.
fn track_name(lane: Lane, backend: Backend) -> String {
    match lane {
        Lane::Setup => "CPU · GPU setup (pipelines, buffers)".to_owned(),
        Lane::Upload => "GPU queue · upload copies".to_owned(),
        Lane::Download => "GPU queue · download copies".to_owned(),
        Lane::Kernel | Lane::Display if backend == Backend::Gpu => format!("GPU queue · {}", lane.name()),
        other => format!("CPU · {}", other.name()),
    }
}

/// µs from ns, as the trace format counts time.
fn micros(ns: u64) -> f64 {
    ns as f64 / 1e3
}

/// The Chrome trace of `runs`, each named (e.g. "workgroup 16x16 · warm 2 of 5": its process is
/// named with the backend, formula and size too), under `title`.
#[must_use]
pub fn chrome_trace(title: &str, runs: &[(String, &RunReport)]) -> Value {
    let mut events = Vec::new();
    for (index, (name, report)) in runs.iter().enumerate() {
        let pid = index as u64 + 1;
        let meta = |tid: u64, what: &str, args: Value| json!({ "ph": "M", "pid": pid, "tid": tid, "name": what, "args": args });
        let process =
            format!("{} · {name} · {} · {}x{}", report.backend, report.formula, report.width, report.height);
        events.push(meta(RUN_TRACK, "process_name", json!({ "name": process })));
        events.push(meta(RUN_TRACK, "process_sort_index", json!({ "sort_index": pid })));
        events.push(meta(RUN_TRACK, "thread_name", json!({ "name": "run" })));
        events.push(meta(RUN_TRACK, "thread_sort_index", json!({ "sort_index": RUN_TRACK })));
        let phases: serde_json::Map<String, Value> = report
            .phases
            .iter()
            .map(|p| (p.phase.to_string(), json!({ "ms": p.ns as f64 / 1e6, "clock": p.source.label() })))
            .collect();
        events.push(json!({
            "ph": "X", "pid": pid, "tid": RUN_TRACK, "name": "run", "cat": "run",
            "ts": 0.0, "dur": micros(report.total_ns),
            "args": { "phases": phases, "overlap_ms": report.overlap_ns as f64 / 1e6 },
        }));
        let mut lanes: Vec<Lane> = report.spans.iter().map(|s| s.lane).collect();
        lanes.sort_unstable();
        lanes.dedup();
        for &lane in &lanes {
            let tid = track(lane);
            events.push(meta(tid, "thread_name", json!({ "name": track_name(lane, report.backend) })));
            events.push(meta(tid, "thread_sort_index", json!({ "sort_index": tid })));
            let spans = report.spans.iter().filter(|s| s.lane == lane);
            for (step, span) in spans.enumerate() {
                let on_gpu = span.clock != SpanClock::CpuClock;
                events.push(json!({
                    "ph": "X", "pid": pid, "tid": tid, "name": lane.name(),
                    "cat": if on_gpu { "gpu" } else { "cpu" },
                    "ts": micros(span.start_ns), "dur": micros(span.ns()),
                    "args": { "step": step, "clock": span.clock.label() },
                }));
            }
        }
    }
    json!({
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {
            "title": title,
            "graylab": env!("CARGO_PKG_VERSION"),
            "runs": "each run is a process of its own, starting at 0 µs",
            "clocks": "every event is on its run's CPU clock; a GPU step (upload copies, kernel, \
                       download copies) is its length from GPU timestamps placed at its submission \
                       ('gpu-timestamp, placed at submit') where the adapter has timestamps, else \
                       the CPU clock around a submission of that step alone",
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Span;
    use crate::pixel::Formula;

    #[test]
    fn every_span_is_a_complete_event_on_a_named_track_of_its_run() {
        let mut r = RunReport::new(Backend::Gpu, Formula::Bt601, (64, 32), Vec::new());
        r.total_ns = 10_000;
        r.spans = vec![
            Span::cpu(Lane::HostCopy { thread: Some(1) }, 0, 2_000),
            Span {
                lane: Lane::Kernel,
                start_ns: 2_500,
                end_ns: 6_000,
                clock: SpanClock::GpuTimestampAtSubmit,
            },
            Span {
                lane: Lane::Kernel,
                start_ns: 6_000,
                end_ns: 9_000,
                clock: SpanClock::GpuTimestampAtSubmit,
            },
        ];
        let trace = chrome_trace("test", &[("run 1".to_owned(), &r)]);
        let events = trace["traceEvents"].as_array().expect("events");
        let complete: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(complete.len(), 4, "the run and its three spans");
        let kernel: Vec<&Value> = complete.iter().copied().filter(|e| e["name"] == "kernel").collect();
        assert_eq!(kernel[1]["ts"], 6.0);
        assert_eq!(kernel[1]["dur"], 3.0);
        assert_eq!(kernel[1]["args"]["clock"], "gpu-timestamp, placed at submit");
        assert_eq!(kernel[1]["args"]["step"], 1);
        let name_of = |tid: u64| {
            events
                .iter()
                .find(|e| e["ph"] == "M" && e["name"] == "thread_name" && e["tid"] == tid)
                .map(|e| e["args"]["name"].clone())
        };
        assert_eq!(name_of(5), Some(json!("GPU queue · kernel")));
        assert_eq!(name_of(11), Some(json!("CPU · host copy · thread 1")));
        assert_eq!(name_of(0), Some(json!("run")));
    }
}
