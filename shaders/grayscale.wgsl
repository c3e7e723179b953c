// Colour -> gray on the GPU. One invocation computes one 32-bit output word (4, 2 or 1 gray
// pixels), so every store is a whole, aligned word and no two invocations share one.
//
// The arithmetic is exactly the CPU's (src/pixel/formula.rs): integer weights in 1/32768 units,
// round to nearest, and for `linear` the same lookup tables, uploaded by the host. After the
// formula, each gray value gets the synthetic work of src/pixel/work.rs (`work`, its hash in
// work.wgsl, put before this file), whose rounds, mask and variant come in the uniform, so they
// never multiply pipelines.

// Workgroup shape, set per pipeline by the host (only shapes within the device's limits).
override WG_X: u32 = 64u;
override WG_Y: u32 = 1u;
// 0 = bt601 (OpenCV), 1 = bt709, 2 = linear light.
override FORMULA: u32 = 0u;
// Whether the pipeline runs the synthetic work at all: without, its code is compiled out (on
// lavapipe the unrolled hash, never run, slowed the plain 4K kernel from 13 to 27 ms).
override WORKED: bool = true;

struct Params {
    // The output words this dispatch writes: word_start .. word_end (band-relative).
    word_start: u32,
    word_end: u32,
    // Image width in pixels, and the first band-relative row of the dispatch (2-D shapes).
    width: u32,
    row_start: u32,
    // The synthetic work: rounds per gray value, the mask XORed in, divergent (1: odd grays only).
    work_rounds: u32,
    work_mask: u32,
    work_divergent: u32,
    padding: u32,
}

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;
// sRGB -> 16-bit linear (256 entries for 8-bit kernels, 65536 for 16-bit), one per u32.
@group(0) @binding(3) var<storage, read> to_linear: array<u32>;
// 16-bit linear -> sRGB (65536 entries, 8- or 16-bit values), one per u32.
@group(0) @binding(4) var<storage, read> from_linear: array<u32>;

fn weighted(wr: u32, wg: u32, wb: u32, r: u32, g: u32, b: u32) -> u32 {
    return (r * wr + g * wg + b * wb + 16384u) >> 15u;
}

fn luma(r: u32, g: u32, b: u32) -> u32 {
    if (FORMULA == 0u) {
        return weighted(9798u, 19235u, 3735u, r, g, b);
    }
    if (FORMULA == 1u) {
        return weighted(6966u, 23436u, 2366u, r, g, b);
    }
    let lin = weighted(6966u, 23436u, 2366u, to_linear[r], to_linear[g], to_linear[b]);
    return from_linear[lin];
}

// The synthetic work on one gray value `g` (src/pixel/work.rs): `work_rounds` rounds of a 3-op
// hash on g + 0x9E3779B9, then g ^ (h & work_mask), cut to the sample's bits (`width_mask`). The
// identity (no rounds, mask 0) returns g at once, so the plain grayscale costs one uniform branch.
fn work(g: u32, width_mask: u32) -> u32 {
    if (!WORKED || (params.work_rounds == 0u && params.work_mask == 0u)) {
        return g;
    }
    var rounds = params.work_rounds;
    if (params.work_divergent != 0u && (g & 1u) == 0u) {
        rounds = 0u;
    }
    let h = hash_rounds(g + 0x9E3779B9u, rounds);
    return (g ^ (h & params.work_mask)) & width_mask;
}

// An 8-bit gray value after the work.
fn gray8(g: u32) -> u32 {
    return work(g, 0xffu);
}

// A 16-bit gray value after the work.
fn gray16(g: u32) -> u32 {
    return work(g, 0xffffu);
}

fn byte(w: u32, i: u32) -> u32 {
    return (w >> (8u * i)) & 0xffu;
}

fn lo(w: u32) -> u32 {
    return w & 0xffffu;
}

fn hi(w: u32) -> u32 {
    return w >> 16u;
}

// No word for this invocation.
const NONE: u32 = 0xffffffffu;

// The output word this invocation writes, or NONE (src/gpu/grid.rs has the same rules).
// 1-D shapes (WG_Y = 1): the words word_start.. in order, over a 2-D grid of workgroups (more
// than 65535 workgroups need the second dimension).
// 2-D shapes tile the image: x = word column within a row (continued along z past 65535
// workgroups: a row wider than that many tiles), y = row. A word belongs to the row of its first
// pixel, so row r owns words ceil(r * width / ppw) .. ceil((r + 1) * width / ppw).
fn word_index(gid: vec3<u32>, groups: vec3<u32>, ppw: u32) -> u32 {
    var i = NONE;
    if (WG_Y == 1u) {
        let k = params.word_start + gid.y * (groups.x * WG_X) + gid.x;
        if (k < params.word_end) {
            i = k;
        }
    } else {
        let r = params.row_start + gid.y;
        let first = (r * params.width + ppw - 1u) / ppw;
        let next = ((r + 1u) * params.width + ppw - 1u) / ppw;
        let k = first + gid.z * (groups.x * WG_X) + gid.x;
        if (k < min(next, params.word_end)) {
            i = k;
        }
    }
    return i;
}

@compute @workgroup_size(WG_X, WG_Y)
fn rgb8_to_l8(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = word_index(gid, groups, 4u);
    if (i == NONE) {
        return;
    }
    // 4 RGB pixels = 12 bytes = 3 words: R0 G0 B0 R1 | G1 B1 R2 G2 | B2 R3 G3 B3.
    let a = src[3u * i];
    let b = src[3u * i + 1u];
    let c = src[3u * i + 2u];
    let y0 = gray8(luma(byte(a, 0u), byte(a, 1u), byte(a, 2u)));
    let y1 = gray8(luma(byte(a, 3u), byte(b, 0u), byte(b, 1u)));
    let y2 = gray8(luma(byte(b, 2u), byte(b, 3u), byte(c, 0u)));
    let y3 = gray8(luma(byte(c, 1u), byte(c, 2u), byte(c, 3u)));
    dst[i] = y0 | (y1 << 8u) | (y2 << 16u) | (y3 << 24u);
}

@compute @workgroup_size(WG_X, WG_Y)
fn rgba8_to_l8(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = word_index(gid, groups, 4u);
    if (i == NONE) {
        return;
    }
    var out = 0u;
    for (var k = 0u; k < 4u; k++) {
        let p = src[4u * i + k];
        out |= gray8(luma(byte(p, 0u), byte(p, 1u), byte(p, 2u))) << (8u * k);
    }
    dst[i] = out;
}

@compute @workgroup_size(WG_X, WG_Y)
fn rgba8_to_la8(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = word_index(gid, groups, 2u);
    if (i == NONE) {
        return;
    }
    let p = src[2u * i];
    let q = src[2u * i + 1u];
    let y0 = gray8(luma(byte(p, 0u), byte(p, 1u), byte(p, 2u)));
    let y1 = gray8(luma(byte(q, 0u), byte(q, 1u), byte(q, 2u)));
    dst[i] = y0 | (byte(p, 3u) << 8u) | (y1 << 16u) | (byte(q, 3u) << 24u);
}

@compute @workgroup_size(WG_X, WG_Y)
fn rgb16_to_l16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = word_index(gid, groups, 2u);
    if (i == NONE) {
        return;
    }
    // 2 RGB16 pixels = 12 bytes = 3 words: R0 G0 | B0 R1 | G1 B1.
    let a = src[3u * i];
    let b = src[3u * i + 1u];
    let c = src[3u * i + 2u];
    let y0 = gray16(luma(lo(a), hi(a), lo(b)));
    let y1 = gray16(luma(hi(b), lo(c), hi(c)));
    dst[i] = y0 | (y1 << 16u);
}

@compute @workgroup_size(WG_X, WG_Y)
fn rgba16_to_l16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = word_index(gid, groups, 2u);
    if (i == NONE) {
        return;
    }
    let y0 = gray16(luma(lo(src[4u * i]), hi(src[4u * i]), lo(src[4u * i + 1u])));
    let y1 = gray16(luma(lo(src[4u * i + 2u]), hi(src[4u * i + 2u]), lo(src[4u * i + 3u])));
    dst[i] = y0 | (y1 << 16u);
}

@compute @workgroup_size(WG_X, WG_Y)
fn rgba16_to_la16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = word_index(gid, groups, 1u);
    if (i == NONE) {
        return;
    }
    let rg = src[2u * i];
    let ba = src[2u * i + 1u];
    dst[i] = gray16(luma(lo(rg), hi(rg), lo(ba))) | (hi(ba) << 16u);
}
