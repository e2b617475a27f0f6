#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

pub mod bootstrap;
pub mod comm;

pub use bootstrap::RankEnv;
pub use comm::Comms;
