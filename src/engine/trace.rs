//! Runs as a Chrome trace: the JSON that ui.perfetto.dev and `chrome://tracing` open. Each run
//! is a process of its own, starting at 0 µs, with a track per lane of its timeline and one for
//! the run as a whole. Every event is a complete event (`"ph": "X"`) in microseconds on the run's
//! CPU clock, and says how it was timed ([`SpanClock`]; the trace's `otherData.clocks` explains).

use serde_json::{Value, json};

use crate::engine::{Backend, RunReport, Span, SpanClock, Track};

/// The track of the run as a whole, above its lanes.
const RUN_TRACK: u64 = 0;

/// A lane's track id and its sort order within its run: the run's lanes, then each thread's
/// (its host copies, its encoder stripes, its kernel chunks).
fn track(lane: Track) -> u64 {
    let per_thread = |t: usize, nth: u64| 16 + 3 * t as u64 + nth;
    match lane {
        Track::Decode => 1,
        Track::Setup => 2,
        Track::HostCopy { thread: None } => 3,
        Track::Upload => 4,
        Track::Kernel => 5,
        Track::Display => 6,
        Track::Download => 7,
        Track::Encode => 8,
        Track::Op => 11,
        Track::OpSubmission => 12,
        // A thread's encoder stripes and the kernel inside each share its track: they nest.
        Track::KernelStripe { thread: None } | Track::EncodeStripe { thread: None } => 9,
        Track::KernelThread { thread: None } => 10,
        Track::HostCopy { thread: Some(t) } => per_thread(t, 0),
        Track::KernelStripe { thread: Some(t) } | Track::EncodeStripe { thread: Some(t) } => per_thread(t, 1),
        Track::KernelThread { thread: Some(t) } => per_thread(t, 2),
        // After every thread's: a JPEG decodes in a few bands at most.
        Track::DecodeKernel { band } => 1 << 20 | band as u64,
    }
}

/// A lane's track name: where the step ran (the CPU or the GPU's queue) and what it is.
fn track_name(lane: Track, backend: Backend) -> String {
    match lane {
        Track::Setup => "CPU · GPU setup (pipelines, buffers)".to_owned(),
        Track::Upload => "GPU queue · upload copies".to_owned(),
        Track::Download => "GPU queue · download copies".to_owned(),
        Track::Kernel | Track::Display if backend == Backend::Gpu => format!("GPU queue · {}", lane.name()),
        Track::OpSubmission => "GPU queue · op passes (a submission each, with its wait)".to_owned(),
        Track::KernelStripe { thread } | Track::EncodeStripe { thread } => {
            let who = thread.map_or_else(|| "caller".to_owned(), |t| format!("thread {t}"));
            format!("CPU · encoder {who} (stripes, the kernel inside each)")
        }
        Track::KernelThread { .. } => format!("CPU · {} (its chunks, back to back)", lane.name()),
        Track::DecodeKernel { band } => {
            format!("CPU · decode band {band} (the kernel on each chunk as it is decoded)")
        }
        other => format!("CPU · {}", other.name()),
    }
}

/// µs from ns, as the trace format counts time.
fn micros(ns: u64) -> f64 {
    ns as f64 / 1e3
}

/// Writes the Chrome trace of `runs` (see [`chrome_trace`]) to `path`, atomically, replacing a
/// file only with `overwrite`.
pub fn write_trace(
    path: &std::path::Path,
    overwrite: bool,
    title: &str,
    runs: &[(String, &RunReport)],
) -> Result<(), crate::io::IoError> {
    let trace = chrome_trace(title, runs);
    crate::io::write_atomically(path, overwrite, |out| {
        serde_json::to_writer(&mut *out, &trace).map_err(|e| crate::io::WriteCause::Os(e.into()))
    })?;
    Ok(())
}

/// The Chrome trace of `runs`, each named (e.g. "workgroup 16x16 · warm 2 of 5": its process is
/// named with the backend, formula and size too), under `title`.
#[must_use]
pub fn chrome_trace(title: &str, runs: &[(String, &RunReport)]) -> Value {
    let mut events = Vec::new();
    for (index, (name, report)) in runs.iter().enumerate() {
        let pid = index as u64 + 1;
        let meta = |tid: u64, what: &str, args: Value| json!({ "ph": "M", "pid": pid, "tid": tid, "name": what, "args": args });
        // The work and the op where a run had them: two runs of other settings never share a name.
        let work = match (report.work.work_rounds, report.work.divergent) {
            (0, _) => String::new(),
            (rounds, false) => format!(" · {rounds} rounds/px"),
            (rounds, true) => format!(" · {rounds} rounds/px on odd gray values"),
        };
        let op = if report.op.op.is_none() { String::new() } else { format!(" · then {}", report.op.op) };
        let (backend, formula, w, h) = (report.backend, report.formula, report.width, report.height);
        let process = format!("{backend} · {name} · {formula}{work}{op} · {w}x{h}");
        events.push(meta(RUN_TRACK, "process_name", json!({ "name": process })));
        events.push(meta(RUN_TRACK, "process_sort_index", json!({ "sort_index": pid })));
        events.push(meta(RUN_TRACK, "thread_name", json!({ "name": "run" })));
        events.push(meta(RUN_TRACK, "thread_sort_index", json!({ "sort_index": RUN_TRACK })));
        let phases: serde_json::Map<String, Value> = report
            .phases
            .iter()
            .map(|p| (p.phase.to_string(), json!({ "ms": p.ns as f64 / 1e6, "clock": p.source.label() })))
            .collect();
        let mut args = json!({
            // The run's span is its wall time, on the CPU clock; each phase says its own.
            "clock": SpanClock::CpuClock.label(),
            "phases": phases,
            "overlap_ms": report.overlap_ns as f64 / 1e6,
            "work_rounds": report.work.work_rounds,
            "op": report.op.op.to_string(),
            "threads": report.threads,
            "workgroup": report.workgroup.map(|w| w.to_string()),
        });
        if let Some(gpu) = &report.gpu {
            args["gpu_clock"] = json!(match gpu.gpu_clock_within_ns {
                Some(ns) => format!(
                    "GPU timestamps mapped onto the CPU clock by this run's calibration, within {:.1} µs",
                    ns as f64 / 1e3
                ),
                None if gpu.pipelined =>
                    "GPU timestamps not calibrated: each chunk placed at its submission".to_owned(),
                None =>
                    "no GPU timestamps: GPU steps timed on the CPU clock around their submissions".to_owned(),
            });
        }
        events.push(json!({
            "ph": "X", "pid": pid, "tid": RUN_TRACK, "name": "run", "cat": "run",
            "ts": 0.0, "dur": micros(report.total_ns), "args": args,
        }));
        let mut lanes: Vec<Track> = report.spans.iter().map(|s| s.lane).collect();
        lanes.sort_unstable();
        lanes.dedup();
        for &lane in &lanes {
            let tid = track(lane);
            events.push(meta(tid, "thread_name", json!({ "name": track_name(lane, report.backend) })));
            events.push(meta(tid, "thread_sort_index", json!({ "sort_index": tid })));
            let spans: Vec<&Span> = report.spans.iter().filter(|s| s.lane == lane).collect();
            for (band, start_ns, end_ns) in band_extents(&spans) {
                // From the first of its steps to the last: their clock (one a lane).
                let clock = spans.iter().find(|s| s.band == Some(band)).map(|s| s.clock.label());
                events.push(json!({
                    "ph": "X", "pid": pid, "tid": tid, "name": format!("band {band}"), "cat": "band",
                    "ts": micros(start_ns), "dur": micros(end_ns - start_ns),
                    "args": { "band": band, "clock": clock },
                }));
            }
            for (step, span) in spans.iter().enumerate() {
                let on_gpu = span.clock != SpanClock::CpuClock;
                let mut args = json!({ "step": step, "clock": span.clock.label() });
                if let Some(band) = span.band {
                    args["band"] = json!(band);
                }
                events.push(json!({
                    "ph": "X", "pid": pid, "tid": tid, "name": lane.name(),
                    "cat": if on_gpu { "gpu" } else { "cpu" },
                    "ts": micros(span.start_ns), "dur": micros(span.ns()),
                    "args": args,
                }));
            }
        }
    }
    json!({
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {
            "title": title,
            "graylab": crate::system::host::VERSION,
            "runs": "each run is a process of its own, starting at 0 µs",
            "clocks": "every event is on its run's CPU clock. A GPU step (upload copies, kernel, \
                       download copies) comes from GPU timestamps where the adapter has them, \
                       mapped onto the CPU clock by a calibration taken in the same run \
                       ('gpu-timestamp, calibrated': one offset that lets every chunk start no \
                       earlier than its submission and end no later than the host saw it finished; \
                       the run's args.gpu_clock says within how much), or, where no offset fits, \
                       its length placed at its submission ('gpu-timestamp, placed at submit'); \
                       without timestamps, from the CPU clock around a submission of that step alone",
        },
    })
}

/// Each band's extent on one lane (its first step's start to its last step's end), in order:
/// the events the lane's steps nest in. None when they span one band or none, or when its bands
/// interleave (a thread's host copies stage one band before reading the last back).
fn band_extents(spans: &[&Span]) -> Vec<(u32, u64, u64)> {
    let mut extents: Vec<(u32, u64, u64)> = Vec::new();
    for span in spans {
        let Some(band) = span.band else { continue };
        match extents.iter_mut().find(|e| e.0 == band) {
            Some(e) => {
                e.1 = e.1.min(span.start_ns);
                e.2 = e.2.max(span.end_ns);
            }
            None => extents.push((band, span.start_ns, span.end_ns)),
        }
    }
    extents.sort_unstable_by_key(|e| (e.1, e.2));
    let apart = extents.windows(2).all(|w| w[0].2 <= w[1].1);
    if extents.len() < 2 || !apart { Vec::new() } else { extents }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pixel::Formula;

    /// An event's start and end, µs.
    fn extent(e: &Value) -> (f64, f64) {
        let (ts, dur) = (e["ts"].as_f64().expect("ts"), e["dur"].as_f64().expect("dur"));
        (ts, ts + dur)
    }

    /// The trace of one run on `backend` of `total_ns` with `spans`, and its events.
    fn trace_of(backend: Backend, total_ns: u64, spans: Vec<Span>) -> Vec<Value> {
        let mut r = RunReport::new(backend, Formula::Bt601, (64, 32), Vec::new());
        r.total_ns = total_ns;
        r.spans = spans;
        let trace = chrome_trace("test", &[("run 1".to_owned(), &r)]);
        trace["traceEvents"].as_array().expect("events").clone()
    }

    /// A GPU step of `band` on `lane`, from GPU timestamps.
    fn gpu_step(lane: Track, (start_ns, end_ns): (u64, u64), band: u32) -> Span {
        Span { band: Some(band), clock: SpanClock::GpuTimestampAtSubmit, ..Span::cpu(lane, start_ns, end_ns) }
    }

    #[test]
    fn every_span_is_a_complete_event_on_a_named_track_of_its_run() {
        let spans = vec![
            Span::cpu(Track::HostCopy { thread: Some(1) }, 0, 2_000),
            Span { band: None, ..gpu_step(Track::Kernel, (2_500, 6_000), 0) },
            Span { band: None, ..gpu_step(Track::Kernel, (6_000, 9_000), 0) },
        ];
        let events = &trace_of(Backend::Gpu, 10_000, spans);
        let complete: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(complete.len(), 4, "the run and its three spans, no band outside bands");
        let kernel: Vec<&Value> = complete.iter().copied().filter(|e| e["name"] == "kernel").collect();
        assert_eq!(kernel[1]["ts"], 6.0);
        assert_eq!(kernel[1]["dur"], 3.0);
        assert_eq!(kernel[1]["args"]["clock"], "gpu-timestamp, placed at submit");
        assert_eq!(kernel[1]["args"]["step"], 1);
        assert!(kernel[1]["args"].get("band").is_none());
        let name_of = |tid: u64| {
            events
                .iter()
                .find(|e| e["ph"] == "M" && e["name"] == "thread_name" && e["tid"] == tid)
                .map(|e| e["args"]["name"].clone())
        };
        assert_eq!(name_of(5), Some(json!("GPU queue · kernel")));
        assert_eq!(name_of(19), Some(json!("CPU · host copy · thread 1")));
        assert_eq!(name_of(0), Some(json!("run")));
    }

    #[test]
    fn a_banded_runs_steps_nest_in_their_bands_on_each_track() {
        let copies = Track::HostCopy { thread: Some(0) };
        let spans = vec![
            // Band 0: two chunks; band 1: one. One thread stages band 1 before reading band 0
            // back: its host-copy track's bands interleave and get no band events.
            Span { band: Some(0), ..Span::cpu(copies, 0, 1_000) },
            gpu_step(Track::Upload, (1_000, 2_000), 0),
            gpu_step(Track::Kernel, (2_000, 4_000), 0),
            gpu_step(Track::Upload, (4_000, 5_000), 0),
            gpu_step(Track::Kernel, (5_000, 7_000), 0),
            Span { band: Some(1), ..Span::cpu(copies, 7_000, 8_000) },
            Span { band: Some(0), ..Span::cpu(copies, 8_000, 9_000) },
            gpu_step(Track::Upload, (9_000, 10_000), 1),
            gpu_step(Track::Kernel, (10_000, 15_000), 1),
        ];
        let events = &trace_of(Backend::Gpu, 20_000, spans);
        let bands: Vec<&Value> = events.iter().filter(|e| e["cat"] == "band").collect();
        // Every event says its clock, the run's and each band's too (as the guide promises).
        for e in events.iter().filter(|e| e["ph"] == "X") {
            assert!(e["args"]["clock"].is_string(), "{e}");
        }
        let on = |tid: u64| -> Vec<(f64, f64)> {
            bands.iter().filter(|b| b["tid"] == tid).map(|b| extent(b)).collect()
        };
        assert_eq!(on(5), [(2.0, 7.0), (10.0, 15.0)], "the kernel track: each band first to last step");
        assert_eq!(on(4).len(), 2, "the upload track shows both bands");
        assert!(on(10).is_empty(), "interleaved host copies keep their band in args only");
        // Every step of a band lies inside that band's event on its own track.
        for step in events.iter().filter(|e| e["cat"] == "gpu") {
            let band = step["args"]["band"].as_u64().expect("a banded step says its band");
            let parent = bands
                .iter()
                .find(|b| b["tid"] == step["tid"] && b["args"]["band"] == band)
                .expect("its band's event");
            let ((from, to), (start, end)) = (extent(parent), extent(step));
            assert!(from <= start && end <= to, "{step} outside {parent}");
        }
    }

    #[test]
    fn a_threads_encoder_stripes_and_their_kernel_share_its_track() {
        let spans = vec![
            Span::cpu(Track::EncodeStripe { thread: Some(0) }, 0, 2_000),
            Span::cpu(Track::KernelStripe { thread: Some(0) }, 0, 1_000),
            Span::cpu(Track::EncodeStripe { thread: Some(1) }, 100, 2_500),
            Span::cpu(Track::KernelStripe { thread: Some(1) }, 100, 1_200),
            Span::cpu(Track::Encode, 0, 5_000),
        ];
        let events = &trace_of(Backend::Cpu, 5_000, spans);
        let mut names: Vec<&str> = events
            .iter()
            .filter(|e| e["name"] == "thread_name")
            .filter_map(|e| e["args"]["name"].as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(
            names,
            [
                "CPU · encode",
                "CPU · encoder thread 0 (stripes, the kernel inside each)",
                "CPU · encoder thread 1 (stripes, the kernel inside each)",
                "run"
            ]
        );
        // On each thread's track the kernel lies inside its stripe.
        for tid in [17, 20] {
            let on: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X" && e["tid"] == tid).collect();
            let stripe =
                on.iter().find(|e| e["name"].as_str().is_some_and(|n| n.starts_with("encode stripes")));
            let kernel =
                on.iter().find(|e| e["name"].as_str().is_some_and(|n| n.starts_with("kernel stripes")));
            let (stripe, kernel) = (extent(stripe.expect("a stripe")), extent(kernel.expect("its kernel")));
            assert!(stripe.0 <= kernel.0 && kernel.1 <= stripe.1, "{stripe:?} {kernel:?}");
        }
    }
}
