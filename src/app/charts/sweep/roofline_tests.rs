//! The roofline's notes on runs above their roofs, and its crossing, on hand-built points.

use super::*;

/// A machine that ran a sweep: this one where `own`, its last-level cache `llc_bytes`.
fn machine(own: bool, llc_bytes: Option<u64>, load: Load) -> Machine {
    Machine { own, llc_bytes, load }
}

fn busy() -> Load {
    Load::Busy("other processes took 40% of the CPU".to_owned())
}

#[test]
fn the_note_on_cpu_runs_above_their_roof_says_what_holds_for_them() {
    // The stream at 1 MP: 10 GB/s; the compute ceiling 100 Gop/s (the ridge at 10 ops/byte).
    let run = |megapixels, ops_per_byte, ops_per_s| RooflinePoint {
        series: Series::CpuAll,
        work_rounds: 0,
        op: crate::pixel::Op::None,
        megapixels,
        ops_per_byte,
        ops_per_s,
    };
    let roofline = |points| Roofline {
        cpu_bytes_per_s: Some(10e9),
        cpu_stream_mp: Some(1.0),
        cpu_ops_per_s: Some(100e9),
        points,
        ..Roofline::default()
    };
    let quiet = machine(true, Some(32 << 20), Load::Quiet);
    // Under the roof: nothing to say.
    assert_eq!(cpu_above_note(&roofline(vec![run(1.0, 1.75, 17e9), run(0.25, 100.0, 99e9)]), &quiet), None);
    // At the largest size, on the slope: the stream was slowed only where the sweep was busy.
    let at_stream = roofline(vec![run(0.25, 1.75, 17e9), run(1.0, 1.75, 30e9)]);
    assert_eq!(
        cpu_above_note(&at_stream, &machine(true, None, busy())).as_deref(),
        Some(
            "Runs above the CPU's roof: at 1.00 MP, the size of the roof's memory stream, a run beat the \
             fastest stream measured there: the stream's runs were slowed by other work (other processes \
             took 40% of the CPU; sweep again on a quiet machine)."
        )
    );
    let note = cpu_above_note(&at_stream, &quiet).expect("a note");
    assert!(!note.contains("slowed") && note.contains("does not show the machine busy"), "{note}");
    // A smaller size on the slope: the caches only where its 1 MB (4 bytes a pixel) fits the
    // last-level cache; on the flat: the compute ceiling, measured low, not said busy.
    let smaller = roofline(vec![run(0.25, 1.75, 30e9), run(1.0, 100.0, 130e9)]);
    let note = cpu_above_note(&smaller, &quiet).expect("a note");
    assert!(
        note.starts_with(
            "Runs above the CPU's roof: at 0.25 MP the image fits the CPU's last-level cache (32.0 MiB)"
        ),
        "{note}"
    );
    assert!(note.contains("(1.00 MP, the largest size)"), "{note}");
    assert!(
        note.contains(
            "; a run beat the compute ceiling: it was measured low (measure them again (the adapter panel"
        ),
        "{note}"
    );
    assert!(!note.contains("busy") && !note.contains("slowed"), "{note}");
    // A cache smaller than the image, or another machine's (not known): no cache is named.
    for other in [machine(true, Some(512 << 10), Load::Quiet), machine(false, None, Load::Unknown)] {
        let note = cpu_above_note(&smaller, &other).expect("a note");
        assert!(!note.contains("cache"), "{note}");
        assert!(note.contains("at 0.25 MP runs beat the memory stream the roof was measured at (1.00 MP, the largest size): the sweep does not show why"), "{note}");
    }
    // A loaded sweep's advice does not name this app's adapter panel.
    let note = cpu_above_note(&smaller, &machine(false, None, Load::Unknown)).expect("a note");
    assert!(!note.contains("adapter panel") && note.contains("on the machine it ran on"), "{note}");
}

#[test]
fn the_note_on_gpu_runs_above_their_roof_says_busy_only_where_the_sweep_was() {
    // The device copy at 800 GB/s, the kernel at 2.2 TB/s on its slope (1.75 ops/byte).
    let roofline = Roofline {
        gpu_device_bytes_per_s: Some(800e9),
        gpu_ops_per_s: Some(1e15),
        points: vec![RooflinePoint {
            series: Series::GpuKernel,
            work_rounds: 0,
            op: crate::pixel::Op::None,
            megapixels: 160.0,
            ops_per_byte: 1.75,
            ops_per_s: 1.75 * 2.2e12,
        }],
        ..Roofline::default()
    };
    let loaded_quiet = gpu_above_note(&roofline, &machine(false, None, Load::Quiet)).expect("a note");
    assert!(
        !loaded_quiet.contains("busy machine") && !loaded_quiet.contains("measured low"),
        "{loaded_quiet}"
    );
    assert!(loaded_quiet.contains("on a machine that was not busy"), "{loaded_quiet}");
    assert!(!loaded_quiet.contains("adapter panel"), "{loaded_quiet}");
    let own_busy = gpu_above_note(&roofline, &machine(true, None, busy())).expect("a note");
    assert_eq!(
        own_busy,
        "Runs above the GPU's roof: its ceilings were measured low, the machine busy (other processes took 40% \
         of the CPU); measure them again (the adapter panel, or graylab info --probe) on a quiet one."
    );
    let unknown = gpu_above_note(&roofline, &machine(true, None, Load::Unknown)).expect("a note");
    assert!(unknown.contains("does not say whether the machine was busy"), "{unknown}");
    // Under the roof: nothing to say.
    let mut under = roofline;
    under.points[0].ops_per_s = 1.75 * 700e9;
    assert_eq!(gpu_above_note(&under, &machine(true, None, busy())), None);
}

#[test]
fn a_blur_sweep_has_no_crossing_read_off_two_intensities() {
    use crate::pixel::Op;
    let point = |series, op, ops_per_byte| RooflinePoint {
        series,
        work_rounds: 0,
        op,
        megapixels: 1.0,
        ops_per_byte,
        ops_per_s: 1e9,
    };
    let blur = Op::Blur { radius: 1 };
    // The CPU's blur:1 at 19/6 ops/byte, the GPU's at 19/14: not one cell's x.
    assert!(intensities_differ(&[
        point(Series::CpuAll, blur, 19.0 / 6.0),
        point(Series::GpuTotal, blur, 19.0 / 14.0)
    ]));
    // The grayscale and the dither count the same bytes on both.
    assert!(!intensities_differ(&[
        point(Series::CpuAll, Op::None, 1.75),
        point(Series::GpuTotal, Op::None, 1.75),
        point(Series::CpuAll, Op::Dither, 9.0 / 6.0),
        point(Series::GpuTotal, Op::Dither, 9.0 / 6.0),
        point(Series::GpuTotal, blur, 19.0 / 14.0)
    ]));
}
