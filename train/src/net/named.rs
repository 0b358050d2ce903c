//! A network's tensors by name, as plain `f32` values in Burn's layout: how the engines
//! that do not run on Burn take their parameters from a Burn module (by the names of
//! [`crate::net::Layout`]) and give them back.

use std::collections::BTreeMap;

use burn::prelude::*;
use burn::store::ModuleSnapshot;
use burn::store::burn_pack::Tensor as PackTensor;
use burn::tensor::{Bytes, DType};

use crate::net::{Net, NetConfig};

/// Every tensor of a network (weights and running statistics), by name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NamedTensors {
    tensors: BTreeMap<String, (Vec<usize>, Vec<f32>)>,
}

impl NamedTensors {
    /// The tensors of `net` (any device), by the names Burn's record gives them.
    pub fn of(net: &Net) -> NamedTensors {
        let tensors = net
            .collect(None, None, false)
            .into_iter()
            .map(|t| {
                let shape = t.shape.to_vec();
                assert_eq!(
                    t.dtype,
                    DType::F32,
                    "{}: the network holds f32 tensors",
                    t.name
                );
                let name = t.name.clone();
                let bytes = t.into_bytes().expect("a module's tensor reads back");
                let values = bytes
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                (name, (shape, values))
            })
            .collect();
        NamedTensors { tensors }
    }

    /// The values of tensor `name`, which must have `shape`. The engines ask only for
    /// the names and shapes of the description that the module was built from, so a
    /// miss is a bug, not bad input.
    pub fn get(&self, name: &str, shape: &[usize]) -> &[f32] {
        match self.tensors.get(name) {
            Some((s, v)) if s == shape => v,
            Some((s, _)) => panic!("tensor {name} has shape {s:?}, the description says {shape:?}"),
            None => panic!("the network has no tensor {name}"),
        }
    }

    /// Sets tensor `name`.
    pub fn insert(&mut self, name: String, shape: Vec<usize>, values: Vec<f32>) {
        debug_assert_eq!(shape.iter().product::<usize>(), values.len(), "{name}");
        self.tensors.insert(name, (shape, values));
    }

    /// Every tensor: its name, shape and values, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[usize], &[f32])> {
        self.tensors
            .iter()
            .map(|(n, (s, v))| (n.as_str(), s.as_slice(), v.as_slice()))
    }

    /// The names held.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tensors.keys().map(String::as_str)
    }

    /// A network of shape `cfg` on `device` with these tensors. Every tensor of the
    /// network must be given and no other: the error lists the differences.
    pub fn into_net(self, cfg: &NetConfig, device: &Device) -> Result<Net, String> {
        let mut net = cfg.init(device);
        let snapshots = self
            .tensors
            .into_iter()
            .map(|(name, (shape, values))| {
                let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
                PackTensor::new(name, DType::F32, shape, None, Bytes::from_bytes_vec(bytes))
            })
            .collect();
        let r = net.apply(snapshots, None, None, false);
        let mut problems: Vec<String> = r
            .missing
            .iter()
            .map(|(n, _)| format!("{n} missing"))
            .chain(r.unused.iter().map(|n| format!("{n} not in the network")))
            .chain(r.errors.iter().map(|e| format!("{e:?}")))
            .collect();
        problems.truncate(8);
        if problems.is_empty() {
            Ok(net)
        } else {
            Err(problems.join(", "))
        }
    }
}
