use gpu_device::{atomic, mem, static_shared, thread, warp, WARP_SIZE};

use crate::{CheckArgs, CsrCheckArgs, FillArgs, SelfTestArgs, BLOCK_SUM_NT};

const NWARPS: usize = (BLOCK_SUM_NT / WARP_SIZE) as usize;
static_shared!(RUNTIME_BLOCK_SUM_WARPS: [u32; NWARPS]);

/// `out[i] = value` for `i < n` (grid-stride loop, any grid).
///
/// # Safety
/// `out` must point to `n` writable `u32`s in global memory.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn runtime_fill_u32(a: FillArgs) {
    let FillArgs { out, n, value } = a;
    let mut i = thread::index_1d_u64();
    while i < n {
        // SAFETY: i < n and `out` holds n elements.
        unsafe { mem::stg(out.add(i as usize), value) };
        i += thread::grid_size_1d();
    }
}

/// `out[i] = start + i` (wrapping) for `i < n` (grid-stride loop, any grid).
///
/// # Safety
/// `out` must point to `n` writable `u32`s in global memory.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn runtime_iota_u32(a: FillArgs) {
    let FillArgs { out, n, value: start } = a;
    let mut i = thread::index_1d_u64();
    while i < n {
        // SAFETY: i < n and `out` holds n elements.
        unsafe { mem::stg(out.add(i as usize), start.wrapping_add(i as u32)) };
        i += thread::grid_size_1d();
    }
}

/// Per-block sums and a grand total: block `b` sums `input[b*NT .. (b+1)*NT)` (wrapping) into
/// `block_sums[b]` and adds it to `*total` (u64) atomically; `*nonzero` gets the number of
/// nonzero inputs (counted with ballot + popc). Exercises read-only loads, warp shuffles, a
/// static shared array, barriers and atomics.
///
/// # Safety
/// Launch with `BLOCK_SUM_NT` threads per block and `ceil(n / NT)` blocks; `input` holds `n`
/// elements, `block_sums` one per block; `total` and `nonzero` are valid global words.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn runtime_block_sum_u32(a: SelfTestArgs) {
    let SelfTestArgs { input, out: block_sums, total, nonzero, n } = a;
    let warp_sums = RUNTIME_BLOCK_SUM_WARPS::ptr();
    let tid = thread::thread_idx_x();
    let i = thread::index_1d_u64();
    // SAFETY: i < n is checked; `input` holds n elements and is read-only here.
    let x = if i < n { unsafe { mem::ldg_u32(input.add(i as usize)) } } else { 0 };

    let votes = warp::ballot_sync(warp::FULL_MASK, x != 0);
    let mut s = x;
    let mut d = WARP_SIZE / 2;
    while d > 0 {
        s = s.wrapping_add(warp::shfl_down_sync(warp::FULL_MASK, s, d));
        d /= 2;
    }
    let lane = warp::lane_id();
    if lane == 0 {
        // SAFETY: tid / 32 < NWARPS; `nonzero` is a valid global word.
        unsafe {
            *warp_sums.add((tid / WARP_SIZE) as usize) = s;
            atomic::red_add_u32(nonzero, votes.count_ones());
        }
    }
    thread::sync_threads();
    if tid < WARP_SIZE {
        // SAFETY: reads the NWARPS sums written before the barrier.
        let w = warp::sum_u32(if (tid as usize) < NWARPS { unsafe { *warp_sums.add(tid as usize) } } else { 0 });
        if tid == 0 {
            let b = thread::block_idx_x() as usize;
            // SAFETY: one slot per block; `total` is a valid global word.
            unsafe {
                mem::stg(block_sums.add(b), w);
                atomic::atomic_add_u64(total, w as u64);
            }
        }
    }
}

/// Inclusive prefix sums (wrapping) inside each aligned run of 32 elements, by `shfl_up`:
/// `out[i] = input[32*(i/32)] + ... + input[i]`.
///
/// # Safety
/// `input` and `out` hold `n` elements; any 1-D grid whose block size is a multiple of 32.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn runtime_warp_scan_u32(a: SelfTestArgs) {
    let SelfTestArgs { input, out, n, .. } = a;
    let mut base = thread::index_1d_u64() - warp::lane_id() as u64;
    while base < n {
        let i = base + warp::lane_id() as u64;
        // SAFETY: i < n is checked.
        let mut x = if i < n { unsafe { mem::ld_global(input.add(i as usize)) } } else { 0 };
        let mut d = 1;
        while d < WARP_SIZE {
            let y = warp::shfl_up_sync(warp::FULL_MASK, x, d);
            if warp::lane_id() >= d {
                x = x.wrapping_add(y);
            }
            d *= 2;
        }
        if i < n {
            // SAFETY: i < n.
            unsafe { mem::stg(out.add(i as usize), x) };
        }
        base += thread::grid_size_1d();
    }
}

macro_rules! csr_check_kernel {
    ($name:ident, $t:ty) => {
        /// Validation of a CSR's structure in one launch: `flags[0] = min(i)` over `i < m` with
        /// `offsets[i] > offsets[i + 1]`, `flags[1] = min(i)` over `i < n` with `indices[i] >=
        /// bound` (each left as it is when there is none), and `flags[2]`, `flags[3]` get
        /// `offsets[0]` and `offsets[m]`, so that one read of the four words gives the whole
        /// verdict. Grid-stride over `max(m, n)`, any grid.
        ///
        /// # Safety
        /// `offsets` holds `m + 1` words, `indices` `n` words (or is null with `n = 0`), `flags`
        /// four valid global words.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name(a: CsrCheckArgs<$t>) {
            let CsrCheckArgs { offsets, indices, flags, m, n, bound } = a;
            let mut i = thread::index_1d_u64();
            // SAFETY: index 0 and m are inside the m + 1 offsets; flags holds four words.
            unsafe {
                if i == 0 {
                    mem::stg(flags.add(2), mem::ldg(offsets).into());
                    mem::stg(flags.add(3), mem::ldg(offsets.add(m as usize)).into());
                }
            }
            let end = m.max(n);
            while i < end {
                // SAFETY: i < m: i and i + 1 inside the m + 1 offsets; i < n: inside the
                // indices; flags valid.
                unsafe {
                    if i < m && mem::ldg(offsets.add(i as usize)) > mem::ldg(offsets.add(i as usize + 1)) {
                        atomic::atomic_min_u64(flags, i);
                    }
                    if i < n && mem::ldg_u32(indices.add(i as usize)) as u64 >= bound {
                        atomic::atomic_min_u64(flags.add(1), i);
                    }
                }
                i += thread::grid_size_1d();
            }
        }
    };
}

csr_check_kernel!(runtime_csr_check_u32, u32);
csr_check_kernel!(runtime_csr_check_u64, u64);

macro_rules! signed_offsets_kernel {
    ($name:ident, $t:ty, $out:ty) => {
        /// A caller's signed pointer array converted and checked in one read: `out[i] =
        /// input[i]` for `i <= m` when it is in `0..=MAX` of the output type (else
        /// `flags[0] = min(i)`); `flags[1] = min(i)` over `i < m` with `input[i] > input[i + 1]`;
        /// `flags[3]` and `flags[4]` get `input[0]` and `input[m]` (as `i64` bits), so that one
        /// read of the flags gives the whole verdict. Grid-stride, any grid.
        ///
        /// # Safety
        /// `input` and `out` hold `m + 1` items; `flags` five valid global words.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name(a: CheckArgs<$t, $out>) {
            let CheckArgs { input, out, flags, n: m, .. } = a;
            let mut i = thread::index_1d_u64();
            while i <= m {
                // SAFETY: i <= m, and i + 1 <= m when read.
                unsafe {
                    let v = mem::ldg(input.add(i as usize)) as i64;
                    if v >= 0 && v as u64 <= <$out>::MAX as u64 {
                        mem::stg(out.add(i as usize), v as $out);
                    } else {
                        atomic::atomic_min_u64(flags, i);
                    }
                    if i < m && v > mem::ldg(input.add(i as usize + 1)) as i64 {
                        atomic::atomic_min_u64(flags.add(1), i);
                    }
                    if i == 0 {
                        mem::stg(flags.add(3), v as u64);
                    }
                    if i == m {
                        mem::stg(flags.add(4), v as u64);
                    }
                }
                i += thread::grid_size_1d();
            }
        }
    };
}

signed_offsets_kernel!(runtime_offsets_i64_u64, i64, u64);
signed_offsets_kernel!(runtime_offsets_i64_u32, i64, u32);
signed_offsets_kernel!(runtime_offsets_i32_u64, i32, u64);
signed_offsets_kernel!(runtime_offsets_i32_u32, i32, u32);

macro_rules! signed_indices_kernel {
    ($name:ident, $t:ty) => {
        /// A caller's signed index array narrowed and bounded in one read: `out[i] = input[i]`
        /// when `0 <= input[i] < bound` (`bound <= 2^32`), else `*first_bad = min(i)`.
        /// Grid-stride, any grid.
        ///
        /// # Safety
        /// `input` and `out` hold `n` items; `first_bad` a valid global word.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name(a: CheckArgs<$t, u32>) {
            let CheckArgs { input, out, flags: first_bad, n, bound } = a;
            let mut i = thread::index_1d_u64();
            while i < n {
                // SAFETY: i < n.
                unsafe {
                    let v = mem::ldg(input.add(i as usize)) as i64;
                    if v >= 0 && (v as u64) < bound {
                        mem::stg(out.add(i as usize), v as u32);
                    } else {
                        atomic::atomic_min_u64(first_bad, i);
                    }
                }
                i += thread::grid_size_1d();
            }
        }
    };
}

signed_indices_kernel!(runtime_indices_i64_u32, i64);
signed_indices_kernel!(runtime_indices_i32_u32, i32);
