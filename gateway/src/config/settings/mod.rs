//! Every setting, declared once: its TOML key (from which its flag and its
//! environment variable follow), what its value looks like, its default,
//! which back end reads it and what it means. The flags, the file and
//! environment readers, the bounds checked at start and the configuration
//! table of README.md and docs/configuration.md (`s3-gateway settings`) all
//! come from [`SETTINGS`]; the value each setting has at start is a field
//! of [`Values`]. The `declare!` macro (key.rs) makes both from one entry.

mod declared;
mod key;
pub mod kind;

use std::time::Duration;

use crate::word::Word;

/// One setting.
#[derive(Debug)]
pub struct Setting {
    /// The TOML key; the flag is `--` and the key with `-` for `_`, the
    /// environment variable `S3GW_` and the key in upper case.
    pub key: &'static str,
    pub kind: Kind,
    pub default: Default,
    pub read_by: ReadBy,
    /// The `--help` line.
    pub help: &'static str,
    /// The configuration table's "Meaning" cell (Markdown).
    pub doc: &'static str,
}

/// What a setting's value looks like, with the bounds checked at start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Text, named in `--help` by its placeholder (`ADDR`, `FILTER`),
    /// checked by its own code at start.
    Text(&'static str),
    /// Text that `word` accepts; `expected` says what is, when it does not.
    Word {
        name: &'static str,
        word: Word,
        expected: &'static str,
    },
    /// One of `values`.
    Choice {
        name: &'static str,
        values: &'static [&'static str],
    },
    /// A file or directory; in a TOML file relative to the file.
    Path(&'static str),
    /// Comma-separated text, or a TOML array of strings.
    List(&'static str),
    /// `4194304`, `64KiB`, `4MiB` ([`SIZE_UNITS`]): greater than zero, at
    /// most `max`.
    Size { max: u64 },
    /// A size as above, or `0` for off.
    SizeOrOff { max: u64 },
    /// `90s`, `15m`, `2h`, `7d` ([`DURATION_UNITS`]), or a number of
    /// seconds: at least `min`, at most [`MAX_DURATION`].
    Duration { min: Duration },
    /// A whole number greater than zero, at most `max`.
    Count { max: u64 },
    /// `true` or `false`.
    Flag,
}

/// What an unset setting means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Default {
    /// This value, parsed like a given one.
    Value(&'static str),
    /// The storage back end's own default (shown as given here; a test
    /// holds them to storage-client's): on the embedded store, on Ozone.
    Storage {
        embedded: Option<&'static str>,
        ozone: Option<&'static str>,
    },
    /// Nothing: this text says what that means.
    Unset(&'static str),
}

/// Which back end reads a setting; the other refuses it, since a setting
/// that silently does nothing hides a mistake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadBy {
    Both,
    Embedded,
    Ozone,
}

/// Size units, any case; all binary.
pub const SIZE_UNITS: &[(&str, u64)] = &[
    ("", 1),
    ("b", 1),
    ("k", 1 << 10),
    ("kb", 1 << 10),
    ("kib", 1 << 10),
    ("m", 1 << 20),
    ("mb", 1 << 20),
    ("mib", 1 << 20),
    ("g", 1 << 30),
    ("gb", 1 << 30),
    ("gib", 1 << 30),
];

/// Duration units in seconds, lower case only: `15M` could as well mean months.
pub const DURATION_UNITS: &[(&str, u64)] = &[
    ("", 1),
    ("s", 1),
    ("m", 60),
    ("h", 60 * 60),
    ("d", 24 * 60 * 60),
];

/// Longer durations are refused: nobody means them, and the caches panic
/// on a time-to-live beyond a thousand years.
pub const MAX_DURATION: Duration = Duration::from_secs(3650 * 24 * 60 * 60);

/// A whole number greater than zero, as the patterns of sizes, durations
/// and counts write it.
const POSITIVE: &str = "0*[1-9][0-9]*";

/// The configuration file's own flag and variable (it has no TOML key).
pub const CONFIG_FLAG: &str = "config";
pub const CONFIG_ENV: &str = "S3GW_CONFIG";

pub use declared::*;
pub(crate) use key::Read;
pub use key::{Defaulted, Key, NoDefault};

impl Setting {
    /// `--read-buffer`.
    pub fn flag(&self) -> String {
        format!("--{}", self.key.replace('_', "-"))
    }

    /// `S3GW_READ_BUFFER`.
    pub fn env(&self) -> String {
        format!("S3GW_{}", self.key.to_ascii_uppercase())
    }

    /// The placeholder after the flag: `SIZE`, `DURATION`, `ADDR`.
    pub fn value_name(&self) -> &'static str {
        match self.kind {
            Kind::Text(name)
            | Kind::Path(name)
            | Kind::List(name)
            | Kind::Word { name, .. }
            | Kind::Choice { name, .. } => name,
            Kind::Size { .. } | Kind::SizeOrOff { .. } => "SIZE",
            Kind::Duration { .. } => "DURATION",
            Kind::Count { .. } => "COUNT",
            Kind::Flag => "BOOL",
        }
    }

    /// The default as `--help` shows it, if there is one to show.
    pub fn help_default(&self) -> Option<String> {
        match self.default {
            Default::Value(value) => Some(value.to_owned()),
            Default::Storage {
                embedded: Some(e),
                ozone: Some(o),
            } if e != o => Some(format!("{e} (embedded), {o} (ozone)")),
            Default::Storage {
                embedded: Some(value),
                ..
            }
            | Default::Storage {
                ozone: Some(value), ..
            } => Some(value.to_owned()),
            Default::Storage { .. } | Default::Unset(_) => None,
        }
    }

    /// A JSON Schema of the values a TOML file may give: the bounds
    /// declared here, which the parsers check too. Text the gateway checks
    /// with code of its own (`listen`, `log_level`) is only a string here,
    /// and a size or duration with a unit is bounded by its syntax and by
    /// "not zero" (where zero is refused), not by its maximum.
    pub fn schema(&self) -> serde_json::Value {
        use serde_json::json;
        // TOML integers are 64-bit and signed: a larger bound is no bound.
        let at_most = |max: u64, schema: &mut serde_json::Value| {
            if i64::try_from(max).is_ok() {
                schema["maximum"] = json!(max);
            }
        };
        match self.kind {
            Kind::Text(_) | Kind::Path(_) => json!({"type": "string"}),
            Kind::List(_) => json!({"type": ["string", "array"], "items": {"type": "string"}}),
            Kind::Word { word, .. } => json!({"type": "string", "pattern": word.pattern()}),
            Kind::Choice { values, .. } => json!({"type": "string", "enum": values}),
            Kind::Size { max } | Kind::SizeOrOff { max } => {
                let off = matches!(self.kind, Kind::SizeOrOff { .. });
                let units: Vec<String> = SIZE_UNITS
                    .iter()
                    .map(|(unit, _)| {
                        unit.chars()
                            .map(|c| format!("[{c}{}]", c.to_ascii_uppercase()))
                            .collect()
                    })
                    .collect();
                let size = format!("{POSITIVE} *(?:{})", units.join("|"));
                let pattern = if off {
                    format!("^(?:0|{size})$")
                } else {
                    format!("^{size}$")
                };
                let mut schema = json!({
                    "type": ["integer", "string"],
                    "minimum": u64::from(!off),
                    "pattern": pattern,
                });
                at_most(max, &mut schema);
                schema
            }
            Kind::Duration { min } => {
                let units: Vec<&str> = DURATION_UNITS.iter().map(|(unit, _)| *unit).collect();
                let number = if min.is_zero() { "[0-9]+" } else { POSITIVE };
                let mut schema = json!({
                    "type": ["integer", "string"],
                    "minimum": min.as_secs(),
                    "pattern": format!("^{number} *(?:{})$", units.join("|")),
                });
                at_most(MAX_DURATION.as_secs(), &mut schema);
                schema
            }
            Kind::Count { max } => {
                let mut schema = json!({
                    "type": ["integer", "string"],
                    "minimum": 1,
                    "pattern": format!("^{POSITIVE}$"),
                });
                at_most(max, &mut schema);
                schema
            }
            Kind::Flag => json!({"type": ["boolean", "string"], "pattern": "^(?:true|false)$"}),
        }
    }

    /// The `--help` text: what it means, its variable and default.
    pub fn long_help(&self) -> String {
        let mut help = format!("{} [env: {}]", self.help, self.env());
        if let Some(default) = self.help_default() {
            help.push_str(&format!(" [default: {default}]"));
        }
        match self.read_by {
            ReadBy::Both => {}
            ReadBy::Embedded => help.push_str(" (embedded only)"),
            ReadBy::Ozone => help.push_str(" (ozone only)"),
        }
        help
    }
}

/// The configuration table of README.md and docs/configuration.md, in
/// Markdown; `s3-gateway settings` prints it and a test holds both files to it.
pub fn markdown_table() -> String {
    let code = |s: &str| format!("`{s}`");
    let mut out = String::from(
        "| Flag | Environment | TOML key | Default | Meaning |\n|---|---|---|---|---|\n",
    );
    out.push_str(&format!(
        "| `--{CONFIG_FLAG} FILE` | `{CONFIG_ENV}` | – | none | TOML file with any of the keys below |\n"
    ));
    for setting in SETTINGS {
        let default = match setting.default {
            Default::Value(value) => code(value),
            Default::Storage { embedded, ozone } => match (embedded, ozone) {
                (Some(e), Some(o)) if e != o => format!("`{e}`; `{o}` on `ozone`"),
                (Some(value), _) | (None, Some(value)) => code(value),
                (None, None) => "the back end's".to_owned(),
            },
            Default::Unset(text) => text.to_owned(),
        };
        let only = match setting.read_by {
            ReadBy::Both => "",
            ReadBy::Embedded => "; `embedded` only",
            ReadBy::Ozone => "; `ozone` only",
        };
        out.push_str(&format!(
            "| `{} {}` | `{}` | `{}` | {default} | {}{only} |\n",
            setting.flag(),
            setting.value_name(),
            setting.env(),
            setting.key,
            setting.doc,
        ));
        if setting.key == CREDENTIALS.key {
            out.push_str(&format!(
                "| – | `{}` + `{}` | – | generated | Root key to use instead of generating one; both or neither |\n",
                super::ROOT_ACCESS_KEY_ENV,
                super::ROOT_SECRET_KEY_ENV
            ));
        }
    }
    out
}

/// The settings as JSON lines, for tools that check themselves against
/// them (the Helm chart's tests and its values schema): key, kind,
/// defaults, which back end reads it, the JSON Schema of its TOML value
/// and, for `credentials`, of the file it names.
pub fn json_lines() -> String {
    let mut out = String::new();
    for setting in SETTINGS {
        let kind = match setting.kind {
            Kind::Text(_) | Kind::Word { .. } => "text",
            Kind::Choice { .. } => "choice",
            Kind::Path(_) => "path",
            Kind::List(_) => "list",
            Kind::Size { .. } | Kind::SizeOrOff { .. } => "size",
            Kind::Duration { .. } => "duration",
            Kind::Count { .. } => "count",
            Kind::Flag => "bool",
        };
        let read_by = match setting.read_by {
            ReadBy::Both => "both",
            ReadBy::Embedded => "embedded",
            ReadBy::Ozone => "ozone",
        };
        // Every value the default takes (one per back end where they differ).
        let defaults: Vec<&str> = match setting.default {
            Default::Value(value) => vec![value],
            Default::Storage { embedded, ozone } => {
                let mut values: Vec<&str> = embedded.into_iter().chain(ozone).collect();
                values.dedup();
                values
            }
            Default::Unset(_) => Vec::new(),
        };
        let mut line = serde_json::json!({
            "key": setting.key,
            "flag": setting.flag(),
            "env": setting.env(),
            "kind": kind,
            "defaults": defaults,
            "read_by": read_by,
            "schema": setting.schema(),
            "help": setting.help,
        });
        if setting.key == CREDENTIALS.key {
            line["file_schema"] = crate::credentials_file::schema();
        }
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::declared::{REGION_NAME, SECOND};
    use super::*;
    use crate::credentials_file::{ACCESS_KEY, NAME, SECRET_KEY};

    #[test]
    fn a_word_pattern_is_its_characters_and_lengths() {
        assert_eq!(ACCESS_KEY.pattern(), "^[0-9A-Z][0-9A-Z]{15,127}$");
        assert_eq!(SECRET_KEY.pattern(), r"^[\x21-\x7e][\x21-\x7e]{29,127}$");
        assert_eq!(
            NAME.pattern(),
            r"^[0-9A-Za-z][\x2d-\x2e0-9\x40A-Z\x5fa-z]{0,63}$"
        );
        assert_eq!(REGION_NAME.pattern(), r"^[\x2d0-9a-z][\x2d0-9a-z]{0,}$");
    }

    #[test]
    fn words_accept_exactly_their_lengths_and_characters() {
        for (word, good, bad) in [
            (ACCESS_KEY, 'A', 'a'),
            (SECRET_KEY, '~', ' '),
            (NAME, 'a', '/'),
        ] {
            let max = word.max.expect("bounded");
            for length in [word.min, max] {
                assert!(word.accepts(&good.to_string().repeat(length)), "{length}");
            }
            for length in [word.min - 1, max + 1] {
                assert!(!word.accepts(&good.to_string().repeat(length)), "{length}");
            }
            let one_bad = format!("{}{bad}", good.to_string().repeat(word.min - 1));
            assert!(!word.accepts(&one_bad), "{one_bad:?}");
        }
        assert!(!NAME.accepts("-dash") && NAME.accepts("a-dash"));
        assert!(
            REGION_NAME.accepts("eu-west-1")
                && !REGION_NAME.accepts("EU")
                && !REGION_NAME.accepts("")
        );
    }

    #[test]
    fn schemas_carry_the_declared_bounds() {
        assert_eq!(MAX_CONNECTIONS.schema()["maximum"], u64::from(u32::MAX));
        assert_eq!(MAX_CONNECTIONS.schema()["minimum"], 1);
        assert!(
            MAX_HEADER_COUNT.schema().get("maximum").is_none(),
            "u64::MAX is no TOML integer"
        );
        assert_eq!(SMALL_BLOCK_MAX.schema()["minimum"], 0);
        assert_eq!(SMALL_BLOCK_MAX.schema()["maximum"], 1 << 20);
        assert_eq!(RECLAIM_INTERVAL.schema()["minimum"], 1);
        assert_eq!(RECLAIM_GRACE.schema()["minimum"], 0);
        assert_eq!(RECLAIM_GRACE.schema()["maximum"], MAX_DURATION.as_secs());
        assert_eq!(
            RECLAIM_INTERVAL.schema()["pattern"],
            "^0*[1-9][0-9]* *(?:|s|m|h|d)$"
        );
        assert_eq!(
            SMALL_BLOCK_MAX.schema()["pattern"],
            "^(?:0|0*[1-9][0-9]* *(?:|[bB]|[kK]|[kK][bB]|[kK][iI][bB]|[mM]|[mM][bB]|[mM][iI][bB]|[gG]|[gG][bB]|[gG][iI][bB]))$"
        );
        assert_eq!(
            LOG_FORMAT.schema()["enum"],
            serde_json::json!(["text", "json"])
        );
        // Only 0 and 1 s minimums exist; a larger one the pattern would not hold.
        for s in SETTINGS {
            if let Kind::Duration { min } = s.kind {
                assert!(min <= SECOND, "{}", s.key);
            }
        }
    }
}
