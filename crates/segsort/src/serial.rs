//! The serial twin: the specification, in plain loops (stable sorts from the standard library).

use crate::TileSize;

/// Stable sort by key of every consecutive segment of `block` pairs (the last may be shorter).
///
/// ```
/// use gpu_segsort::{serial, TileSize};
/// let mut k: Vec<u32> = (0..256).rev().collect();
/// let mut v: Vec<u32> = (0..256).collect();
/// serial::sort_tiles(TileSize::T128, &mut k, Some(&mut v));
/// assert_eq!((k[0], v[0], k[128], v[128]), (128, 127, 0, 255));
/// ```
pub fn sort_tiles(block: TileSize, keys: &mut [u32], values: Option<&mut [u32]>) {
    let b = block.len() as usize;
    match values {
        Some(values) => {
            for (ks, vs) in keys.chunks_mut(b).zip(values.chunks_mut(b)) {
                sort_pairs(ks, vs);
            }
        }
        None => keys.chunks_mut(b).for_each(|ks| ks.sort()),
    }
}

/// Stable sort by key of every segment `offsets[i]..offsets[i + 1]` (CSR style; `offsets` valid:
/// starts at 0, nondecreasing, ends at `keys.len()`).
///
/// ```
/// let (mut k, mut v) = (vec![3, 1, 1, 9, 2, 7], vec![0, 1, 2, 3, 4, 5]);
/// gpu_segsort::serial::sort_segments(&[0, 3, 3, 6], &mut k, Some(&mut v));
/// assert_eq!((k, v), (vec![1, 1, 3, 2, 7, 9], vec![1, 2, 0, 4, 5, 3]));
/// ```
pub fn sort_segments(offsets: &[u32], keys: &mut [u32], mut values: Option<&mut [u32]>) {
    for w in offsets.windows(2) {
        let r = w[0] as usize..w[1] as usize;
        match values.as_deref_mut() {
            Some(vs) => sort_pairs(&mut keys[r.clone()], &mut vs[r]),
            None => keys[r].sort(),
        }
    }
}

/// Stable sort of `(keys[i], values[i])` by key.
pub fn sort_pairs(keys: &mut [u32], values: &mut [u32]) {
    let mut p: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
    p.sort_by_key(|&(k, _)| k); // stable
    for (i, (k, v)) in p.into_iter().enumerate() {
        keys[i] = k;
        values[i] = v;
    }
}

/// Stable sort of the pairs by key, into new vectors: what [`crate::Segsort::sort_pairs`]
/// computes.
///
/// ```
/// let (k, v) = gpu_segsort::serial::sorted_pairs(&[3, 1, 3, 0], &[0, 1, 2, 3]);
/// assert_eq!((k, v), (vec![0, 1, 3, 3], vec![3, 1, 0, 2]));
/// ```
pub fn sorted_pairs(keys: &[u32], values: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let mut p: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
    p.sort_by_key(|&(k, _)| k); // stable
    p.into_iter().unzip()
}
