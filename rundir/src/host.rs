//! This machine's name, as run-directory file names carry it.

/// This machine's name as file names and lock files carry it: letters, digits, `-` and
/// `_` only (anything else becomes `_`), `unknown-host` when it cannot be read.
pub fn host_name() -> &'static str {
    static HOST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HOST.get_or_init(|| {
        let raw = ["/proc/sys/kernel/hostname", "/etc/hostname"]
            .iter()
            .find_map(|p| read_name(std::path::Path::new(p)))
            .or_else(|| std::env::var("HOSTNAME").ok())
            .unwrap_or_default();
        sanitize(&raw)
    })
}

/// The first line of a small regular file (a FIFO or a device is not read).
fn read_name(path: &std::path::Path) -> Option<String> {
    use std::io::Read;
    // Checked before opening: opening a FIFO would wait for a writer.
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let file = std::fs::File::open(path).ok()?;
    let mut text = String::new();
    file.take(4096).read_to_string(&mut text).ok()?;
    text.lines().next().map(str::to_string)
}

/// `raw` as a file-name part: letters, digits and `-` kept, anything else `_`.
fn sanitize(raw: &str) -> String {
    let name: String = raw
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() {
        "unknown-host".into()
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_keep_letters_digits_and_dashes_only() {
        assert_eq!(super::sanitize(" node-7.lan\n"), "node-7_lan");
        assert_eq!(super::sanitize(""), "unknown-host");
        assert_eq!(super::sanitize("a/b c"), "a_b_c");
    }
}
