//! The CPU work-per-pixel kernel at 8K, timed like its plain C reference `benches/work_ref.c`
//! (same input, same output line, same checksum); `benches/work_compare.sh` runs both.
//!
//! `bench [--k 256[,16,..]] [--threads 1,2] [--runs 7] [--variant uniform|divergent|both]
//!        [--mask 0] [--level best|baseline|avx2|avx512]`
//!
//! Each config: one run at mask 0xFF on the deterministic input for the checksum (FNV-1a 64 of
//! the output), then, on fresh input, one warm-up and `runs` timed runs at `--mask` (default 0:
//! in place and idempotent); prints the median.

use std::time::Instant;

use graylab::cpu::{SimdLevel, WORK_CHUNK_PIXELS, Work, apply_work_chunk_u8_at, simd_level};
use rayon::prelude::*;

const W: usize = 7680;
const H: usize = 4320;

fn input(buf: &mut [u8]) {
    for (i, g) in buf.iter_mut().enumerate() {
        *g = ((i as u32).wrapping_mul(2_654_435_761) >> 24) as u8;
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

fn list(s: &str) -> Vec<u32> {
    s.split(',').filter_map(|x| x.parse().ok()).collect()
}

fn main() {
    let (mut ks, mut threads, mut runs, mut variants, mut mask) =
        (vec![256], vec![1, 2], 7usize, vec![false], 0);
    let mut level = simd_level();
    let args: Vec<String> = std::env::args().skip(1).collect();
    for pair in args.chunks(2) {
        let v = pair.get(1).map_or("", String::as_str);
        match pair[0].as_str() {
            "--k" => ks = list(v),
            "--threads" => threads = list(v),
            "--runs" => runs = v.parse().unwrap_or(7).max(1),
            "--mask" => {
                mask = v
                    .strip_prefix("0x")
                    .map_or_else(|| v.parse().ok(), |h| u32::from_str_radix(h, 16).ok())
                    .unwrap_or(0);
            }
            "--variant" => {
                variants = match v {
                    "divergent" => vec![true],
                    "both" => vec![false, true],
                    _ => vec![false],
                }
            }
            "--level" => {
                level = match v {
                    "baseline" => SimdLevel::Baseline,
                    "avx2" => SimdLevel::Avx2,
                    "avx512" => SimdLevel::Avx512,
                    _ => simd_level(),
                }
            }
            // `cargo bench` passes --bench; anything else is a typo worth saying.
            "--bench" => {}
            other => eprintln!("unknown argument {other}"),
        }
    }
    let mut probe = [0u8; 1];
    if !apply_work_chunk_u8_at(&mut probe, Work::default(), level) {
        eprintln!("{level:?} is not available on this CPU");
        std::process::exit(2);
    }
    let label = format!("{level:?}").to_lowercase();
    let mut buf = vec![0u8; W * H];
    for &t in &threads {
        let Ok(pool) = rayon::ThreadPoolBuilder::new().num_threads(t as usize).build() else {
            eprintln!("cannot build a pool of {t} threads");
            std::process::exit(2);
        };
        for &k in &ks {
            for &divergent in &variants {
                let run = |buf: &mut [u8], work: Work| {
                    pool.install(|| {
                        buf.par_chunks_mut(WORK_CHUNK_PIXELS).for_each(|c| {
                            apply_work_chunk_u8_at(c, work, level);
                        });
                    });
                };
                input(&mut buf);
                run(&mut buf, Work { rounds: k, mask: 0xFF, divergent });
                let sum = fnv1a(&buf);
                input(&mut buf);
                let work = Work { rounds: k, mask, divergent };
                run(&mut buf, work);
                let mut ms: Vec<f64> = (0..runs)
                    .map(|_| {
                        let t0 = Instant::now();
                        run(&mut buf, work);
                        t0.elapsed().as_secs_f64() * 1e3
                    })
                    .collect();
                ms.sort_by(f64::total_cmp);
                let med = ms[ms.len() / 2];
                let gprs = (W * H) as f64 * f64::from(k) / (med * 1e-3) / 1e9;
                println!(
                    "rust k={k} threads={t} variant={} mask=0x{mask:x} level={label} median_ms={med:.2} min_ms={:.2} gprs={gprs:.2} checksum={sum:016x}",
                    if divergent { "divergent" } else { "uniform" },
                    ms[0],
                );
            }
        }
    }
}
