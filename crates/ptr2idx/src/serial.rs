//! The serial twin: the specification, in plain loops.

use crate::Error;

/// Segment index of every position: `out[j] = i` for `offsets[i] <= j < offsets[i + 1]`.
/// `offsets` must be valid (see [`validate`]); positions covered by no segment are not written
/// (there are none when `offsets` is valid).
///
/// ```
/// assert_eq!(gpu_ptr2idx::serial::ptr2idx(&[0, 2, 2, 5]), vec![0, 0, 2, 2, 2]);
/// ```
pub fn ptr2idx(offsets: &[u32]) -> Vec<u32> {
    let nnz = offsets.last().copied().unwrap_or(0) as usize;
    let mut out = vec![0; nnz];
    for i in 0..offsets.len().saturating_sub(1) {
        for j in offsets[i]..offsets[i + 1] {
            out[j as usize] = i as u32;
        }
    }
    out
}

/// Checks that `offsets` has at least one entry, starts at 0, never decreases and ends at `nnz`.
///
/// ```
/// use gpu_ptr2idx::{serial::validate, Error};
/// assert!(validate(&[0, 2, 2, 5], 5).is_ok());
/// assert!(matches!(validate(&[0, 3, 2], 2), Err(Error::InvalidOffsets { index: 1, .. })));
/// ```
pub fn validate(offsets: &[u32], nnz: u64) -> Result<(), Error> {
    let m = offsets.len().checked_sub(1).ok_or(Error::EmptyOffsets)?;
    if let Some(i) = offsets.windows(2).position(|w| w[0] > w[1]) {
        return Err(Error::InvalidOffsets { index: i as u64, reason: "offsets decrease after this index" });
    }
    if offsets[0] != 0 || offsets[m] as u64 != nnz {
        return Err(Error::InvalidOffsets { index: m as u64, reason: "offsets must start at 0 and end at nnz" });
    }
    Ok(())
}
