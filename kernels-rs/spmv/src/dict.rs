//! Values by index (CSR-VI: Kourtis, Goumas & Koziris, 2008): the set of a matrix's distinct
//! values (by bits), then each nonzero's index into the sorted table the host makes of it.
//!
//! - `spmv_dict_insert_{f32,f64}`: every value's bits into an open-addressing set of
//!   [`VI_SLOTS`] words (linear probing from [`vi_hash`], at most [`VI_PROBES`] slots); a value
//!   that finds no slot sets the *full* flag (too many values), after which the threads stop.
//! - `spmv_dict_index_{f32,f64}`: each nonzero's slot (found as it was placed), mapped through
//!   the host's slot → index table into one byte.
use gpu_device::atomic::{atomic_cas_u64, ld_relaxed_u32, ld_relaxed_u64, st_relaxed_u32};
use gpu_device::mem::{ldg, stg};
use gpu_device::thread::{grid_size_1d, index_1d_u64};

use crate::{vi_hash, DictArgs, VI_EMPTY, VI_PROBES, VI_SLOTS};

macro_rules! dict_kernels {
    ($t:ty, $insert:ident, $index:ident) => {
        /// Inserts the bits of `vals[k]`, `k < nnz`, into the set `slots` ([`VI_SLOTS`] words,
        /// [`VI_EMPTY`] where free); sets `*full` to 1 when a value finds no free slot among its
        /// [`VI_PROBES`] or its bits are [`VI_EMPTY`]. Threads stop once `*full` is set (the set
        /// is then incomplete, and the caller stores the values as they are).
        ///
        /// # Safety
        /// `vals` holds `nnz` values; `slots` [`VI_SLOTS`] words; `full` one word. Any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $insert(a: DictArgs<$t>) {
            let DictArgs { vals, slots, full, nnz, .. } = a;
            let mut k = index_1d_u64();
            while k < nnz {
                // SAFETY: k < nnz; slot indices masked below VI_SLOTS.
                unsafe {
                    if ld_relaxed_u32(full) != 0 {
                        return;
                    }
                    let b = ldg(vals.add(k as usize)).to_bits() as u64;
                    let mut placed = b != VI_EMPTY;
                    if placed {
                        placed = false;
                        let h = vi_hash(b);
                        let mut p = 0;
                        while p < VI_PROBES {
                            let s = slots.add(((h + p) & (VI_SLOTS - 1)) as usize);
                            // Most nonzeros find their value already in place: a load, no atomic.
                            let cur = ld_relaxed_u64(s);
                            if cur == b {
                                placed = true;
                                break;
                            }
                            if cur == VI_EMPTY {
                                let old = atomic_cas_u64(s, VI_EMPTY, b);
                                if old == VI_EMPTY || old == b {
                                    placed = true;
                                    break;
                                }
                            }
                            p += 1;
                        }
                    }
                    if !placed {
                        st_relaxed_u32(full, 1);
                        return;
                    }
                }
                k += grid_size_1d();
            }
        }

        /// `out[k]` = `map[s]` for the slot `s` holding the bits of `vals[k]`, `k < nnz` (0 for
        /// a value not in the set, which the caller rules out by running this only after a
        /// complete `spmv_dict_insert`).
        ///
        /// # Safety
        /// `vals` and `out` hold `nnz` items; `slots` [`VI_SLOTS`] words and `map` [`VI_SLOTS`]
        /// bytes. Any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $index(a: DictArgs<$t>) {
            let DictArgs { vals, slots, map, out, nnz, .. } = a;
            let mut k = index_1d_u64();
            while k < nnz {
                // SAFETY: k < nnz; slot indices masked below VI_SLOTS.
                unsafe {
                    let b = ldg(vals.add(k as usize)).to_bits() as u64;
                    let h = vi_hash(b);
                    let mut i = 0u8;
                    let mut p = 0;
                    while p < VI_PROBES {
                        let s = ((h + p) & (VI_SLOTS - 1)) as usize;
                        if ldg(slots.add(s)) == b {
                            i = ldg(map.add(s));
                            break;
                        }
                        p += 1;
                    }
                    stg(out.add(k as usize), i);
                }
                k += grid_size_1d();
            }
        }
    };
}

dict_kernels!(f32, spmv_dict_insert_f32, spmv_dict_index_f32);
dict_kernels!(f64, spmv_dict_insert_f64, spmv_dict_index_f64);
