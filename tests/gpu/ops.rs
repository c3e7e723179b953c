//! The ops on the gray plane, GPU against CPU byte for byte: the blur at radii 1 to 64 and the
//! dither by both wavefronts, on odd sizes, 1-pixel rows and columns, and with the band limit
//! forced low so that bands (the blur's aprons, the dither's carried error rows) meet inside
//! the image, and on rows wider than one grid dimension. Every condition is forced by the test,
//! so it holds on any adapter.

use crate::common;

use graylab::cpu::ops::apply_op;
use graylab::gpu::{DitherWavefront, GpuConverter};
use graylab::pixel::{Op, blur_reference, dither_reference};
use graylab::system::clock::Clock;

const SIZES: [(u32, u32); 6] = [(1, 1), (1, 23), (29, 1), (37, 19), (131, 7), (5, 70)];

fn cpu(op: Op, src: &[u8], (w, h): (u32, u32)) -> Vec<u8> {
    apply_op(op, src, (w as usize, h as usize), 2).expect("CPU op")
}

fn gpu(conv: &GpuConverter, op: Op, src: &[u8], size: (u32, u32)) -> (Vec<u8>, graylab::gpu::OpTimings) {
    conv.apply_op(op, src, size, None).expect("GPU op")
}

#[test]
fn the_blur_matches_the_cpu_at_every_radius_and_odd_size() {
    let Some(conv) = common::converter() else { return };
    for (i, &(w, h)) in SIZES.iter().enumerate() {
        let src = common::noise((w * h) as usize, i as u64 + 7);
        for radius in [1, 3, 8, 16, 64] {
            let op = Op::Blur { radius };
            let want = cpu(op, &src, (w, h));
            assert_eq!(want, blur_reference(&src, (w as usize, h as usize), radius), "CPU {w}x{h} {op}");
            let (got, t) = gpu(&conv, op, &src, (w, h));
            assert_eq!(got, want, "{w}x{h} {op}");
            assert_eq!((t.bands, t.wavefront), (1, None));
            assert!(t.kernel.ns > 0, "{w}x{h} {op}: the passes were timed");
            assert!(matches!(t.kernel.clock, Clock::GpuTimestamp | Clock::CpuClock));
        }
    }
}

#[test]
fn the_dither_matches_the_cpu_by_both_wavefronts() {
    let Some(mut conv) = common::converter() else { return };
    // 30000x3: 90,012 loop rounds in one persistent dispatch, which llvmpipe cut off at 65,535.
    for wavefront in [DitherWavefront::Steps, DitherWavefront::Persistent] {
        conv.set_dither_wavefront(Some(wavefront));
        for (i, &(w, h)) in SIZES.iter().chain(&[(300, 200), (30_000, 3)]).enumerate() {
            let src = common::noise((w * h) as usize, i as u64 + 70);
            let want = cpu(Op::Dither, &src, (w, h));
            assert_eq!(want, dither_reference(&src, (w as usize, h as usize)), "CPU {w}x{h}");
            let (got, t) = gpu(&conv, Op::Dither, &src, (w, h));
            assert_eq!(got, want, "{w}x{h} {wavefront:?}");
            assert_eq!(t.wavefront, Some(wavefront));
            assert!(got.iter().all(|&v| v == 0 || v == 255));
        }
    }
    // Unset, the device times both once and keeps the faster.
    conv.set_dither_wavefront(None);
    let picked = conv.dither_wavefront().expect("a wavefront picked");
    assert_eq!(conv.dither_wavefront().expect("kept"), picked);
    let src = common::noise(64 * 48, 9);
    let (got, t) = gpu(&conv, Op::Dither, &src, (64, 48));
    assert_eq!((got, t.wavefront), (cpu(Op::Dither, &src, (64, 48)), Some(picked)));
}

#[test]
fn forced_bands_meet_inside_the_image_without_a_seam() {
    let Some(mut conv) = common::converter() else { return };
    let (w, h) = (53_u32, 97_u32);
    let src = common::noise((w * h) as usize, 4242);
    // The limit is kept in whole 16 bytes: ask for a little more than `rows` rows, and count
    // the rows a band got from the limit in force.
    let limit_for = |bytes: u64| bytes.div_ceil(16) * 16;
    // The blur's bands hold their rows and 2R apron rows of u32 sums, each row whole words of
    // pixels: 4 * 56 bytes a row.
    let row_bytes = 4 * u64::from(w.next_multiple_of(4));
    for (radius, rows) in [(1_u32, 3_u64), (3, 8), (8, 20), (16, 33)] {
        let op = Op::Blur { radius };
        conv.set_band_limit_bytes(limit_for(row_bytes * (rows + 2 * u64::from(radius))));
        let rows = conv.band_limit_bytes() / row_bytes - 2 * u64::from(radius);
        let (got, t) = gpu(&conv, op, &src, (w, h));
        assert_eq!(got, cpu(op, &src, (w, h)), "{op} in bands of {rows} rows");
        assert_eq!(u64::from(t.bands), u64::from(h).div_ceil(rows), "{op}");
        assert!(t.bands > 2, "{op}: {} bands", t.bands);
    }
    // The dither's bands: their rows (a band's rows start mid-word), the error rows of the band
    // before kept on the GPU.
    for wavefront in [DitherWavefront::Steps, DitherWavefront::Persistent] {
        conv.set_dither_wavefront(Some(wavefront));
        for rows in [1_u64, 2, 5, 16] {
            conv.set_band_limit_bytes(limit_for(u64::from(w) * rows));
            let rows = conv.band_limit_bytes() / u64::from(w);
            let (got, t) = gpu(&conv, Op::Dither, &src, (w, h));
            assert_eq!(got, cpu(Op::Dither, &src, (w, h)), "{wavefront:?} in bands of {rows} rows");
            assert_eq!(u64::from(t.bands), u64::from(h).div_ceil(rows));
        }
    }
    // A band that cannot hold one row and the blur's apron is refused, not run.
    conv.set_band_limit_bytes(4 * u64::from(w) * 10);
    assert!(conv.apply_op(Op::Blur { radius: 8 }, &src, (w, h), None).is_err());
}

#[test]
fn the_engine_runs_the_op_after_the_grayscale_and_its_phases_add_up() {
    use graylab::engine::{Backend, ConvertSettings, Engine, Phase, RunOptions};
    let Some(ctx) = common::gpu() else { return };
    let engine = Engine::with_gpu(ctx);
    let img = common::photo(61, 37);
    for op in [Op::Blur { radius: 3 }, Op::Dither] {
        let cpu_settings = ConvertSettings { threads: 2, op, ..ConvertSettings::default() };
        let gpu_settings = ConvertSettings { backend: Backend::Gpu, ..cpu_settings };
        let cpu = engine.convert(&img, &cpu_settings, RunOptions::default()).expect("CPU");
        let gpu = engine.convert(&img, &gpu_settings, RunOptions::default()).expect("GPU");
        assert_eq!(cpu.image, gpu.image, "{op}");
        let gray = engine
            .convert(&img, &ConvertSettings { op: Op::None, ..cpu_settings }, RunOptions::default())
            .expect("gray");
        let (w, h) = (61, 37);
        assert_eq!(cpu.image.as_bytes(), apply_op(op, gray.image.as_bytes(), (w, h), 1).expect("op"));
        for r in [&cpu.report, &gpu.report] {
            let op_phase = r.phase(Phase::Op).expect("an op phase");
            assert_eq!(op_phase.source, Clock::CpuClock, "the stage's wall on the CPU clock");
            assert_eq!((r.op.op, r.op.ops_per_pixel), (op, op.ops_per_pixel()));
            assert!(r.op.kernel_ns > 0 && r.op.kernel_ns <= op_phase.ns, "{op}: passes within the phase");
            let phases: u64 = r.phases.iter().map(|p| p.ns).sum();
            assert_eq!(
                phases - r.overlap_ns + r.other_ns,
                r.total_ns,
                "{op}: phases - overlap + other = total"
            );
            let span = r.spans.iter().find(|s| s.lane == graylab::engine::Track::Op).expect("an op span");
            assert_eq!(span.end_ns - span.start_ns, op_phase.ns);
        }
    }
    // The gray plane stays on the GPU between the grayscale and the op: no download of it, and
    // no upload in the op's stage. With bands forced, it goes through the host, alike.
    let gray_kept = |engine: &Engine, op| {
        let settings =
            ConvertSettings { backend: Backend::Gpu, threads: 2, op, ..ConvertSettings::default() };
        let r = engine.convert(&img, &settings, RunOptions::default()).expect("GPU");
        let kept = r.report.notes.iter().any(|n| n.contains("the gray plane stayed on the GPU"));
        (r.image, kept, r.report.phase(Phase::Download).is_some(), r.report.op.upload_ns)
    };
    let mut banded = GpuConverter::new(std::sync::Arc::clone(engine.gpu().expect("gpu")));
    banded.set_band_limit_bytes(4096);
    let banded = Engine::with_converter(std::sync::Arc::new(banded));
    for op in [Op::Blur { radius: 3 }, Op::Dither] {
        let want = engine
            .convert(
                &img,
                &ConvertSettings { threads: 2, op, ..ConvertSettings::default() },
                RunOptions::default(),
            )
            .expect("CPU")
            .image;
        let (image, kept, downloaded, upload_ns) = gray_kept(&engine, op);
        assert_eq!((image == want, kept, downloaded, upload_ns), (true, true, false, 0), "{op} kept");
        let (image, kept, downloaded, _) = gray_kept(&banded, op);
        assert_eq!((image == want, kept, downloaded), (true, false, true), "{op} through the host");
    }
    // A 16-bit conversion with an op runs it on the narrowed gray, as on a `--depth 8` file,
    // and says so; a 16-bit gray input too.
    let rgb16 = image::DynamicImage::ImageRgb16(img.to_rgb16());
    let gray16 = engine.convert(&rgb16, &ConvertSettings::default(), RunOptions::default()).expect("16-bit");
    let narrowed = image::DynamicImage::ImageLuma8(gray16.image.to_luma8());
    for (input, backend) in [(&rgb16, Backend::Cpu), (&rgb16, Backend::Gpu), (&gray16.image, Backend::Gpu)] {
        for op in [Op::Blur { radius: 2 }, Op::Dither] {
            let settings = ConvertSettings { op, backend, ..ConvertSettings::default() };
            let want = engine.convert(&narrowed, &settings, RunOptions::default()).expect("8-bit").image;
            let got = engine.convert(input, &settings, RunOptions::default()).expect("16-bit with an op");
            assert!(got.image == want, "{op} on {backend:?}, {:?}", input.color());
            let note = format!("16-bit gray narrowed to 8-bit: {op} runs on 8-bit gray");
            assert!(got.report.notes.contains(&note), "{:?}", got.report.notes);
        }
    }
}

/// An RGB image whose input fits the band limit unpadded but whose bands are padded to whole
/// output words past it (105x13: 4,095 bytes, 4,104 padded, limit 4,096) runs in two bands:
/// the op takes the gray plane through the host and gives the CPU's bytes (before, the run
/// stopped with an internal fault, "the gray plane is not one band on the GPU").
#[test]
fn an_op_after_a_conversion_padded_into_two_bands_goes_through_the_host() {
    use graylab::engine::{Backend, ConvertSettings, Engine, RunOptions};
    let Some(ctx) = common::gpu() else { return };
    let mut conv = GpuConverter::new(std::sync::Arc::clone(&ctx));
    conv.set_band_limit_bytes(4096);
    let banded = Engine::with_converter(std::sync::Arc::new(conv));
    let img = common::photo(105, 13);
    for op in [Op::Dither, Op::Blur { radius: 2 }] {
        let cpu_settings = ConvertSettings { threads: 2, op, ..ConvertSettings::default() };
        let gpu_settings = ConvertSettings { backend: Backend::Gpu, ..cpu_settings };
        let want = banded.convert(&img, &cpu_settings, RunOptions::default()).expect("CPU").image;
        let got = banded.convert(&img, &gpu_settings, RunOptions::default()).expect("GPU in two bands");
        let kept = got.report.notes.iter().any(|n| n.contains("the gray plane stayed on the GPU"));
        let bands = got.report.gpu.as_ref().map(|t| t.bands);
        assert_eq!((got.image == want, kept, bands), (true, false, Some(2)), "{op}");
    }
}

/// Rows wider than one grid dimension holds (65535 workgroups of 16 columns: 1,048,560 px, or
/// of 8 two-D tiles of 4 px words: 2,097,120 px) fold along z: the blur, the dither and an 8x8
/// workgroup's grayscale give the CPU's bytes (before, each refused the image).
#[test]
fn rows_wider_than_one_grid_dimension_fold_along_z() {
    use graylab::engine::{Backend, ConvertSettings, Engine, RunOptions, WorkgroupSize};
    let Some(ctx) = common::gpu() else { return };
    let engine = Engine::with_gpu(ctx);
    let (w, h) = (2_100_001, 2);
    let img = image::DynamicImage::ImageRgb8(
        image::RgbImage::from_raw(w, h, common::noise((3 * w * h) as usize, 5)).expect("size"),
    );
    for (op, workgroup) in [
        (Op::Blur { radius: 3 }, WorkgroupSize::DEFAULT),
        (Op::Dither, WorkgroupSize::DEFAULT),
        (Op::None, WorkgroupSize { x: 8, y: 8 }),
    ] {
        let cpu_settings = ConvertSettings { threads: 2, op, ..ConvertSettings::default() };
        let gpu_settings = ConvertSettings { backend: Backend::Gpu, workgroup, ..cpu_settings };
        let cpu = engine.convert(&img, &cpu_settings, RunOptions::default()).expect("CPU");
        let gpu = engine.convert(&img, &gpu_settings, RunOptions::default()).expect("GPU");
        assert!(cpu.image == gpu.image, "{op} wg {workgroup}: GPU = CPU");
    }
}
