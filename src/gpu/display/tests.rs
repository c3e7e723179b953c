//! The display pipeline checked against the pixels: previews (box filter, premultiplied alpha)
//! and full-resolution tiles across band edges, read back from the GPU.

use image::{DynamicImage, GrayAlphaImage, GrayImage};

use std::sync::Arc;

use super::{GpuContext, GpuTiles};
use crate::gpu::GpuConverter;
use crate::gpu::device::wait::wait_for;

/// A converter on the best adapter, or `None` (skipped) without one, unless the CI asks for a GPU.
fn gpu() -> Option<GpuConverter> {
    GpuContext::for_tests().map(|g| GpuConverter::new(Arc::new(g)))
}

/// Reads mip level 0 of a display texture back to the host, `width * height * 4` bytes.
fn read(gpu: &GpuContext, texture: &wgpu::Texture) -> Vec<u8> {
    let device = gpu.device();
    let (w, h) = (texture.width(), texture.height());
    let row = (4 * w).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
    let usage = wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ;
    let buffer = gpu.buffer("test readback", u64::from(row * h), usage);
    let mut encoder = gpu.encoder("test readback");
    encoder.copy_texture_to_buffer(
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
    wait_for(device, Some(&gpu.queue().submit([encoder.finish()]))).expect("copy");
    buffer.slice(..).map_async(wgpu::MapMode::Read, |r| r.expect("map"));
    wait_for(device, Some(&gpu.queue().submit([]))).expect("map");
    let view = buffer.slice(..).get_mapped_range().expect("mapped");
    view.chunks(row as usize).flat_map(|r| r[..4 * w as usize].to_vec()).collect()
}

/// The preview the shader should draw: boxes of whole source pixels, premultiplied.
fn expected_preview(gray: &[u8], alpha: Option<&[u8]>, size: (u32, u32), preview: (u32, u32)) -> Vec<u8> {
    let ((w, h), (pw, ph)) = (size, preview);
    let mut out = Vec::new();
    for py in 0..ph {
        for px in 0..pw {
            let (xa, xb) = (px * w / pw, ((px + 1) * w / pw).max(px * w / pw + 1));
            let (ya, yb) = (py * h / ph, ((py + 1) * h / ph).max(py * h / ph + 1));
            let (mut gray_sum, mut alpha_sum, mut count) = (0.0, 0.0, 0.0);
            for y in ya..yb {
                for x in xa..xb {
                    let i = (y * w + x) as usize;
                    let av = alpha.map_or(1.0, |al| f64::from(al[i]) / 255.0);
                    gray_sum += f64::from(gray[i]) / 255.0 * av;
                    alpha_sum += av;
                    count += 1.0;
                }
            }
            let g = (gray_sum / count * 255.0).round() as u8;
            out.extend([g, g, g, (alpha_sum / count * 255.0).round() as u8]);
        }
    }
    out
}

fn close(got: &[u8], want: &[u8]) -> bool {
    got.len() == want.len() && got.iter().zip(want).all(|(a, b)| a.abs_diff(*b) <= 1)
}

#[test]
fn previews_and_tiles_match_the_pixels_across_bands() {
    let Some(mut gpu) = gpu() else { return };
    let (w, h) = (48u32, 36u32);
    let gray: Vec<u8> = (0..w * h).map(|i| (i * 37 % 256) as u8).collect();
    let alpha: Vec<u8> = (0..w * h).map(|i| (i * 11 % 256) as u8).collect();
    let l8 = DynamicImage::ImageLuma8(GrayImage::from_raw(w, h, gray.clone()).expect("size"));
    let la8 = DynamicImage::ImageLumaA8(
        GrayAlphaImage::from_raw(w, h, gray.iter().zip(&alpha).flat_map(|(g, a)| [*g, *a]).collect())
            .expect("size"),
    );
    for (image, a, bytes_per_pixel) in [(l8, None, 1), (la8, Some(alpha.as_slice()), 2)] {
        // Bands of 9 rows (tiles cross their edges) and preview boxes of 4 x 3 pixels (none
        // straddles an edge, so the preview is exact up to rounding).
        gpu.set_band_limit_bytes(u64::from(w) * bytes_per_pixel * 10);
        let tiles: GpuTiles = gpu.create_display((w, h), (12, 12)).expect("display");
        tiles.write_host(&image);
        assert!(tiles.stored_bands() > 1, "forced into several bands");
        tiles.draw_preview(None).expect("preview");
        let ctx = gpu.context();
        let preview = read(ctx, &tiles.preview.texture);
        let want = expected_preview(&gray, a, (w, h), (12, 12));
        assert!(close(&preview, &want), "{:?}\n{preview:?}\n{want:?}", image.color());
        // A full-resolution tile across band edges is exact.
        let tile = tiles.detail_tile(5, 3, 20, 17).expect("tile");
        let got = read(ctx, &tile.texture);
        let mut want = Vec::new();
        for y in 3..20 {
            for x in 5..25 {
                let i = (y * w + x) as usize;
                let av = a.map_or(255u32, |al| u32::from(al[i]));
                let g = ((u32::from(gray[i]) * av + 127) / 255) as u8;
                want.extend([g, g, g, av as u8]);
            }
        }
        assert!(close(&got, &want), "tile of {:?}", image.color());
    }
}

#[test]
fn a_preview_box_starts_where_integer_arithmetic_puts_it() {
    let Some(gpu) = gpu() else { return };
    // A checkerboard of 26 x 26 shown at 22 x 22: most boxes are one pixel, some two, and a box
    // off by one pixel averages other squares. In f32, 11 x (26 / 22) rounds down to 12 where
    // the box starts at 13; a GPU's division (2.5 ulp in Vulkan) is off more often still.
    let (w, h, side) = (26u32, 26u32, 22u32);
    let gray: Vec<u8> = (0..w * h).map(|i| if (i % w + i / w) % 2 == 1 { 255 } else { 0 }).collect();
    let image = DynamicImage::ImageLuma8(GrayImage::from_raw(w, h, gray.clone()).expect("size"));
    let tiles = gpu.create_display((w, h), (side, side)).expect("display");
    tiles.write_host(&image);
    tiles.draw_preview(None).expect("preview");
    let preview = read(gpu.context(), &tiles.preview.texture);
    let want = expected_preview(&gray, None, (w, h), (side, side));
    let wrong: Vec<usize> =
        (0..want.len() / 4).filter(|i| !close(&preview[i * 4..i * 4 + 4], &want[i * 4..i * 4 + 4])).collect();
    assert!(wrong.is_empty(), "preview pixels {wrong:?} of {side} x {side} are not their boxes' average");
}
