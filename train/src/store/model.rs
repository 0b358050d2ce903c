//! Loading a trained model directory (model.json and model.bpk) for inference or as the
//! start of a training run.

use std::path::Path;

use burn::prelude::*;
use engine::Game;

use crate::error::TrainError;
use crate::net::{Net, NetConfig};
use crate::store::{ModelMeta, load_net, read_metadata};

/// A trained model loaded for inference (CPU).
#[derive(Clone)]
pub struct LoadedModel {
    /// Its metadata.
    pub meta: ModelMeta,
    /// The game.
    pub game: Game,
    /// The network, in inference mode.
    pub net: Net,
    /// The device it lives on.
    pub device: Device,
}

impl LoadedModel {
    /// This model with its network moved to `device` (a GPU of Burn's backends).
    pub fn to_device(&self, device: &Device) -> LoadedModel {
        LoadedModel {
            meta: self.meta.clone(),
            game: self.game,
            net: self.net.clone().to_device(device),
            device: device.clone(),
        }
    }
}

impl ModelMeta {
    /// The recorded digest of the weights, if this version of model.json has one.
    fn digest(&self) -> Option<&str> {
        (!self.weights_sha256.is_empty()).then_some(self.weights_sha256.as_str())
    }
}

/// Loads `dir/model.json` and `dir/model.bpk` (checked against the recorded digest).
pub fn load_model(dir: &Path) -> Result<LoadedModel, TrainError> {
    let meta = read_metadata(dir)?;
    let game = meta.game().expect("checked by read_metadata");
    let device = Device::flex();
    let net = load_net(
        &meta.network,
        &dir.join("model.bpk"),
        meta.digest(),
        &device,
    )?
    .valid();
    refuse_unusable(&net, game, &device, dir)?;
    Ok(LoadedModel {
        meta,
        game,
        net,
        device,
    })
}

/// The weights of model `dir` as the starting point of a training run for `game` with
/// network `shape`: a model of another game or shape is refused, naming both.
pub fn load_init(dir: &Path, game: Game, shape: &NetConfig) -> Result<Net, TrainError> {
    let meta = read_metadata(dir)?;
    let path = dir.join("model.json");
    if meta.game().ok() != Some(game) {
        return Err(TrainError::Checkpoint {
            path,
            message: format!("the initial model is for game {}, not {game}", meta.game),
        });
    }
    if &meta.network != shape {
        return Err(TrainError::Checkpoint {
            path,
            message: format!(
                "the initial model is a {}x{} network, this run trains a {}x{} one",
                meta.network.blocks, meta.network.channels, shape.blocks, shape.channels
            ),
        });
    }
    let device = Device::flex();
    let net = load_net(shape, &dir.join("model.bpk"), meta.digest(), &device)?;
    refuse_unusable(&net.valid(), game, &device, dir)?;
    Ok(net)
}

/// The network of model `dir` refused unless its outputs pass
/// [`crate::net::check::check_outputs`].
fn refuse_unusable(net: &Net, game: Game, device: &Device, dir: &Path) -> Result<(), TrainError> {
    crate::net::check::check_outputs(net, game, device).map_err(|m| TrainError::Checkpoint {
        path: dir.join("model.bpk"),
        message: format!("a network whose outputs cannot be used: {m}"),
    })
}
