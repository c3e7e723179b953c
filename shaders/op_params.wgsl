// The parameters of one op dispatch, shared by `blur.wgsl` and `dither.wgsl` (src/shaders.rs
// puts this file before each) and laid out as `OpParams` in src/gpu/ops/kernels.rs.

struct OpParams {
    width: u32,
    height: u32,
    // The blur's radius (unused by the dither).
    radius: u32,
    // Rows in `src` (and the blur's `mid`): the band's rows and its apron.
    rows_in: u32,
    // The band's output rows.
    rows_out: u32,
    // The image row of the first row in `src`.
    in_y0: u32,
    // The image row of the band's first output row.
    band_y0: u32,
    // The dither by steps: this dispatch's step; persistent: the dispatch's first step (unused
    // by the blur).
    step: u32,
    // The persistent dither: the dispatch's last step.
    step_last: u32,
}

@group(0) @binding(0) var<uniform> p: OpParams;
