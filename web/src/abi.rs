//! The module's C interface, as JavaScript calls it (web/assets/flipzero.js). Bytes go
//! in through one input buffer that this module owns: `fz_input(n)` sizes it and
//! returns where JavaScript writes the `n` bytes; the next call reads them. Answers
//! come back as JSON in one output buffer (`fz_output`, `fz_output_len`), valid until
//! the next call. No raw pointer from JavaScript is ever dereferenced here, so the
//! interface needs no `unsafe` code.
//!
//! - `fz_load(meta_len, sims, seed_hi, seed_lo)`: the input holds `model.json`
//!   (`meta_len` bytes) then `fastnet.safetensors`; starts a game against that net.
//! - `fz_call()`: the input holds a command ([`crate::player::Command`], JSON).
//!
//! Both return 0 with the game ([`crate::player::Answer`]) in the output, or 1 with
//! `{"error": "…"}` there.

use std::sync::Mutex;

use crate::player::WebPlayer;

static INPUT: Mutex<Vec<u8>> = Mutex::new(Vec::new());
static OUTPUT: Mutex<Vec<u8>> = Mutex::new(Vec::new());
static PLAYER: Mutex<Option<WebPlayer>> = Mutex::new(None);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Sizes the input buffer to `len` bytes (zeroed) and returns where they start, or
/// null when the module's memory cannot hold them (nothing else changes then).
#[unsafe(no_mangle)]
pub extern "C" fn fz_input(len: usize) -> *mut u8 {
    let mut input = lock(&INPUT);
    input.clear();
    if input.try_reserve_exact(len).is_err() {
        input.shrink_to_fit();
        return std::ptr::null_mut();
    }
    input.resize(len, 0);
    input.as_mut_ptr()
}

/// Where the last answer starts.
#[unsafe(no_mangle)]
pub extern "C" fn fz_output() -> *const u8 {
    lock(&OUTPUT).as_ptr()
}

/// The last answer's length in bytes.
#[unsafe(no_mangle)]
pub extern "C" fn fz_output_len() -> usize {
    lock(&OUTPUT).len()
}

/// Loads a net (see the module's documentation); `seed` is `seed_hi << 32 | seed_lo`.
#[unsafe(no_mangle)]
pub extern "C" fn fz_load(meta_len: usize, sims: u32, seed_hi: u32, seed_lo: u32) -> u32 {
    let input = std::mem::take(&mut *lock(&INPUT));
    let seed = (u64::from(seed_hi) << 32) | u64::from(seed_lo);
    let answer = if meta_len > input.len() {
        Err(format!(
            "model.json of {meta_len} bytes in an input of {}",
            input.len()
        ))
    } else {
        let (meta, weights) = input.split_at(meta_len);
        WebPlayer::load(meta, weights, sims, seed).and_then(|mut p| {
            let a = p.call(r#"{"op":"state"}"#);
            *lock(&PLAYER) = Some(p);
            a
        })
    };
    respond(answer)
}

/// Runs the command in the input on the loaded player.
#[unsafe(no_mangle)]
pub extern "C" fn fz_call() -> u32 {
    let input = std::mem::take(&mut *lock(&INPUT));
    let answer = match (lock(&PLAYER).as_mut(), std::str::from_utf8(&input)) {
        (None, _) => Err("no net is loaded".to_string()),
        (_, Err(e)) => Err(format!("the command is not UTF-8: {e}")),
        (Some(p), Ok(command)) => p.call(command),
    };
    respond(answer)
}

fn respond<T: serde::Serialize>(answer: Result<T, String>) -> u32 {
    let (code, bytes) = match answer {
        Ok(a) => (0, serde_json::to_vec(&a)),
        Err(e) => (1, serde_json::to_vec(&serde_json::json!({ "error": e }))),
    };
    *lock(&OUTPUT) =
        bytes.unwrap_or_else(|e| format!("{{\"error\":{:?}}}", e.to_string()).into_bytes());
    code
}
