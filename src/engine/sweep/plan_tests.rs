//! The plan's sizes and levels, a calibration scaled, and the runs each cell gets.

use super::*;
use crate::engine::estimate::Lane;
use crate::engine::sweep::grid::GridAxis;

fn options(levels: Vec<u32>, gpu: bool) -> SweepOptions {
    SweepOptions {
        sizes_mp: vec![4.0, 1.0, 1.0, f64::NAN],
        runs: 5,
        gpu,
        work_levels: levels,
        ..SweepOptions::default()
    }
}

#[test]
fn sizes_and_levels_are_sorted_and_each_once() {
    let o = options(vec![256, 0, 16, 256], true);
    assert_eq!(o.sizes(), vec![1.0, 4.0]);
    assert_eq!(o.levels(), vec![0, 16, 256]);
    assert!(o.is_work_grid());
    assert!(!options(vec![], true).is_work_grid());
    assert!(!options(vec![0, 0], true).is_work_grid());
    assert!(options(vec![16], true).is_work_grid());
}

#[test]
fn sizes_are_three_to_two_and_whole() {
    assert_eq!(size_for(24.0), (6000, 4000));
    assert_eq!(size_for(0.0), (1, 1));
    let (w, h) = size_for(128.0);
    assert!((f64::from(w) * f64::from(h) / 1e6 - 128.0).abs() < 0.01);
}

/// 1 MP: CPU all threads 1 ms plain, 101 ms at 100 rounds (1 ms a round); one thread 2 ms;
/// GPU 10 ms plain, 1010 ms at 100 rounds (10 ms a round).
fn calibration() -> Calibration {
    Calibration {
        megapixels: 1.0,
        rounds: 100,
        cpu1_ns: 2_000_000,
        cpu_all_ns: 1_000_000,
        cpu_all_work_ns: 101_000_000,
        gpu_ns: Some(10_000_000),
        gpu_work_ns: Some(1_010_000_000),
    }
}

#[test]
fn a_calibration_teaches_the_estimator_pixels_and_rounds() {
    let mut pace = Pace::default();
    calibration().observe_into(&mut pace);
    let run_ms = |lane, mp, rounds| pace.run(lane, mp, rounds).seconds * 1e3;
    let near = |ms: f64, want: f64| (ms - want).abs() < 1e-6;
    // Seen: 1 ms plain, 1 ms a megapixel-round on the CPU; 10 ms a megapixel-round on the GPU.
    assert!(near(run_ms(Lane::CpuAllThreads, 1.0, 16), 17.0));
    assert!(near(run_ms(Lane::CpuOneThread, 1.0, 0), 2.0));
    assert!(near(run_ms(Lane::Gpu, 1.0, 256), 10.0 + 2560.0));
    // Four times the pixels: the rounds' share four times, the plain share less (a fixed part).
    let plain_4 = run_ms(Lane::CpuAllThreads, 4.0, 0);
    assert!(plain_4 > 3.0 && plain_4 < 4.0, "{plain_4}");
    assert!(near(run_ms(Lane::CpuAllThreads, 4.0, 16) - plain_4, 64.0));
    assert_eq!(pace.run(Lane::Gpu, 1.0, 0).basis, crate::engine::estimate::Basis::Seen);
}

#[test]
fn a_long_cell_gets_fewer_runs_and_the_estimate_says_which() {
    let o = options(vec![0, 16, 256], true);
    let e = o.plan(Some(&calibration()), &Pace::default());
    assert_eq!(e.cells.len(), 6);
    let order: Vec<(f64, u32)> = e.cells.iter().map(|c| (c.megapixels, c.work_rounds)).collect();
    assert_eq!(order, vec![(1.0, 0), (1.0, 16), (1.0, 256), (4.0, 0), (4.0, 16), (4.0, 256)]);
    // 1 MP at 16 rounds: CPU 17 ms (5 runs), GPU 170 ms (5 runs fit in 1.5 s: 850 ms).
    let cell = e.cells[1];
    assert_eq!((cell.cpu_runs, cell.gpu_runs, cell.single_thread), (5, 5, false));
    assert!(
        cell.estimated_ns.is_some_and(|ns| ns.abs_diff(6 * 17_000_000 + 2 * 6 * 170_000_000) <= 2),
        "{cell:?}"
    );
    // 1 MP at 256 rounds: GPU 2.57 s a run: one; CPU 257 ms: 5.
    assert_eq!((e.cells[2].cpu_runs, e.cells[2].gpu_runs), (5, 1));
    // 4 MP at 256 rounds: CPU 1.028 s: one; GPU one.
    assert_eq!((e.cells[5].cpu_runs, e.cells[5].gpu_runs), (1, 1));
    // The plain cells also time one thread.
    assert!(e.cells[0].single_thread && e.cells[3].single_thread);
    assert!(
        e.cells[0]
            .estimated_ns
            .is_some_and(|ns| ns.abs_diff(6 * 1_000_000 + 6 * 2_000_000 + 2 * 6 * 10_000_000) <= 2)
    );
    let total: u64 = e.cells.iter().filter_map(|c| c.estimated_ns).sum();
    // The whole grid: its cells and a little for the calibration and the images made.
    assert!(e.total_ns.is_some_and(|t| t >= total && t as f64 <= total as f64 * 1.1), "{e:?}");
    // The whole job as its user waits for it: the 2.5 s already spent calibrating and the cells,
    // seen on this machine; the sentence says that figure and that basis, as the JSON keeps them.
    let whole = e.whole(2.5).expect("calibrated");
    assert!((whole.seconds - (e.total_ns.unwrap_or(0) as f64 / 1e9 + 2.5)).abs() < 1e-9, "{whole:?}");
    assert_eq!(whole.basis, crate::engine::estimate::Basis::Seen);
    let s = e.sentence(2.5);
    // The total as the status bar says a time ("1 min 05 s"; "0.2 s", never "0 s").
    let time = crate::system::units::elapsed_text(whole.seconds);
    assert!(
        s.contains(&format!(
            "6 cells, estimated at about {time} in all, from runs seen on this machine: the 2.5 s spent \
             calibrating just now"
        )),
        "{s}"
    );
    assert_eq!(graylab_time(230_000_000), "0.2 s");
    assert!(s.contains("256 rounds at 1 MP (CPU 5, GPU 1); 16 rounds at 4 MP"), "{s}");
    // Without a calibration: the runs asked everywhere, no time.
    let e = o.plan(None, &Pace::default());
    assert!(e.cells.iter().all(|c| c.cpu_runs == 5 && c.gpu_runs == 5 && c.estimated_ns.is_none()));
    assert!(e.sentence(0.0).contains("no estimate"), "{}", e.sentence(0.0));
    assert_eq!(e.whole(2.5), None);
    // A plain sweep with a calibration still gets the runs asked, one thread included.
    let e = options(vec![0], false).plan(Some(&calibration()), &Pace::default());
    assert!(e.cells.iter().all(|c| c.cpu_runs == 5 && c.gpu_runs == 0 && c.single_thread));
    assert!(e.sentence(0.0).contains("Every cell gets the 5 warm runs asked"), "{}", e.sentence(0.0));
}

#[test]
fn the_blur_radius_axis_runs_blur_r_at_zero_rounds_and_prices_its_operations() {
    let o = SweepOptions { ops: CellOps::blur_radii(vec![16, 1, 8, 8, 0, 65]), ..options(vec![0], true) };
    assert_eq!(o.ops.axis(), GridAxis::BlurRadius);
    assert!(o.is_grid() && !o.is_work_grid());
    // Out of 1..=64 left out, lowest first, each once.
    assert_eq!(o.axis_levels_asked(), vec![1, 8, 16]);
    let levels = o.axis_levels();
    let ops_per_pixel: Vec<(u32, u64, u64)> =
        levels.iter().map(|l| (l.level, l.op_ops_per_pixel, l.ops_per_pixel)).collect();
    // 4 (2R + 1) for the blur, plus the formula's 7.
    assert_eq!(ops_per_pixel, vec![(1, 12, 19), (8, 68, 75), (16, 132, 139)]);
    assert!(levels.iter().all(|l| l.work_rounds == 0 && l.op == Op::Blur { radius: l.level }));
    // Every cell at 0 rounds runs its blur, without the one-thread series.
    let e = o.plan(Some(&calibration()), &Pace::default());
    assert_eq!(e.axis, GridAxis::BlurRadius);
    assert_eq!(e.cells.len(), 6);
    assert!(e.cells.iter().all(|c| c.work_rounds == 0 && !c.single_thread && c.gpu_runs > 0));
    let at_1mp: Vec<Op> =
        e.cells.iter().filter(|c| c.megapixels.total_cmp(&1.0).is_eq()).map(|c| c.op).collect();
    assert_eq!(at_1mp, [1, 8, 16].map(|radius| Op::Blur { radius }));
    // Priced as rounds: 132 operations are 44 rounds, 1 ms a megapixel-round on the CPU, 10 on
    // the GPU, so the radius-16 cell at 4 MP costs more than the radius-1 one.
    assert_eq!(Op::Blur { radius: 16 }.synthetic_rounds(), 44);
    assert_eq!(Op::Blur { radius: 1 }.synthetic_rounds(), 4);
    let cost =
        |radius| e.cells.iter().find(|c| c.megapixels.total_cmp(&4.0).is_eq() && c.op == Op::Blur { radius });
    let (Some(small), Some(large)) = (cost(1), cost(16)) else { panic!("cells") };
    assert!(large.estimated_ns > small.estimated_ns, "{large:?} {small:?}");
    // No op rates measured yet: the sentence says it prices them as rounds, and only that.
    let said = e.sentence(0.0);
    assert!(
        said.contains(
            "priced as its integer operations per pixel (12 for blur:1, 68 for blur:8, 132 for blur:16)"
        ) && said.contains("not measured yet")
            && !said.contains("rates measured"),
        "{said}"
    );
    // The work axis with one op on every cell keeps its levels.
    let blur = CellOps { op: Op::Blur { radius: 4 }, blur_radii: Vec::new() };
    let o = SweepOptions { ops: blur, ..options(vec![0, 16], false) };
    assert_eq!((o.ops.axis(), o.axis_levels_asked()), (GridAxis::WorkRounds, vec![0, 16]));
    let e = o.plan(None, &Pace::default());
    assert!(e.cells.iter().all(|c| c.op == Op::Blur { radius: 4 }));
    assert_eq!(e.cells.iter().map(|c| c.single_thread).collect::<Vec<_>>(), [true, false, true, false]);
}

#[test]
fn a_grid_with_an_op_learns_its_overhead_apart_from_a_work_grid() {
    use crate::engine::estimate::{Pace, Task};
    let grid = options(vec![0, 16, 256], true);
    let radii = SweepOptions { ops: CellOps::blur_radii(vec![1, 4]), ..grid.clone() };
    let blur_cells = CellOps { op: Op::Blur { radius: 4 }, blur_radii: Vec::new() };
    let blur_cells = SweepOptions { ops: blur_cells, ..grid.clone() };
    assert_eq!((grid.task(), radii.task(), blur_cells.task()), (Task::Grid, Task::OpGrid, Task::OpGrid));
    assert_eq!(options(vec![0], true).task(), Task::Sweep);
    // A radius grid that took 3x its runs teaches the radius grids, not the work grids.
    let mut pace = Pace::new("test");
    let parts = radii.parts();
    let runs_s = pace.parts(&parts).seconds;
    pace.finished(Task::OpGrid, &parts, 3.0 * runs_s, None);
    assert!(pace.has_seen(Task::OpGrid) && !pace.has_seen(Task::Grid));
    let work_parts = grid.parts();
    let fresh = Pace::new("test").job(Task::Grid, &work_parts).seconds;
    assert!((pace.job(Task::Grid, &work_parts).seconds - fresh).abs() < 1e-9 * fresh.max(1.0));
}

/// A time in seconds as the sweep's sentence says it.
fn graylab_time(ns: u64) -> String {
    crate::system::units::elapsed_text(ns as f64 / 1e9)
}
