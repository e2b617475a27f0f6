#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

pub use cudarc;

mod archs;
pub mod check;
#[cfg(feature = "cusparse")]
pub mod cusparse;
mod error;
mod gpu;
mod image;
mod module;
pub mod scratch;
pub mod selftest;
mod timing;
pub mod vendor;
pub mod view;

pub use error::{Error, Result};
pub use gpu::{bytes_of, check_signature, device_count, driver_present, driver_version, AnyBits, DeviceProps, Gpu, Payload};
pub use image::{cubin_arch, Cubin, Image, ImagePolicy, ModuleLoad, CUBIN_ARCHS, PTXAS_RELEASE};
pub use module::{
    arg_ptr, arg_ptr_mut, arg_ptr_mut_or_null, arg_ptr_or_null, grid_1d, ptr_mut_or_null, ArgStruct, Kernel, KernelOf, Launch, PtxModule, PtxParam,
};
pub use scratch::{Scratch, ScratchBuf};
pub use timing::{copy_bandwidth_gbs, GpuTimer};
pub use view::{DenseView, DenseViewMut, DeviceView, DeviceViewMut};
