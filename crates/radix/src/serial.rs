//! The serial twin: a stable sort by the low `end_bit` bits of the keys (higher bits are
//! ignored and travel with the key), carrying the payloads.
//!
//! ```
//! use gpu_radix::serial;
//! // Sorted by the low 4 bits only: 0x12 (2) before 0x03 (3); stable on ties.
//! let (k, v) = serial::sort_pairs(&[0x03, 0x12, 0x22], &[0u32, 1, 2], 4);
//! assert_eq!((k, v), (vec![0x12, 0x22, 0x03], vec![1, 2, 0]));
//! ```

/// The mask of the low `end_bit` bits (all bits from 32 on).
pub fn mask(end_bit: u32) -> u32 {
    if end_bit >= 32 {
        u32::MAX
    } else {
        (1u32 << end_bit) - 1
    }
}

/// Keys stably sorted by their low `end_bit` bits.
pub fn sort_keys(keys: &[u32], end_bit: u32) -> Vec<u32> {
    let mut k = keys.to_vec();
    k.sort_by_key(|&x| x & mask(end_bit)); // stable
    k
}

/// Keys and one payload, stably sorted by the keys' low `end_bit` bits.
pub fn sort_pairs<V: Copy>(keys: &[u32], values: &[V], end_bit: u32) -> (Vec<u32>, Vec<V>) {
    let mut p: Vec<(u32, V)> = keys.iter().copied().zip(values.iter().copied()).collect();
    p.sort_by_key(|&(k, _)| k & mask(end_bit));
    p.into_iter().unzip()
}

/// Keys and two payloads, stably sorted by the keys' low `end_bit` bits.
pub fn sort_triples<V: Copy>(keys: &[u32], first: &[u32], second: &[V], end_bit: u32) -> (Vec<u32>, Vec<u32>, Vec<V>) {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&i| keys[i] & mask(end_bit));
    (order.iter().map(|&i| keys[i]).collect(), order.iter().map(|&i| first[i]).collect(), order.iter().map(|&i| second[i]).collect())
}

/// Keys and two payloads grouped stably by the digit `(key >> shift) & (2^bits - 1)` (one pass of
/// [`crate::RadixSort::sort`] with `bits(shift..shift + bits)` in one pass).
///
/// ```
/// use gpu_radix::serial;
/// let (k, f, s) = serial::partition_triples(&[0x31, 0x12, 0x21], &[0, 1, 2], &[7u8, 8, 9], 4, 2);
/// assert_eq!((k, f, s), (vec![0x12, 0x21, 0x31], vec![1, 2, 0], vec![8, 9, 7]));
/// ```
pub fn partition_triples<V: Copy>(keys: &[u32], first: &[u32], second: &[V], shift: u32, bits: u32) -> (Vec<u32>, Vec<u32>, Vec<V>) {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&i| crate::digit(keys[i], shift, bits));
    (order.iter().map(|&i| keys[i]).collect(), order.iter().map(|&i| first[i]).collect(), order.iter().map(|&i| second[i]).collect())
}
