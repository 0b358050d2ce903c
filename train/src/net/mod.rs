//! The network: its shape (`NetConfig`), its description as a list of tensors, the Burn
//! module that runs it, and the input encoding it reads.

mod config;
pub mod describe;
pub mod encode;
mod module;

pub use config::NetConfig;
pub use describe::TensorSpec;
pub use encode::{PLANE_NAMES, PLANES, encode, encode_into, grid_hw};
pub use module::{ConvBn, Net, NetOutput, ResBlock};
