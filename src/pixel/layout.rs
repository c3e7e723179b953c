//! The pixel layouts a conversion reads and writes, named by the kernel that maps one to the other.

/// One colour-to-gray conversion between two packed, row-major pixel layouts.
///
/// The CPU kernels and the GPU entry points share these names; 16-bit samples are native-endian
/// `u16`s, as the `image` crate stores them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kernel {
    /// 8-bit RGB -> 8-bit gray.
    Rgb8ToL8,
    /// 8-bit RGBA -> 8-bit gray + alpha (alpha copied).
    Rgba8ToLa8,
    /// 8-bit RGBA -> 8-bit gray (alpha dropped).
    Rgba8ToL8,
    /// 16-bit RGB -> 16-bit gray.
    Rgb16ToL16,
    /// 16-bit RGBA -> 16-bit gray + alpha (alpha copied).
    Rgba16ToLa16,
    /// 16-bit RGBA -> 16-bit gray (alpha dropped).
    Rgba16ToL16,
}

impl Kernel {
    /// Every kernel.
    pub const ALL: [Self; 6] = [
        Self::Rgb8ToL8,
        Self::Rgba8ToLa8,
        Self::Rgba8ToL8,
        Self::Rgb16ToL16,
        Self::Rgba16ToLa16,
        Self::Rgba16ToL16,
    ];

    /// The name of the WGSL entry point (and of the CPU kernel) for this conversion.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Rgb8ToL8 => "rgb8_to_l8",
            Self::Rgba8ToLa8 => "rgba8_to_la8",
            Self::Rgba8ToL8 => "rgba8_to_l8",
            Self::Rgb16ToL16 => "rgb16_to_l16",
            Self::Rgba16ToLa16 => "rgba16_to_la16",
            Self::Rgba16ToL16 => "rgba16_to_l16",
        }
    }

    /// Bytes one input pixel occupies.
    #[must_use]
    pub fn in_bytes_per_pixel(self) -> usize {
        match self {
            Self::Rgb8ToL8 => 3,
            Self::Rgba8ToLa8 | Self::Rgba8ToL8 => 4,
            Self::Rgb16ToL16 => 6,
            Self::Rgba16ToLa16 | Self::Rgba16ToL16 => 8,
        }
    }

    /// Bytes one output pixel occupies.
    #[must_use]
    pub fn out_bytes_per_pixel(self) -> usize {
        match self {
            Self::Rgb8ToL8 | Self::Rgba8ToL8 => 1,
            Self::Rgba8ToLa8 | Self::Rgb16ToL16 | Self::Rgba16ToL16 => 2,
            Self::Rgba16ToLa16 => 4,
        }
    }

    /// Whether samples are 16-bit (and the 16-bit lookup tables apply).
    #[must_use]
    pub fn is_16bit(self) -> bool {
        matches!(self, Self::Rgb16ToL16 | Self::Rgba16ToLa16 | Self::Rgba16ToL16)
    }

    /// Output pixels that one 32-bit output word holds (the GPU writes one word per invocation).
    #[must_use]
    pub fn pixels_per_word(self) -> usize {
        4 / self.out_bytes_per_pixel()
    }

    /// Input 32-bit words that one output word is computed from.
    #[must_use]
    pub fn in_words_per_out_word(self) -> usize {
        self.pixels_per_word() * self.in_bytes_per_pixel() / 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_geometry_is_whole() {
        for k in Kernel::ALL {
            assert_eq!(k.pixels_per_word() * k.out_bytes_per_pixel(), 4, "{k:?}");
            assert_eq!(k.in_words_per_out_word() * 4, k.pixels_per_word() * k.in_bytes_per_pixel());
        }
        assert_eq!(Kernel::Rgb8ToL8.in_words_per_out_word(), 3);
        assert_eq!(Kernel::Rgba16ToLa16.in_words_per_out_word(), 2);
    }
}
