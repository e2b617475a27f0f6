//! The serial twin: plain loops with the exact semantics of the GPU calls (the specification).
//! Keys `>= bins` are never counted, as on the GPU; [`first_out_of_range`] is what the checked
//! calls report.

/// Counts of the keys in `[0, bins)`: `counts[k]` = number of `i` with `keys[i] == k`.
///
/// ```
/// assert_eq!(gpu_histogram::serial::histogram(&[2, 0, 2, 7], 3), vec![1, 0, 2]);
/// ```
pub fn histogram(keys: &[u32], bins: u32) -> Vec<u32> {
    let mut counts = vec![0u32; bins as usize];
    for &k in keys {
        if k < bins {
            counts[k as usize] += 1;
        }
    }
    counts
}

/// Index of the first key `>= bins`, if any.
pub fn first_out_of_range(keys: &[u32], bins: u32) -> Option<usize> {
    keys.iter().position(|&k| k >= bins)
}

/// Index-to-pointers: `bins + 1` offsets, `ptr[k]` = number of keys `< k` (keys `>= bins`
/// ignored). From sorted COO row indices this is the CSR row pointer.
///
/// ```
/// assert_eq!(gpu_histogram::serial::index_to_pointers(&[0, 0, 2, 2, 2], 4), vec![0, 2, 2, 5, 5]);
/// ```
pub fn index_to_pointers(keys: &[u32], bins: u32) -> Vec<u32> {
    let counts = histogram(keys, bins);
    let mut ptr = Vec::with_capacity(counts.len() + 1);
    let mut acc = 0u32;
    ptr.push(0);
    for c in counts {
        acc += c;
        ptr.push(acc);
    }
    ptr
}

/// Partition `p` of `parts` contiguous partitions of `n` keys, as `begin..end`
/// (`chunk = ceil(n / parts)`; trailing partitions may be empty).
pub fn partition_range(n: usize, parts: usize, p: usize) -> std::ops::Range<usize> {
    let (b, e) = histogram_kernels::partition_range(n as u64, parts as u64, p as u64);
    b as usize..e as usize
}

/// The partitioned counts before the vertical scan: a `(parts + 1) × bins` row-major table whose
/// row `p + 1` holds the counts of partition `p` (row 0 is zero), and `intra[i]` = number of
/// earlier keys of the same partition equal to `keys[i]` (`u32::MAX` for keys `>= bins`).
///
/// ```
/// // keys [1, 0, 1 | 1, 1], bins 2, parts 2 (chunk 3)
/// let (table, intra) = gpu_histogram::serial::partition_counts(&[1, 0, 1, 1, 1], 2, 2);
/// assert_eq!(table, vec![0, 0, /* p0 */ 1, 2, /* p1 */ 0, 2]);
/// assert_eq!(intra, vec![0, 0, 1, 0, 1]);
/// ```
pub fn partition_counts(keys: &[u32], bins: u32, parts: usize) -> (Vec<u32>, Vec<u32>) {
    let b = bins as usize;
    let mut table = vec![0u32; (parts + 1) * b];
    let mut intra = vec![u32::MAX; keys.len()];
    for p in 0..parts {
        let row = &mut table[(p + 1) * b..(p + 2) * b];
        for i in partition_range(keys.len(), parts, p) {
            let k = keys[i];
            if k < bins {
                intra[i] = row[k as usize];
                row[k as usize] += 1;
            }
        }
    }
    (table, intra)
}

/// Inclusive scan down every column of a row-major table of `bins` columns (row 0 unchanged
/// apart from being the start): afterwards row `r` holds the sum of rows `0..=r`. Wrapping.
///
/// ```
/// let mut t = vec![0, 0, 1, 2, 0, 2];
/// gpu_histogram::serial::vertical_scan(&mut t, 2);
/// assert_eq!(t, vec![0, 0, 1, 2, 1, 4]);
/// ```
pub fn vertical_scan(table: &mut [u32], bins: usize) {
    if bins == 0 {
        return;
    }
    for r in 1..table.len() / bins {
        for b in 0..bins {
            table[r * bins + b] = table[r * bins + b].wrapping_add(table[(r - 1) * bins + b]);
        }
    }
}

/// ScanTrans's `inter` and `intra`: [`partition_counts`] followed by [`vertical_scan`], so row
/// `p` of the table holds, per key, how many keys of partitions `< p` equal it, and row `parts`
/// holds the totals. Key `i` of partition `p` lands at `ptr[k] + table[p][k] + intra[i]` in a
/// stable counting sort.
pub fn partitioned(keys: &[u32], bins: u32, parts: usize) -> (Vec<u32>, Vec<u32>) {
    let (mut table, intra) = partition_counts(keys, bins, parts);
    vertical_scan(&mut table, bins as usize);
    (table, intra)
}
