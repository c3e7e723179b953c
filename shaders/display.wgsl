// Gray output words -> rgba8unorm textures for display, so the GUI shows a GPU result without
// reading it back. Colours are premultiplied by alpha (what egui blends with).
//
// - `preview`: a downsampled level (box filter) of the whole image, written band by band.
// - `mip`: the next mip level of the preview (2x2 box).
// - `expand`: a full-resolution tile, one invocation per pixel, for what is zoomed in.

// The output's pixel layout: 1 = L8, 2 = LA8, 3 = L16, 4 = LA16. A pipeline constant, so each
// pipeline reads one layout without branching (a software adapter runs every branch).
override OUT_LAYOUT: u32 = 1u;

fn gray_alpha(i: u32) -> vec2<f32> {
    switch OUT_LAYOUT {
        case 1u: {
            return vec2<f32>(f32((gray[i / 4u] >> (8u * (i % 4u))) & 0xffu) / 255.0, 1.0);
        }
        case 2u: {
            let half = (gray[i / 2u] >> (16u * (i % 2u))) & 0xffffu;
            return vec2<f32>(f32(half & 0xffu) / 255.0, f32(half >> 8u) / 255.0);
        }
        case 3u: {
            return vec2<f32>(f32((gray[i / 2u] >> (16u * (i % 2u))) & 0xffffu) / 65535.0, 1.0);
        }
        default: {
            let w = gray[i];
            return vec2<f32>(f32(w & 0xffffu) / 65535.0, f32(w >> 16u) / 65535.0);
        }
    }
}

fn premultiplied(ga: vec2<f32>) -> vec4<f32> {
    let g = ga.x * ga.y;
    return vec4<f32>(g, g, g, ga.y);
}

// Where one band of output (`gray`, rows band_row0.. of the image) is drawn into a tile.
struct ExpandParams {
    // Image width in pixels.
    width: u32,
    // First image row held by `gray`.
    band_row0: u32,
    // The region to write, in image pixels.
    x0: u32,
    y0: u32,
    w: u32,
    h: u32,
    // The tile's top-left corner, in image pixels.
    tile_x0: u32,
    tile_y0: u32,
}

// Preview rows first_row..first_row + rows, drawn from one band of output.
struct PreviewParams {
    // Image size in pixels.
    width: u32,
    height: u32,
    // The rows `gray` holds.
    band_row0: u32,
    band_rows: u32,
    // Preview size in pixels.
    preview_w: u32,
    preview_h: u32,
    // The preview rows this dispatch writes.
    first_row: u32,
    rows: u32,
}

@group(0) @binding(0) var<storage, read> gray: array<u32>;
@group(0) @binding(1) var<uniform> p: ExpandParams;
@group(0) @binding(2) var target_tex: texture_storage_2d<rgba8unorm, write>;
@group(0) @binding(3) var<uniform> q: PreviewParams;

@compute @workgroup_size(16, 16)
fn expand(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= p.w || gid.y >= p.h) {
        return;
    }
    let x = p.x0 + gid.x;
    let y = p.y0 + gid.y;
    let i = (y - p.band_row0) * p.width + x;
    textureStore(target_tex, vec2<u32>(x - p.tile_x0, y - p.tile_y0), premultiplied(gray_alpha(i)));
}

// At most this many samples per axis per preview pixel (larger boxes are sampled with a stride).
const MAX_TAPS: u32 = 8u;

// floor(i * size / n) for i <= n, exactly, without overflowing u32: i * (size / n) plus
// i * (size % n) / n, whose product stays below n * n (n is a texture side, at most 65535).
// The box edges must be integers computed exactly: in f32, size / n is rounded, and a GPU may
// divide to within 2.5 ulp (Vulkan's precision for OpFDiv), so 37.0 / 37.0 can come out just
// under 1 and the box of preview pixel 1 start at source pixel 0 (seen on an NVIDIA H200; even
// an exact division puts preview pixel 11 of 22 over a 26 px image at 12, not 13).
fn box_edge(i: u32, size: u32, n: u32) -> u32 {
    return i * (size / n) + i * (size % n) / n;
}

@compute @workgroup_size(16, 16)
fn preview(@builtin(global_invocation_id) gid: vec3<u32>) {
    let px = gid.x;
    let py = q.first_row + gid.y;
    if (px >= q.preview_w || gid.y >= q.rows) {
        return;
    }
    let xa = min(box_edge(px, q.width, q.preview_w), q.width - 1u);
    let xb = max(xa + 1u, min(box_edge(px + 1u, q.width, q.preview_w), q.width));
    // The box, clamped to the rows this band holds.
    let ya = clamp(box_edge(py, q.height, q.preview_h), q.band_row0, q.band_row0 + q.band_rows - 1u);
    let yb = clamp(max(ya + 1u, box_edge(py + 1u, q.height, q.preview_h)), ya + 1u, q.band_row0 + q.band_rows);
    let step_x = max(1u, (xb - xa + MAX_TAPS - 1u) / MAX_TAPS);
    let step_y = max(1u, (yb - ya + MAX_TAPS - 1u) / MAX_TAPS);
    var sum = vec4<f32>(0.0);
    var n = 0.0;
    for (var y = ya; y < yb; y += step_y) {
        let row = (y - q.band_row0) * q.width;
        for (var x = xa; x < xb; x += step_x) {
            sum += premultiplied(gray_alpha(row + x));
            n += 1.0;
        }
    }
    textureStore(target_tex, vec2<u32>(px, py), sum / n);
}

@group(0) @binding(4) var mip_src: texture_2d<f32>;
@group(0) @binding(5) var mip_dst: texture_storage_2d<rgba8unorm, write>;

@compute @workgroup_size(16, 16)
fn mip(@builtin(global_invocation_id) gid: vec3<u32>) {
    let dst = textureDimensions(mip_dst);
    if (gid.x >= dst.x || gid.y >= dst.y) {
        return;
    }
    let last = vec2<i32>(textureDimensions(mip_src)) - vec2<i32>(1);
    let at = vec2<i32>(gid.xy) * 2;
    var sum = vec4<f32>(0.0);
    for (var dy = 0; dy < 2; dy++) {
        for (var dx = 0; dx < 2; dx++) {
            sum += textureLoad(mip_src, min(at + vec2<i32>(dx, dy), last), 0);
        }
    }
    textureStore(mip_dst, vec2<u32>(gid.xy), sum / 4.0);
}
