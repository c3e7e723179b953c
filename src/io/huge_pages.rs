//! Large zeroed byte buffers on transparent huge pages, for decoded images: decoding an 8K photo
//! writes 100 MB into fresh memory, and with 4 KiB pages its page faults cost about a tenth of
//! the decode. (The same advice as `cpu::zeroed_buffer`, kept here because `io` depends on no
//! other graylab module.)

/// A zeroed `Vec<u8>` of `len` bytes, advised to use huge pages on Linux.
#[must_use]
pub(super) fn zeroed_bytes(len: usize) -> Vec<u8> {
    // `vec![0; len]` is one `calloc`: large blocks are fresh, untouched pages the advice applies to.
    let v = vec![0u8; len];
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = v.as_ptr() as usize;
        let (first, end) = (start.next_multiple_of(HUGE), (start + len) & !(HUGE - 1));
        if end > first {
            // SAFETY: the range lies inside the live allocation `v`; MADV_HUGEPAGE changes only how
            // the kernel backs it, never its contents. A failure (THP disabled) is harmless.
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
    v
}

/// Decodes 8-bit images into a huge-page buffer; other sample types go through `image` as usual.
pub(super) fn read_image(decoder: impl image::ImageDecoder) -> image::ImageResult<image::DynamicImage> {
    use image::{ColorType, DynamicImage, ImageBuffer};
    let (width, height) = decoder.dimensions();
    let color = decoder.color_type();
    if !matches!(color, ColorType::L8 | ColorType::La8 | ColorType::Rgb8 | ColorType::Rgba8) {
        return DynamicImage::from_decoder(decoder);
    }
    let Ok(len) = usize::try_from(decoder.total_bytes()) else {
        return DynamicImage::from_decoder(decoder);
    };
    let mut buf = zeroed_bytes(len);
    decoder.read_image(&mut buf)?;
    let too_short = || {
        image::ImageError::Parameter(image::error::ParameterError::from_kind(
            image::error::ParameterErrorKind::DimensionMismatch,
        ))
    };
    Ok(match color {
        ColorType::L8 => {
            DynamicImage::ImageLuma8(ImageBuffer::from_raw(width, height, buf).ok_or_else(too_short)?)
        }
        ColorType::La8 => {
            DynamicImage::ImageLumaA8(ImageBuffer::from_raw(width, height, buf).ok_or_else(too_short)?)
        }
        ColorType::Rgb8 => {
            DynamicImage::ImageRgb8(ImageBuffer::from_raw(width, height, buf).ok_or_else(too_short)?)
        }
        _ => DynamicImage::ImageRgba8(ImageBuffer::from_raw(width, height, buf).ok_or_else(too_short)?),
    })
}
