// The device's copy bandwidth as a kernel reaches it (STREAM's "copy"): every invocation moves
// 16-byte words from `src` to `dst`, striding by the whole grid, so a grid of any size covers
// buffers of any length. A copy command (copy_buffer_to_buffer) can run far below this on a
// real GPU; the probe keeps the faster of the two.

@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;

const WG: u32 = 256u;

@compute @workgroup_size(WG)
fn copy_words(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let stride = groups.x * WG;
    let len = arrayLength(&src);
    for (var i = gid.x; i < len; i += stride) {
        dst[i] = src[i];
    }
}
