//! Warp-level building blocks over keys (CC 7.0+: `match.any`), re-exported from `gpu-device`
//! (where device building blocks live): [`match_rank`], [`leader`], [`aggregated_increment`].
pub use gpu_device::warp::{aggregated_increment, leader, match_rank};
