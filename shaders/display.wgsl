// Gray output words -> an rgba8unorm texture tile for display, so the GUI shows a GPU result
// without reading it back. One invocation per displayed pixel of the region where one band of
// output meets one texture tile.

struct Params {
    // Image width in pixels.
    width: u32,
    // First image row held by `gray` (the band's first row).
    band_row0: u32,
    // The region to write, in image pixels.
    x0: u32,
    y0: u32,
    w: u32,
    h: u32,
    // The tile's top-left corner, in image pixels.
    tile_x0: u32,
    tile_y0: u32,
    // Bytes per output pixel: 1 = L8, 2 = LA8, 3 = L16 (2 bytes), 4 = LA16.
    out_layout: u32,
}

@group(0) @binding(0) var<storage, read> gray: array<u32>;
@group(0) @binding(1) var<uniform> p: Params;
@group(0) @binding(2) var tile: texture_storage_2d<rgba8unorm, write>;

fn to8(v16: u32) -> f32 {
    return f32(v16) / 65535.0;
}

@compute @workgroup_size(16, 16)
fn expand(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= p.w || gid.y >= p.h) {
        return;
    }
    let x = p.x0 + gid.x;
    let y = p.y0 + gid.y;
    let i = (y - p.band_row0) * p.width + x;
    var g = 0.0;
    var a = 1.0;
    switch p.out_layout {
        case 1u: {
            g = f32((gray[i / 4u] >> (8u * (i % 4u))) & 0xffu) / 255.0;
        }
        case 2u: {
            let half = (gray[i / 2u] >> (16u * (i % 2u))) & 0xffffu;
            g = f32(half & 0xffu) / 255.0;
            a = f32(half >> 8u) / 255.0;
        }
        case 3u: {
            g = to8((gray[i / 2u] >> (16u * (i % 2u))) & 0xffffu);
        }
        default: {
            let w = gray[i];
            g = to8(w & 0xffffu);
            a = to8(w >> 16u);
        }
    }
    textureStore(tile, vec2<u32>(x - p.tile_x0, y - p.tile_y0), vec4<f32>(g, g, g, a));
}
