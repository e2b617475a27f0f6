//! The runtime's self-test kernels (PTX module `runtime`, source `kernels-rs/runtime`): the
//! smallest kernels that take every kind of device helper through the whole Rust→PTX pipeline.
//! Each has a serial twin in [`serial`] with the same semantics.
use cudarc::driver::{CudaSlice, CudaView, LaunchConfig};

use crate::module::{arg_ptr, arg_ptr_mut, grid_1d, KernelOf, PtxModule};
use crate::{Error, Gpu, Result};
use runtime_kernels::{FillArgs, SelfTestArgs};

/// The embedded `runtime` PTX module.
pub static MODULE: PtxModule = crate::embed_module!("runtime");

/// Threads per block of `runtime_block_sum_u32` (must match `kernels-rs/runtime`).
pub const BLOCK_SUM_NT: u32 = 256;
const NT: u32 = 256;

fn max_blocks(gpu: &Gpu) -> u32 {
    gpu.props().sm_count.max(1) * 8
}

/// Writes `value` to every element of `out`.
///
/// # Errors
/// Runtime errors: module loading, launch.
pub fn fill_u32(gpu: &Gpu, out: &mut CudaSlice<u32>, value: u32) -> Result<()> {
    let n = out.len() as u64;
    if n == 0 {
        return Ok(());
    }
    let k: KernelOf<FillArgs> = gpu.kernel_of(&MODULE, "runtime_fill_u32")?;
    let stream = gpu.stream();
    let (out, _o) = arg_ptr_mut(out, stream);
    // SAFETY: runtime_fill_u32(FillArgs); `out` holds n elements.
    unsafe { k.launch(stream, grid_1d(n, NT, NT as u64, max_blocks(gpu)), FillArgs { out, n, value }) }
}

/// Writes `start + i` (wrapping) to `out[i]`.
///
/// # Errors
/// Runtime errors: module loading, launch.
pub fn iota_u32(gpu: &Gpu, out: &mut CudaSlice<u32>, start: u32) -> Result<()> {
    let n = out.len() as u64;
    if n == 0 {
        return Ok(());
    }
    let k: KernelOf<FillArgs> = gpu.kernel_of(&MODULE, "runtime_iota_u32")?;
    let stream = gpu.stream();
    let (out, _o) = arg_ptr_mut(out, stream);
    // SAFETY: runtime_iota_u32(FillArgs: value the start); `out` holds n elements.
    unsafe { k.launch(stream, grid_1d(n, NT, NT as u64, max_blocks(gpu)), FillArgs { out, n, value: start }) }
}

/// Block sums of `input` in runs of [`BLOCK_SUM_NT`], their total, and the count of nonzeros;
/// see [`serial::block_sum_u32`]. Synchronizes (the results are downloaded).
///
/// # Errors
/// [`Error::TooLarge`] past `i32::MAX` blocks; out of memory, module loading, launch and copy errors.
pub fn block_sum_u32(gpu: &Gpu, input: &CudaView<'_, u32>) -> Result<serial::BlockSums> {
    let n = input.len() as u64;
    let blocks = n.div_ceil(BLOCK_SUM_NT as u64);
    if blocks > i32::MAX as u64 {
        return Err(Error::TooLarge { what: "block_sum_u32 input", len: n, max: i32::MAX as u64 * BLOCK_SUM_NT as u64 });
    }
    let mut sums = gpu.alloc::<u32>(blocks as usize)?;
    let mut total = gpu.alloc_zeros::<u64>(1)?;
    let mut nonzero = gpu.alloc_zeros::<u32>(1)?;
    if n > 0 {
        let k: KernelOf<SelfTestArgs> = gpu.kernel_of(&MODULE, "runtime_block_sum_u32")?;
        let cfg = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (BLOCK_SUM_NT, 1, 1), shared_mem_bytes: 0 };
        let stream = gpu.stream();
        let ((input, _i), (out, _s)) = (arg_ptr(input, stream), arg_ptr_mut(&mut sums, stream));
        let ((total, _t), (nonzero, _z)) = (arg_ptr_mut(&mut total, stream), arg_ptr_mut(&mut nonzero, stream));
        // SAFETY: runtime_block_sum_u32(SelfTestArgs) with NT threads and ceil(n/NT) blocks;
        // every buffer is as large as the kernel's contract asks.
        unsafe { k.launch(stream, cfg, SelfTestArgs { input, out, total, nonzero, n })? };
    }
    Ok(serial::BlockSums { block_sums: gpu.download(&sums)?, total: gpu.download(&total)?[0], nonzero: gpu.download(&nonzero)?[0] })
}

/// Inclusive prefix sums (wrapping) inside each aligned run of 32 elements; see
/// [`serial::warp_scan_u32`].
///
/// # Errors
/// [`Error::LengthMismatch`]; module loading and launch errors.
pub fn warp_scan_u32(gpu: &Gpu, input: &CudaView<'_, u32>, out: &mut CudaSlice<u32>) -> Result<()> {
    let n = input.len() as u64;
    if out.len() as u64 != n {
        return Err(Error::LengthMismatch { what: "warp_scan_u32 output", expected: n, got: out.len() as u64 });
    }
    if n == 0 {
        return Ok(());
    }
    let k: KernelOf<SelfTestArgs> = gpu.kernel_of(&MODULE, "runtime_warp_scan_u32")?;
    let stream = gpu.stream();
    let ((input, _i), (out, _o)) = (arg_ptr(input, stream), arg_ptr_mut(out, stream));
    let args = SelfTestArgs { input, out, total: std::ptr::null_mut(), nonzero: std::ptr::null_mut(), n };
    // SAFETY: runtime_warp_scan_u32(SelfTestArgs); both hold n elements; NT is a multiple of 32.
    unsafe { k.launch(stream, grid_1d(n, NT, NT as u64, max_blocks(gpu)), args) }
}

/// Serial twins of the self-test kernels: the specification, in plain loops.
pub mod serial {
    use super::BLOCK_SUM_NT;

    /// What [`super::block_sum_u32`] computes.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct BlockSums {
        /// Wrapping sum of each run of `BLOCK_SUM_NT` inputs.
        pub block_sums: Vec<u32>,
        /// Sum of the block sums, as u64.
        pub total: u64,
        /// Number of nonzero inputs.
        pub nonzero: u32,
    }

    /// `vec![value; n]`.
    pub fn fill_u32(n: usize, value: u32) -> Vec<u32> {
        vec![value; n]
    }

    /// `start, start+1, ...` (wrapping), `n` of them.
    pub fn iota_u32(n: usize, start: u32) -> Vec<u32> {
        (0..n).map(|i| start.wrapping_add(i as u32)).collect()
    }

    /// Block sums, their total and the nonzero count.
    ///
    /// ```
    /// let r = gpu_runtime::selftest::serial::block_sum_u32(&[1, 0, 2]);
    /// assert_eq!((r.block_sums, r.total, r.nonzero), (vec![3], 3, 2));
    /// ```
    pub fn block_sum_u32(input: &[u32]) -> BlockSums {
        let block_sums: Vec<u32> = input.chunks(BLOCK_SUM_NT as usize).map(|c| c.iter().fold(0u32, |a, &x| a.wrapping_add(x))).collect();
        BlockSums { total: block_sums.iter().map(|&s| s as u64).sum(), nonzero: input.iter().filter(|&&x| x != 0).count() as u32, block_sums }
    }

    /// Inclusive wrapping prefix sums restarting every 32 elements.
    ///
    /// ```
    /// assert_eq!(gpu_runtime::selftest::serial::warp_scan_u32(&[1, 2, 3]), vec![1, 3, 6]);
    /// ```
    pub fn warp_scan_u32(input: &[u32]) -> Vec<u32> {
        input
            .chunks(32)
            .flat_map(|c| {
                c.iter().scan(0u32, |acc, &x| {
                    *acc = acc.wrapping_add(x);
                    Some(*acc)
                })
            })
            .collect()
    }
}
