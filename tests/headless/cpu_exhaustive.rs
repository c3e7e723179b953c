//! The CPU kernels against the per-pixel definition over all 2^24 RGB colours, per formula.

use crate::common;

use graylab::cpu::{convert_reference, par_convert};
use graylab::pixel::{Formula, Kernel};

/// Every RGB colour once: 4096 x 4096 pixels.
fn all_colours_rgb() -> Vec<u8> {
    (0u32..1 << 24).flat_map(|c| [(c >> 16) as u8, (c >> 8) as u8, c as u8]).collect()
}

#[test]
fn all_colours_every_formula_rgb8() {
    let src = all_colours_rgb();
    for formula in Formula::COMPUTED {
        let mut fast = vec![0u8; 1 << 24];
        par_convert(Kernel::Rgb8ToL8, formula, &src, &mut fast, 2).expect("sizes match");
        for (c, &got) in fast.iter().enumerate() {
            let want = formula.luma8((c >> 16) as u8, (c >> 8) as u8, c as u8);
            assert_eq!(got, want, "{formula}: colour {c:06x}");
        }
        let mut slow = vec![0u8; 1 << 24];
        convert_reference(Kernel::Rgb8ToL8, formula, &src, &mut slow).expect("sizes match");
        assert!(fast == slow, "{formula}: reference disagrees");
    }
}

#[test]
fn all_colours_every_formula_rgba8_with_and_without_alpha() {
    let src: Vec<u8> =
        (0u32..1 << 24).flat_map(|c| [(c >> 16) as u8, (c >> 8) as u8, c as u8, (c * 7) as u8]).collect();
    for formula in Formula::COMPUTED {
        let mut gray = vec![0u8; 1 << 24];
        par_convert(Kernel::Rgba8ToL8, formula, &src, &mut gray, 2).expect("sizes match");
        let mut la = vec![0u8; 2 << 24];
        par_convert(Kernel::Rgba8ToLa8, formula, &src, &mut la, 1).expect("sizes match");
        for c in 0..1usize << 24 {
            let want = formula.luma8((c >> 16) as u8, (c >> 8) as u8, c as u8);
            assert_eq!(gray[c], want, "{formula}: colour {c:06x}");
            assert_eq!((la[2 * c], la[2 * c + 1]), (want, (c * 7) as u8), "{formula}: colour {c:06x}");
        }
    }
}

#[test]
fn sixteen_bit_kernels_match_the_definition() {
    let src = common::noise(6 << 20, 16);
    for formula in Formula::COMPUTED {
        let mut out = vec![0u8; 2 << 20];
        par_convert(Kernel::Rgb16ToL16, formula, &src, &mut out, 2).expect("sizes match");
        for (p, o) in src.chunks_exact(6).zip(out.chunks_exact(2)) {
            let s = |i: usize| u16::from_ne_bytes([p[2 * i], p[2 * i + 1]]);
            assert_eq!(u16::from_ne_bytes([o[0], o[1]]), formula.luma16(s(0), s(1), s(2)), "{formula}");
        }
    }
    // 16-bit pure red / white, through the kernel.
    let red: Vec<u8> = [65535u16, 0, 0, 65535, 65535, 65535].iter().flat_map(|v| v.to_ne_bytes()).collect();
    let mut out = [0u8; 4];
    par_convert(Kernel::Rgb16ToL16, Formula::Bt601, &red, &mut out, 1).expect("sizes match");
    assert_eq!(u16::from_ne_bytes([out[0], out[1]]), 19_596); // (65535 * 9798 + 16384) >> 15
    assert_eq!(u16::from_ne_bytes([out[2], out[3]]), 65535);
}
