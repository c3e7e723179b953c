//! Large zeroed buffers backed by transparent huge pages where the OS offers them, for decoded
//! images and kernel outputs.
//!
//! The kernels stream hundreds of megabytes, and decoding an 8K photo writes 100 MB into fresh
//! memory; with 4 KiB pages that is tens of thousands of TLB misses and page faults per image.
//! Linux backs anonymous memory with 2 MiB pages only when asked (`madvise(MADV_HUGEPAGE)`, as
//! numpy does for large arrays), and only for pages not yet touched, so the advice is given right
//! after the zeroed, untouched allocation.

/// A zeroed `Vec` of `len` elements, advised to use huge pages (Linux; elsewhere a plain
/// zeroed `Vec`).
#[must_use]
pub fn zeroed_buffer<T: bytemuck::Zeroable + Clone>(len: usize) -> Vec<T> {
    // `vec![zeroed; len]` for a Zeroable type becomes one `calloc`: large blocks come straight
    // from fresh, untouched pages that the advice below still applies to.
    let mut v = vec![T::zeroed(); len];
    advise_huge_pages(v.as_mut_ptr().cast::<u8>(), len * size_of::<T>());
    v
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(start: *mut u8, bytes: usize) {
    const HUGE: usize = 2 << 20;
    let first = (start as usize).next_multiple_of(HUGE);
    let end = (start as usize + bytes) & !(HUGE - 1);
    if end > first {
        // SAFETY: the range lies inside one live allocation; MADV_HUGEPAGE only changes how the
        // kernel backs it and never its contents. A failure (e.g. THP disabled) is harmless.
        let advised = unsafe {
            rustix::mm::madvise(
                start.add(first - start as usize).cast(),
                end - first,
                rustix::mm::Advice::LinuxHugepage,
            )
        };
        if let Err(e) = advised {
            log::trace!("no huge pages for a {bytes}-byte buffer: {e}");
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_start: *mut u8, _bytes: usize) {}

#[cfg(test)]
mod tests {
    #[test]
    fn buffers_are_zeroed_and_sized() {
        let v: Vec<u16> = super::zeroed_buffer(5 << 20);
        assert_eq!(v.len(), 5 << 20);
        assert!(v.iter().all(|&x| x == 0));
        assert!(super::zeroed_buffer::<u8>(0).is_empty());
    }
}
