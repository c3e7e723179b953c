//! GPU output against the CPU, byte for byte: every kernel, formula and valid workgroup shape
//! (1-D and 2-D tiles), odd image sizes, forced band splits and submission sizes, the pipelined
//! ring with many bands, cancellation, display tiles, and both timing modes. Every condition is
//! forced by the test itself, so it holds on any adapter (lavapipe or a GPU with 2+ GiB
//! bindings); see tests/common.

use crate::common;
use graylab::system::clock::Clock;

use crate::common::cpu;

use std::sync::atomic::AtomicBool;

use graylab::cpu::{Work, par_convert_with_work};
use graylab::gpu::{
    BandPlan, GpuConverter, GpuError, GpuJob, GpuStep, GpuTimings, TimingMode, WorkgroupSize,
};
use graylab::pixel::{Formula, Kernel};
use graylab::system::progress::PixelProgress;

fn gpu_run(
    conv: &GpuConverter,
    kernel: Kernel,
    formula: Formula,
    wg: WorkgroupSize,
    src: &[u8],
    (w, h): (u32, u32),
) -> (Vec<u8>, GpuTimings) {
    let mut out = vec![0x5Au8; (w * h) as usize * kernel.out_bytes_per_pixel()];
    let t = conv.convert(&GpuJob::new(kernel, formula, wg, src, (w, h)), &mut out).expect("GPU conversion");
    (out, t)
}

fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    a.iter().zip(b).position(|(x, y)| x != y)
}

const TILE_8X8: WorkgroupSize = WorkgroupSize { x: 8, y: 8 };

#[test]
fn all_colours_every_formula_match_the_cpu() {
    let Some(conv) = common::converter() else { return };
    let src: Vec<u8> = (0u32..1 << 24).flat_map(|c| [(c >> 16) as u8, (c >> 8) as u8, c as u8]).collect();
    for formula in Formula::COMPUTED {
        let want = cpu(Kernel::Rgb8ToL8, formula, &src);
        let (got, t) = gpu_run(&conv, Kernel::Rgb8ToL8, formula, WorkgroupSize::DEFAULT, &src, (4096, 4096));
        assert_eq!(first_difference(&got, &want), None, "{formula}: first differing colour");
        assert!(t.kernel().ns > 0, "kernel time measured");
    }
}

#[test]
fn every_kernel_formula_and_workgroup_on_odd_sizes() {
    let Some(conv) = common::converter() else { return };
    let sizes = [(1, 1), (3, 5), (7, 1), (1, 9), (5, 13), (33, 17), (257, 3)];
    for kernel in Kernel::ALL {
        for (i, &(w, h)) in sizes.iter().enumerate() {
            let src = common::noise((w * h) as usize * kernel.in_bytes_per_pixel(), i as u64 + 1);
            for formula in Formula::COMPUTED {
                let want = cpu(kernel, formula, &src);
                for wg in conv.context().valid_workgroups() {
                    let (got, _) = gpu_run(&conv, kernel, formula, wg, &src, (w, h));
                    assert_eq!(first_difference(&got, &want), None, "{kernel:?} {formula} wg {wg} {w}x{h}");
                }
            }
        }
    }
}

#[test]
fn large_odd_image_every_workgroup() {
    let Some(conv) = common::converter() else { return };
    let (w, h) = (4097, 2161);
    let src = common::noise((w * h) as usize * 3, 4097);
    let want = cpu(Kernel::Rgb8ToL8, Formula::Bt601, &src);
    let valid = conv.context().valid_workgroups();
    assert!(valid.iter().any(|wg| wg.y > 1) && valid.iter().any(|wg| wg.y == 1), "1-D and 2-D: {valid:?}");
    for wg in valid {
        let (got, _) = gpu_run(&conv, Kernel::Rgb8ToL8, Formula::Bt601, wg, &src, (w, h));
        assert_eq!(first_difference(&got, &want), None, "wg {wg}");
    }
}

#[test]
fn forced_bands_are_byte_identical() {
    let Some(mut conv) = common::converter() else { return };
    let (w, h) = (97, 61);
    for limit in [16u64, 100, 1000, 4096, 12_000] {
        conv.set_band_limit_bytes(limit);
        for kernel in Kernel::ALL {
            let src = common::noise((w * h) as usize * kernel.in_bytes_per_pixel(), limit);
            let Ok(plan) = BandPlan::new(kernel, w, h, conv.band_limit_bytes()) else {
                continue; // One row does not fit this tiny limit.
            };
            for formula in [Formula::Bt601, Formula::Linear] {
                let want = cpu(kernel, formula, &src);
                for wg in [TILE_8X8, WorkgroupSize { x: 64, y: 1 }] {
                    let (got, t) = gpu_run(&conv, kernel, formula, wg, &src, (w, h));
                    assert_eq!((t.bands, t.bands > 1), (plan.bands, true), "limit {limit} {kernel:?}");
                    assert_eq!(
                        first_difference(&got, &want),
                        None,
                        "{kernel:?} {formula} wg {wg} limit {limit}"
                    );
                }
            }
        }
    }
}

#[test]
fn forced_small_submissions_are_byte_identical() {
    let Some(mut conv) = common::converter() else { return };
    let (w, h) = (131, 47);
    // One byte per submission means one row each (rows whose pixels all sit in the previous
    // row's last word join the next one).
    for chunk_limit in [1u64, 131 * 3 * 5, 4096] {
        conv.set_chunk_limit_bytes(Some(chunk_limit));
        for kernel in Kernel::ALL {
            let src = common::noise((w * h) as usize * kernel.in_bytes_per_pixel(), chunk_limit);
            let want = cpu(kernel, Formula::Bt709, &src);
            for wg in [TILE_8X8, WorkgroupSize { x: 16, y: 4 }, WorkgroupSize::DEFAULT] {
                let (got, t) = gpu_run(&conv, kernel, Formula::Bt709, wg, &src, (w, h));
                assert_eq!(first_difference(&got, &want), None, "{kernel:?} wg {wg} chunk {chunk_limit}");
                let rows = (chunk_limit / (u64::from(w) * kernel.in_bytes_per_pixel() as u64)).max(1);
                assert_eq!(u64::from(t.rows_per_chunk), rows, "{kernel:?} chunk {chunk_limit}");
                assert!(u64::from(t.chunks) >= u64::from(h).div_ceil(rows), "{t:?}");
            }
        }
    }
}

#[test]
fn many_bands_through_the_ring_are_byte_identical() {
    let Some(mut conv) = common::converter() else { return };
    let (w, h) = (1001u32, 700u32);
    let src = common::noise((w * h) as usize * 4, 1001);
    // 9 bands of 80 rows (the last 60), 4 submissions each (the last 3): the 3 staging slots
    // are reused 11 times over.
    conv.set_band_limit_bytes(u64::from(w) * 4 * 80);
    conv.set_chunk_limit_bytes(Some(u64::from(w) * 4 * 20));
    for (kernel, wg) in [(Kernel::Rgba8ToLa8, WorkgroupSize::DEFAULT), (Kernel::Rgba8ToL8, TILE_8X8)] {
        let want = cpu(kernel, Formula::Linear, &src);
        for _ in 0..2 {
            let (got, t) = gpu_run(&conv, kernel, Formula::Linear, wg, &src, (w, h));
            assert_eq!(first_difference(&got, &want), None, "{kernel:?}");
            assert_eq!((t.bands, t.chunks, t.rows_per_chunk), (9, 35, 20));
            assert_eq!(t.pipelined, conv.context().timestamps().encoders);
            assert!(t.upload_host().ns > 0 && t.download_host().ns > 0 && t.wall_ns > t.setup_ns(), "{t:?}");
            // Every chunk's steps say their band (a trace nests them in it); setup has none.
            let copied: std::collections::BTreeSet<u32> = t
                .spans
                .iter()
                .filter(|s| matches!(s.step, GpuStep::HostCopy { .. }))
                .map(|s| s.band.expect("a chunk's host copy says its band"))
                .collect();
            assert_eq!(copied, (0..9).collect(), "{kernel:?}");
            for s in &t.spans {
                assert_eq!(s.band.is_none(), matches!(s.step, GpuStep::Setup | GpuStep::Preview), "{s:?}");
            }
        }
    }
}

#[test]
fn a_cancelled_run_stops_and_the_next_one_is_whole() {
    let Some(mut conv) = common::converter() else { return };
    let (w, h) = (300u32, 200u32);
    let src = common::noise((w * h) as usize * 3, 300);
    let want = cpu(Kernel::Rgb8ToL8, Formula::Bt601, &src);
    conv.set_chunk_limit_bytes(Some(u64::from(w) * 3 * 10));
    for mode in [TimingMode::Auto, TimingMode::CpuClock] {
        conv.set_timing_mode(mode);
        let cancel = AtomicBool::new(true);
        let mut out = vec![0x5Au8; (w * h) as usize];
        let job = GpuJob::new(Kernel::Rgb8ToL8, Formula::Bt601, WorkgroupSize::DEFAULT, &src, (w, h));
        let err = conv.convert(&job.with_cancel(&cancel), &mut out);
        assert!(matches!(err, Err(GpuError::Cancelled)), "{mode:?}: {err:?}");
        assert!(out.iter().all(|&b| b == 0x5A), "{mode:?}: nothing written after a cancel before the start");
        let (got, t) = gpu_run(&conv, Kernel::Rgb8ToL8, Formula::Bt601, WorkgroupSize::DEFAULT, &src, (w, h));
        assert_eq!(first_difference(&got, &want), None, "{mode:?}");
        assert_eq!(t.chunks, 20);
    }
}

#[test]
fn a_row_wider_than_the_band_limit_is_refused() {
    let Some(mut conv) = common::converter() else { return };
    conv.set_band_limit_bytes(16);
    let src = vec![0u8; 100 * 3];
    let mut out = vec![0u8; 100];
    let job = GpuJob::new(Kernel::Rgb8ToL8, Formula::Bt601, WorkgroupSize::DEFAULT, &src, (100, 1));
    let err = conv.convert(&job, &mut out);
    assert!(
        matches!(err, Err(GpuError::RowTooLarge { rows: 1, row_bytes: 300, limit_bytes: 16 })),
        "{err:?}"
    );
}

#[test]
fn an_image_above_a_128_mib_binding_is_banded() {
    let Some(mut conv) = common::converter() else { return };
    // 45.1 MP RGB = 135 MB: above lavapipe's (and many GPUs') 128 MiB storage binding; the
    // limit is forced so that a GPU with larger bindings bands it too.
    conv.set_band_limit_bytes(128 << 20);
    let (w, h) = (8200u32, 5500u32);
    let src = common::noise((w * h) as usize * 3, 45);
    let want = cpu(Kernel::Rgb8ToL8, Formula::Bt709, &src);
    let (got, t) = gpu_run(&conv, Kernel::Rgb8ToL8, Formula::Bt709, WorkgroupSize::DEFAULT, &src, (w, h));
    assert_eq!(first_difference(&got, &want), None);
    let plan = BandPlan::new(Kernel::Rgb8ToL8, w, h, conv.band_limit_bytes()).expect("a row fits");
    assert_eq!(t.bands, plan.bands);
    assert!(t.bands >= 2, "{t:?}");
}

#[test]
fn progress_counts_every_pixel_once_in_many_chunks_and_bands_in_both_modes() {
    let Some(mut conv) = common::converter() else { return };
    let (w, h) = (301u32, 97u32);
    let src = common::noise((w * h) as usize * 3, 301);
    let want = cpu(Kernel::Rgb8ToL8, Formula::Bt709, &src);
    // 3 bands of 40 rows (the last 17), cut into chunks of 7 rows: 15 chunks, 3 staging slots.
    conv.set_band_limit_bytes(u64::from(w) * 3 * 40);
    conv.set_chunk_limit_bytes(Some(u64::from(w) * 3 * 7));
    for mode in [TimingMode::Auto, TimingMode::CpuClock] {
        conv.set_timing_mode(mode);
        let progress = PixelProgress::new();
        progress.start(u64::from(w * h));
        let mut out = vec![0x5Au8; (w * h) as usize];
        let job = GpuJob::new(Kernel::Rgb8ToL8, Formula::Bt709, WorkgroupSize::DEFAULT, &src, (w, h));
        let t = conv.convert(&job.with_progress(&progress), &mut out).expect("GPU conversion");
        assert_eq!(first_difference(&out, &want), None, "{mode:?}");
        assert_eq!((t.bands, t.chunks), (3, 15), "{mode:?}");
        assert_eq!(progress.done(), u64::from(w * h), "{mode:?}: every pixel counted once, none twice");
        // A display run counts the same.
        let tiles = conv.create_display((w, h), (64, 21)).expect("display");
        progress.start(u64::from(w * h));
        conv.convert_for_display(&job.with_progress(&progress), &tiles, None).expect("GPU display run");
        assert_eq!(progress.done(), u64::from(w * h), "{mode:?}: display");
    }
}

#[test]
fn timestamps_and_cpu_clock_modes_agree_on_output() {
    let Some(mut conv) = common::converter() else { return };
    let (w, h) = (640, 480);
    let src = common::noise((w * h) as usize * 4, 640);
    let want = cpu(Kernel::Rgba8ToLa8, Formula::Linear, &src);
    let ts = conv.context().timestamps();
    let (got, t) = gpu_run(&conv, Kernel::Rgba8ToLa8, Formula::Linear, WorkgroupSize::DEFAULT, &src, (w, h));
    assert_eq!(first_difference(&got, &want), None);
    assert_eq!(
        (t.kernel().clock, t.upload_copy().clock, t.pipelined),
        (Clock::gpu_if(ts.passes), Clock::gpu_if(ts.encoders), ts.encoders)
    );
    assert!(t.upload_host().ns > 0 && t.download_host().ns > 0 && t.wall_ns >= t.setup_ns());
    conv.set_timing_mode(TimingMode::CpuClock);
    conv.set_band_limit_bytes(640 * 4 * 120);
    conv.set_chunk_limit_bytes(Some(640 * 4 * 30));
    for wg in [WorkgroupSize::DEFAULT, TILE_8X8] {
        let (got, t) = gpu_run(&conv, Kernel::Rgba8ToLa8, Formula::Linear, wg, &src, (w, h));
        assert_eq!(first_difference(&got, &want), None, "wg {wg}");
        assert!(
            t.kernel().clock == Clock::CpuClock && t.upload_copy().clock == Clock::CpuClock && !t.pipelined
        );
        assert_eq!((t.bands, t.chunks), (4, 16));
        assert!(t.kernel().ns > 0 && t.upload_copy().ns > 0 && t.download_copy().ns > 0);
        // Nothing overlaps on the CPU clock: the steps fit in the wall time.
        assert_eq!(t.overlap_ns(), 0, "{t:?}");
    }
}

#[test]
fn oversized_workgroups_are_refused_before_pipeline_creation() {
    let Some(conv) = common::converter() else { return };
    let limits = conv.context().limits().clone();
    let too_big = WorkgroupSize { x: limits.max_compute_invocations_per_workgroup * 2, y: 1 };
    let mut out = vec![0u8; 4];
    let err =
        conv.convert(&GpuJob::new(Kernel::Rgb8ToL8, Formula::Bt601, too_big, &[0; 12], (4, 1)), &mut out);
    assert!(matches!(err, Err(GpuError::WorkgroupUnsupported { .. })), "{err:?}");
    let tall = WorkgroupSize { x: 1, y: limits.max_compute_workgroup_size_y + 1 };
    assert!(conv.context().check_workgroup(tall).is_err());
}

#[test]
fn display_tiles_show_the_result_with_forced_bands_and_chunks() {
    let Some(mut conv) = common::converter() else { return };
    let ctx = std::sync::Arc::clone(conv.context());
    let (w, h) = (37u32, 23u32);
    let src = common::noise((w * h) as usize * 3, 37);
    let want = cpu(Kernel::Rgb8ToL8, Formula::Bt601, &src);
    // Bands of 7 rows (the last 2), chunks of 3 asked: a chunk's rows start inside its band's
    // output. The ring's three staging slots hold at most one band (880 bytes), so a chunk
    // takes 2 rows (222 bytes): 4 chunks in each full band, 1 in the last.
    conv.set_band_limit_bytes(37 * 3 * 8);
    conv.set_chunk_limit_bytes(Some(37 * 3 * 3));
    for (wg, download) in [(WorkgroupSize::DEFAULT, true), (TILE_8X8, false)] {
        // A preview as large as the image: each of its pixels is one source pixel.
        let tiles = conv.create_display((w, h), (w, h)).expect("display");
        let mut out = vec![0u8; (w * h) as usize];
        let job = GpuJob::new(Kernel::Rgb8ToL8, Formula::Bt601, wg, &src, (w, h));
        let t =
            conv.convert_for_display(&job, &tiles, download.then_some(&mut out[..])).expect("display run");
        assert_eq!((t.displayed, t.downloaded, t.bands, t.chunks), (true, download, 4, 13), "{t:?}");
        assert_eq!(tiles.stored_bands(), 4);
        assert!(t.preview().ns > 0 && t.wall_ns >= t.preview().ns, "{t:?}");
        if download {
            assert_eq!(first_difference(&out, &want), None);
        }
        // A full-resolution tile across every band edge is exact; so is the preview.
        let tile = tiles.detail_tile(0, 0, w, h).expect("tile");
        for texture in [&tile.texture, &tiles.preview.texture] {
            let shown = read_tile(&ctx, texture, w, h);
            for (i, &gray) in want.iter().enumerate() {
                assert_eq!(&shown[i * 4..i * 4 + 4], &[gray, gray, gray, 255], "pixel {i} wg {wg}");
            }
        }
    }
}

/// `job` with `work` on the GPU, into a fresh buffer.
fn gpu_work(conv: &GpuConverter, job: GpuJob<'_>, work: Work) -> (Vec<u8>, GpuTimings) {
    let mut out = vec![0x5Au8; (job.width * job.height) as usize * job.kernel.out_bytes_per_pixel()];
    let t = conv.convert(&job.with_work(work), &mut out).expect("GPU conversion with work");
    (out, t)
}

/// `src` with `work` on the CPU (the engine's fused kernel, 2 threads).
fn cpu_work(kernel: Kernel, formula: Formula, src: &[u8], work: Work) -> Vec<u8> {
    let mut out = vec![0u8; src.len() / kernel.in_bytes_per_pixel() * kernel.out_bytes_per_pixel()];
    par_convert_with_work(kernel, formula, src, &mut out, 2, work).expect("sizes match");
    out
}

#[test]
fn work_per_pixel_matches_the_cpu_every_kernel_level_variant_and_workgroup() {
    let Some(conv) = common::converter() else { return };
    let (w, h) = (13u32, 7u32);
    let shapes = conv.context().valid_workgroups();
    for kernel in Kernel::ALL {
        let src = common::noise((w * h) as usize * kernel.in_bytes_per_pixel(), 13);
        let plain = cpu(kernel, Formula::Bt601, &src);
        for rounds in common::WORK_ROUNDS {
            for divergent in [false, true] {
                let work = Work { rounds, mask: common::full_mask(kernel), divergent };
                let want = common::reference_with_work(kernel, Formula::Bt601, &src, work);
                assert_eq!(cpu_work(kernel, Formula::Bt601, &src, work), want, "CPU {kernel:?} {work:?}");
                for &wg in &shapes {
                    let job = GpuJob::new(kernel, Formula::Bt601, wg, &src, (w, h));
                    let (got, _) = gpu_work(&conv, job, work);
                    assert_eq!(first_difference(&got, &want), None, "{kernel:?} {work:?} wg {wg}");
                }
                // Mask 0: the rounds run, the image is the plain grayscale on both backends.
                let hidden = Work { mask: 0, ..work };
                let job = GpuJob::new(kernel, Formula::Bt601, WorkgroupSize::DEFAULT, &src, (w, h));
                assert_eq!(gpu_work(&conv, job, hidden).0, plain, "{kernel:?} {hidden:?}");
                assert_eq!(cpu_work(kernel, Formula::Bt601, &src, hidden), plain, "{kernel:?} {hidden:?}");
            }
        }
        // The work changes the image (else the comparisons above prove nothing).
        let some = Work { rounds: 4, mask: common::full_mask(kernel), divergent: false };
        assert_ne!(common::reference_with_work(kernel, Formula::Bt601, &src, some), plain, "{kernel:?}");
    }
}

#[test]
fn heavy_work_runs_every_round_on_the_gpu() {
    // Up to the most work a pixel takes, 2^16 rounds: llvmpipe cut an invocation's loops off at
    // 65,535 rounds in all, which a 4-pixel word reached at 17,000 rounds a pixel.
    let Some(conv) = common::converter() else { return };
    for (rounds, (w, h)) in [(17_000, (16_u32, 8_u32)), (graylab::pixel::MAX_WORK_ROUNDS, (4, 2))] {
        for kernel in [Kernel::Rgb8ToL8, Kernel::Rgba8ToL8, Kernel::Rgb16ToL16] {
            let src = common::noise((w * h) as usize * kernel.in_bytes_per_pixel(), 77);
            let work = Work { rounds, mask: common::full_mask(kernel), divergent: false };
            let want = common::reference_with_work(kernel, Formula::Bt601, &src, work);
            let job = GpuJob::new(kernel, Formula::Bt601, WorkgroupSize::DEFAULT, &src, (w, h));
            let (got, _) = gpu_work(&conv, job, work);
            assert_eq!(first_difference(&got, &want), None, "{kernel:?} at {rounds} rounds");
        }
    }
}

#[test]
fn work_per_pixel_with_forced_bands_a_kept_input_and_the_display() {
    let Some(mut conv) = common::converter() else { return };
    let (w, h) = (45u32, 31u32);
    // Bands of about 8 rows, chunks of 3: the params of every dispatch carry the work.
    for kernel in Kernel::ALL {
        let row = u64::from(w) * kernel.in_bytes_per_pixel() as u64;
        conv.set_band_limit_bytes(row * 8);
        conv.set_chunk_limit_bytes(Some(row * 3));
        let src = common::noise((w * h) as usize * kernel.in_bytes_per_pixel(), 45);
        for (work, formula) in [(16, Formula::Linear), (257, Formula::Bt709)].map(|(rounds, f)| {
            (Work { rounds, mask: common::full_mask(kernel), divergent: rounds == 257 }, f)
        }) {
            let want = common::reference_with_work(kernel, formula, &src, work);
            for wg in [TILE_8X8, WorkgroupSize { x: 64, y: 1 }] {
                let job = GpuJob::new(kernel, formula, wg, &src, (w, h));
                let (got, t) = gpu_work(&conv, job, work);
                assert!(t.bands >= 3 && t.chunks > t.bands, "{kernel:?} {t:?}");
                assert_eq!(first_difference(&got, &want), None, "{kernel:?} {work:?} wg {wg} banded");
                // Kept on the GPU: the second run binds the kept bands and uploads nothing.
                for resident in [false, true] {
                    let (got, t) = gpu_work(&conv, job.keeping_input(7), work);
                    assert_eq!(t.input_resident, resident, "{kernel:?}");
                    assert_eq!(first_difference(&got, &want), None, "{kernel:?} {work:?} kept {resident}");
                }
                conv.release_kept_input().expect("released");
            }
            let job = GpuJob::new(kernel, formula, WorkgroupSize::DEFAULT, &src, (w, h)).with_work(work);
            // Stamped over forced bands: the passes' GPU time, where read, within their wall time.
            let passes = conv.time_resident_passes(&job, 1, true).expect("resident timing");
            assert_eq!(passes.len(), 1);
            assert!(passes.iter().all(|p| p.kernel_ns.is_none_or(|k| k <= p.wall_ns)), "{passes:?}");
        }
    }
    // The display path shows the worked gray (8-bit gray: the store holds what was computed).
    let ctx = std::sync::Arc::clone(conv.context());
    let src = common::noise((w * h) as usize * 3, 46);
    let work = Work { rounds: 64, mask: 0xFF, divergent: false };
    let want = common::reference_with_work(Kernel::Rgb8ToL8, Formula::Bt601, &src, work);
    conv.set_band_limit_bytes(u64::from(w) * 3 * 8);
    conv.set_chunk_limit_bytes(Some(u64::from(w) * 3 * 3));
    let tiles = conv.create_display((w, h), (w, h)).expect("display");
    let job = GpuJob::new(Kernel::Rgb8ToL8, Formula::Bt601, TILE_8X8, &src, (w, h)).with_work(work);
    conv.convert_for_display(&job, &tiles, None).expect("display run");
    let tile = tiles.detail_tile(0, 0, w, h).expect("tile");
    let shown = read_tile(&ctx, &tile.texture, w, h);
    for (i, &gray) in want.iter().enumerate() {
        assert_eq!(&shown[i * 4..i * 4 + 4], &[gray, gray, gray, 255], "pixel {i} with work");
    }
}

/// The RGBA8 pixels of a `w` x `h` texture.
fn read_tile(ctx: &graylab::gpu::GpuContext, texture: &wgpu::Texture, w: u32, h: u32) -> Vec<u8> {
    let row = (w * 4).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
    let buffer = ctx.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("tile readback"),
        size: u64::from(row * h),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
    enc.copy_texture_to_buffer(
        texture.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &buffer,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(row),
                rows_per_image: Some(h),
            },
        },
        wgpu::Extent3d { width: w, height: h, depth_or_array_layers: 1 },
    );
    ctx.queue().submit([enc.finish()]);
    buffer.map_async(wgpu::MapMode::Read, .., |r| r.expect("mapped"));
    ctx.device().poll(wgpu::PollType::wait_indefinitely()).expect("GPU finished");
    let view = buffer.get_mapped_range(..).expect("mapped range");
    view.chunks_exact(row as usize).flat_map(|r| r[..(w * 4) as usize].to_vec()).collect()
}

#[test]
fn timings_stay_honest_on_a_device_that_has_rendered() {
    if common::gpu().is_none() {
        return;
    }
    // A device of its own: what this test draws must not change the other tests' device.
    let ctx = std::sync::Arc::new(graylab::gpu::GpuContext::new().expect("an adapter"));
    let conv = GpuConverter::new(std::sync::Arc::clone(&ctx));
    let (w, h) = (1200u32, 800u32);
    let src = common::noise((w * h) as usize * 3, 12);
    let want = cpu(Kernel::Rgb8ToL8, Formula::Bt601, &src);
    let ts = ctx.timestamps();
    for rendered in [false, true] {
        if rendered {
            clear_a_render_target(&ctx);
        }
        let (got, t) = gpu_run(&conv, Kernel::Rgb8ToL8, Formula::Bt601, WorkgroupSize::DEFAULT, &src, (w, h));
        assert_eq!(first_difference(&got, &want), None);
        // Where timestamps are read late (llvmpipe after a render pass), the run says so and
        // times every step on the CPU clock; elsewhere the timestamps are used.
        assert_eq!(
            t.kernel().clock == Clock::GpuTimestamp,
            ts.passes && !t.timestamps_read_late,
            "rendered {rendered}: {t:?}"
        );
        assert_eq!(t.pipelined, ts.encoders && !t.timestamps_read_late, "rendered {rendered}: {t:?}");
        assert!(t.kernel().ns > 0 && t.suspect_timestamps == 0, "rendered {rendered}: {t:?}");
        if !rendered {
            assert!(!t.timestamps_read_late, "a device that never rendered reads its clock in place");
        }
    }
}

/// One render pass that clears a small texture (as eframe's frames bind render targets).
fn clear_a_render_target(ctx: &graylab::gpu::GpuContext) {
    let texture = ctx.device().create_texture(&wgpu::TextureDescriptor {
        label: Some("render target"),
        size: wgpu::Extent3d { width: 64, height: 64, depth_or_array_layers: 1 },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8Unorm,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
        view_formats: &[],
    });
    let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
    let mut enc = ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
    drop(enc.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some("clear"),
        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
            view: &view,
            depth_slice: None,
            resolve_target: None,
            ops: wgpu::Operations {
                load: wgpu::LoadOp::Clear(wgpu::Color::RED),
                store: wgpu::StoreOp::Store,
            },
        })],
        depth_stencil_attachment: None,
        timestamp_writes: None,
        occlusion_query_set: None,
        multiview_mask: None,
    }));
    ctx.queue().submit([enc.finish()]);
    ctx.device().poll(wgpu::PollType::wait_indefinitely()).expect("GPU finished");
}

#[test]
fn a_heavy_kernel_leaves_the_transfers_as_the_plain_run_has_them() {
    // Its own device: on the shared one, its copies waited behind other tests' kernels.
    let Some(mut conv) = common::converter_alone() else { return };
    // 192 KiB of input: one or two chunks for the plain grayscale (its steps cost far less than
    // the submission budget), while 1024 rounds per pixel take llvmpipe about 0.1 s, which the
    // budget cuts into a dozen submissions or more.
    let (w, h) = (256u32, 256u32);
    let kernel = Kernel::Rgb8ToL8;
    let src = common::noise((w * h) as usize * 3, 21);
    let heavy = Work { rounds: 1024, mask: common::full_mask(kernel), divergent: false };
    let want = cpu_work(kernel, Formula::Bt601, &src, heavy);
    for mode in [TimingMode::Auto, TimingMode::CpuClock] {
        conv.set_timing_mode(mode);
        let job = GpuJob::new(kernel, Formula::Bt601, WorkgroupSize::DEFAULT, &src, (w, h));
        // One cold run each, then five warm ones.
        let runs = |work: Work| -> Vec<GpuTimings> {
            (0..6).map(|_| gpu_work(&conv, job, work)).skip(1).map(|(_, t)| t).collect()
        };
        let plain = runs(Work::NONE);
        let (got, _) = gpu_work(&conv, job, heavy);
        assert_eq!(first_difference(&got, &want), None, "{mode:?}");
        let loaded = runs(heavy);
        // The copies are cut as the plain run's (within what the budget learns meanwhile): one
        // upload and one download per chunk; only the kernel is cut into more submissions.
        let most_plain = plain.iter().map(|t| t.chunks).max().unwrap_or(0);
        for t in &loaded {
            assert!(t.chunks <= 2 * most_plain, "{mode:?}: plain {most_plain} chunks at most: {t:?}");
            assert!(t.slices >= t.chunks, "{mode:?}: {t:?}");
        }
        // Each copy is timed alone, so the transfers take what they take at no work, within the
        // noise (a generous bound: before, every heavy run's copies took 15 to 65 times longer).
        // The fastest run of each, not the median: beside other tests on two cores, a copy can
        // wait for a core in some runs, which says nothing about what the copy was charged with.
        let fastest = |v: Vec<u64>| v.into_iter().min().unwrap_or(0);
        let upload =
            |ts: &[GpuTimings]| fastest(ts.iter().map(|t| t.upload_host().ns + t.upload_copy().ns).collect());
        let download = |ts: &[GpuTimings]| {
            fastest(ts.iter().map(|t| t.download_copy().ns + t.download_host().ns).collect())
        };
        for (what, at_0, at_k) in
            [("upload", upload(&plain), upload(&loaded)), ("download", download(&plain), download(&loaded))]
        {
            assert!(
                at_k <= 3 * at_0 + 300_000,
                "{mode:?}: {what} {at_k} ns at 1024 rounds against {at_0} ns at none: {loaded:?}"
            );
        }
    }
}
