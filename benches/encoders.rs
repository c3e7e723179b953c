//! The export encoders on an 8K photo-like gray image: graylab's parallel PNG and JPEG writers
//! at 1 and 2 threads beside the `image` crate's encoders (what graylab used before).
//!
//! `cargo bench --bench encoders` (add `-- --quick` for a fast look). See BENCHMARKS.md.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use graylab::io::{ExportFormat, encode_to_vec};
use image::{DynamicImage, GrayImage, ImageEncoder as _, imageops::FilterType};

const W: u32 = 7680;
const H: u32 = 4320;

/// The bundled photo scaled to 8K with a little grain, in gray: it compresses like a photo.
fn photo_8k() -> GrayImage {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/dandelions-5312x2988.jpg");
    let photo = image::open(path).expect("the bundled sample photo").to_luma8();
    let mut big = image::imageops::resize(&photo, W, H, FilterType::CatmullRom);
    let mut x: u32 = 8;
    for p in big.pixels_mut() {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[0] = p[0].saturating_add((x % 7) as u8).saturating_sub(3);
    }
    big
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool")
}

fn encoders(c: &mut Criterion) {
    let gray = photo_8k();
    let image = DynamicImage::ImageLuma8(gray.clone());
    let mut group = c.benchmark_group("encode_8k_gray");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(u64::from(W * H)));
    for threads in [1, 2] {
        let pool = pool(threads);
        group.bench_with_input(BenchmarkId::new("graylab_png", threads), &threads, |b, _| {
            b.iter(|| pool.install(|| encode_to_vec(black_box(&image), ExportFormat::Png, 90)));
        });
        group.bench_with_input(BenchmarkId::new("graylab_jpeg_q90", threads), &threads, |b, _| {
            b.iter(|| pool.install(|| encode_to_vec(black_box(&image), ExportFormat::Jpeg, 90)));
        });
    }
    group.bench_function("image_png_fast_adaptive", |b| {
        b.iter(|| {
            let mut out = Vec::new();
            image::codecs::png::PngEncoder::new_with_quality(
                &mut out,
                image::codecs::png::CompressionType::Fast,
                image::codecs::png::FilterType::Adaptive,
            )
            .write_image(black_box(gray.as_raw()), W, H, image::ExtendedColorType::L8)
            .map(|()| out)
        });
    });
    group.bench_function("image_jpeg_q90", |b| {
        b.iter(|| {
            let mut out = Vec::new();
            image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90)
                .write_image(black_box(gray.as_raw()), W, H, image::ExtendedColorType::L8)
                .map(|()| out)
        });
    });
    group.finish();
}

criterion_group!(benches, encoders);
criterion_main!(benches);
