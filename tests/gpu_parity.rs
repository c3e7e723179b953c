//! GPU output against the CPU, byte for byte: every kernel, formula and valid workgroup size,
//! odd image sizes, forced band splits, a real image above lavapipe's 128 MiB binding, and both
//! timing modes. Runs on any Vulkan/Metal/DX12 adapter, lavapipe included; see tests/common.

mod common;

use graylab::cpu::par_convert;
use graylab::gpu::{GpuError, TimingMode, WorkgroupSize};
use graylab::pixel::{Formula, Kernel};

fn cpu(kernel: Kernel, formula: Formula, src: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; src.len() / kernel.in_bytes_per_pixel() * kernel.out_bytes_per_pixel()];
    par_convert(kernel, formula, src, &mut out, 2).expect("sizes match");
    out
}

fn gpu_run(
    ctx: &graylab::gpu::GpuContext,
    kernel: Kernel,
    formula: Formula,
    wg: WorkgroupSize,
    src: &[u8],
    (w, h): (u32, u32),
) -> (Vec<u8>, graylab::gpu::GpuTimings) {
    let mut out = vec![0x5Au8; (w * h) as usize * kernel.out_bytes_per_pixel()];
    let t = ctx.convert(kernel, formula, wg, src, w, h, &mut out).expect("GPU conversion");
    (out, t)
}

fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    a.iter().zip(b).position(|(x, y)| x != y)
}

#[test]
fn all_colours_every_formula_match_the_cpu() {
    let Some(ctx) = common::gpu() else { return };
    let src: Vec<u8> = (0u32..1 << 24).flat_map(|c| [(c >> 16) as u8, (c >> 8) as u8, c as u8]).collect();
    for formula in Formula::ALL {
        let want = cpu(Kernel::Rgb8ToL8, formula, &src);
        let (got, t) = gpu_run(&ctx, Kernel::Rgb8ToL8, formula, WorkgroupSize::DEFAULT, &src, (4096, 4096));
        assert_eq!(first_difference(&got, &want), None, "{formula}: first differing colour");
        assert!(t.kernel_ns > 0, "kernel time measured");
    }
}

#[test]
fn every_kernel_formula_and_workgroup_on_odd_sizes() {
    let Some(ctx) = common::gpu() else { return };
    let sizes = [(1, 1), (3, 5), (7, 1), (1, 9), (33, 17), (257, 3)];
    for kernel in Kernel::ALL {
        for (i, &(w, h)) in sizes.iter().enumerate() {
            let src = common::noise((w * h) as usize * kernel.in_bytes_per_pixel(), i as u64 + 1);
            for formula in Formula::ALL {
                let want = cpu(kernel, formula, &src);
                for wg in ctx.valid_workgroups() {
                    let (got, _) = gpu_run(&ctx, kernel, formula, wg, &src, (w, h));
                    assert_eq!(first_difference(&got, &want), None, "{kernel:?} {formula} wg {wg} {w}x{h}");
                }
            }
        }
    }
}

#[test]
fn large_odd_image_every_workgroup() {
    let Some(ctx) = common::gpu() else { return };
    let (w, h) = (4097, 2161);
    let src = common::noise((w * h) as usize * 3, 4097);
    let want = cpu(Kernel::Rgb8ToL8, Formula::Bt601, &src);
    let valid = ctx.valid_workgroups();
    assert!(valid.len() >= 6, "expected 1-D and 2-D sizes, got {valid:?}");
    for wg in valid {
        let (got, _) = gpu_run(&ctx, Kernel::Rgb8ToL8, Formula::Bt601, wg, &src, (w, h));
        assert_eq!(first_difference(&got, &want), None, "wg {wg}");
    }
}

#[test]
fn forced_bands_are_byte_identical() {
    let Some(mut ctx) = common::fresh_gpu() else {
        return;
    };
    let (w, h) = (97, 61);
    for limit in [16u64, 100, 1000, 4096, 12_000] {
        ctx.set_band_limit_bytes(limit);
        for kernel in Kernel::ALL {
            let src = common::noise((w * h) as usize * kernel.in_bytes_per_pixel(), limit);
            for formula in [Formula::Bt601, Formula::Linear] {
                let want = cpu(kernel, formula, &src);
                let Ok(plan) = graylab::gpu::BandPlan::new(kernel, w, h, ctx.band_limit_bytes()) else {
                    continue; // One row does not fit this tiny limit.
                };
                let (got, t) = gpu_run(&ctx, kernel, formula, WorkgroupSize { x: 8, y: 8 }, &src, (w, h));
                assert_eq!(t.bands, plan.bands);
                assert!(t.bands > 1, "limit {limit} should force bands for {kernel:?}");
                assert_eq!(first_difference(&got, &want), None, "{kernel:?} {formula} limit {limit}");
            }
        }
    }
}

#[test]
fn a_row_wider_than_the_band_limit_is_refused() {
    let Some(mut ctx) = common::fresh_gpu() else {
        return;
    };
    ctx.set_band_limit_bytes(16);
    let src = vec![0u8; 100 * 3];
    let mut out = vec![0u8; 100];
    let err = ctx.convert(Kernel::Rgb8ToL8, Formula::Bt601, WorkgroupSize::DEFAULT, &src, 100, 1, &mut out);
    assert!(matches!(err, Err(GpuError::RowTooLarge { row_bytes: 300, limit_bytes: 16 })), "{err:?}");
}

#[test]
fn image_above_the_binding_limit_is_banded() {
    let Some(ctx) = common::gpu() else { return };
    // 45.1 MP RGB = 135 MB: above lavapipe's (and many GPUs') 128 MiB storage binding.
    let (w, h) = (8200u32, 5500u32);
    let src = common::noise((w * h) as usize * 3, 45);
    let want = cpu(Kernel::Rgb8ToL8, Formula::Bt709, &src);
    let (got, t) = gpu_run(&ctx, Kernel::Rgb8ToL8, Formula::Bt709, WorkgroupSize::DEFAULT, &src, (w, h));
    assert_eq!(first_difference(&got, &want), None);
    let expected_bands = (u64::from(w) * u64::from(h) * 3).div_ceil(ctx.band_limit_bytes());
    assert!(u64::from(t.bands) >= expected_bands, "{} bands for limit {}", t.bands, ctx.band_limit_bytes());
    if ctx.band_limit_bytes() <= 128 << 20 {
        assert!(t.bands >= 2);
    }
}

#[test]
fn timestamps_and_cpu_clock_modes_agree_on_output() {
    let Some(mut ctx) = common::fresh_gpu() else {
        return;
    };
    let (w, h) = (640, 480);
    let src = common::noise((w * h) as usize * 4, 640);
    let want = cpu(Kernel::Rgba8ToLa8, Formula::Linear, &src);
    let ts = ctx.timestamps();
    let (got, t) = gpu_run(&ctx, Kernel::Rgba8ToLa8, Formula::Linear, WorkgroupSize::DEFAULT, &src, (w, h));
    assert_eq!(first_difference(&got, &want), None);
    assert_eq!(t.kernel_on_gpu_clock, ts.passes);
    assert_eq!(t.copies_on_gpu_clock, ts.encoders);
    assert!(t.upload_host_ns > 0 && t.download_host_ns > 0 && t.wall_ns >= t.setup_ns);
    ctx.set_timing_mode(TimingMode::CpuClock);
    let (got, t) = gpu_run(&ctx, Kernel::Rgba8ToLa8, Formula::Linear, WorkgroupSize::DEFAULT, &src, (w, h));
    assert_eq!(first_difference(&got, &want), None);
    assert!(!t.kernel_on_gpu_clock && !t.copies_on_gpu_clock);
    assert!(t.kernel_ns > 0 && t.upload_copy_ns > 0 && t.download_copy_ns > 0);
}

#[test]
fn oversized_workgroups_are_refused_before_pipeline_creation() {
    let Some(ctx) = common::gpu() else { return };
    let too_big = WorkgroupSize { x: ctx.limits().max_compute_invocations_per_workgroup * 2, y: 1 };
    let mut out = vec![0u8; 4];
    let err = ctx.convert(Kernel::Rgb8ToL8, Formula::Bt601, too_big, &[0; 12], 4, 1, &mut out);
    assert!(matches!(err, Err(GpuError::WorkgroupUnsupported { .. })), "{err:?}");
    let tall = WorkgroupSize { x: 1, y: ctx.limits().max_compute_workgroup_size_y + 1 };
    assert!(ctx.check_workgroup(tall).is_err());
}
