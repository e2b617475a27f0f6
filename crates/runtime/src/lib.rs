//! # gpu-runtime
//!
//! The one crate of sptrans that talks to the CUDA driver, through [`cudarc`] (re-exported), which
//! loads `libcuda` at run time: everything builds, and CPU code runs, on machines without CUDA.
//!
//! - [`driver_present`], [`device_count`], [`Gpu::new`]: discovery that never panics; no driver
//!   or no device is an [`Error`], not a crash.
//! - [`Gpu`]: context + **the stream its work goes to** (its own, or the caller's through
//!   [`Gpu::from_stream`]; more with [`Gpu::fork`]) + a lazily filled cache of [`PtxModule`]s
//!   keyed by identity (each loaded once) + [`DeviceProps`].
//! - Typed device buffers are cudarc's [`CudaSlice`](cudarc::driver::CudaSlice)`<T>`;
//!   [`Gpu::alloc`] (types valid for any bit pattern, [`AnyBits`]; `unsafe`
//!   [`Gpu::alloc_uninit`] for the rest), [`Gpu::upload`], [`Gpu::download`] map out-of-memory
//!   to [`Error::OutOfMemory`] with the size asked ([`Error::is_out_of_memory`]).
//! - [`scratch`]: the workspace model every plan follows: `workspace_bytes` for a problem, then
//!   a caller-lent [`Scratch`] region (or the plan's own [`ScratchBuf`]).
//! - [`check`]: GPU validation of caller-provided pointer arrays and indices.
//! - [`Kernel::args`] … `.launch(cfg)`: launches whose errors name the kernel.
//! - [`GpuTimer`] and [`copy_bandwidth_gbs`]: event timing.
//! - [`selftest`]: the pipeline's self-test kernels and their serial twins.
//!
//! ```no_run
//! use gpu_runtime::{Gpu, selftest};
//! let gpu = Gpu::first()?; // Err(Error::NoDriver) on a machine without CUDA
//! let mut buf = gpu.alloc::<u32>(1000)?;
//! selftest::iota_u32(&gpu, &mut buf, 7)?;
//! assert_eq!(gpu.download(&buf)?, selftest::serial::iota_u32(1000, 7));
//! # Ok::<(), gpu_runtime::Error>(())
//! ```
#![deny(missing_docs)]

pub use cudarc;

pub mod check;
mod error;
mod gpu;
mod module;
pub mod scratch;
pub mod selftest;
mod timing;

pub use error::{Error, Result};
pub use gpu::{bytes_of, device_count, driver_present, driver_version, AnyBits, DeviceProps, Gpu, Payload};
pub use scratch::{Scratch, ScratchBuf};
pub use module::{grid_1d, Kernel, Launch, PtxModule};
pub use timing::{copy_bandwidth_gbs, GpuTimer};
