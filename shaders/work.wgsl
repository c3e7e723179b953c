// The synthetic work's hash (src/pixel/work.rs), shared by grayscale.wgsl and compute.wgsl
// (src/shaders.rs puts this file before each): `rounds` rounds of h = (h ^ (h >> 15)) * C.
//
// The rounds run in blocks of 32 written out, then the rest by its bits (no loop). llvmpipe stops every
// loop of an invocation, without a word, once their rounds add up to 65,535 (its loop limiter):
// a 4-pixel invocation at 17,000 rounds a pixel came out wrong. In blocks, the most rounds a
// pixel takes (src/pixel/work.rs, 2^16) cost a 4-pixel invocation 4 x 2,049 loop rounds, and
// the compute ceiling's most (2^20) 32,769. Blocks of 32 also ran lavapipe's worked
// kernel at 1,024 rounds in 113 ms a megapixel where blocks of 128 took 125 and a plain loop
// about 470 (its loops cost more than their bodies); larger blocks slow every kernel down.

fn hash_round(h: u32) -> u32 {
    return (h ^ (h >> 15u)) * 0x2C1B3C6Du;
}

// 2, 4, ... 32 rounds written out (each function inlined by every compiler).
fn hash_round2(h: u32) -> u32 {
    return hash_round(hash_round(h));
}

fn hash_round4(h: u32) -> u32 {
    return hash_round2(hash_round2(h));
}

fn hash_round8(h: u32) -> u32 {
    return hash_round4(hash_round4(h));
}

fn hash_round16(h: u32) -> u32 {
    return hash_round8(hash_round8(h));
}

fn hash_round32(h: u32) -> u32 {
    return hash_round16(hash_round16(h));
}

fn hash_rounds(h0: u32, rounds: u32) -> u32 {
    var h = h0;
    for (var b = 0u; b < rounds / 32u; b++) {
        h = hash_round32(h);
    }
    // The rest, under 32, by its bits: branches on a uniform value, no loop.
    let rest = rounds % 32u;
    if ((rest & 16u) != 0u) {
        h = hash_round16(h);
    }
    if ((rest & 8u) != 0u) {
        h = hash_round8(h);
    }
    if ((rest & 4u) != 0u) {
        h = hash_round4(h);
    }
    if ((rest & 2u) != 0u) {
        h = hash_round2(h);
    }
    if ((rest & 1u) != 0u) {
        h = hash_round(h);
    }
    return h;
}
