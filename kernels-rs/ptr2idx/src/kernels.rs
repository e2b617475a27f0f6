//! Kernels of PTX module `ptr2idx`.
use gpu_device::mem::{ld_global, ldg, stg, GlobalWord};
use gpu_device::static_shared;
use gpu_device::thread::{block_idx_x, grid_size_1d, index_1d_u64, sync_threads, thread_idx_x};

use crate::{merge_path, Ptr2IdxArgs, NT, NV, VT};

// Segment ends of this tile, then the segment of each position of this tile.
static_shared!(P2I_ENDS: [u32; NV as usize]);
static_shared!(P2I_ROWS: [u32; NV as usize]);

/// Offset words the kernels take: `u32`, or `u64` for more than `u32::MAX` positions.
trait Offset: GlobalWord + Into<u64> {}
impl Offset for u32 {}
impl Offset for u64 {}

/// `splits[t]` = segment ends among the first `min(t * NV, m + nnz)` merged items, for
/// `t in 0..=tiles`.
///
/// # Safety
/// `offsets` holds `m + 1` words; `splits` holds `tiles + 1`; any 1-D grid.
#[inline(always)]
unsafe fn partition<O: Offset>(offsets: *const O, m: u64, nnz: u64, tiles: u64, splits: *mut u64) {
    let mut t = index_1d_u64();
    while t <= tiles {
        let diag = (t * NV as u64).min(m + nnz);
        // SAFETY: merge_path only asks for i < m, and offsets holds m + 1 words.
        let s = merge_path(|i| unsafe { ldg(offsets.add(i as usize + 1)) }.into(), m, nnz, diag);
        // SAFETY: t <= tiles.
        unsafe { stg(splits.add(t as usize), s) };
        t += grid_size_1d();
    }
}

/// Writes `out[j]` = segment of position `j` for the positions of tile `blockIdx.x`. The tile's
/// segment ends are staged relative to its first position (`u32`: they lie within the tile
/// when the offsets are valid; clamped otherwise).
///
/// # Safety
/// `tiles` blocks of `NT` threads; `offsets` holds `m + 1` words, `splits` the `tiles + 1`
/// words of the partition kernel, `out` holds `nnz` words; `m < 2^32`.
#[inline(always)]
unsafe fn expand<O: Offset>(offsets: *const O, m: u64, nnz: u64, splits: *const u64, out: *mut u32) {
    let t = block_idx_x() as u64;
    let tid = thread_idx_x();
    // Shared-window addresses (LDS/STS; generic pointers cost 64-bit math and generic LD/ST).
    let (ends, rows) = (P2I_ENDS::smem(), P2I_ROWS::smem());
    // SAFETY: every shared index is < NV; global indices are checked against m and nnz.
    unsafe {
        let d0 = (t * NV as u64).min(m + nnz);
        let d1 = ((t + 1) * NV as u64).min(m + nnz);
        let i0 = ld_global(splits.add(t as usize)).min(m);
        // Clamp so the tile holds exactly d1 - d0 items even if offsets are malformed.
        let i1 = ld_global(splits.add(t as usize + 1)).clamp(i0, (i0 + (d1 - d0)).min(m));
        let (a_count, j0) = ((i1 - i0) as u32, d0 - i0);
        let b_count = ((d1 - d0) as u32 - a_count).min(nnz.saturating_sub(j0) as u32);
        let mut k = tid;
        while k < a_count {
            let end: u64 = ldg(offsets.add((i0 + k as u64) as usize + 1)).into();
            ends.add(k as usize).st(end.wrapping_sub(j0).min(u32::MAX as u64) as u32);
            k += NT;
        }
        sync_threads();
        // This thread's VT merge items start at local diagonal tid * VT.
        let diag = (tid * VT).min(a_count + b_count) as u64;
        let ends_at = |i: u64| ends.add(i as usize).ld() as u64;
        let mut ai = merge_path(ends_at, a_count as u64, b_count as u64, diag) as u32;
        let mut bi = diag as u32 - ai;
        for _ in 0..VT {
            if bi >= b_count && ai >= a_count {
                break;
            }
            let take_end = ai < a_count && (bi >= b_count || ends_at(ai as u64) <= bi as u64);
            if take_end {
                ai += 1;
            } else {
                rows.add(bi as usize).st((i0 + ai as u64) as u32);
                bi += 1;
            }
        }
        sync_threads();
        let mut k = tid;
        while k < b_count {
            stg(out.add((j0 + k as u64) as usize), rows.add(k as usize).ld());
            k += NT;
        }
    }
}

macro_rules! ptr2idx_kernels {
    ($partition:ident, $expand:ident, $o:ty) => {
        /// The partition ([`Ptr2IdxArgs`]): `splits[t]` = segment ends among the first `min(t * NV, m + nnz)`
        /// merged items, for `t in 0..=tiles`.
        ///
        /// # Safety
        /// `offsets` holds `m + 1` words; `splits` holds `tiles + 1`; any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $partition(a: Ptr2IdxArgs<$o>) {
            // SAFETY: forwarded.
            unsafe { partition(a.offsets, a.m, a.nnz, a.tiles, a.splits) }
        }

        /// The expansion: `out[j]` = segment of position `j` for the positions of tile
        /// `blockIdx.x`.
        ///
        /// # Safety
        /// `tiles` blocks of `NT` threads; `offsets` holds `m + 1` words, `splits` the
        /// `tiles + 1` words of the partition, `out` holds `nnz` words; `m < 2^32`.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $expand(a: Ptr2IdxArgs<$o>) {
            // SAFETY: forwarded.
            unsafe { expand(a.offsets, a.m, a.nnz, a.splits, a.out) }
        }
    };
}

ptr2idx_kernels!(ptr2idx_partition, ptr2idx_expand, u32);
ptr2idx_kernels!(ptr2idx_partition_u64, ptr2idx_expand_u64, u64);
