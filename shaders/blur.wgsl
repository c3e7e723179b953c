// The separable integer blur of one band of a gray plane (src/pixel/op.rs has the definition).
// Rows of `mid` and `dst` are `stride` pixels long: the width rounded up to whole words, so each
// output word holds 4 pixels of one row and is written whole, by one invocation, no atomics.
// `blur_rows`: each workgroup loads one row segment of 256 pixels and its apron of `radius`
// pixels a side into workgroup memory (clamped to the edge), then sums the taps (the symmetric
// pairs folded, `w_k (a + b)`) into `mid`, one u32 per pixel, kept whole. `blur_cols`: each
// 4x64 workgroup loads 16 columns of `mid` (4 quads of 4) over its 64 rows and their apron of
// `radius` rows a side, then each invocation sums the taps of its quad, one vec4 a tap, rounds
// once and writes the quad's packed word. The input band is packed 4 pixels a u32, row after row
// without padding. Both passes continue x along z past 65535 workgroups (rows wider than about
// a million pixels): the workgroup's column is x + z * (workgroups along x).

// `OpParams` and its uniform `p` (binding 0) come from op_params.wgsl, put before this file.
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> mid: array<u32>;
@group(0) @binding(3) var<storage, read_write> dst: array<u32>;
@group(0) @binding(4) var<storage, read> weights: array<u32>;

const ROW_TILE: u32 = 256u;
const MAX_RADIUS: u32 = 64u;
// The vertical pass: quads (4 columns) and rows per workgroup.
const COL_QUADS: u32 = 4u;
const COL_ROWS: u32 = 64u;

var<workgroup> row_tile: array<u32, 384>;          // ROW_TILE + 2 * MAX_RADIUS
var<workgroup> col_tile: array<vec4<u32>, 768>;    // COL_QUADS * (COL_ROWS + 2 * MAX_RADIUS)

fn stride() -> u32 {
    return (p.width + 3u) & ~3u;
}

fn gray_at(i: u32) -> u32 {
    return (src[i >> 2u] >> ((i & 3u) * 8u)) & 0xFFu;
}

@compute @workgroup_size(256)
fn blur_rows(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
) {
    let r = min(p.radius, MAX_RADIUS);
    let y = wg.y;
    let x0 = (wg.x + wg.z * groups.x) * ROW_TILE;
    let span = ROW_TILE + 2u * r;
    let last = i32(p.width) - 1;
    for (var i = li; i < span; i += ROW_TILE) {
        let xs = u32(clamp(i32(x0 + i) - i32(r), 0, last));
        row_tile[i] = gray_at(y * p.width + xs);
    }
    workgroupBarrier();
    let x = x0 + li;
    if (x < stride() && y < p.rows_in) {
        let c = li + r;
        var acc = weights[r] * row_tile[c];
        for (var k = 1u; k <= r; k++) {
            acc += weights[r + k] * (row_tile[c - k] + row_tile[c + k]);
        }
        mid[y * stride() + x] = acc;
    }
}

@compute @workgroup_size(4, 64)
fn blur_cols(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let r = min(p.radius, MAX_RADIUS);
    let gx = wg.x + wg.z * groups.x;
    let s = stride();
    let rows = COL_ROWS + 2u * r;
    let y0 = wg.y * COL_ROWS;
    let last = i32(p.height) - 1;
    for (var t = lid.y * COL_QUADS + lid.x; t < rows * COL_QUADS; t += COL_QUADS * COL_ROWS) {
        let row = t / COL_QUADS;
        let x = min((gx * COL_QUADS + t % COL_QUADS) * 4u, s - 4u);
        let image_y = u32(clamp(i32(p.band_y0 + y0 + row) - i32(r), 0, last));
        let mid_y = min(image_y - min(image_y, p.in_y0), p.rows_in - 1u);
        let i = mid_y * s + x;
        col_tile[t] = vec4<u32>(mid[i], mid[i + 1u], mid[i + 2u], mid[i + 3u]);
    }
    workgroupBarrier();
    let ox = (gx * COL_QUADS + lid.x) * 4u;
    let oy = y0 + lid.y;
    if (ox < p.width && oy < p.rows_out) {
        let c = (lid.y + r) * COL_QUADS + lid.x;
        var acc = weights[r] * col_tile[c];
        for (var k = 1u; k <= r; k++) {
            acc += weights[r + k] * (col_tile[c - k * COL_QUADS] + col_tile[c + k * COL_QUADS]);
        }
        let v = (acc + vec4<u32>(1u << 23u)) >> vec4<u32>(24u);
        dst[(oy * s + ox) >> 2u] = v.x | (v.y << 8u) | (v.z << 16u) | (v.w << 24u);
    }
}
