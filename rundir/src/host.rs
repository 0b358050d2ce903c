//! This machine's name, as run-directory file names carry it.

/// This machine's name as file names and lock files carry it: letters, digits, `-` and
/// `_` only (anything else becomes `_`), `unknown-host` when it cannot be read.
pub fn host_name() -> &'static str {
    static HOST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HOST.get_or_init(|| {
        let raw = ["/proc/sys/kernel/hostname", "/etc/hostname"]
            .iter()
            .find_map(|p| {
                crate::files::read_regular_text(std::path::Path::new(p), crate::Limit::SMALL).ok()
            })
            .or_else(|| std::env::var("HOSTNAME").ok())
            .unwrap_or_default();
        sanitize(&raw)
    })
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
