//! The structure of a JPEG as the walk ([`super::jpeg_scan`]) finds it: the frame, its
//! components, the scans, the bytes between segments, and what follows from them (the floor of
//! coded data, the decoder's scratch memory, restart units).

/// How a JPEG frame is coded (its `SOFn` marker).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(in crate::io) enum FrameKind {
    /// SOF0 / SOF1: sequential DCT, Huffman coding.
    #[default]
    Sequential,
    /// SOF2: progressive DCT, Huffman coding.
    Progressive,
    /// SOF9 / SOF10: sequential or progressive DCT, arithmetic coding (as `jpegtran
    /// -arithmetic` writes it), decoded by libjpeg whole.
    Arithmetic {
        /// SOF10.
        progressive: bool,
    },
    /// Any other `SOFn`: lossless or hierarchical.
    Unsupported(u8),
}

/// One colour component of the frame: its identifier and sampling factors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::io) struct Component {
    pub id: u8,
    pub h: u8,
    pub v: u8,
}

/// One scan: which components it codes, its spectral and approximation parameters, where its
/// coded data lies and the restart markers in it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(in crate::io) struct Scan {
    /// Indices into [`Layout::components`].
    pub components: Vec<usize>,
    pub ss: u8,
    pub se: u8,
    pub ah: u8,
    pub al: u8,
    /// The restart interval in force (MCUs; 0: none).
    pub interval: u16,
    /// Byte range of the entropy-coded data (to the file's end when truncated).
    pub data: std::ops::Range<usize>,
    /// The data ends at a marker (not at the file's end).
    pub ended: bool,
    /// Offset and number (0-7) of each restart marker in the data.
    pub restarts: Vec<(usize, u8)>,
}

/// Bytes that are not part of any segment, skipped as libjpeg skips them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::io) struct Junk {
    /// Offset of the first skipped byte.
    pub at: usize,
    /// Bytes skipped.
    pub len: usize,
    /// The marker code found after them.
    pub marker: u8,
}

/// What [`scan`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(in crate::io) struct Layout {
    pub kind: FrameKind,
    /// Bits per sample (8 for nearly every JPEG).
    pub precision: u8,
    pub width: u32,
    pub height: u32,
    /// Where the frame header's height (two bytes) lies in the file.
    pub height_at: usize,
    pub components: Vec<Component>,
    /// Start-of-scan segments seen.
    pub scans: u32,
    /// Each scan, in order.
    pub scan_list: Vec<Scan>,
    /// Bytes skipped between segments.
    pub junk: Vec<Junk>,
    /// Bytes of entropy-coded data in all scans.
    pub coded_bytes: u64,
    /// The end-of-image marker was reached.
    pub complete: bool,
}

/// Why a JPEG's structure cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::io) enum ScanError {
    /// The file ends inside the headers, before any image data.
    EndsInHeaders,
    /// The structure is broken; the reason.
    Corrupt(String),
}

impl FrameKind {
    /// Whether the frame is coded in progressive scans (SOF2 or SOF10).
    pub fn progressive(self) -> bool {
        matches!(self, Self::Progressive | Self::Arithmetic { progressive: true })
    }

    /// The variant's name, for messages.
    pub fn describe(marker: u8) -> String {
        let name = match marker {
            3 => "lossless",
            5 => "hierarchical sequential",
            6 => "hierarchical progressive",
            7 => "hierarchical lossless",
            9 => "arithmetic-coded sequential",
            10 => "arithmetic-coded progressive",
            11 => "arithmetic-coded lossless",
            13 => "hierarchical arithmetic-coded sequential",
            14 => "hierarchical arithmetic-coded progressive",
            15 => "hierarchical arithmetic-coded lossless",
            _ => "unknown",
        };
        format!("{name} JPEG (SOF{marker})")
    }
}

impl Layout {
    /// Whether a progressive frame's scans leave a coefficient of some component without its
    /// last refinement (no scan codes it with `Al` = 0): the file stops before its image is whole
    /// (cut short and closed with an end-of-image marker), though every row is there. libjpeg
    /// decodes such a file without a word.
    pub fn scans_missing(&self) -> bool {
        self.kind.progressive()
            && (0..self.components.len()).any(|c| {
                (0..64u8).any(|k| {
                    !self
                        .scan_list
                        .iter()
                        .any(|s| s.al == 0 && s.ss <= k && k <= s.se && s.components.contains(&c))
                })
            })
    }

    /// The largest horizontal and vertical sampling factors of the components (1 without any).
    pub fn max_factors(&self) -> (u32, u32) {
        let max = |f: fn(&Component) -> u8| u32::from(self.components.iter().map(f).max().unwrap_or(1));
        (max(|c| c.h), max(|c| c.v))
    }

    /// The 8x8 blocks across and down of component `c`, as the decoder lays them out.
    fn component_blocks(&self, c: Component) -> (u64, u64) {
        let (h_max, v_max) = self.max_factors();
        let cw = (u64::from(self.width) * u64::from(c.h)).div_ceil(u64::from(h_max));
        let ch = (u64::from(self.height) * u64::from(c.v)).div_ceil(u64::from(v_max));
        (cw.div_ceil(8), ch.div_ceil(8))
    }

    /// 8x8 blocks in each component, as the decoder lays them out.
    fn blocks(&self) -> impl Iterator<Item = u64> + '_ {
        self.components.iter().map(|&c| {
            let (across, down) = self.component_blocks(c);
            across * down
        })
    }

    /// The fewest bytes of coded data that can hold this frame: every block of every component
    /// needs a DC code (at least 1 bit) and, in a sequential frame, an end-of-block code (at least
    /// 1 more bit). A progressive frame codes the AC coefficients of up to 32767 blocks with one
    /// end-of-band run, which is why its floor is half as high. Arithmetic coding has no such floor
    /// (a flat block costs a small fraction of a bit): its size is left to the memory budget.
    pub fn min_coded_bytes(&self) -> u64 {
        let bits_per_block = match self.kind {
            FrameKind::Sequential => 2,
            FrameKind::Progressive => 1,
            FrameKind::Arithmetic { .. } | FrameKind::Unsupported(_) => 0,
        };
        (self.blocks().sum::<u64>() * bits_per_block).div_ceil(8)
    }

    /// Extra memory the decoder takes beside the output: a progressive frame (or a sequential
    /// one in several scans) keeps every coefficient, two bytes each, until the end.
    pub fn decoder_scratch_bytes(&self) -> u64 {
        if self.kind.progressive() || self.scans > 1 { self.blocks().sum::<u64>() * 64 * 2 } else { 0 }
    }

    /// The units a scan codes (and counts restart intervals in): MCUs of every component when
    /// it interleaves several, else the blocks of its one component.
    pub fn scan_units(&self, scan: &Scan) -> u64 {
        let (h_max, v_max) = self.max_factors();
        if let [one] = scan.components[..] {
            let (across, down) = self.component_blocks(self.components[one]);
            across * down
        } else {
            u64::from(self.width.div_ceil(8 * h_max)) * u64::from(self.height.div_ceil(8 * v_max))
        }
    }

    /// Pixel rows per row of MCUs (the unit the decoder fills in).
    pub fn mcu_rows(&self) -> u32 {
        if self.components.len() <= 1 { 8 } else { 8 * self.max_factors().1 }
    }
}
