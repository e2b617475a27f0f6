//! Block-level merge building blocks over keys (and optional `u32` values) in shared memory.
//! The caller owns the shared memory; functions that contain barriers say so.
use gpu_device::thread::sync_threads;

use crate::{merge_path, SortKey, VT};

/// `VT` keys and values held by one thread.
pub struct Items<K> {
    /// Keys (padding past the valid ones).
    pub keys: [K; VT as usize],
    /// Values (unused when sorting keys only).
    pub vals: [u32; VT as usize],
}

/// Merges `VT` items serially, starting at `ai` in run A (shared indices `[ai, a_end)`) and `bi`
/// in run B (`[bi, b_end)`), both in the shared arrays `sk` (keys) / `sv` (values, read only
/// when `VALUES`). Stable: A first on equal keys. Items past both ends come out as `K::MAX`.
///
/// # Safety
/// `sk` (and `sv` when `VALUES`) cover every index below `a_end` and `b_end`.
#[inline(always)]
pub unsafe fn serial_merge<K: SortKey, const VALUES: bool>(
    sk: *const K,
    sv: *const u32,
    mut ai: u32,
    a_end: u32,
    mut bi: u32,
    b_end: u32,
) -> Items<K> {
    let mut out = Items { keys: [K::MAX; VT as usize], vals: [0; VT as usize] };
    // SAFETY: ai < a_end and bi < b_end whenever read.
    unsafe {
        let mut ka = if ai < a_end { *sk.add(ai as usize) } else { K::MAX };
        let mut kb = if bi < b_end { *sk.add(bi as usize) } else { K::MAX };
        for k in 0..VT as usize {
            let a_ok = ai < a_end;
            let b_ok = bi < b_end;
            let take_a = a_ok && (!b_ok || !(kb < ka));
            if take_a {
                out.keys[k] = ka;
                if VALUES {
                    out.vals[k] = *sv.add(ai as usize);
                }
                ai += 1;
                ka = if ai < a_end { *sk.add(ai as usize) } else { K::MAX };
            } else if b_ok {
                out.keys[k] = kb;
                if VALUES {
                    out.vals[k] = *sv.add(bi as usize);
                }
                bi += 1;
                kb = if bi < b_end { *sk.add(bi as usize) } else { K::MAX };
            }
        }
    }
    out
}

/// This thread's `VT` items of the stable merge of shared runs A = `[a0, a0 + a_len)` and
/// B = `[b0, b0 + b_len)`, starting at merged position `diag`.
///
/// # Safety
/// As [`serial_merge`].
#[inline(always)]
pub unsafe fn merge_from<K: SortKey, const VALUES: bool>(
    sk: *const K,
    sv: *const u32,
    a0: u32,
    a_len: u32,
    b0: u32,
    b_len: u32,
    diag: u32,
) -> Items<K> {
    // SAFETY: merge_path reads A below a_len and B below b_len.
    unsafe {
        let split =
            merge_path(|i| *sk.add((a0 as u64 + i) as usize), a_len as u64, |j| *sk.add((b0 as u64 + j) as usize), b_len as u64, diag as u64) as u32;
        serial_merge::<K, VALUES>(sk, sv, a0 + split, a0 + a_len, b0 + (diag - split), b0 + b_len)
    }
}

/// Writes this thread's items to shared `[first, first + VT)`, then synchronizes the block.
///
/// # Safety
/// `sk`/`sv` cover those indices; every thread of the block must call.
#[inline(always)]
pub unsafe fn store_items<K: SortKey, const VALUES: bool>(sk: *mut K, sv: *mut u32, first: u32, items: &Items<K>) {
    // SAFETY: forwarded to the caller.
    unsafe {
        for k in 0..VT as usize {
            *sk.add(first as usize + k) = items.keys[k];
            if VALUES {
                *sv.add(first as usize + k) = items.vals[k];
            }
        }
    }
    sync_threads();
}
