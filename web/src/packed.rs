//! The web bundle's weights, packed: the net's quantised file (`fastnet-quant.safetensors`,
//! the i16 weights the player runs) with its bytes split into two planes (every even
//! byte, then every odd one: the high bytes of small i16 weights are nearly constant)
//! and deflated. A 1024-hidden net's 19 MB quantised file packs into 8.9 MB, under
//! a quarter of its 38 MB float file, and unpacks to the very bytes it was made from.
//!
//! Layout: [`MAGIC`], the unpacked length (u64, little-endian), then the raw deflate
//! stream of the two planes.

/// The packed weights' file name in a bundle.
pub const FILE: &str = "fastnet-quant.packed";

/// The first bytes of a packed file.
pub const MAGIC: &[u8; 8] = b"FZPACK1\n";

/// The largest file [`unpack`] makes: a packed file that claims more (or inflates to
/// more) is refused rather than allowed to fill the page's memory (unpacking holds the
/// planes and the file, twice this at most). The shipped 1024-hidden net's is 19 MB; a
/// 4096-hidden net's would be 76 MB.
pub const MAX_UNPACKED: usize = 128 << 20;

/// Whether `bytes` is a packed file (starts with [`MAGIC`]).
pub fn is_packed(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// `file` packed.
pub fn pack(file: &[u8]) -> Vec<u8> {
    let mut planes = Vec::with_capacity(file.len());
    planes.extend(file.iter().step_by(2));
    planes.extend(file.iter().skip(1).step_by(2));
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&(file.len() as u64).to_le_bytes());
    out.extend(miniz_oxide::deflate::compress_to_vec(&planes, 9));
    out
}

/// The file `packed` was made from; the error says what is wrong with it.
pub fn unpack(packed: &[u8]) -> Result<Vec<u8>, String> {
    if !is_packed(packed) {
        return Err("not a packed weights file (no FZPACK1 header)".into());
    }
    let Some(len) = packed.get(8..16) else {
        return Err("a packed weights file cut short in its header".into());
    };
    let len = u64::from_le_bytes(len.try_into().expect("8 bytes"));
    if len > MAX_UNPACKED as u64 {
        return Err(format!(
            "a packed weights file that claims {len} bytes (at most {MAX_UNPACKED})"
        ));
    }
    let len = len as usize;
    let planes = miniz_oxide::inflate::decompress_to_vec_with_limit(&packed[16..], len)
        .map_err(|e| format!("packed weights that do not inflate: {:?}", e.status))?;
    if planes.len() != len {
        return Err(format!(
            "packed weights that inflate to {} bytes where the header says {len}: the file is cut short or damaged",
            planes.len()
        ));
    }
    let (even, odd) = planes.split_at(len.div_ceil(2));
    let mut out = Vec::with_capacity(len);
    for (k, &b) in even.iter().enumerate() {
        out.push(b);
        if let Some(&o) = odd.get(k) {
            out.push(o);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpack_gives_back_every_byte_of_even_and_odd_lengths() {
        for n in [0usize, 1, 2, 7, 1000, 4097] {
            let file: Vec<u8> = (0..n).map(|i| (i * 37 % 251) as u8).collect();
            let p = pack(&file);
            assert!(is_packed(&p));
            assert_eq!(unpack(&p).unwrap(), file, "{n} bytes");
        }
    }

    #[test]
    fn damaged_packs_are_refused_with_the_reason() {
        let file: Vec<u8> = (0..5000u32)
            .flat_map(|i| ((i % 300) as i16).to_le_bytes())
            .collect();
        let p = pack(&file);
        let cut = unpack(&p[..p.len() / 2]).unwrap_err();
        assert!(
            cut.contains("do not inflate") || cut.contains("cut short"),
            "{cut}"
        );
        let mut long = p.clone();
        long[8..16].copy_from_slice(&(file.len() as u64 + 10).to_le_bytes());
        assert!(unpack(&long).unwrap_err().contains("header says"));
        let mut huge = p.clone();
        huge[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(unpack(&huge).unwrap_err().contains("claims"));
        assert!(unpack(&p[..12]).unwrap_err().contains("header"));
        assert!(unpack(b"{\"not\": 1}").unwrap_err().contains("FZPACK1"));
    }
}
