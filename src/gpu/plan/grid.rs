//! Dispatch geometry: which output words belong to which image row, and the grid of workgroups
//! that covers a range of rows.
//!
//! One shader invocation writes one 32-bit output word (`pixels_per_word` gray pixels). A word
//! belongs to the row of its first pixel, so the words of band-relative row `r` are
//! `ceil(r * width / ppw) .. ceil((r + 1) * width / ppw)`: at most `ceil(width / ppw)` of them.
//!
//! - 1-D shapes (`y = 1`) run over the words of the rows linearly, folded into a 2-D grid of
//!   workgroups when there are more than `max_compute_workgroups_per_dimension`.
//! - 2-D shapes tile the image: x is the word column within a row, y the row, so a 16x16
//!   workgroup covers 16 rows of 16 words. Columns past a row's last word do nothing.

use std::ops::Range;

use crate::gpu::{GpuError, WorkgroupSize};
use crate::pixel::{Kernel, Work};

/// The first output word of band-relative row `row` (a word belongs to its first pixel's row).
#[must_use]
pub(crate) fn row_first_word(kernel: Kernel, width: u32, row: u32) -> u64 {
    (u64::from(row) * u64::from(width)).div_ceil(kernel.pixels_per_word() as u64)
}

/// The output words of band-relative rows `rows`.
#[must_use]
pub(crate) fn row_words(kernel: Kernel, width: u32, rows: &Range<u32>) -> Range<u64> {
    row_first_word(kernel, width, rows.start)..row_first_word(kernel, width, rows.end)
}

/// One dispatch: its workgroup counts and its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dispatch {
    /// Workgroups along x, y and z (z continues x for a 2-D shape's rows of more tiles than
    /// one dimension allows).
    pub groups: (u32, u32, u32),
    /// What the shader reads from its uniform.
    pub params: KernelParams,
}

/// The dispatch writing the words of band-relative `rows` of a `width` px image.
pub(crate) fn dispatch(
    kernel: Kernel,
    width: u32,
    workgroup: WorkgroupSize,
    rows: &Range<u32>,
    max_groups: u32,
) -> Result<Dispatch, GpuError> {
    let words = row_words(kernel, width, rows);
    let too_large = |groups: u64| GpuError::GridTooLarge { width, workgroup, groups, max_groups };
    let max = u64::from(max_groups.max(1));
    let params = KernelParams {
        word_start: u32::try_from(words.start).map_err(|_| too_large(words.start))?,
        word_end: u32::try_from(words.end).map_err(|_| too_large(words.end))?,
        width,
        row_start: rows.start,
        ..KernelParams::default()
    };
    let groups = if workgroup.y == 1 {
        let total = (words.end - words.start).div_ceil(u64::from(workgroup.x)).max(1);
        let (x, y) = folded(total, max);
        if y > max {
            return Err(too_large(y));
        }
        (x, y, 1)
    } else {
        let columns = u64::from(width).div_ceil(kernel.pixels_per_word() as u64);
        let tiles = columns.div_ceil(u64::from(workgroup.x)).max(1);
        let (x, z) = folded(tiles, max);
        let y = u64::from(rows.end - rows.start).div_ceil(u64::from(workgroup.y)).max(1);
        if z > max || y > max {
            return Err(too_large(tiles.max(y)));
        }
        (x, y, z)
    };
    Ok(Dispatch { groups: (groups.0 as u32, groups.1 as u32, groups.2 as u32), params })
}

/// `groups` workgroups along one dimension of at most `max_groups`, folded onto a second where
/// they pass it: (along the first, along the second).
#[must_use]
pub(crate) fn folded(groups: u64, max_groups: u64) -> (u64, u64) {
    let first = groups.clamp(1, max_groups.max(1));
    (first, groups.div_ceil(first))
}

/// The most rows one 2-D dispatch may cover (the grid's y limit); unbounded for 1-D shapes.
#[must_use]
pub(crate) fn max_rows_per_dispatch(workgroup: WorkgroupSize, max_groups: u32) -> u32 {
    if workgroup.y == 1 { u32::MAX } else { max_groups.max(1).saturating_mul(workgroup.y) }
}

/// `struct Params` of `shaders/grayscale.wgsl`: which output words one dispatch writes, and the
/// synthetic work each gray value gets (run-time values, so they never multiply pipelines).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct KernelParams {
    /// First output word of the dispatch (band-relative).
    pub word_start: u32,
    /// One past the last output word of the dispatch.
    pub word_end: u32,
    /// Image width in pixels (2-D shapes: words are laid out per image row).
    pub width: u32,
    /// First band-relative image row of the dispatch (2-D shapes).
    pub row_start: u32,
    /// [`Work::rounds`].
    pub work_rounds: u32,
    /// [`Work::mask`].
    pub work_mask: u32,
    /// [`Work::divergent`]: 1 or 0.
    pub work_divergent: u32,
    /// Padding to 16-byte multiples, as WGSL lays out a uniform struct.
    pub padding: u32,
}

impl KernelParams {
    /// The same dispatch, with `work` for every gray value.
    #[must_use]
    pub(crate) fn with_work(self, work: Work) -> Self {
        Self {
            work_rounds: work.rounds,
            work_mask: work.mask,
            work_divergent: u32::from(work.divergent),
            ..self
        }
    }
}

/// Bytes of one parameter slot (a [`KernelParams`], or an op's) in a parameter buffer: a
/// multiple of every device's uniform-offset alignment.
pub(crate) const PARAMS_STRIDE: u64 = 256;

#[cfg(test)]
mod tests {
    use super::*;

    /// The word index each invocation of a dispatch writes, as the shader computes it.
    fn shader_words(kernel: Kernel, width: u32, wg: WorkgroupSize, d: &Dispatch) -> Vec<u64> {
        let p = d.params;
        let ppw = kernel.pixels_per_word() as u64;
        let mut out = Vec::new();
        let across = u64::from(d.groups.0) * u64::from(wg.x);
        for gz in 0..u64::from(d.groups.2) {
            for gy in 0..u64::from(d.groups.1) * u64::from(wg.y) {
                for gx in 0..across {
                    let word = if wg.y == 1 {
                        let i = u64::from(p.word_start) + gy * across + gx;
                        (i < u64::from(p.word_end)).then_some(i)
                    } else {
                        let r = u64::from(p.row_start) + gy;
                        let first = (r * u64::from(width)).div_ceil(ppw);
                        let next = ((r + 1) * u64::from(width)).div_ceil(ppw);
                        let i = first + gz * across + gx;
                        (i < next.min(u64::from(p.word_end))).then_some(i)
                    };
                    out.extend(word);
                }
            }
        }
        out.sort_unstable();
        out
    }

    #[test]
    fn every_word_is_written_exactly_once_per_row_range() {
        let shapes =
            [WorkgroupSize { x: 64, y: 1 }, WorkgroupSize { x: 8, y: 8 }, WorkgroupSize { x: 32, y: 4 }];
        for kernel in Kernel::ALL {
            for (width, height) in [(1, 1), (3, 5), (7, 1), (1, 9), (257, 3), (5, 13)] {
                for wg in shapes {
                    // A small grid limit folds wide rows of 2-D tiles along z.
                    for (split, max_groups) in [(1, 65535), (2, 65535), (3, 65535), (height, 65535), (2, 6)] {
                        let mut written = Vec::new();
                        let mut r0 = 0;
                        while r0 < height {
                            let r1 = (r0 + split).min(height);
                            let d = dispatch(kernel, width, wg, &(r0..r1), max_groups).expect("fits");
                            written.extend(shader_words(kernel, width, wg, &d));
                            r0 = r1;
                        }
                        written.sort_unstable();
                        let all: Vec<u64> = (0..row_first_word(kernel, width, height)).collect();
                        assert_eq!(
                            written, all,
                            "{kernel:?} {width}x{height} wg {wg} split {split} max {max_groups}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_word_belongs_to_its_first_pixels_row() {
        // 5 px rows, 4 px per word: row 0 owns words 0 and 1 (pixels 0-3, 4-7), row 1 word 2.
        let k = Kernel::Rgb8ToL8;
        assert_eq!(row_words(k, 5, &(0..1)), 0..2);
        assert_eq!(row_words(k, 5, &(1..2)), 2..3);
        assert_eq!(row_words(k, 5, &(4..5)), 5..7);
        // A 1 px wide image: rows 1-3 start inside word 0 and own nothing.
        assert_eq!(row_words(k, 1, &(1..4)), 1..1);
    }

    #[test]
    fn params_match_the_shaders_uniform() {
        let module = naga::front::wgsl::parse_str(crate::shaders::GRAYSCALE_WGSL).expect("valid WGSL");
        let (_, ty) =
            module.types.iter().find(|(_, t)| t.name.as_deref() == Some("Params")).expect("struct Params");
        let naga::TypeInner::Struct { members, span } = &ty.inner else { panic!("Params is a struct") };
        let names: Vec<_> = members.iter().filter_map(|m| m.name.as_deref()).collect();
        let want = [
            "word_start",
            "word_end",
            "width",
            "row_start",
            "work_rounds",
            "work_mask",
            "work_divergent",
            "padding",
        ];
        assert_eq!(names, want);
        assert_eq!(*span as usize, std::mem::size_of::<KernelParams>());
        assert!(std::mem::size_of::<KernelParams>() as u64 <= PARAMS_STRIDE);
        let p = KernelParams::default().with_work(Work { rounds: 9, mask: 0xFF, divergent: true });
        assert_eq!((p.work_rounds, p.work_mask, p.work_divergent), (9, 0xFF, 1));
    }

    #[test]
    fn grids_respect_the_dimension_limit() {
        let wide =
            dispatch(Kernel::Rgb8ToL8, 40_000, WorkgroupSize { x: 64, y: 1 }, &(0..100), 200).expect("folds");
        assert_eq!(wide.groups, (200, 79, 1));
        assert!(u64::from(wide.groups.0) * u64::from(wide.groups.1) * 64 >= 1_000_000);
        // 2-D tiles: 10,000 words a row in 1,250 tiles, 100 along x and 13 along z.
        let tiled = dispatch(Kernel::Rgb8ToL8, 40_000, WorkgroupSize { x: 8, y: 8 }, &(0..8), 100);
        assert_eq!(tiled.expect("folds along z").groups, (100, 1, 13));
        let huge = dispatch(Kernel::Rgb8ToL8, 400_000, WorkgroupSize { x: 8, y: 8 }, &(0..8), 100);
        assert!(
            matches!(huge, Err(GpuError::GridTooLarge { groups: 12_500, max_groups: 100, .. })),
            "{huge:?}"
        );
        assert_eq!(max_rows_per_dispatch(WorkgroupSize { x: 8, y: 8 }, 100), 800);
    }
}
