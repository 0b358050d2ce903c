//! The network: its shape (`NetConfig`), its description as a list of tensors, the Burn
//! module that runs it, the input encoding it reads, and the check of its outputs every
//! loaded network passes.

pub mod check;
mod config;
pub mod describe;
pub mod encode;
mod module;
pub mod named;

pub use config::{Head, NetConfig};
pub use describe::{BlockSpec, ConvSpec, Layout, LinearSpec, ReplySpec, TensorSpec};
pub use encode::{PLANE_NAMES, PLANES, encode, encode_batch, encode_into, grid_hw};
pub use module::{ConvBn, Net, NetOutput, ResBlock};
pub use named::NamedTensors;
