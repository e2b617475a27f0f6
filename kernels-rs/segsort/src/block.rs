//! The block-level stable sort.
use gpu_device::mem::{ld_global, stg, GlobalWord};
use gpu_device::thread::{sync_threads, thread_idx_x};
use segmerge_kernels::block::{merge_from, store_items, Items};
use segmerge_kernels::{SortKey, VT};

/// Shared bytes [`block_sort`] needs for `NT` threads and key type `K`.
pub const fn shared_bytes<K>(nt: u32) -> u32 {
    nt * VT * (core::mem::size_of::<K>() as u32 + 4)
}

/// Stable sort by key of the `count <= NT * VT` items at `keys` / `vals` into `keys_out` /
/// `vals_out` (which may be the inputs: everything is read before anything is written). Values
/// move only when `VALUES`. Every thread of the `NT`-thread block must call.
///
/// # Safety
/// `smem` holds [`shared_bytes::<K>(NT)`](shared_bytes) bytes of 16-byte aligned shared memory;
/// the inputs and outputs hold `count` items.
#[inline(always)]
pub unsafe fn block_sort<K: SortKey + GlobalWord, const VALUES: bool, const NT: u32>(
    smem: *mut u8,
    keys: *const K,
    vals: *const u32,
    count: u32,
    keys_out: *mut K,
    vals_out: *mut u32,
) {
    let tid = thread_idx_x();
    let nv = NT * VT;
    let sk = smem as *mut K;
    // SAFETY: shared indices < nv (values after the nv keys); global ones < count.
    unsafe {
        let sv = sk.add(nv as usize) as *mut u32;
        let mut i = tid;
        while i < nv {
            *sk.add(i as usize) = if i < count { ld_global(keys.add(i as usize)) } else { K::MAX };
            if VALUES {
                *sv.add(i as usize) = if i < count { ld_global(vals.add(i as usize)) } else { 0 };
            }
            i += NT;
        }
        sync_threads();
        let first = tid * VT;
        let mut it = Items { keys: [K::MAX; VT as usize], vals: [0; VT as usize] };
        for k in 0..VT as usize {
            it.keys[k] = *sk.add(first as usize + k);
            if VALUES {
                it.vals[k] = *sv.add(first as usize + k);
            }
        }
        // Odd-even transposition sort of the thread's VT items; strict `<` keeps it stable.
        for pass in 0..VT as usize {
            let mut k = pass & 1;
            while k + 1 < VT as usize {
                if it.keys[k + 1] < it.keys[k] {
                    it.keys.swap(k, k + 1);
                    if VALUES {
                        it.vals.swap(k, k + 1);
                    }
                }
                k += 2;
            }
        }
        store_items::<K, VALUES>(sk, sv, first, &it);
        let mut coop = 2;
        while coop <= NT {
            let half = coop / 2 * VT;
            let start = (tid / coop) * coop * VT;
            let diag = (tid % coop) * VT;
            it = merge_from::<K, VALUES>(sk, sv, start, half, start + half, half, diag);
            sync_threads();
            store_items::<K, VALUES>(sk, sv, first, &it);
            coop *= 2;
        }
        let mut i = tid;
        while i < count {
            stg(keys_out.add(i as usize), *sk.add(i as usize));
            if VALUES {
                stg(vals_out.add(i as usize), *sv.add(i as usize));
            }
            i += NT;
        }
    }
}
