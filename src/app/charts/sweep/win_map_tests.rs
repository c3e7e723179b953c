//! The map's cells, frontiers, labels and colours, on a hand-built sweep of two sizes and three
//! work levels.

use super::*;
use crate::engine::sweep::{Frontier, SweepPoint};

/// At 1 MP the GPU end to end wins from 256 rounds, at 8 MP from 16; with the input kept it wins
/// everywhere. The frontier is given at 8 MP only (the other column is read from the cells).
fn sweep() -> SweepResult {
    let cell = |mp: f64, work_rounds: u32, cpu1: u64, cpu_all: u64, total: u64, resident: u64| {
        let medians = [
            (Series::Cpu1, cpu1),
            (Series::CpuAll, cpu_all),
            (Series::GpuTotal, total),
            (Series::GpuResident, resident),
        ];
        SweepPoint { work_rounds, ..SweepPoint::for_tests(mp, &medians) }
    };
    let points = vec![
        cell(1.0, 0, 400, 200, 1000, 100),
        cell(8.0, 0, 3200, 1600, 5000, 800),
        cell(1.0, 16, 4000, 2000, 2500, 100),
        cell(8.0, 16, 32000, 16000, 5000, 800),
        cell(1.0, 256, 40000, 20000, 3000, 150),
        cell(8.0, 256, 320_000, 160_000, 6000, 900),
    ];
    let at = |megapixels: f64, end_to_end_from_rounds: Option<f64>, resident_from_rounds: Option<f64>| {
        FrontierPoint { megapixels, end_to_end_from_rounds, resident_from_rounds }
    };
    let frontier = Frontier {
        measured: vec![at(8.0, Some(16.0), Some(0.0))],
        modelled: vec![at(1.0, Some(40.0), None), at(8.0, Some(16.0), Some(0.0))],
    };
    SweepResult { work_levels: vec![0, 16, 256], frontier: Some(frontier), ..SweepResult::for_tests(points) }
}

#[test]
fn cells_hold_the_best_cpu_against_the_gpu() {
    let g = grid(&sweep(), Path::EndToEnd);
    assert_eq!(g.sizes_mp, vec![1.0, 8.0]);
    assert_eq!(g.levels, vec![0, 16, 256]);
    let at = |row: usize, col: usize| g.cells[row * 2 + col].expect("a cell");
    assert_eq!(at(0, 0).cpu, (Series::CpuAll, 200));
    assert!((at(0, 0).speed_up() - 0.2).abs() < 1e-12);
    assert!((at(1, 1).speed_up() - 3.2).abs() < 1e-12);
    // Measured: from the cells at 1 MP (row 2, 256 rounds), from the engine's frontier at 8 MP.
    assert_eq!(g.measured, vec![2, 1]);
    let r = grid(&sweep(), Path::Resident);
    assert_eq!(r.measured, vec![0, 0], "the input kept wins at every level");
    assert_eq!(r.modelled[0], None, "out of range: not drawn");
}

#[test]
fn continuous_levels_sit_between_the_row_centres() {
    let levels = [0, 16, 256];
    assert_eq!(row_of_level(&levels, 0.0), Some(0.5));
    assert_eq!(row_of_level(&levels, 16.0), Some(1.5));
    assert_eq!(row_of_level(&levels, 256.0), Some(2.5));
    let between = row_of_level(&levels, 64.0).expect("in range");
    assert!(between > 1.5 && between < 2.5, "{between}");
    assert_eq!(row_of_level(&levels, 300.0), None);
    assert_eq!(row_of_level(&[16, 256], 0.0), Some(0.0), "below the lowest row: its bottom edge");
    let g = grid(&sweep(), Path::EndToEnd);
    assert_eq!(g.modelled[1], Some(1.5));
}

#[test]
fn ratios_have_two_figures_and_diverging_colours_with_readable_text() {
    for (r, text) in [(3.4, "3.4x"), (0.123, "0.12x"), (12.4, "12x"), (0.0123, "0.012x")] {
        assert_eq!(ratio_text(r), text);
    }
    for dark in [true, false] {
        let (cpu, even, gpu) = (ratio_colour(0.1, dark), ratio_colour(1.0, dark), ratio_colour(10.0, dark));
        assert!(cpu.r() > cpu.g() && gpu.g() > gpu.r(), "red for the CPU, green for the GPU");
        assert_eq!(even.r(), even.g(), "neutral at 1x");
        assert_eq!(ratio_colour(100.0, dark), gpu, "full at 10x");
    }
    // The legend's swatches stand out from the window on both themes, "even" too (near-white
    // on the light theme: its edge shows it).
    for visuals in [egui::Visuals::dark(), egui::Visuals::light()] {
        let (key, name) = swatch(&visuals, 1.0, "even (1x)");
        assert_eq!(name, "even (1x)");
        let Key::Swatch { colour, edge } = key else { panic!("a swatch") };
        assert_eq!(colour, ratio_colour(1.0, visuals.dark_mode));
        let seen = crate::app::look::contrast(colour, visuals.window_fill)
            .max(crate::app::look::contrast(edge, visuals.window_fill));
        assert!(seen >= 3.0, "the even swatch at {seen:.2}:1 on the window");
    }
    assert_eq!(text_on(Color32::from_gray(228)), Color32::BLACK);
    assert_eq!(text_on(Color32::from_gray(72)), Color32::WHITE);
}

#[test]
fn end_to_end_cells_carry_the_comparison_run_in_turns_and_its_mark() {
    use crate::engine::sampling::Stop;
    let mut s = sweep();
    // Two rounds at 1 MP, 0 rounds: too few for an interval ("?"); six steady ones at 8 MP,
    // GPU 3.2x faster with no spread: decided (no mark).
    s.points[0].end_to_end =
        Some(Speedup::of(Some(Series::CpuAll), &[200.0, 210.0], &[1000.0, 990.0], Stop::Time));
    s.points[1].end_to_end =
        Some(Speedup::of(Some(Series::CpuAll), &[1600.0; 6], &[500.0; 6], Stop::Decided));
    let g = grid(&s, Path::EndToEnd);
    let mark = |i: usize| g.cells[i].expect("a cell").compared.map(|c| c.winner.mark());
    assert_eq!((mark(0), mark(1), mark(2)), (Some("?"), Some(""), None));
    assert!(g.cells[0].and_then(|c| c.compared).expect("compared").label().starts_with("not decided"));
    // Each cell shows the figure its comparison printed, as the CLI's map does: at 8 MP the GPU
    // 3.2x faster run in turns, where the medians of the separate runs say 0.32x; a cell not run in
    // turns (1 MP, 16 rounds) the medians', marked so.
    let cell = |i: usize| g.cells[i].expect("a cell");
    assert_eq!(cell(1).figure, CellSpeedUp { ratio: 3.2, sampled: true });
    assert!((cell(1).speed_up() - 3.2).abs() < 1e-12 && cell(1).wins);
    assert!((cell(0).speed_up() - 0.205).abs() < 0.002 && cell(0).figure.sampled && !cell(0).wins);
    assert_eq!(cell(2).figure, CellSpeedUp { ratio: 0.8, sampled: false });
    assert_eq!(cell(2).figure.mark(), "*");
    let kept = grid(&s, Path::Resident);
    assert!(kept.cells.iter().flatten().all(|c| c.compared.is_none()), "kept on the GPU: not run in turns");
}
