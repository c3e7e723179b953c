//! JPEG decoders side by side, in memory, rounds interleaved: zune-jpeg (what `image` uses) to RGB
//! and to luma, jpeg-decoder to RGB, and libjpeg-turbo's decoder (the `mozjpeg` crate) to RGB and
//! to gray (what graylab's stored luma uses). Medians and minima per file and decoder.
//!
//! `cargo bench --bench jpeg_decoders -- [--rounds N] [FILE.jpg ...]` (default: the bundled
//! photo, 7 rounds). `python3 scripts/file_to_file.py --corpus DIR` writes 8K files in each
//! layout to try. See BENCHMARKS.md.

use std::hint::black_box;
use std::time::Instant;

use zune_core::bytestream::ZCursor;
use zune_core::colorspace::ColorSpace;
use zune_core::options::DecoderOptions;

type Decode = fn(&[u8]) -> Result<usize, String>;

fn zune(bytes: &[u8], out: ColorSpace) -> Result<usize, String> {
    let options = DecoderOptions::default()
        .set_strict_mode(false)
        .set_max_width(usize::MAX)
        .set_max_height(usize::MAX)
        .jpeg_set_out_colorspace(out);
    let mut decoder = zune_jpeg::JpegDecoder::new_with_options(ZCursor::new(bytes), options);
    decoder.decode().map(|v| v.len()).map_err(|e| e.to_string())
}

fn libjpeg(bytes: &[u8], gray: bool) -> Result<usize, String> {
    std::panic::catch_unwind(|| -> std::io::Result<usize> {
        let decompress = mozjpeg::Decompress::new_mem(bytes)?;
        let mut started = if gray { decompress.grayscale()? } else { decompress.rgb()? };
        let pixels: Vec<u8> = started.read_scanlines()?;
        started.finish()?;
        Ok(pixels.len())
    })
    .map_err(|_| "libjpeg failed".to_owned())?
    .map_err(|e| e.to_string())
}

const DECODERS: [(&str, Decode); 5] = [
    ("zune-jpeg RGB", |b| zune(b, ColorSpace::RGB)),
    ("zune-jpeg luma", |b| zune(b, ColorSpace::Luma)),
    ("jpeg-decoder RGB", |b| {
        jpeg_decoder::Decoder::new(b).decode().map(|v| v.len()).map_err(|e| e.to_string())
    }),
    ("libjpeg RGB", |b| libjpeg(b, false)),
    ("libjpeg gray", |b| libjpeg(b, true)),
];

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let mut rounds = 7;
    if let Some(at) = args.iter().position(|a| a == "--rounds") {
        rounds = args.get(at + 1).and_then(|n| n.parse().ok()).expect("--rounds N");
        args.drain(at..at + 2);
    }
    if args.is_empty() {
        args.push(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/dandelions-5312x2988.jpg").to_owned());
    }
    println!("| file | {} |", DECODERS.map(|(name, _)| name).join(" | "));
    println!("|---|{}", "---|".repeat(DECODERS.len()));
    for file in &args {
        let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("{file}: {e}"));
        let mut times = vec![Vec::new(); DECODERS.len()];
        for _ in 0..rounds {
            for ((_, decode), times) in DECODERS.iter().zip(&mut times) {
                let started = Instant::now();
                let decoded = decode(black_box(&bytes));
                times.push(started.elapsed().as_secs_f64() * 1e3);
                if let Err(e) = decoded {
                    panic!("{file}: {e}");
                }
            }
        }
        let cells: Vec<String> = times
            .iter_mut()
            .map(|t| {
                t.sort_by(f64::total_cmp);
                format!("{:.1} ms (min {:.1})", t[t.len() / 2], t[0])
            })
            .collect();
        println!("| {file} | {} |", cells.join(" | "));
    }
}
