//! The frontier (measured and modelled), the roofline and the grid's verdict on made-up cells.

use super::*;
use crate::engine::ceilings::ComputeCeilings;
use crate::engine::ceilings::rates::example_ceilings;
use crate::engine::sweep::grid::{AxisLevel, GridAxis, Roofline, RooflinePoint};
use crate::engine::sweep::result::{assert_says, one_run};
use crate::engine::sweep::verdict::analyse;
use crate::pixel::Op;

/// A cell of `mp` megapixels (1000 x 1000·mp) at `k` rounds: CPU all threads `cpu` ns, GPU end
/// to end `total`, kernel a tenth of it, resident `resident`; the stream baseline at 40 GB/s.
fn cell(mp: f64, k: u32, cpu: u64, total: u64, resident: u64) -> SweepPoint {
    let one_thread = if k == 0 { vec![(Series::Cpu1, cpu * 2)] } else { Vec::new() };
    let series = [
        (Series::CpuAll, cpu),
        (Series::GpuTotal, total),
        (Series::GpuKernel, total / 10),
        (Series::GpuResident, resident),
    ];
    SweepPoint {
        width: 1000,
        height: (mp * 1000.0) as u32,
        cpu_stream: Some(one_run((mp * 1e5) as u64)),
        work_rounds: k,
        ..SweepPoint::for_tests(mp, &[one_thread, series.to_vec()].concat())
    }
}

fn grid(points: Vec<SweepPoint>, levels: Vec<u32>, compute: Option<ComputeCeilings>) -> SweepResult {
    let mut r = SweepResult {
        ceilings: Some(Box::new(example_ceilings())),
        work_levels: levels,
        compute,
        ..SweepResult::for_tests(points)
    };
    analyse(&mut r);
    r
}

/// Six cells, `make(mp, level, cpu, total, resident)` at `levels`: at 1 MP the GPU never wins
/// end to end and wins resident from the top level (its win at the lowest, lost at the middle,
/// does not count); at 4 MP it wins end to end from the top level and resident from the middle.
fn wins_from_a_level(
    make: impl Fn(f64, u32, u64, u64, u64) -> SweepPoint,
    [a, b, c]: [u32; 3],
) -> Vec<SweepPoint> {
    vec![
        make(1.0, a, 100, 500, 50),
        make(1.0, b, 1000, 2000, 1500),
        make(1.0, c, 10_000, 12_000, 9000),
        make(4.0, a, 400, 900, 500),
        make(4.0, b, 4000, 5000, 3000),
        make(4.0, c, 40_000, 30_000, 9000),
    ]
}

fn point(mp: f64, end_to_end: Option<f64>, resident: Option<f64>) -> FrontierPoint {
    FrontierPoint { megapixels: mp, end_to_end_from_rounds: end_to_end, resident_from_rounds: resident }
}

#[test]
fn the_measured_frontier_is_the_level_from_which_the_gpu_keeps_winning() {
    let r = grid(wins_from_a_level(cell, [0, 16, 256]), vec![0, 16, 256], None);
    let f = r.frontier.as_ref().expect("a grid has a frontier");
    assert_eq!(f.measured, vec![point(1.0, None, Some(256.0)), point(4.0, Some(256.0), Some(16.0))]);
    // No compute ceilings: the model is unknown, and the verdict says why.
    assert!(f.modelled.is_empty());
    assert_says(
        &r.verdict,
        "the GPU wins end to end from about 256 rounds per pixel at 4.00 MP, and from 16 with the data kept on the GPU",
    );
    assert_says(&r.verdict, "The modelled frontier is unknown: this machine's compute ceilings");
    // The crossover over sizes is the lowest level's: at 0 rounds nothing wins end to end, and
    // resident only at 1 MP, lost at 4: no crossover either. The plain cells' resident times (50
    // ns at 1 MP, 500 at 4) fall below 0 at 0 pixels: no dispatch latency is known from them.
    assert_eq!((r.crossover_mp, r.resident_crossover_mp, r.dispatch_latency_ns), (None, None, None));
    // The verdict is the frontier's, said once.
    assert_eq!(r.verdict.matches("On this machine").count(), 1, "{}", r.verdict);
}

#[test]
fn says_so_when_the_gpu_never_wins_in_the_grid() {
    let mut r = grid(
        vec![cell(1.0, 0, 100, 500, 1000), cell(1.0, 4096, 10_000, 90_000, 80_000)],
        vec![0, 4096],
        None,
    );
    let f = r.frontier.as_ref().expect("frontier");
    assert_eq!(f.measured, vec![point(1.0, None, None)]);
    assert_says(&r.verdict, "never beats the best CPU in this grid, up to 4096 rounds per pixel and 1.00 MP");
    assert!(!r.verdict.contains("software"), "{}", r.verdict);
    r.software_adapter = true;
    analyse(&mut r);
    assert_says(&r.verdict, "its \"GPU\" is this CPU's own cores");
    // The plain sweep has no frontier, its runs on the roofline at the grayscale's intensity
    // ((0 + 7) / 4 ops per byte), and its verdict is unchanged.
    let plain = grid(vec![cell(1.0, 0, 100, 500, 1000)], vec![0], None);
    assert!(plain.frontier.is_none());
    let points = &plain.roofline.as_ref().expect("a roofline").points;
    assert!(!points.is_empty() && points.iter().all(|p| (p.ops_per_byte - 1.75).abs() < 1e-9), "{points:?}");
    assert!(
        plain.verdict.starts_with("On this machine (Test GPU) the GPU never beats the CPU"),
        "{}",
        plain.verdict
    );
    // Its flags stand inside the sentence, before the full stop: "… MP (software adapter: …). From".
    let mut flagged = plain;
    flagged.software_adapter = true;
    analyse(&mut flagged);
    assert_says(
        &flagged.verdict,
        "at 1.00 MP (software adapter: these GPU figures describe a CPU emulation, not a GPU). From",
    );
}

/// CPU 30 G ops/s (0.1 ns a pixel-round), GPU 3000 G (0.001 ns): with the stream at 40 GB/s
/// (0.1 ns a pixel) and the example ceilings (0.1496875 ns a pixel end to end, kernel 0.00125).
fn compute(gpu_ops_per_s: f64) -> ComputeCeilings {
    ComputeCeilings {
        cpu_ops_per_s: 30e9,
        cpu_threads: 2,
        gpu_ops_per_s: Some(gpu_ops_per_s),
        gpu_clock: None,
    }
}

#[test]
fn the_modelled_frontier_is_solved_from_the_ceilings() {
    let points = vec![cell(1.0, 0, 100, 500, 1000), cell(1.0, 256, 10_000, 12_000, 9000)];
    // One plain size gives no dispatch latency: the probe's submit latency stands in, 1 µs here.
    let grid = |points, compute| {
        let mut r = grid(points, vec![0, 256], Some(compute));
        if let Some(c) = r.ceilings.as_mut() {
            c.submit_latency_ns = 1000;
        }
        analyse(&mut r);
        r
    };
    let r = grid(points.clone(), compute(3000e9));
    let m = r.model.as_ref().expect("model");
    assert!((m.cost.cpu_ns_per_pixel - 0.1).abs() < 1e-12, "{m:?}");
    assert!((m.cost.gpu_latency_ns - 1000.0).abs() < 1e-12, "{m:?}");
    let f = r.frontier.as_ref().expect("frontier");
    let [p] = f.modelled.as_slice() else { panic!("one point per size: {f:?}") };
    // Latency 1 µs over 1 MP: 0.001 ns a pixel. Above both breaks (CPU 1 round, GPU 1.25):
    // 0.1k − 0.001 − (0.1484375 + 0.001k) > 0 from k = 0.1494375 / 0.099.
    let want = 0.149_437_5 / 0.099;
    assert!(p.end_to_end_from_rounds.is_some_and(|k| (k - want).abs() < 1e-9), "{p:?}");
    // Resident the GPU wins at every level: 0.1 − 0.001 − 0.00125 > 0 at 0 already.
    assert_eq!(p.resident_from_rounds, Some(0.0));
    assert_says(
        &r.verdict,
        "From the ceilings it should win end to end from about 2 rounds per pixel at 1.00 MP (0 with the data kept on the GPU)",
    );
    // The worked cell's modelled times come from the same costs: CPU 1e6 px x 25.6 ns.
    let worked = r.points.iter().find(|p| p.work_rounds == 256).and_then(|p| p.modelled).expect("modelled");
    assert_eq!(worked.cpu_ns, 25_600_000);
    assert_eq!(worked.gpu_resident_ns, 1000 + 256_000);
    assert!(worked.gpu_total_ns.abs_diff(1000 + 148_438 + 256_000) <= 1, "{worked:?}");
    // A GPU slower per round than the CPU (15 G ops/s: 0.2 ns) wins at small levels resident
    // but not up to 256 rounds: never, both ways.
    let r = grid(points, compute(15e9));
    let f = r.frontier.as_ref().expect("frontier");
    assert_eq!(f.modelled, vec![point(1.0, None, None)]);
    assert_says(
        &r.verdict,
        "should not win end to end up to 256 rounds per pixel at 1.00 MP (not even resident)",
    );
}

#[test]
fn wins_from_solves_each_linear_piece() {
    // Linear, turning positive at 3.
    assert_eq!(wins_from(|k| k - 3.0, &[], 10.0), Some(3.0));
    // Positive at 0, negative at 5, positive again from 8 (pieces 0–5 and 5–10).
    let v = |k: f64| if k < 5.0 { 1.0 - 0.4 * k } else { -1.0 + (k - 5.0) / 1.5 };
    assert!(wins_from(v, &[5.0], 10.0).is_some_and(|k| (k - 6.5).abs() < 1e-12));
    assert_eq!(wins_from(|_| 1.0, &[2.0], 10.0), Some(0.0));
    assert_eq!(wins_from(|k| 5.0 - k, &[], 10.0), None);
}

#[test]
fn the_roofline_holds_the_roofs_and_one_point_per_cell_and_series() {
    let r = grid(
        vec![cell(1.0, 0, 100, 500, 1000), cell(1.0, 16, 1_000_000, 2000, 1500)],
        vec![0, 16],
        Some(compute(3000e9)),
    );
    let roof = r.roofline.as_ref().expect("roofline");
    assert_eq!(roof.points.len(), 8, "no one-thread series: {roof:?}");
    let close = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < b * 1e-9);
    assert!(close(roof.cpu_bytes_per_s, 40e9), "{roof:?}");
    assert!(close(roof.cpu_ops_per_s, 30e9) && close(roof.gpu_ops_per_s, 3000e9), "{roof:?}");
    assert!(close(roof.gpu_device_bytes_per_s, 3200e9), "{roof:?}");
    // Up at 25.6 GB/s (32 then 128), down at 32 (64 then 64): 4 bytes / (3/25.6 + 1/32) ns.
    assert!(close(roof.transfer_bytes_per_s, 4.0 / 0.148_437_5 * 1e9), "{roof:?}");
    let cpu16 =
        roof.points.iter().find(|p| p.series == Series::CpuAll && p.work_rounds == 16).expect("point");
    // 16 rounds: (48 + 7) ops over 4 bytes; 55 ops x 1e6 px in 1 ms.
    assert!((cpu16.ops_per_byte - 13.75).abs() < 1e-12, "{cpu16:?}");
    assert!((cpu16.ops_per_s - 55e9).abs() < 1.0, "{cpu16:?}");
    assert!(roof.points.iter().filter(|p| p.work_rounds == 0).all(|p| (p.ops_per_byte - 1.75).abs() < 1e-12));
    // The end-to-end points sit under the transfer roof's slope at their intensity.
    let transfer = Roofline::roof(roof.transfer_bytes_per_s, roof.gpu_ops_per_s, cpu16.ops_per_byte);
    assert!(close(transfer, 13.75 * 4.0 / 0.148_437_5 * 1e9), "{transfer:?}");
}

#[test]
fn a_blur_radius_grid_has_its_frontier_and_roofline_over_the_radius() {
    // The cells of `wins_from_a_level` at radii 1, 4 and 16 instead of 0, 16 and 256 rounds.
    let blur = |mp, radius, cpu, total, resident| SweepPoint {
        work_rounds: 0,
        op: Op::Blur { radius },
        ..cell(mp, 16, cpu, total, resident)
    };
    let mut r = SweepResult {
        ceilings: Some(Box::new(example_ceilings())),
        axis: GridAxis::BlurRadius,
        levels: [1, 4, 16].map(|l| AxisLevel::of(GridAxis::BlurRadius, l, Op::None)).to_vec(),
        compute: Some(compute(1e11)),
        ..SweepResult::for_tests(wins_from_a_level(blur, [1, 4, 16]))
    };
    analyse(&mut r);
    assert!(r.is_grid());
    assert_eq!(r.grid_levels(), vec![1, 4, 16]);
    let f = r.frontier.as_ref().expect("a grid has a frontier");
    let at =
        |mp: f64| f.measured.iter().find(|p| p.megapixels.total_cmp(&mp).is_eq()).copied().expect("a size");
    assert_eq!((at(1.0).end_to_end_from_rounds, at(1.0).resident_from_rounds), (None, Some(16.0)));
    assert_eq!((at(4.0).end_to_end_from_rounds, at(4.0).resident_from_rounds), (Some(16.0), Some(4.0)));
    // The model prices no op: no modelled frontier, and the verdict says why, in radii.
    assert!(f.modelled.is_empty() && r.model.is_none() && r.dispatch_latency_ns.is_none());
    assert_says(&r.verdict, "from about blur radius 16 at 4.00 MP");
    assert_says(&r.verdict, "not an op such as the blur");
    // Each blur point on the roofline at 4 (2R + 1) + 7 operations over the bytes its series
    // moves: the CPU's 4 + 2 (the blur's rows in cache), the GPU's 4 + 10 (its u32 intermediate
    // written and read back through device memory).
    let roof = r.roofline.as_ref().expect("a roofline");
    let intensity = |radius, series| {
        let of = |p: &&RooflinePoint| p.op == Op::Blur { radius } && p.series == series;
        roof.points.iter().find(of).map(|p| p.ops_per_byte).expect("a point")
    };
    assert!((intensity(1, Series::CpuAll) - 19.0 / 6.0).abs() < 1e-9);
    assert!((intensity(16, Series::CpuAll) - 139.0 / 6.0).abs() < 1e-9);
    for series in [Series::GpuKernel, Series::GpuResident, Series::GpuTotal] {
        assert!((intensity(1, series) - 19.0 / 14.0).abs() < 1e-9, "{series:?}");
        assert!((intensity(16, series) - 139.0 / 14.0).abs() < 1e-9, "{series:?}");
    }
    // The transfer roof on the same x: 14 bytes a pixel at the example's pixel rate
    // (3 bytes up at 25.6 GB/s, 1 down at 32).
    let transfer = roof.transfer_bytes_per_s.expect("a transfer roof");
    assert!((transfer - 14.0 / 0.148_437_5 * 1e9).abs() < 1.0, "{transfer}");
    assert_eq!(roof.cpu_stream_mp, Some(4.0));
    let csv = crate::engine::sweep::to_csv(&r);
    assert!(csv.starts_with("blur_radius,megapixels,"), "{csv}");
    assert!(csv.lines().nth(1).is_some_and(|l| l.starts_with("1,1.0000,")), "{csv}");
}

#[test]
fn cells_that_win_on_their_own_are_named_not_never() {
    // At 1 MP the GPU wins with the data kept at 16 rounds alone (800 ns against the CPU's
    // 1000), and loses at 0 and 256: no frontier, and no "never".
    let levels = vec![0, 16, 256];
    let kept_at_16 = |e2e_at_16| {
        let points = vec![
            cell(1.0, 0, 100, 500, 1000),
            cell(1.0, 16, 1000, e2e_at_16, 800),
            cell(1.0, 256, 10_000, 90_000, 80_000),
        ];
        grid(points, levels.clone(), None)
    };
    let r = kept_at_16(2000);
    let f = r.frontier.as_ref().expect("frontier");
    assert_eq!(f.measured, vec![point(1.0, None, None)]);
    assert!(!r.verdict.contains("never"), "{}", r.verdict);
    assert_says(
        &r.verdict,
        "On this machine (Test GPU) there is no level in this work grid (up to 256 rounds per pixel and 1.00 MP) \
         from which the GPU beats the best CPU at it and every higher one, not even with the data kept on the \
         GPU; it wins only in cells on their own: with the data kept on the GPU at 1.00 MP at 16 rounds.",
    );
    // End to end too (900 ns against 1000).
    let r = kept_at_16(900);
    assert_says(
        &r.verdict,
        "it wins only in cells on their own: end to end at 1.00 MP at 16 rounds; with the data kept on the GPU \
         at 1.00 MP at 16 rounds.",
    );
    // End to end at 16 alone, kept from 16 on: the resident frontier and the lone end-to-end cell.
    let points = vec![
        cell(1.0, 0, 100, 500, 1000),
        cell(1.0, 16, 1000, 900, 800),
        cell(1.0, 256, 10_000, 90_000, 8000),
    ];
    let r = grid(points, levels, None);
    assert_says(
        &r.verdict,
        "there is no level in this work grid (up to 256 rounds per pixel and 1.00 MP) from which the GPU wins \
         end to end at it and every higher one, though it wins end to end on its own at 1.00 MP at 16 rounds; \
         with the data kept on the GPU it wins from about 16 rounds per pixel at 1.00 MP.",
    );
}

#[test]
fn a_modelled_win_below_the_top_level_is_named_not_never() {
    // A slow CPU stream (4 GB/s: 1 ns a pixel) and a GPU slower per round than the CPU (15 G
    // ops/s): from the ceilings the GPU wins end to end at 0 rounds (0.15 ns a pixel and the
    // latency against 1) but not at 256 (51.2 against 25.6): no modelled frontier.
    let mut points = vec![cell(1.0, 0, 100, 500, 1000), cell(1.0, 256, 10_000, 12_000, 9000)];
    for p in &mut points {
        p.cpu_stream = Some(one_run(1_000_000));
    }
    let r = grid(points, vec![0, 256], Some(compute(15e9)));
    let f = r.frontier.as_ref().expect("frontier");
    assert_eq!(f.modelled, vec![point(1.0, None, None)]);
    assert!(r.model.as_ref().is_some_and(|m| m.crossover_mp.is_some()), "{:?}", r.model);
    assert_says(
        &r.verdict,
        "From the ceilings there is no level up to 256 rounds per pixel from which it should win end to end at \
         every higher one at 1.00 MP (not even resident), though it should win end to end at 0 rounds.",
    );
    assert!(!r.verdict.contains("should not win"), "{}", r.verdict);
}

#[test]
fn a_size_a_stopped_grid_did_not_measure_at_every_level_has_no_measured_frontier() {
    // Stopped after 4 MP at 0 rounds: its 16 and 256 rounds not run.
    let mut cells = wins_from_a_level(cell, [0, 16, 256]);
    cells.truncate(4);
    let not_run = |work_rounds| crate::engine::sweep::CellNotRun {
        megapixels: 4.0,
        width: 1000,
        height: 4000,
        work_rounds,
        op: Op::None,
    };
    let mut r = SweepResult {
        ceilings: Some(Box::new(example_ceilings())),
        work_levels: vec![0, 16, 256],
        stopped: true,
        not_run: vec![not_run(16), not_run(256)],
        ..SweepResult::for_tests(cells)
    };
    analyse(&mut r);
    // At 4 MP the GPU lost at 0 rounds, the only level measured: no frontier, not "never".
    let f = r.frontier.as_ref().expect("a grid has a frontier");
    assert_eq!(f.measured, vec![point(1.0, None, Some(256.0))]);
    assert_says(
        &r.verdict,
        "with the data kept on the GPU it wins from about 256 rounds per pixel at 1.00 MP",
    );
    assert_says(&r.verdict, "The sweep was stopped: 4 of 6 points measured; the 2 not run count");
}
