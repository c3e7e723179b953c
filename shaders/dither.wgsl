// Floyd–Steinberg to 1 bit as a wavefront (src/pixel/op.rs has the exact definition): pixel
// (x, y) of a band runs at step x + 2y, after its four neighbours above and to the left. Each
// pixel's error is kept in a ring of 4 rows indexed by the image row, so a band's first row
// reads the error of the band before it. Outputs (0 or 255) are ORed into the packed output
// (cleared before). `dither_step`: one dispatch a step, the step in the parameters (picked by a
// dynamic offset). `dither_persistent`: one workgroup walks a chunk of the band's steps (kept
// short: llvmpipe cuts any loop off at 65,535 rounds), with a storage barrier between steps.

// `OpParams` and its uniform `p` (binding 0) come from op_params.wgsl, put before this file.
@group(0) @binding(1) var<storage, read> src: array<u32>;
// Atomic loads and stores: a compiler may not keep a value across the persistent loop's
// barrier in a register (lavapipe did, with plain loads).
@group(0) @binding(2) var<storage, read_write> err: array<atomic<i32>>;
@group(0) @binding(3) var<storage, read_write> dst: array<atomic<u32>>;

const PERSISTENT: u32 = 256u;

// The first row (of the band) with a pixel at `step`.
fn first_row(step: u32) -> u32 {
    if (step + 2u > p.width) {
        return (step + 2u - p.width) / 2u;
    }
    return 0u;
}

fn dither_at(x: u32, row: u32) {
    let w = p.width;
    let y = p.band_y0 + row;
    let cur = (y & 3u) * w;
    let up = ((y + 3u) & 3u) * w;
    var left = 0;
    if (x > 0u) {
        left = atomicLoad(&err[cur + x - 1u]);
    }
    var up_right = 0;
    var above = 0;
    var up_left = 0;
    if (y > 0u) {
        above = atomicLoad(&err[up + x]);
        if (x > 0u) {
            up_left = atomicLoad(&err[up + x - 1u]);
        }
        if (x + 1u < w) {
            up_right = atomicLoad(&err[up + x + 1u]);
        }
    }
    let i = row * w + x;
    let g = i32((src[i >> 2u] >> ((i & 3u) * 8u)) & 0xFFu);
    let v = g + ((7 * left + 3 * up_right + 5 * above + up_left + 8) >> 4u);
    if (v >= 128) {
        atomicStore(&err[cur + x], v - 255);
        atomicOr(&dst[i >> 2u], 0xFFu << ((i & 3u) * 8u));
    } else {
        atomicStore(&err[cur + x], v);
    }
}

@compute @workgroup_size(64)
fn dither_step(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = first_row(p.step) + gid.x;
    if (row < p.rows_out && 2u * row <= p.step) {
        let x = p.step - 2u * row;
        if (x < p.width) {
            dither_at(x, row);
        }
    }
}

@compute @workgroup_size(256)
fn dither_persistent(@builtin(local_invocation_index) li: u32) {
    for (var step = p.step; step <= p.step_last; step++) {
        // Every invocation runs the same rounds, so the loop and the barrier stay uniform.
        let first = first_row(step);
        let last = min(p.rows_out - 1u, step / 2u);
        let rounds = (last + PERSISTENT - first) / PERSISTENT;
        for (var k = 0u; k < rounds; k++) {
            let row = first + k * PERSISTENT + li;
            if (row <= last) {
                dither_at(step - 2u * row, row);
            }
        }
        storageBarrier();
        workgroupBarrier();
    }
}
