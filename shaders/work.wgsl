// The synthetic work's hash (src/pixel/work.rs), shared by grayscale.wgsl and compute.wgsl
// (src/shaders.rs puts this file before each): `rounds` rounds of h = (h ^ (h >> 15)) * C.
//
// The rounds run in blocks of 128 written out, then the rest one by one. llvmpipe stops every
// loop of an invocation, without a word, once their rounds add up to 65,535 (its loop limiter):
// a 4-pixel invocation at 17,000 rounds a pixel came out wrong. In blocks, the most rounds
// `--work` takes (2^20) cost an invocation 4 x (8,192 + 127) loop rounds, and the ceiling's
// most (2^22) 32,895.

fn hash_round(h: u32) -> u32 {
    return (h ^ (h >> 15u)) * 0x2C1B3C6Du;
}

fn hash_round8(h0: u32) -> u32 {
    var h = h0;
    h = hash_round(h);
    h = hash_round(h);
    h = hash_round(h);
    h = hash_round(h);
    h = hash_round(h);
    h = hash_round(h);
    h = hash_round(h);
    h = hash_round(h);
    return h;
}

fn hash_round64(h0: u32) -> u32 {
    var h = h0;
    h = hash_round8(h);
    h = hash_round8(h);
    h = hash_round8(h);
    h = hash_round8(h);
    h = hash_round8(h);
    h = hash_round8(h);
    h = hash_round8(h);
    h = hash_round8(h);
    return h;
}

fn hash_rounds(h0: u32, rounds: u32) -> u32 {
    var h = h0;
    for (var b = 0u; b < rounds / 128u; b++) {
        h = hash_round64(hash_round64(h));
    }
    for (var i = 0u; i < rounds % 128u; i++) {
        h = hash_round(h);
    }
    return h;
}
