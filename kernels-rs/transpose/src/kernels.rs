//! Kernels of PTX module `transpose`.
use gpu_device::mem::{ldg_u32, ldg_u32x4, stg};
use gpu_device::thread::{grid_size_1d, index_1d_u64};

use crate::bucket::bucket_pass;
use crate::{scatter_slot, sorted_ptr_range};

/// `perm[j] = j` for `j < nnz`.
///
/// # Safety
/// `perm` holds `nnz` words; any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn transpose_iota(perm: *mut u32, nnz: u64) {
    let mut j = index_1d_u64();
    while j < nnz {
        // SAFETY: j < nnz.
        unsafe { *perm.add(j as usize) = j as u32 };
        j += grid_size_1d();
    }
}

/// The column pointer (`n + 1` words) from the `nnz` sorted column indices ([`sorted_ptr_range`]).
/// Each thread takes 4 consecutive keys a step with one 16-byte load (and the key before them),
/// so that a warp has 512 bytes in flight: one key a thread a step was bound by the load
/// latency at about 1 TB/s on an H100.
///
/// # Safety
/// `keys` holds `nnz` sorted words `< n`, `ptr` holds `n + 1`; any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn transpose_sorted_ptr(keys: *const u32, nnz: u64, n: u64, ptr: *mut u32) {
    let quads = nnz.div_ceil(4).max(1);
    let aligned = (keys as usize) % 16 == 0;
    let mut q = index_1d_u64();
    while q < quads {
        let i0 = 4 * q;
        // w[0] = keys[i0 - 1], w[1 + j] = keys[i0 + j] (those below nnz).
        let mut w = [0u32; 5];
        // SAFETY: every index read is below nnz; sorted_ptr_range returns ranges within
        // 0..=n and reads keys i - 1 (for i > 0) and i only, that is w[0..=4].
        unsafe {
            if i0 > 0 && i0 <= nnz {
                w[0] = ldg_u32(keys.add(i0 as usize - 1));
            }
            if aligned && i0 + 4 <= nnz {
                let [a, b, c, d] = ldg_u32x4(keys.add(i0 as usize));
                w[1..].copy_from_slice(&[a, b, c, d]);
            } else {
                for j in 0..4 {
                    if i0 + j < nnz {
                        w[1 + j as usize] = ldg_u32(keys.add((i0 + j) as usize));
                    }
                }
            }
            for j in 0..4u64 {
                let i = i0 + j;
                if i < nnz.max(1) {
                    let (head, tail) = sorted_ptr_range(&|k| w[(k + 1 - i0) as usize], nnz, n, i);
                    for c in head {
                        stg(ptr.add(c as usize), i as u32);
                    }
                    for c in tail {
                        stg(ptr.add(c as usize), nnz as u32);
                    }
                }
            }
        }
        q += grid_size_1d();
    }
}

macro_rules! move_kernels {
    ($scatter:ident, $gather:ident, $t:ty) => {
        /// ScanTrans's scatter: nonzero `j` (row `rows[j]`, column `cols[j]`, partition
        /// `p = j / chunk`) lands at [`scatter_slot`]`(colptr[c], inter[p * n + c], intra[j])`
        /// of `out_rows` and `out_vals` (values are skipped when `vals` is null).
        ///
        /// # Safety
        /// `cols`, `rows`, `intra` (and `vals`, `out_rows`, `out_vals` when used) hold `nnz`
        /// items; `colptr` holds `n + 1`, `inter` `(ceil(nnz / chunk) + 1) * n`; the inputs are
        /// ScanTrans's, so every slot is `< nnz` and distinct. Any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $scatter(
            nnz: u64,
            n: u64,
            chunk: u64,
            cols: *const u32,
            rows: *const u32,
            vals: *const $t,
            colptr: *const u32,
            inter: *const u32,
            intra: *const u32,
            out_rows: *mut u32,
            out_vals: *mut $t,
        ) {
            let mut j = index_1d_u64();
            while j < nnz {
                // SAFETY: j < nnz; c < n; p * n + c is inside inter; the slot is < nnz.
                unsafe {
                    let c = ldg_u32(cols.add(j as usize)) as u64;
                    let p = j / chunk;
                    let at = scatter_slot(ldg_u32(colptr.add(c as usize)), ldg_u32(inter.add((p * n + c) as usize)), ldg_u32(intra.add(j as usize))) as usize;
                    *out_rows.add(at) = ldg_u32(rows.add(j as usize));
                    if !vals.is_null() {
                        *out_vals.add(at) = *vals.add(j as usize);
                    }
                }
                j += grid_size_1d();
            }
        }

        /// The gather after the sort: `out_rows[k] = rows[perm[k]]` and `out_vals[k] =
        /// vals[perm[k]]` (values skipped when `vals` is null).
        ///
        /// # Safety
        /// `perm`, `rows`, `out_rows` (and `vals`, `out_vals` when used) hold `nnz` items;
        /// `perm` is a permutation of `0..nnz`. Any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $gather(nnz: u64, perm: *const u32, rows: *const u32, vals: *const $t, out_rows: *mut u32, out_vals: *mut $t) {
            let mut k = index_1d_u64();
            while k < nnz {
                // SAFETY: k < nnz and perm[k] < nnz.
                unsafe {
                    let j = ldg_u32(perm.add(k as usize)) as usize;
                    *out_rows.add(k as usize) = ldg_u32(rows.add(j));
                    if !vals.is_null() {
                        *out_vals.add(k as usize) = *vals.add(j);
                    }
                }
                k += grid_size_1d();
            }
        }
    };
}

macro_rules! bucket_kernel {
    ($name:ident, $t:ty) => {
        /// [`bucket_pass`] with values of this width (null `vals`: none).
        ///
        /// # Safety
        /// As [`bucket_pass`].
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name(keys: *const u32, rows: *const u32, vals: *const $t, nnz: u64, n: u64, pre: u32, low: u32, colptr: *mut u32, out_rows: *mut u32, out_vals: *mut $t) {
            // SAFETY: the caller's contract.
            unsafe { bucket_pass(keys, rows, vals, nnz, n, pre, low, colptr, out_rows, out_vals) }
        }
    };
}

bucket_kernel!(transpose_bucket_v4, u32);
bucket_kernel!(transpose_bucket_v8, u64);

move_kernels!(transpose_scatter_v4, transpose_gather_v4, u32);
move_kernels!(transpose_scatter_v8, transpose_gather_v8, u64);

/// Sixteen bytes moved as one (a `Complex<f64>`, a `u128`): `ld`/`st.v2.u64`.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub struct Bytes16([u64; 2]);

macro_rules! permute_kernel {
    ($name:ident, $t:ty, $what:literal) => {
        #[doc = concat!("`out[j] = vals[perm[j]]` for `j < nnz`, ", $what, ": values of a width the sorts do not carry, moved by the permutation that the algorithm carried instead (each nonzero's position).")]
        ///
        /// # Safety
        /// `perm` holds `nnz` indices below `nnz`; `vals` and `out` hold `nnz` items and do not
        /// overlap; any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name(nnz: u64, perm: *const u32, vals: *const $t, out: *mut $t) {
            let mut j = index_1d_u64();
            while j < nnz {
                // SAFETY: j < nnz and perm[j] < nnz.
                unsafe { *out.add(j as usize) = *vals.add(ldg_u32(perm.add(j as usize)) as usize) };
                j += grid_size_1d();
            }
        }
    };
}

permute_kernel!(transpose_permute_v1, u8, "1-byte values");
permute_kernel!(transpose_permute_v2, u16, "2-byte values");
permute_kernel!(transpose_permute_v16, Bytes16, "16-byte values");
