//! One merge pass as device functions, for kernels of any module to instantiate: the tile
//! partition and the tile merge (the `segmerge` module's kernels are thin wrappers).
use gpu_device::mem::{ld_global, stg, GlobalWord};
use gpu_device::thread::{block_idx_x, grid_size_1d, index_1d_u64, sync_threads, thread_idx_x};

use crate::{block, merge_path, tile_range, MergeArgs, SortKey, NT, NV, VT};

/// `splits[t]` = items of run A among the first `d0` merged items of tile `t`'s pair, for every
/// tile `t < tiles` of a pass with runs of `s` (see [`tile_range`]).
///
/// # Safety
/// `keys` holds `n` items; `splits` holds `tiles` words; any 1-D grid ([`MergeArgs`]).
#[inline(always)]
pub unsafe fn partition<K: SortKey + GlobalWord>(a: &MergeArgs<K>) {
    let MergeArgs { keys, splits, n, s, tpp, tiles, .. } = *a;
    let mut t = index_1d_u64();
    while t < tiles {
        let (pb, a_len, b_len, d0, _) = tile_range(n, s, tpp, t);
        // SAFETY: the search reads A below a_len and B below b_len, inside the n items.
        let split =
            unsafe { merge_path(|i| ld_global(keys.add((pb + i) as usize)), a_len, |j| ld_global(keys.add((pb + a_len + j) as usize)), b_len, d0) };
        // SAFETY: t < tiles.
        unsafe { stg(splits.add(t as usize), split as u32) };
        t += grid_size_1d();
    }
}

/// One tile per block: merges its slice of A and of B (loaded to shared memory) and stores the
/// `d1 - d0` merged items at `pair_begin + d0` of the output.
///
/// # Safety
/// Inputs hold `n` items, outputs too (values only with `VALUES`); `splits` from
/// [`partition`]; `tiles` blocks of `NT` threads; `smem` holds `NV * (size_of::<K>() + 4)`
/// bytes of shared memory, 16-byte aligned ([`MergeArgs`]; `vals` and `vals_out` read only
/// with `VALUES`).
#[inline(always)]
pub unsafe fn merge<K: SortKey + GlobalWord, const VALUES: bool>(smem: *mut u8, a: &MergeArgs<K>) {
    let MergeArgs { keys, vals, splits, keys_out, vals_out, n, s, tpp, .. } = *a;
    let t = block_idx_x() as u64;
    let tid = thread_idx_x();
    let sk = smem as *mut K;
    // SAFETY: shared indices < NV (after the keys: NV values); global ones inside the pair.
    unsafe {
        let sv = sk.add(NV as usize) as *mut u32;
        let (pb, a_len, b_len, d0, d1) = tile_range(n, s, tpp, t);
        let a0 = ld_global(splits.add(t as usize)) as u64;
        let a1 = if d1 == a_len + b_len || (t + 1) % tpp == 0 { a_len } else { ld_global(splits.add(t as usize + 1)) as u64 };
        // On sorted runs the splits are monotone and this clamp changes nothing; on runs that are
        // not sorted (a caller's data) the searches need not be, and the clamp keeps the tile's
        // slices inside A and B with a_cnt + b_cnt = d1 - d0 <= NV: an unspecified merge, but no
        // access outside the buffers or the shared tile. (a0 lies in [d0 - b_len, min(d0, a_len)],
        // so the interval is never empty.)
        let a1 = a1.clamp(a0.max(d1.saturating_sub(b_len)), a_len.min(a0 + (d1 - d0)));
        let (b0, b1) = (d0 - a0, d1 - a1);
        let (a_cnt, b_cnt) = ((a1 - a0) as u32, (b1 - b0) as u32);
        let mut i = tid;
        while i < a_cnt + b_cnt {
            let g = if i < a_cnt { pb + a0 + i as u64 } else { pb + a_len + b0 + (i - a_cnt) as u64 };
            *sk.add(i as usize) = ld_global(keys.add(g as usize));
            if VALUES {
                *sv.add(i as usize) = ld_global(vals.add(g as usize));
            }
            i += NT;
        }
        sync_threads();
        let diag = (tid * VT).min(a_cnt + b_cnt);
        let items = block::merge_from::<K, VALUES>(sk, sv, 0, a_cnt, a_cnt, b_cnt, diag);
        sync_threads();
        block::store_items::<K, VALUES>(sk, sv, tid * VT, &items);
        let mut i = tid;
        while i < a_cnt + b_cnt {
            let g = (pb + d0 + i as u64) as usize;
            stg(keys_out.add(g), *sk.add(i as usize));
            if VALUES {
                stg(vals_out.add(g), *sv.add(i as usize));
            }
            i += NT;
        }
    }
}
