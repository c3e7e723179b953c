// The separable integer blur of one band of a gray plane (src/pixel/op.rs has the definition).
// `blur_rows`: each workgroup loads one row segment of 256 pixels and its apron of `radius`
// pixels a side into workgroup memory (clamped to the edge), then sums the taps into `mid`, one
// u32 per pixel, kept whole. `blur_cols`: each 16x16 workgroup loads its 16 columns of `mid`
// over its 16 rows and their apron of `radius` rows a side, sums the taps, rounds once and ORs
// each byte into the packed output (cleared before the pass). Gray planes are packed 4 pixels a
// u32, row after row without padding.

struct OpParams {
    width: u32,
    height: u32,
    radius: u32,
    // Rows in `src` and `mid`: the band's rows and its apron.
    rows_in: u32,
    // The band's output rows.
    rows_out: u32,
    // The image row of the first row in `src` and `mid`.
    in_y0: u32,
    // The image row of the band's first output row.
    band_y0: u32,
    // The dither's step (unused here).
    step: u32,
}

@group(0) @binding(0) var<uniform> p: OpParams;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> mid: array<u32>;
@group(0) @binding(3) var<storage, read_write> dst: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read> weights: array<u32>;

const ROW_TILE: u32 = 256u;
const MAX_RADIUS: u32 = 64u;
const COL_TILE: u32 = 16u;

var<workgroup> row_tile: array<u32, 384>;     // ROW_TILE + 2 * MAX_RADIUS
var<workgroup> col_tile: array<u32, 2304>;    // COL_TILE * (COL_TILE + 2 * MAX_RADIUS)

fn gray_at(i: u32) -> u32 {
    return (src[i >> 2u] >> ((i & 3u) * 8u)) & 0xFFu;
}

@compute @workgroup_size(256)
fn blur_rows(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let r = min(p.radius, MAX_RADIUS);
    let y = wg.y;
    let x0 = wg.x * ROW_TILE;
    let span = ROW_TILE + 2u * r;
    let last = i32(p.width) - 1;
    for (var i = li; i < span; i += ROW_TILE) {
        let xs = u32(clamp(i32(x0 + i) - i32(r), 0, last));
        row_tile[i] = gray_at(y * p.width + xs);
    }
    workgroupBarrier();
    let x = x0 + li;
    if (x < p.width && y < p.rows_in) {
        var acc = 0u;
        for (var k = 0u; k <= 2u * r; k++) {
            acc += weights[k] * row_tile[li + k];
        }
        mid[y * p.width + x] = acc;
    }
}

@compute @workgroup_size(16, 16)
fn blur_cols(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let r = min(p.radius, MAX_RADIUS);
    let x0 = wg.x * COL_TILE;
    let y0 = wg.y * COL_TILE;
    let rows = COL_TILE + 2u * r;
    let x = min(x0 + lid.x, p.width - 1u);
    let last = i32(p.height) - 1;
    for (var t = lid.y; t < rows; t += COL_TILE) {
        let image_y = u32(clamp(i32(p.band_y0 + y0 + t) - i32(r), 0, last));
        let mid_y = min(image_y - min(image_y, p.in_y0), p.rows_in - 1u);
        col_tile[t * COL_TILE + lid.x] = mid[mid_y * p.width + x];
    }
    workgroupBarrier();
    let ox = x0 + lid.x;
    let oy = y0 + lid.y;
    if (ox < p.width && oy < p.rows_out) {
        var acc = 0u;
        for (var k = 0u; k <= 2u * r; k++) {
            acc += weights[k] * col_tile[(lid.y + k) * COL_TILE + lid.x];
        }
        let value = (acc + (1u << 23u)) >> 24u;
        let i = oy * p.width + ox;
        atomicOr(&dst[i >> 2u], value << ((i & 3u) * 8u));
    }
}
