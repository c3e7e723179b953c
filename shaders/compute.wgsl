// The GPU's compute ceiling for the synthetic work (src/pixel/work.rs): rounds of the same 3-op
// hash in registers, with no memory traffic beside one rare store.
//
// Each invocation runs 4 independent chains, as the 8-bit kernel does for its 4 gray pixels per
// output word. Chain c = 4 * invocation + j starts at h = c + 0x9E3779B9. A round is a bijection
// of u32 (xorshift, then a multiply by an odd number), so after `rounds` rounds exactly one
// chain of the dispatch holds `wanted`: that chain writes its index + 1 into `found[0]`, which
// the host checks. The store depends on every round, so no compiler may drop the loop.

struct Params {
    rounds: u32,
    wanted: u32,
    padding0: u32,
    padding1: u32,
}

@group(0) @binding(0) var<storage, read_write> found: array<u32>;
@group(0) @binding(1) var<uniform> params: Params;

const WG: u32 = 64u;

@compute @workgroup_size(WG)
fn rounds_only(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.y * (groups.x * WG) + gid.x;
    let c = 4u * i;
    var h0 = c + 0x9E3779B9u;
    var h1 = c + 1u + 0x9E3779B9u;
    var h2 = c + 2u + 0x9E3779B9u;
    var h3 = c + 3u + 0x9E3779B9u;
    for (var r = 0u; r < params.rounds; r++) {
        h0 = (h0 ^ (h0 >> 15u)) * 0x2C1B3C6Du;
        h1 = (h1 ^ (h1 >> 15u)) * 0x2C1B3C6Du;
        h2 = (h2 ^ (h2 >> 15u)) * 0x2C1B3C6Du;
        h3 = (h3 ^ (h3 >> 15u)) * 0x2C1B3C6Du;
    }
    if (h0 == params.wanted) {
        found[0] = c + 1u;
    }
    if (h1 == params.wanted) {
        found[0] = c + 2u;
    }
    if (h2 == params.wanted) {
        found[0] = c + 3u;
    }
    if (h3 == params.wanted) {
        found[0] = c + 4u;
    }
}
