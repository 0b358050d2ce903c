//! `--set TABLE.KEY=VALUE` overrides, parsed once into [`Override`]s: what every command
//! that reads the run config takes (`run`, `worker`, `slurm`, `train`, `gate`,
//! `selfplay`), so that a key is split from its value in one place, and an error about
//! an override names it as it was given.

use std::fmt;

use crate::error::bail;

/// The tables of a config file.
pub const TABLES: [&str; 6] = ["run", "selfplay", "train", "gate", "anchor", "fastnet"];

/// One `--set`, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct Override {
    /// The table it sets a key of (`selfplay`).
    pub table: String,
    /// The key (`games`).
    pub key: String,
    /// The value: TOML (numbers, booleans, strings, arrays), else the text as a string.
    pub value: toml::Value,
    /// The text given, for messages.
    text: String,
}

impl Override {
    /// Parses `text` (`TABLE.KEY=VALUE`). `only`, when given, is the one table the
    /// command reads: a bare key (`steps=300`) is of that table, and a key of any other
    /// table is refused, as the command would ignore it.
    pub fn parse(text: &str, only: Option<&str>) -> crate::Result<Override> {
        let Some((name, value)) = text.split_once('=') else {
            bail!("--set {text}: expected TABLE.KEY=VALUE");
        };
        let name = name.trim();
        let (table, key) = match (name.split_once('.'), only) {
            (Some((t, k)), _) => (t.trim(), k.trim()),
            (None, Some(t)) => (t, name),
            (None, None) => bail!(
                "--set {text}: name the table too, e.g. selfplay.games (tables: {})",
                TABLES.join(", ")
            ),
        };
        if !TABLES.contains(&table) {
            bail!(
                "--set {text}: unknown table `{table}` (tables: {})",
                TABLES.join(", ")
            );
        }
        if let Some(t) = only
            && t != table
        {
            bail!(
                "--set {text}: this command reads only [{t}] settings, not [{table}] (use `flipzero run` for the whole pipeline)"
            );
        }
        if key.is_empty() {
            bail!("--set {text}: no key after `{table}.`");
        }
        let value = parse_value(value.trim())
            .map_err(|why| crate::error::err!("--set {}: {why}", shown(text)))?;
        Ok(Override {
            table: table.to_string(),
            key: key.to_string(),
            value,
            text: text.to_string(),
        })
    }

    /// [`Override::parse`] of each of `texts`, in order.
    pub fn parse_all(texts: &[String], only: Option<&str>) -> crate::Result<Vec<Override>> {
        texts.iter().map(|t| Override::parse(t, only)).collect()
    }

    /// `table.key`.
    pub fn name(&self) -> String {
        format!("{}.{}", self.table, self.key)
    }

    /// Whether it sets `table.key`.
    pub fn sets(&self, table: &str, key: &str) -> bool {
        self.table == table && self.key == key
    }

    /// The text given (`selfplay.games=8`).
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for Override {
    /// As given on the command line: `--set selfplay.games=8` (a long one cut).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "--set {}", shown(&self.text))
    }
}

/// `text` as a message shows it: at most 80 characters.
fn shown(text: &str) -> String {
    match text.char_indices().nth(80) {
        Some((i, _)) => format!("{}… ({} characters)", &text[..i], text.chars().count()),
        None => text.to_string(),
    }
}

/// Parses a `--set` value as one TOML value (numbers, booleans, quoted strings, arrays),
/// else takes the text as a string (`train.net=standard`). What TOML would read as more
/// than one value (a line break, a comment) is a string too, never cut short; a whole
/// number too large for TOML and an array that does not parse are refused, saying so.
fn parse_value(v: &str) -> Result<toml::Value, String> {
    let one = (!v.contains(['\n', '\r']))
        .then(|| toml::from_str::<toml::Table>(&format!("v = {v}")).ok())
        .flatten()
        .filter(|t| t.len() == 1)
        .and_then(|t| t.get("v").cloned())
        // A `#` the value does not hold (in a string) began a comment.
        .filter(|x| !v.contains('#') || x.to_string().contains('#'));
    if let Some(x) = one {
        return Ok(x);
    }
    let digits = v.strip_prefix(['-', '+']).unwrap_or(v);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit() || b == b'_') {
        let plain = !digits.contains('_') && (digits == "0" || !digits.starts_with('0'));
        return Err(if plain {
            format!(
                "{} is too large a whole number (TOML's reach −2⁶³..2⁶³−1)",
                shown(v)
            )
        } else {
            format!(
                "{} is not a number TOML reads (a leading zero, or a `_` not between digits)",
                shown(v)
            )
        });
    }
    if v.starts_with('[') {
        return Err(format!(
            "{} is not a TOML array (quote its strings: [\"ab3\", \"greedy\"])",
            shown(v)
        ));
    }
    Ok(toml::Value::String(v.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_override_is_parsed_once_into_its_parts() {
        let o = Override::parse(" selfplay.games = 8", None).unwrap();
        assert_eq!((o.table.as_str(), o.key.as_str()), ("selfplay", "games"));
        assert_eq!(o.value, toml::Value::Integer(8));
        assert_eq!(o.to_string(), "--set  selfplay.games = 8");
        assert_eq!(o.name(), "selfplay.games");
        let o = Override::parse("steps=300", Some("train")).unwrap();
        assert_eq!(o.name(), "train.steps");
        let o = Override::parse("train.net=standard", Some("train")).unwrap();
        assert_eq!(o.value, toml::Value::String("standard".into()));
        let o = Override::parse("anchor.ladder=[\"ab2\"]", None).unwrap();
        assert_eq!(o.value, toml::Value::Array(vec!["ab2".into()]));
        // What TOML would read as more than the value is the whole text, as a string.
        for text in [
            "selfplay.games=8 # c",
            "selfplay.games=8\n[run]\ngenerations=1",
        ] {
            let o = Override::parse(text, None).unwrap();
            assert!(
                matches!(o.value, toml::Value::String(_)),
                "{text}: {:?}",
                o.value
            );
        }
        let o = Override::parse("selfplay.game=\"ataxx # x\"", None).unwrap();
        assert_eq!(o.value, toml::Value::String("ataxx # x".into()));
        let long = format!("selfplay.game={}", "x".repeat(100_000));
        let o = Override::parse(&long, None).unwrap();
        assert!(
            o.to_string().len() < 120 && o.to_string().ends_with("(100014 characters)"),
            "{o}"
        );
        for (text, only, want) in [
            (
                "selfplay.games=99999999999999999999",
                None,
                "too large a whole number",
            ),
            ("selfplay.games=007", None, "a leading zero"),
            ("selfplay.games=16_", None, "not between digits"),
            (
                "anchor.ladder=[ab3]",
                None,
                "not a TOML array (quote its strings",
            ),
            ("games", None, "expected TABLE.KEY=VALUE"),
            ("games=8", None, "name the table too"),
            ("play.games=8", None, "unknown table `play`"),
            (
                "gate.games=8",
                Some("train"),
                "reads only [train] settings, not [gate]",
            ),
            ("train.=8", None, "no key after `train.`"),
        ] {
            let e = Override::parse(text, only).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("--set {text}: ")) && e.contains(want),
                "{e}"
            );
        }
    }
}
