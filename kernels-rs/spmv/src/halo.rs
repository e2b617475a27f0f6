//! The distributed SpMV's halo exchange (host side: `gpu_spmv::dist`): the entries of a rank's
//! part of `x` that other ranks read, packed into one send buffer, and the entries a rank
//! received, unpacked into its full-length `x`.
use gpu_device::mem::{ld_global, stg};
use gpu_device::thread::{grid_size_1d, index_1d_u64};

use crate::HaloArgs;

macro_rules! halo_kernels {
    ($pack:ident, $unpack:ident, $t:ty) => {
        /// `out[i] = x[at[i]]` for `i < n` (packing the entries other ranks read).
        ///
        /// # Safety
        /// `at` and `out` hold `n` entries, and every `at[i]` indexes `x`; any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $pack(a: HaloArgs<$t>) {
            let HaloArgs { at, src: x, dst: out, n } = a;
            let mut i = index_1d_u64();
            while i < n {
                // SAFETY: i < n; at[i] indexes x (the caller's contract).
                unsafe { stg(out.add(i as usize), ld_global(x.add(ld_global(at.add(i as usize)) as usize))) };
                i += grid_size_1d();
            }
        }

        /// `x[at[i]] = vals[i]` for `i < n` (unpacking received entries into a full `x`).
        ///
        /// # Safety
        /// `at` and `vals` hold `n` entries, and every `at[i]` indexes `x` (distinct entries: no
        /// two threads write one); any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $unpack(a: HaloArgs<$t>) {
            let HaloArgs { at, src: vals, dst: x, n } = a;
            let mut i = index_1d_u64();
            while i < n {
                // SAFETY: i < n; at[i] indexes x (the caller's contract).
                unsafe { stg(x.add(ld_global(at.add(i as usize)) as usize), ld_global(vals.add(i as usize))) };
                i += grid_size_1d();
            }
        }
    };
}

halo_kernels!(spmv_halo_pack_f32, spmv_halo_unpack_f32, f32);
halo_kernels!(spmv_halo_pack_f64, spmv_halo_unpack_f64, f64);
