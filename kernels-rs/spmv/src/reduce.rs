//! The warp and block sums, re-exported from `gpu-device` (where device building blocks live):
//! [`group_sum`], [`block_sum`], [`Segments`].
pub use gpu_device::reduce::*;
