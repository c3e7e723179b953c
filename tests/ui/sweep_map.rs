//! The size-sweep window's roofline and map of who wins (issue #18) in the real app under
//! `egui_kittest`, on any adapter: hand-built sweeps (a real-GPU-like machine where the GPU wins
//! end to end from 256 rounds per pixel at 8 MP and from 16 with the input kept, and a
//! lavapipe-like one where it never wins) are saved as JSON and loaded through the window's own
//! "Load to compare". The roofline names its roofs and where the GPU can win; the map writes the
//! speed-up in its cells and keys both frontiers; a sweep of one work level asks for more, and the
//! work-levels field fills the options sent. One snapshot per tab.

use crate::harness;

use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use graylab::app::GraylabApp;
use graylab::engine::sweep::SweepResult;
use serde_json::{Value, json};

/// Levels of the work grid, rounds per pixel.
const LEVELS: [u32; 4] = [0, 16, 256, 4096];
/// Sizes, megapixels.
const SIZES_MP: [f64; 4] = [0.5, 2.0, 8.0, 33.2];

/// A machine's cost per pixel, ns: a fixed cost plus a part per pixel and a part per round.
#[derive(Clone, Copy)]
struct Cost {
    fixed_ns: f64,
    ns_per_pixel: f64,
    ns_per_round: f64,
}

impl Cost {
    fn ns(self, mp: f64, k: u32) -> u64 {
        (self.fixed_ns + mp * 1e6 * (self.ns_per_pixel + f64::from(k) * self.ns_per_round)) as u64
    }
}

/// A machine: CPU on 1 and all threads, GPU end to end, kernel alone and with the input kept.
struct Machine {
    name: &'static str,
    software: bool,
    cpu1: Cost,
    cpu_all: Cost,
    gpu_total: Cost,
    gpu_kernel: Cost,
    gpu_resident: Cost,
    /// CPU stream, CPU compute, GPU device, GPU compute, transfers.
    roofs: [f64; 5],
    verdict: &'static str,
}

/// Like an H200 host: the GPU wins end to end from 256 rounds at 8 MP, from 16 with the input kept.
fn real_gpu() -> Machine {
    Machine {
        name: "NVIDIA H200 (hand-built)",
        software: false,
        cpu1: Cost { fixed_ns: 0.0, ns_per_pixel: 0.4, ns_per_round: 0.3 },
        cpu_all: Cost { fixed_ns: 2e4, ns_per_pixel: 0.03, ns_per_round: 0.02 },
        gpu_total: Cost { fixed_ns: 3e5, ns_per_pixel: 0.5, ns_per_round: 0.0005 },
        gpu_kernel: Cost { fixed_ns: 0.0, ns_per_pixel: 0.0015, ns_per_round: 0.0005 },
        gpu_resident: Cost { fixed_ns: 3e5, ns_per_pixel: 0.005, ns_per_round: 0.0005 },
        roofs: [133e9, 150e9, 3e12, 6e12, 8e9],
        verdict: "On this machine the GPU wins end to end from about 256 rounds per pixel at 8 MP, and from 16 \
                  with the data kept on the GPU.",
    }
}

/// Like lavapipe on 2 cores: the "GPU" is the CPU's own cores, slower, and never wins.
fn lavapipe() -> Machine {
    Machine {
        name: "llvmpipe (LLVM 19.1.7, 256 bits) (hand-built)",
        software: true,
        cpu1: Cost { fixed_ns: 0.0, ns_per_pixel: 0.8, ns_per_round: 0.2 },
        cpu_all: Cost { fixed_ns: 2e4, ns_per_pixel: 0.4, ns_per_round: 0.1 },
        gpu_total: Cost { fixed_ns: 1e6, ns_per_pixel: 1.5, ns_per_round: 0.15 },
        gpu_kernel: Cost { fixed_ns: 0.0, ns_per_pixel: 0.3, ns_per_round: 0.15 },
        gpu_resident: Cost { fixed_ns: 5e5, ns_per_pixel: 0.5, ns_per_round: 0.15 },
        roofs: [10e9, 30e9, 12e9, 20e9, 2.7e9],
        verdict: "On this machine the GPU never wins end to end: the \"GPU\" is a CPU emulation.",
    }
}

fn stats(ns: u64) -> Value {
    json!({ "min_ns": ns, "median_ns": ns, "max_ns": ns, "runs": 3 })
}

/// The smallest level from which every higher level wins, per size.
fn measured_from(m: &Machine, gpu: fn(&Machine) -> Cost, mp: f64, levels: &[u32]) -> Option<u32> {
    let wins = |k: u32| m.cpu_all.ns(mp, k).min(m.cpu1.ns(mp, k)) > gpu(m).ns(mp, k);
    (0..levels.len()).find(|&i| levels[i..].iter().all(|k| wins(*k))).map(|i| levels[i])
}

/// The level where the all-threads CPU and `gpu` take the same time, when it is in range.
fn modelled_from(m: &Machine, gpu: Cost, mp: f64, top: u32) -> Option<f64> {
    let px = mp * 1e6;
    let k = (gpu.fixed_ns - m.cpu_all.fixed_ns + px * (gpu.ns_per_pixel - m.cpu_all.ns_per_pixel))
        / (px * (m.cpu_all.ns_per_round - gpu.ns_per_round));
    (m.cpu_all.ns_per_round > gpu.ns_per_round && k <= f64::from(top)).then_some(k.max(0.0))
}

/// The sweep of `m` over `levels`, as graylab would save it.
fn sweep_json(m: &Machine, levels: &[u32]) -> Value {
    let mut points = Vec::new();
    let mut roof_points = Vec::new();
    for &k in levels {
        for &mp in &SIZES_MP {
            let series = [
                ("cpu1", m.cpu1),
                ("cpu_all", m.cpu_all),
                ("gpu_total", m.gpu_total),
                ("gpu_kernel", m.gpu_kernel),
                ("gpu_resident", m.gpu_resident),
            ];
            points.push(json!({
                "megapixels": mp, "width": 1, "height": 1, "work_rounds": k,
                "series": series.iter().map(|(s, c)| json!([s, stats(c.ns(mp, k))])).collect::<Vec<_>>(),
                "upload_gb_per_s": null, "download_gb_per_s": null,
            }));
            let ops = mp * 1e6 * f64::from(3 * k + 7);
            for (s, c) in &series[1..] {
                roof_points.push(json!({
                    "series": s, "work_rounds": k, "megapixels": mp,
                    "ops_per_byte": f64::from(3 * k + 7) / 4.0, "ops_per_s": ops / (c.ns(mp, k) as f64 / 1e9),
                }));
            }
        }
    }
    let top = *levels.last().expect("levels");
    let frontier = (levels.len() > 1).then(|| {
        let at = |mp: f64, measured: bool| {
            if measured {
                json!({ "megapixels": mp,
                    "end_to_end_from_rounds": measured_from(m, |m| m.gpu_total, mp, levels).map(f64::from),
                    "resident_from_rounds": measured_from(m, |m| m.gpu_resident, mp, levels).map(f64::from) })
            } else {
                json!({ "megapixels": mp,
                    "end_to_end_from_rounds": modelled_from(m, m.gpu_total, mp, top),
                    "resident_from_rounds": modelled_from(m, m.gpu_resident, mp, top) })
            }
        };
        json!({ "measured": SIZES_MP.iter().map(|mp| at(*mp, true)).collect::<Vec<_>>(),
                "modelled": SIZES_MP.iter().map(|mp| at(*mp, false)).collect::<Vec<_>>() })
    });
    let [cpu_stream, cpu_ops, device, gpu_ops, transfers] = m.roofs;
    json!({
        "version": "0.1.0", "build": "release", "source": "synthetic", "adapter": m.name,
        "software_adapter": m.software, "gpu_timestamps": true, "cpu_threads": 16, "runs": 3,
        "workgroup": { "x": 256, "y": 1 }, "formula": "bt601", "work_levels": levels, "divergent": false,
        "points": points, "crossover_mp": null, "resident_crossover_mp": null, "dispatch_latency_ns": null,
        "transfer_share_at_8k": null, "transfer_share_mp": null, "frontier": frontier,
        "roofline": { "cpu_bytes_per_s": cpu_stream, "cpu_ops_per_s": cpu_ops, "gpu_device_bytes_per_s": device,
            "gpu_ops_per_s": gpu_ops, "transfer_bytes_per_s": transfers, "points": roof_points },
        "verdict": m.verdict,
    })
}

/// Writes the sweep of `m` over `levels` as `name` in `dir`, the test's temporary folder
/// (checking that graylab reads it). Nothing is written beside the build: the test binaries run
/// on machines that have none.
fn write_sweep(dir: &std::path::Path, name: &str, m: &Machine, levels: &[u32]) -> std::path::PathBuf {
    let text = serde_json::to_string_pretty(&sweep_json(m, levels)).expect("JSON");
    let _: SweepResult = serde_json::from_str(&text).expect("a graylab sweep");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path
}

/// Loads `path` into the open sweep window through its "Load to compare".
fn load(h: &mut Harness<'static, GraylabApp>, path: &std::path::Path) {
    h.state_mut().set_sweep_json_path(path);
    h.run_steps(2);
    h.get_by_label("Load to compare").click();
    h.run_steps(3);
}

/// The gradient app with the sweep window open on `tab`, showing the sweep of `m` over `levels`.
fn window_on(
    tab: &str,
    m: &Machine,
    levels: &[u32],
    dir: &std::path::Path,
) -> Option<Harness<'static, GraylabApp>> {
    let mut h = harness::gradient_app(dir)?;
    h.get_by_label("Clear").click();
    h.get_by_label("Size sweep…").click();
    h.run_steps(2);
    let name =
        format!("{}-{}-levels.sweep.json", if m.software { "lavapipe" } else { "real-gpu" }, levels.len());
    load(&mut h, &write_sweep(dir, &name, m, levels));
    h.get_by_label(tab).click();
    h.remove_cursor();
    h.run_steps(4);
    Some(h)
}

#[test]
fn the_roofline_names_its_roofs_and_where_the_gpu_can_win_end_to_end() {
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(mut h) = window_on("Roofline", &real_gpu(), &LEVELS, dir.path()) else { return };
    for roof in [
        "CPU roof (memory stream, then compute)",
        "GPU device roof (device memory, then compute)",
        "GPU end-to-end roof (host-GPU transfers, then compute)",
        "CPU, all threads",
        "GPU kernel only",
        "GPU, input kept",
        "GPU end to end",
    ] {
        assert!(h.query_by_label(roof).is_some(), "{roof} in the legend");
    }
    // The CPU's flat is 150 G ops/s, the transfers 8 GB/s: they cross at 18.75 ops/byte, 4 bytes
    // a pixel, (18.75 * 4 - 7) / 3 = 22.7 rounds.
    let crossing = "GPU can win end to end from 19 ops/byte (about 23 rounds per pixel)";
    assert!(h.query_by_label(crossing).is_some(), "the crossing is labelled");
    // The loaded sweep's verdict, written on its machine, speaks of that machine, not this one.
    let verdict = real_gpu().verdict.replace("this machine", "that machine");
    assert!(h.query_by_label_contains(&verdict).is_some(), "the verdict above");
    harness::mask_what_machines_differ_in(&mut h);
    let estimate = h.get_by_label_contains("MP in all").rect();
    h.mask(estimate.expand(2.0));
    h.snapshot("sweep_roofline_1280x720");

    // A lavapipe-like sweep loaded beside it: no crossing, and the chart says why.
    load(&mut h, &write_sweep(dir.path(), "lavapipe.sweep.json", &lavapipe(), &LEVELS));
    h.get_by_label("loaded: lavapipe.sweep.json · llvmpipe (LLVM 19.1.7, 256 bits) (hand-built)").click();
    h.run_steps(3);
    assert!(h.query_by_label_contains("GPU can win end to end from").is_none(), "no crossing on lavapipe");
    // In a short window the notes fold into one line: opened, they say why.
    if let Some(notes) = h.query_by_label_contains("Notes on this chart") {
        notes.click();
        h.run_steps(3);
    }
    assert!(h.query_by_label_contains("never rises over the CPU's").is_some(), "and the reason");
    assert!(h.query_by_label_contains("the GPU series describe a CPU emulation").is_some());
}

#[test]
fn who_wins_writes_the_speed_up_in_each_cell_and_keys_both_frontiers() {
    let dir = tempfile::tempdir().expect("temp dir");
    let m = real_gpu();
    let Some(mut h) = window_on("Who wins", &m, &LEVELS, dir.path()) else { return };
    // At 8 MP and 256 rounds: the best CPU (all threads) over the GPU end to end, and over the
    // GPU with the input kept. This sweep was saved without its comparisons in turns: end to end
    // each cell is from the medians, marked "*".
    let cpu = m.cpu_all.ns(8.0, 256) as f64;
    let end_to_end = format!("{:.1}x*", cpu / m.gpu_total.ns(8.0, 256) as f64);
    let resident = format!("{:.0}x", cpu / m.gpu_resident.ns(8.0, 256) as f64);
    assert_eq!((end_to_end.as_str(), resident.as_str()), ("7.7x*", "30x"), "the fixture's figures");
    assert!(h.query_all_by_label(&end_to_end).count() >= 1, "{end_to_end} in a cell");
    assert!(h.query_all_by_label(&resident).count() >= 1, "{resident} in a cell");
    // At 8 MP and 16 rounds the CPU still wins end to end: 2.8 ms against 4.4 ms.
    let losing = format!("{:.2}x*", m.cpu_all.ns(8.0, 16) as f64 / m.gpu_total.ns(8.0, 16) as f64);
    assert_eq!(losing, "0.65x*");
    assert!(h.query_all_by_label(&losing).count() >= 1, "a losing cell");
    for key in ["measured frontier: the GPU wins above it", "modelled frontier (from the ceilings)"] {
        assert!(h.query_by_label(key).is_some(), "{key} in the legend");
    }
    let verdict = m.verdict.replace("this machine", "that machine");
    assert!(h.query_by_label_contains(&verdict).is_some(), "the loaded verdict above, of that machine");
    harness::mask_what_machines_differ_in(&mut h);
    let estimate = h.get_by_label_contains("MP in all").rect();
    h.mask(estimate.expand(2.0));
    h.snapshot("sweep_who_wins_1280x720");
}

#[test]
fn one_work_level_asks_for_more_and_the_work_field_fills_the_options_sent() {
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(mut h) = window_on("Who wins", &real_gpu(), &[0], dir.path()) else { return };
    assert!(h.query_by_label("Sweep more than one work level (or blur radius) to see the map.").is_some());
    // The roofline still shows the points, all at one intensity.
    h.get_by_label("Roofline").click();
    h.run_steps(2);
    assert!(h.query_by_label("GPU end to end").is_some());
    h.get_by_label("Who wins").click();
    h.run_steps(2);
    h.get_by_label("Use 0, 16, 256, 4096 at 0.25, 1, 2 MP").click();
    h.run_steps(2);
    h.state_mut().set_sweep_sizes("0.01", 1);
    h.get_by_label("divergent").click();
    h.run_steps(2);
    h.get_by_label("Run sweep").click();
    h.run_steps(2);
    let sent = h.state().view().sweep_sent.expect("a sweep was started").clone();
    assert_eq!(sent.work_levels, vec![0, 16, 256, 4096]);
    assert!(sent.divergent);
    assert_eq!(sent.sizes_mp, vec![0.01]);
    harness::settle(&mut h);

    // Typed: one more level, sorted into place.
    h.get_by_role_and_label(Role::TextInput, "Work per pixel").focus();
    h.run_steps(1);
    h.key_press(egui::Key::End);
    h.get_by_role_and_label(Role::TextInput, "Work per pixel").type_text(", 64");
    h.run_steps(2);
    h.get_by_label("Run sweep").click();
    h.run_steps(2);
    let sent = h.state().view().sweep_sent.expect("a second sweep").clone();
    assert_eq!(sent.work_levels, vec![0, 16, 64, 256, 4096]);
    harness::settle(&mut h);
}
