//! Huffman codes for deflate: length-limited code lengths from symbol frequencies, and the
//! canonical codes for given lengths (RFC 1951, 3.2.2), bit-reversed for LSB-first writing.

/// Canonical Huffman codes, bit-reversed for LSB-first writing: `code | len << 16`.
pub(crate) fn canonical_codes(lengths: &[u8]) -> Vec<u32> {
    let mut count = [0u32; 16];
    for &l in lengths {
        count[usize::from(l)] += 1;
    }
    count[0] = 0;
    let mut next = [0u32; 16];
    let mut code = 0;
    for len in 1..16 {
        code = (code + count[len - 1]) << 1;
        next[len] = code;
    }
    lengths
        .iter()
        .map(|&l| {
            if l == 0 {
                return 0;
            }
            let c = next[usize::from(l)];
            next[usize::from(l)] += 1;
            (c.reverse_bits() >> (32 - u32::from(l))) | (u32::from(l) << 16)
        })
        .collect()
}

/// Huffman code lengths for `freqs`, none longer than `limit`; at least two symbols get a code
/// so the code is complete.
pub(crate) fn code_lengths(freqs: &[u32], limit: u8) -> Vec<u8> {
    let mut freqs: Vec<u64> = freqs.iter().map(|&f| u64::from(f)).collect();
    let used = freqs.iter().filter(|&&f| f > 0).count();
    for f in freqs.iter_mut().filter(|f| **f == 0).take(2usize.saturating_sub(used)) {
        *f = 1;
    }
    loop {
        let lengths = huffman_lengths(&freqs);
        if lengths.iter().all(|&l| l <= limit) {
            return lengths;
        }
        // Flatten the distribution and try again; converges in a few rounds.
        for f in freqs.iter_mut().filter(|f| **f > 0) {
            *f = (*f >> 1).max(1);
        }
    }
}

/// Unlimited Huffman code lengths (0 for unused symbols).
fn huffman_lengths(freqs: &[u64]) -> Vec<u8> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut parent: Vec<usize> = vec![usize::MAX; freqs.len()];
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> =
        freqs.iter().enumerate().filter(|(_, f)| **f > 0).map(|(i, &f)| Reverse((f, i))).collect();
    while heap.len() > 1 {
        let (Some(Reverse((fa, a))), Some(Reverse((fb, b)))) = (heap.pop(), heap.pop()) else { break };
        let node = parent.len();
        parent.push(usize::MAX);
        parent[a] = node;
        parent[b] = node;
        heap.push(Reverse((fa + fb, node)));
    }
    (0..freqs.len())
        .map(|i| {
            if freqs[i] == 0 {
                return 0;
            }
            let (mut depth, mut n) = (0u8, i);
            while parent[n] != usize::MAX {
                n = parent[n];
                depth = depth.saturating_add(1);
            }
            depth
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::io::codecs::png::huffman::*;

    #[test]
    fn lengths_respect_the_limit_and_form_a_complete_code() {
        // Fibonacci-like frequencies force deep trees without a limit.
        let mut freqs: Vec<u32> = vec![1, 1];
        while freqs.len() < 30 {
            let next = freqs[freqs.len() - 1].saturating_add(freqs[freqs.len() - 2]);
            freqs.push(next);
        }
        freqs.extend([0, 0, 5]);
        let lengths = code_lengths(&freqs, 15);
        assert!(lengths.iter().all(|&l| l <= 15));
        assert_eq!(lengths[30], 0, "unused symbols get no code");
        let kraft: f64 = lengths.iter().filter(|&&l| l > 0).map(|&l| 0.5f64.powi(i32::from(l))).sum();
        assert!((kraft - 1.0).abs() < 1e-12, "complete code: Kraft sum {kraft}");
    }

    #[test]
    fn canonical_codes_follow_rfc_1951() {
        // The example of RFC 1951 3.2.2: lengths (3, 3, 3, 3, 3, 2, 4, 4) give
        // 010, 011, 100, 101, 110, 00, 1110, 1111 (here bit-reversed).
        let codes = canonical_codes(&[3, 3, 3, 3, 3, 2, 4, 4]);
        let reversed = |code: u32, len: u32| code.reverse_bits() >> (32 - len) | len << 16;
        let rfc =
            [(0b010, 3), (0b011, 3), (0b100, 3), (0b101, 3), (0b110, 3), (0b00, 2), (0b1110, 4), (0b1111, 4)];
        assert_eq!(codes, rfc.map(|(code, len)| reversed(code, len)));
        // A single symbol still gets a complete two-symbol code.
        assert_eq!(code_lengths(&[0, 7, 0], 15), [1, 1, 0]);
    }
}
