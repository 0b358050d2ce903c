//! The static bundle of `flipzero export --web`: the page, the WebAssembly module, and a
//! fast net, with `bundle.json` saying what it plays. Any static file server (or a
//! folder of a web site) serves it; nothing else is needed.

use serde::{Deserialize, Serialize};

use crate::player::WebPlayer;

/// `bundle.json`'s `format`.
pub const FORMAT: &str = "flipzero-web-bundle";
/// `bundle.json`'s `version` (2: the weights are the packed quantised file).
pub const VERSION: u32 = 2;
/// The largest seed a bundle takes: JavaScript's numbers hold whole numbers exactly up
/// to 2^53 − 1, and the page passes the seed as one.
pub const MAX_SEED: u64 = (1 << 53) - 1;
/// The file that says what a folder's bundle plays; a folder holding it is a bundle
/// that a new export may replace.
pub const CONFIG: &str = "bundle.json";

/// `bundle.json`: what the page loads and how it plays (the page's URL may override
/// `sims` and `seed`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleConfig {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// The page's title.
    pub title: String,
    /// The game the net plays.
    pub game: String,
    /// The WebAssembly module.
    pub wasm: String,
    /// The net's `model.json`.
    pub model: String,
    /// The net's weights: its quantised file packed ([`crate::packed::FILE`]), the very
    /// integers the player runs.
    pub weights: String,
    /// Simulations a move.
    pub sims: u32,
    /// The search's seed.
    pub seed: u64,
}

/// The files of a bundle playing the fast net `meta` (`model.json`) and `weights` (its
/// float or quantised file) with `sims` simulations a move and `seed`: relative paths
/// and contents, [`CONFIG`] last. The weights go into the bundle quantised and packed
/// (what the player runs, a quarter of the float file), and the bundle's own files are
/// loaded first, so a bundle that would not play is refused here with the reason.
pub fn files(
    meta: &[u8],
    weights: &[u8],
    sims: u32,
    seed: u64,
    title: Option<&str>,
) -> Result<Vec<(String, Vec<u8>)>, String> {
    if seed > MAX_SEED {
        return Err(format!(
            "seed {seed}: at most {MAX_SEED} (2^53 - 1), the largest whole number a page's JavaScript holds exactly"
        ));
    }
    let (net, _) = fastnet::io::parse(meta, weights, "model.json", "the weights")
        .map_err(|e| e.to_string())?;
    let packed =
        crate::packed::pack(&fastnet::io::quantised_file(&net).map_err(|e| e.to_string())?);
    let mut player = WebPlayer::load(meta, &packed, sims, seed)?;
    let game = player.call(r#"{"op":"state"}"#)?.game;
    let config = BundleConfig {
        format: FORMAT.into(),
        version: VERSION,
        title: title.map_or_else(|| format!("flipzero · {game}"), str::to_string),
        game,
        wasm: "flipzero.wasm".into(),
        model: "net/model.json".into(),
        weights: format!("net/{}", crate::packed::FILE),
        sims,
        seed,
    };
    let text = |s: &str| s.as_bytes().to_vec();
    let mut out = vec![
        ("index.html".to_string(), text(crate::assets::PAGE_HTML)),
        ("play.js".into(), text(crate::assets::PAGE_JS)),
        ("play.css".into(), text(crate::assets::PAGE_CSS)),
        ("board.js".into(), text(crate::assets::BOARD_JS)),
        ("board.css".into(), text(crate::assets::BOARD_CSS)),
        ("flipzero.js".into(), text(crate::assets::PLAYER_JS)),
        (config.wasm.clone(), crate::WASM.to_vec()),
        (config.model.clone(), public_meta(meta)?),
        (config.weights.clone(), packed),
    ];
    let mut json = serde_json::to_vec_pretty(&config).map_err(|e| e.to_string())?;
    json.push(b'\n');
    out.push((CONFIG.into(), json));
    Ok(out)
}

/// `model.json` as a public page shows it: the training machine's paths (the trainer's
/// `trained.data` and `trained.init`) are left out.
fn public_meta(meta: &[u8]) -> Result<Vec<u8>, String> {
    let mut v: serde_json::Value =
        serde_json::from_slice(meta).map_err(|e| format!("model.json: {e}"))?;
    if let Some(t) = v.get_mut("trained").and_then(|t| t.as_object_mut()) {
        t.remove("data");
        t.remove("init");
    }
    let mut out = serde_json::to_vec_pretty(&v).map_err(|e| e.to_string())?;
    out.push(b'\n');
    Ok(out)
}
