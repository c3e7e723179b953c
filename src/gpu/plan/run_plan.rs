//! One run cut into pieces: row bands that fit one storage binding ([`BandPlan`]), each cut into
//! chunks of whole rows (one upload copy and one download copy each, numerous enough to pipeline
//! host copies with GPU work), each chunk cut into slices (one kernel dispatch and one submission
//! each, small enough for the submission budget).
//!
//! Chunks are sized by what the copies cost, slices by what the kernel costs: a heavy kernel
//! cuts its chunks into more slices, not its copies into smaller pieces, so the copies of a run
//! with work per pixel are those of the plain run (each copy has a fixed cost, which a thousand
//! one-row copies would pay a thousand times).

use std::ops::Range;

use crate::gpu::plan::bands::BandPlan;
use crate::gpu::plan::grid::{max_rows_per_dispatch, row_first_word, row_words};
use crate::gpu::{GpuError, WorkgroupSize};
use crate::pixel::Kernel;

/// Chunks a run is cut into at least (when large enough), so that host copies overlap GPU work.
const PIPELINE_DEPTH: u64 = 4;

/// Below this many input bytes a run is not cut for pipelining (only for the budget).
const MIN_PIPELINE_CHUNK_BYTES: u64 = 2 << 20;

/// Staging slots of the pipelined driver (the stepwise one stages through one).
pub(crate) const RING_SLOTS: usize = 3;

/// Slices one chunk is cut into at most (each has its own pair of timestamps): a chunk of more
/// rows is made smaller instead.
pub(crate) const MAX_SLICES_PER_CHUNK: u32 = 512;

/// One chunk: whole rows of one band, one submission.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Chunk {
    /// Index of the chunk in the run.
    pub index: usize,
    /// Index of the chunk's band.
    pub band: u32,
    /// First image row of the chunk's band.
    pub band_row0: u32,
    /// Band-relative rows.
    pub rows: Range<u32>,
    /// Band-relative output words (a word belongs to its first pixel's row).
    pub words: Range<u64>,
    /// The input bytes this chunk stages, in the job's `src`.
    pub src: Range<usize>,
    /// The output bytes this chunk produces, in the job's `dst`.
    pub dst: Range<usize>,
    /// The chunk's slices, indices into [`RunPlan::slices`].
    pub slices: Range<usize>,
}

/// One slice of a chunk: whole rows, one kernel dispatch, one submission.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Slice {
    /// Index of the slice in the run (its dispatch and its kernel parameters).
    pub index: usize,
    /// Index of the slice's band.
    pub band: u32,
    /// Band-relative rows.
    pub rows: Range<u32>,
}

impl Chunk {
    /// Padded input bytes (whole words) and their offset in the band's input buffer.
    pub(crate) fn in_bytes(&self, kernel: Kernel) -> (u64, u64) {
        let per_word = kernel.in_words_per_out_word() as u64 * 4;
        (self.words.start * per_word, (self.words.end - self.words.start) * per_word)
    }

    /// Output bytes (whole words) and their offset in the band's output buffer.
    pub(crate) fn out_bytes(&self) -> (u64, u64) {
        (self.words.start * 4, (self.words.end - self.words.start) * 4)
    }
}

/// The pieces of one run.
#[derive(Clone, Debug)]
pub(crate) struct RunPlan {
    /// Image width and height.
    pub size: (u32, u32),
    /// The bands.
    pub bands: BandPlan,
    /// The chunks, in order.
    pub chunks: Vec<Chunk>,
    /// Every chunk's slices, in order.
    pub slices: Vec<Slice>,
    /// Rows per chunk (the last of a band may have fewer or a few more).
    pub rows_per_chunk: u32,
}

/// How a run may be cut.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// Input bytes of one band (one storage binding) at most.
    pub band_bytes: u64,
    /// Input bytes of one chunk (one upload copy, one download copy) at most; at least one row
    /// is taken.
    pub chunk_bytes: u64,
    /// Input bytes of one slice (one kernel dispatch, one submission) at most; at least one row
    /// is taken.
    pub slice_bytes: u64,
    /// Cut large runs into at least a few chunks, so host copies can overlap GPU work.
    pub pipeline: bool,
    /// `max_compute_workgroups_per_dimension`.
    pub max_groups: u32,
    /// Staging slots the chunks are staged through: chunks are cut so that the slots together
    /// hold at most one band (a chunk takes at least one row), the host memory a run is
    /// planned with ([`crate::gpu::plan::host_memory::GpuHostMemory`]).
    pub staging_slots: u32,
}

impl Limits {
    /// Pipelined, on a grid of up to 65,535 workgroups a dimension (the tests' device).
    #[cfg(test)]
    pub(crate) fn pipelined(band_bytes: u64, chunk_bytes: u64, slice_bytes: u64) -> Self {
        Self { band_bytes, chunk_bytes, slice_bytes, pipeline: true, max_groups: 65535, staging_slots: 1 }
    }
}

impl RunPlan {
    /// Cuts a `width` x `height` image into bands, chunks and slices within `limits`.
    pub(crate) fn new(
        kernel: Kernel,
        (width, height): (u32, u32),
        workgroup: WorkgroupSize,
        limits: Limits,
    ) -> Result<Self, GpuError> {
        let Limits { band_bytes, chunk_bytes, slice_bytes, pipeline, max_groups, staging_slots } = limits;
        let bands = BandPlan::new(kernel, width, height, band_bytes)?;
        let row_bytes = u64::from(width) * kernel.in_bytes_per_pixel() as u64;
        let total = row_bytes * u64::from(height);
        let pipelined =
            if pipeline { (total / PIPELINE_DEPTH).max(MIN_PIPELINE_CHUNK_BYTES) } else { u64::MAX };
        let rows_of =
            |bytes: u64| (bytes / row_bytes.max(1)).clamp(1, u64::from(bands.rows_per_band.max(1))) as u32;
        let dispatch_rows = max_rows_per_dispatch(workgroup, max_groups);
        let staged = band_bytes / u64::from(staging_slots.max(1));
        let rows_per_chunk = rows_of(chunk_bytes.min(pipelined).min(staged)).min(dispatch_rows);
        let rows_per_slice = rows_of(slice_bytes).min(rows_per_chunk);
        let rows_per_chunk = rows_per_chunk.min(rows_per_slice.saturating_mul(MAX_SLICES_PER_CHUNK));
        let in_row = row_bytes as usize;
        let out_row = width as usize * kernel.out_bytes_per_pixel();
        let per_word_in = kernel.in_words_per_out_word() * 4;
        let mut chunks: Vec<Chunk> = Vec::new();
        let mut slices: Vec<Slice> = Vec::new();
        for band in 0..bands.bands {
            let band_row0 = band * bands.rows_per_band;
            let rows_in_band = bands.rows_per_band.min(height - band_row0);
            let (band_src, band_dst) = (band_row0 as usize * in_row, band_row0 as usize * out_row);
            let (src_end, dst_end) =
                (band_src + rows_in_band as usize * in_row, band_dst + rows_in_band as usize * out_row);
            for rows in cut(kernel, width, 0..rows_in_band, rows_per_chunk) {
                let words = row_words(kernel, width, &rows);
                let src = band_src + words.start as usize * per_word_in;
                let dst = band_dst + words.start as usize * 4;
                let first_slice = slices.len();
                for slice_rows in cut(kernel, width, rows.clone(), rows_per_slice) {
                    slices.push(Slice { index: slices.len(), band, rows: slice_rows });
                }
                chunks.push(Chunk {
                    index: chunks.len(),
                    band,
                    band_row0,
                    rows,
                    words: words.clone(),
                    src: src.min(src_end)..(band_src + words.end as usize * per_word_in).min(src_end),
                    dst: dst.min(dst_end)..(band_dst + words.end as usize * 4).min(dst_end),
                    slices: first_slice..slices.len(),
                });
            }
            debug_assert_eq!(
                chunks.last().map(|c| c.words.end),
                Some(row_first_word(kernel, width, rows_in_band)),
                "the band's last chunk ends at its last word"
            );
        }
        Ok(Self { size: (width, height), bands, chunks, slices, rows_per_chunk })
    }

    /// The chunk's slices.
    pub(crate) fn slices_of(&self, chunk: &Chunk) -> &[Slice] {
        self.slices.get(chunk.slices.clone()).unwrap_or_default()
    }

    /// The buffers this plan needs, with `slots` staging slots.
    pub(crate) fn ring_needs(&self, kernel: Kernel, slots: usize, timestamps: bool) -> RingNeeds {
        let chunk_in = self.chunks.iter().map(|c| c.in_bytes(kernel).1).max().unwrap_or(0);
        let chunk_out = self.chunks.iter().map(|c| c.out_bytes().1).max().unwrap_or(0);
        RingNeeds {
            band_in_bytes: self.bands.max_in_bytes.max(4),
            band_out_bytes: self.bands.max_out_bytes.max(4),
            chunk_in_bytes: chunk_in.max(4),
            chunk_out_bytes: chunk_out.max(4),
            slots: slots.min(self.chunks.len()).max(1),
            slices_per_chunk: self.chunks.iter().map(|c| c.slices.len()).max().unwrap_or(1).max(1),
            timestamps,
        }
    }
}

/// What a run needs allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RingNeeds {
    /// Input buffer bytes (largest band, padded to whole words).
    pub band_in_bytes: u64,
    /// Output buffer bytes (largest band).
    pub band_out_bytes: u64,
    /// Upload staging bytes per slot (largest chunk).
    pub chunk_in_bytes: u64,
    /// Download staging bytes per slot (largest chunk).
    pub chunk_out_bytes: u64,
    /// Staging slots.
    pub slots: usize,
    /// Slices of the largest chunk (each slot's timestamps have a pair for each).
    pub slices_per_chunk: usize,
    /// Whether each slot needs timestamp queries.
    pub timestamps: bool,
}

/// `rows` cut into pieces of `per` rows, each owning at least one output word: rows that start
/// inside the previous row's last word own no word, and go with the piece before them (or
/// extend the piece they start).
pub(crate) fn cut(kernel: Kernel, width: u32, rows: Range<u32>, per: u32) -> Vec<Range<u32>> {
    let mut pieces: Vec<Range<u32>> = Vec::new();
    let mut r0 = rows.start;
    while r0 < rows.end {
        let mut r1 = r0.saturating_add(per.max(1)).min(rows.end);
        while r1 < rows.end && row_words(kernel, width, &(r0..r1)).is_empty() {
            r1 += 1;
        }
        match pieces.last_mut() {
            Some(prev) if row_words(kernel, width, &(r0..r1)).is_empty() => prev.end = r1,
            _ => pieces.push(r0..r1),
        }
        r0 = r1;
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covers_everything(kernel: Kernel, (w, h): (u32, u32), band: u64, chunk: u64, wg: WorkgroupSize) {
        let plan = RunPlan::new(kernel, (w, h), wg, Limits::pipelined(band, chunk, chunk / 3)).expect("plan");
        let (in_bpp, out_bpp) = (kernel.in_bytes_per_pixel(), kernel.out_bytes_per_pixel());
        let mut src_end = 0;
        let mut dst_end = 0;
        for c in &plan.chunks {
            assert!(!c.words.is_empty(), "{kernel:?} {w}x{h}: empty chunk {c:?}");
            assert_eq!(c.src.start, src_end, "{kernel:?} {w}x{h} band {band} chunk {chunk}: {c:?}");
            assert_eq!(c.dst.start, dst_end);
            let (_, in_bytes) = c.in_bytes(kernel);
            let staged = c.src.len() as u64;
            assert!(staged <= in_bytes && in_bytes - staged < 16, "{c:?}");
            src_end = c.src.end;
            dst_end = c.dst.end;
            // The slices cover the chunk's rows and words once, each owning a word.
            let slices = plan.slices_of(c);
            assert_eq!(slices.first().map(|s| s.rows.start), Some(c.rows.start), "{c:?}");
            assert_eq!(slices.last().map(|s| s.rows.end), Some(c.rows.end), "{c:?}");
            for pair in slices.windows(2) {
                assert_eq!(pair[0].rows.end, pair[1].rows.start);
            }
            for s in slices {
                assert_eq!(s.band, c.band);
                assert!(!crate::gpu::plan::grid::row_words(kernel, w, &s.rows).is_empty(), "{s:?} in {c:?}");
            }
        }
        assert_eq!(
            plan.slices.iter().map(|s| s.index).collect::<Vec<_>>(),
            (0..plan.slices.len()).collect::<Vec<_>>()
        );
        assert_eq!((src_end, dst_end), ((w * h) as usize * in_bpp, (w * h) as usize * out_bpp));
        let rows: u32 = plan.chunks.iter().map(|c| c.rows.len() as u32).sum();
        assert_eq!(rows, h);
    }

    #[test]
    fn chunks_cover_every_byte_once() {
        for kernel in Kernel::ALL {
            for (w, h) in [(1, 1), (1, 9), (3, 5), (7, 1), (257, 3), (97, 61)] {
                for (band, chunk) in [(1 << 30, 1 << 30), (1 << 30, 1), (1000, 100), (16 * 8 * 97, 3 * 97)] {
                    for wg in [WorkgroupSize { x: 64, y: 1 }, WorkgroupSize { x: 8, y: 8 }] {
                        if BandPlan::new(kernel, w, h, band).is_ok() {
                            covers_everything(kernel, (w, h), band, chunk, wg);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn large_runs_are_cut_for_pipelining_and_the_budget() {
        let (k, wg) = (Kernel::Rgb8ToL8, WorkgroupSize::DEFAULT);
        let limits = Limits::pipelined(1 << 31, 1 << 31, 1 << 31);
        let plan = |size, limits| RunPlan::new(k, size, wg, limits).expect("plan");
        // 8K in one band: four chunks for the pipeline when the budget allows more.
        let p = plan((7680, 4320), limits);
        assert_eq!((p.bands.bands, p.chunks.len(), p.rows_per_chunk), (1, 4, 1080));
        // Without pipelining (data resident on the GPU): one submission.
        assert_eq!(plan((7680, 4320), Limits { pipeline: false, ..limits }).chunks.len(), 1);
        // A tight budget cuts further.
        let p =
            plan((7680, 4320), Limits { chunk_bytes: 7680 * 3 * 100, slice_bytes: 7680 * 3 * 100, ..limits });
        assert_eq!((p.rows_per_chunk, p.chunks.len()), (100, 44));
        // Small images stay whole.
        assert_eq!(plan((640, 480), limits).chunks.len(), 1);
        // 2-D shapes: no more rows per dispatch than the grid allows.
        let p =
            RunPlan::new(k, (64, 1000), WorkgroupSize { x: 8, y: 8 }, Limits { max_groups: 10, ..limits });
        assert_eq!(p.expect("plan").rows_per_chunk, 80);
    }

    #[test]
    fn the_staging_slots_together_hold_at_most_one_band() {
        // lavapipe's 128 MiB binding and a budget without a cap (a software adapter is not cut
        // for overlap): 12000x10000 RGB in three bands, each staged through three slots.
        let (k, wg, band) = (Kernel::Rgb8ToL8, WorkgroupSize::DEFAULT, 128 << 20);
        let limits =
            Limits { pipeline: false, staging_slots: 3, ..Limits::pipelined(band, 1 << 40, 1 << 40) };
        let p = RunPlan::new(k, (12_000, 10_000), wg, limits).expect("plan");
        let needs = p.ring_needs(k, RING_SLOTS, false);
        assert_eq!((p.bands.bands, p.rows_per_chunk, needs.slots), (3, 1242, 3));
        assert_eq!(needs.chunk_in_bytes, 1242 * 36_000);
        assert!(needs.chunk_in_bytes * 3 <= band && needs.chunk_out_bytes * 3 <= p.bands.max_out_bytes);
        // One slot (the stepwise driver): a chunk may take the whole band.
        let one = RunPlan::new(k, (12_000, 10_000), wg, Limits { staging_slots: 1, ..limits }).expect("plan");
        assert_eq!(one.rows_per_chunk, one.bands.rows_per_band);
    }

    #[test]
    fn a_heavy_kernel_cuts_slices_not_copies() {
        // The same chunk budget (the plain grayscale's) with a kernel a thousand times dearer:
        // the same chunks, so the same upload and download copies, each cut into more slices.
        let (k, wg) = (Kernel::Rgb8ToL8, WorkgroupSize::DEFAULT);
        let size = (1024, 1024);
        let plain = Limits::pipelined(1 << 31, 1 << 20, 1 << 20);
        let heavy = Limits { slice_bytes: 1 << 10, ..plain };
        let (p, q) = (
            RunPlan::new(k, size, wg, plain).expect("plan"),
            RunPlan::new(k, size, wg, heavy).expect("plan"),
        );
        let copies =
            |plan: &RunPlan| plan.chunks.iter().map(|c| (c.src.clone(), c.dst.clone())).collect::<Vec<_>>();
        assert_eq!(copies(&p), copies(&q));
        assert_eq!((p.chunks.len(), p.rows_per_chunk, p.slices.len()), (4, 341, 4));
        // One row (3 KiB) per slice: the slice budget is never cut below a row.
        assert_eq!(q.slices.len(), 1024);
        assert!(q.slices.iter().all(|s| s.rows.len() == 1));
        assert_eq!(q.chunks.iter().map(|c| c.slices.len()).collect::<Vec<_>>(), [341, 341, 341, 1]);
        // A chunk never holds more slices than its timestamps have pairs for.
        let tall = RunPlan::new(k, (4, 1 << 20), wg, Limits { chunk_bytes: 1 << 30, ..heavy }).expect("plan");
        assert!(tall.chunks.iter().all(|c| c.slices.len() <= MAX_SLICES_PER_CHUNK as usize));
        let rows_per_slice = tall.slices.first().map_or(0, |s| s.rows.len() as u32);
        assert_eq!((rows_per_slice, tall.rows_per_chunk), (85, 85 * MAX_SLICES_PER_CHUNK));
    }
}
