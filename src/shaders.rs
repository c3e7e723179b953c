//! Every WGSL source of the crate, included from this one place so that a moved shader file
//! breaks the build here and nowhere else.

/// The colour-to-gray compute shader: one entry point per [`crate::pixel::Kernel`] (after the
/// synthetic work's hash, which the compute ceiling shares).
pub const GRAYSCALE_WGSL: &str =
    concat!(include_str!("../shaders/work.wgsl"), include_str!("../shaders/grayscale.wgsl"));

/// The separable integer blur of a gray plane: a horizontal and a vertical pass, each over a
/// tile and its apron in workgroup memory (after the op parameters both op shaders share).
pub const BLUR_WGSL: &str =
    concat!(include_str!("../shaders/op_params.wgsl"), include_str!("../shaders/blur.wgsl"));

/// Floyd–Steinberg dithering of a gray plane as a wavefront: a dispatch a step, or one
/// persistent workgroup (after the op parameters both op shaders share).
pub const DITHER_WGSL: &str =
    concat!(include_str!("../shaders/op_params.wgsl"), include_str!("../shaders/dither.wgsl"));

/// The GPU's compute ceiling: rounds of the synthetic work's hash in registers only (the
/// kernel's own, from the same file).
pub const COMPUTE_WGSL: &str =
    concat!(include_str!("../shaders/work.wgsl"), include_str!("../shaders/compute.wgsl"));

/// The device's copy bandwidth as a kernel reaches it: a STREAM-like copy of 16-byte words.
pub const COPY_WGSL: &str = include_str!("../shaders/copy.wgsl");

/// Gray output words to an `rgba8unorm` texture tile, for showing a GPU result without a
/// readback.
pub const DISPLAY_WGSL: &str = include_str!("../shaders/display.wgsl");

/// The desktop app's image quad (textured, premultiplied alpha, optional checkerboard), drawn
/// inside egui's render pass.
pub const IMAGE_WGSL: &str = include_str!("../shaders/image.wgsl");

#[cfg(test)]
mod tests {
    /// Parses and validates with naga on the CPU, so a WGSL error fails `cargo test` even on a
    /// machine without any GPU adapter; then looks for each of `entries`.
    fn validate(source: &str, entries: &[&str]) {
        let module = naga::front::wgsl::parse_str(source).expect("valid WGSL");
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
            .validate(&module)
            .expect("shader validates");
        for entry in entries {
            assert!(module.entry_points.iter().any(|e| e.name == *entry), "no entry point {entry}");
        }
    }

    #[test]
    fn every_shader_parses_and_validates() {
        let kernels = crate::pixel::Kernel::ALL.map(crate::pixel::Kernel::name);
        validate(super::GRAYSCALE_WGSL, &kernels);
        validate(super::BLUR_WGSL, &["blur_rows", "blur_cols"]);
        validate(super::DITHER_WGSL, &["dither_step", "dither_persistent"]);
        validate(super::COMPUTE_WGSL, &["rounds_only"]);
        validate(super::COPY_WGSL, &["copy_words"]);
        validate(super::DISPLAY_WGSL, &["expand"]);
        validate(super::IMAGE_WGSL, &["vs_main", "fs_gamma", "fs_linear"]);
    }
}
