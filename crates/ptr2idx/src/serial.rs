//! The serial twin: the specification, in plain loops.

use crate::Error;

/// Segment index of every position: `out[j] = i` for `offsets[i] <= j < offsets[i + 1]`.
/// `offsets` must be valid (see [`validate`]); positions covered by no segment are not written
/// (there are none when `offsets` is valid).
///
/// ```
/// assert_eq!(gpu_ptr2idx::serial::ptr2idx(&[0u32, 2, 2, 5]), vec![0, 0, 2, 2, 2]);
/// ```
pub fn ptr2idx<O: Copy + Into<u64>>(offsets: &[O]) -> Vec<u32> {
    let nnz = offsets.last().map_or(0, |&o| o.into()) as usize;
    let mut out = vec![0; nnz];
    for i in 0..offsets.len().saturating_sub(1) {
        for j in offsets[i].into()..offsets[i + 1].into() {
            out[j as usize] = i as u32;
        }
    }
    out
}

/// Checks that `offsets` has at least one entry, starts at 0, never decreases and ends at `nnz`;
/// the error names the first bad position (0 for a bad start, `i` when `offsets[i] <
/// offsets[i - 1]`, `m` for a bad end), as the GPU check does.
///
/// ```
/// use gpu_ptr2idx::{serial::validate, Error};
/// assert!(validate(&[0u32, 2, 2, 5], 5).is_ok());
/// assert!(matches!(validate(&[0u64, 3, 2], 2), Err(Error::InvalidOffsets { index: 2, .. })));
/// ```
///
/// # Errors
/// [`Error::EmptyOffsets`], or [`Error::InvalidOffsets`] naming the first bad position.
pub fn validate<O: Copy + Into<u64>>(offsets: &[O], nnz: u64) -> Result<(), Error> {
    let m = offsets.len().checked_sub(1).ok_or(Error::EmptyOffsets)?;
    let o = |i: usize| -> u64 { offsets[i].into() };
    let fault = if o(0) != 0 {
        Some(gpu_runtime::check::OffsetFault::Start { value: o(0) })
    } else if let Some(i) = (1..=m).find(|&i| o(i - 1) > o(i)) {
        Some(gpu_runtime::check::OffsetFault::Decrease { position: i as u64 })
    } else if o(m) != nnz {
        Some(gpu_runtime::check::OffsetFault::End { position: m as u64, value: o(m), expected: nnz })
    } else {
        None
    };
    match fault {
        Some(f) => Err(Error::InvalidOffsets { index: f.position(), reason: f.to_string() }),
        None => Ok(()),
    }
}
