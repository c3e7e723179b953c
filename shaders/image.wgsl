// Draws one image rectangle of the viewer: a textured quad, premultiplied alpha, over an optional
// checkerboard. Used instead of egui's own shader for the images, which are most of the window:
// this one has no branches, which a software adapter (llvmpipe) would run on every pixel.

struct Draw {
    // The quad in normalized device coordinates: x0, y0, x1, y1.
    rect: vec4<f32>,
    // The texture coordinates at its corners: u0, v0, u1, v1.
    uv: vec4<f32>,
    // Checker square side in physical pixels, and 1 to draw the checkerboard (0 not to).
    checker_side: f32,
    checker: f32,
    // 1 when the texture is one channel of gray (R8Unorm samples as (v, 0, 0, 1)), else 0.
    gray: f32,
    pad: f32,
}

@group(0) @binding(0) var<uniform> d: Draw;
@group(0) @binding(1) var image: texture_2d<f32>;
@group(0) @binding(2) var image_sampler: sampler;

struct VertexOut {
    @builtin(position) position: vec4<f32>,
    @location(0) uv: vec2<f32>,
}

@vertex
fn vs_main(@builtin(vertex_index) i: u32) -> VertexOut {
    // A triangle strip of four corners.
    let corner = vec2<f32>(f32(i & 1u), f32(i >> 1u));
    var out: VertexOut;
    out.position = vec4<f32>(mix(d.rect.xy, d.rect.zw, corner), 0.0, 1.0);
    out.uv = mix(d.uv.xy, d.uv.zw, corner);
    return out;
}

// The texture's colour: a gray texture's one channel spread to red, green and blue (a mix by
// 0 or 1 is exact, and has no branch).
fn sample(uv: vec2<f32>) -> vec4<f32> {
    let t = textureSample(image, image_sampler, uv);
    return mix(t, vec4<f32>(t.r, t.r, t.r, 1.0), d.gray);
}

fn over_checker(c: vec4<f32>, pixel: vec2<f32>) -> vec4<f32> {
    let cell = floor(pixel / d.checker_side);
    let light = abs(cell.x + cell.y) % 2.0;
    let grey = mix(70.0, 110.0, light) / 255.0;
    // Premultiplied: the image over an opaque checker where asked, else the image as it is.
    let under = vec4<f32>(grey, grey, grey, 1.0) * d.checker;
    return c + under * (1.0 - c.a);
}

// For a framebuffer that stores gamma-encoded values (the texture holds them too).
@fragment
fn fs_gamma(in: VertexOut) -> @location(0) vec4<f32> {
    return over_checker(sample(in.uv), in.position.xy);
}

fn linear_from_gamma(srgb: vec3<f32>) -> vec3<f32> {
    let low = srgb / 12.92;
    let high = pow((srgb + 0.055) / 1.055, vec3<f32>(2.4));
    return select(high, low, srgb < vec3<f32>(0.04045));
}

// For an sRGB framebuffer, which expects linear values.
@fragment
fn fs_linear(in: VertexOut) -> @location(0) vec4<f32> {
    let c = over_checker(sample(in.uv), in.position.xy);
    return vec4<f32>(linear_from_gamma(c.rgb), c.a);
}
