// The GPU's compute ceiling for the synthetic work (src/pixel/work.rs): rounds of the same 3-op
// hash in registers (`hash_rounds`, work.wgsl, put before this file, as the kernel runs it), with
// no memory traffic beside one rare store.
//
// Each invocation runs one chain, as the kernel runs one per gray value: invocation i starts at
// h = i + 0x9E3779B9. A round is a bijection of u32 (xorshift, then a multiply by an odd
// number), so after `rounds` rounds exactly one invocation of the dispatch holds `wanted`: it
// writes its index + 1 into `found[0]`, which the host checks. The store depends on every
// round, so no compiler may drop the loop.

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
    let h = hash_rounds(i + 0x9E3779B9u, params.rounds);
    if (h == params.wanted) {
        found[0] = i + 1u;
    }
}
