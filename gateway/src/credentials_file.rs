//! Credentials files: one `[[keys]]` table per key, what `admin keys
//! create` prints, what the server loads at start (`credentials`) and what
//! a first start writes to `root-credentials.toml`; and the shape every key
//! must have, wherever it comes from.

use std::collections::HashSet;
use std::path::Path;

use serde::Deserialize;

use crate::toml_error::toml_error;
use crate::word::{Chars, Word};

/// One `[[keys]]` table of a credentials file.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyEntry {
    pub name: String,
    pub access_key: String,
    pub secret_key: String,
    /// Root keys may use the admin API.
    #[serde(default)]
    pub root: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CredentialsFile {
    #[serde(default)]
    keys: Vec<KeyEntry>,
}

/// A credentials file that cannot be used; one line naming the file.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CredentialsFileError(String);

/// Reads a credentials file, refusing malformed keys and a name or access
/// key that appears twice.
pub fn load(path: &Path) -> Result<Vec<KeyEntry>, CredentialsFileError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        CredentialsFileError(format!(
            "cannot read credentials file {}: {e}",
            path.display()
        ))
    })?;
    let file: CredentialsFile = toml::from_str(&text).map_err(|e| {
        CredentialsFileError(format!(
            "credentials file {}: {}",
            path.display(),
            toml_error(&text, &e)
        ))
    })?;
    let mut access_keys = HashSet::new();
    let mut names = HashSet::new();
    for key in &file.keys {
        let refused = |why: String| {
            CredentialsFileError(format!(
                "credentials file {}: key {:?}: {why}",
                path.display(),
                key.name
            ))
        };
        validate_key(key).map_err(refused)?;
        if !access_keys.insert(key.access_key.as_str()) {
            return Err(refused(format!(
                "access key {} appears twice",
                key.access_key
            )));
        }
        if !names.insert(key.name.as_str()) {
            return Err(refused("the name appears twice".into()));
        }
    }
    Ok(file.keys)
}

/// Renders one `[[keys]]` table of a credentials file, ready to paste.
pub fn render(key: &KeyEntry) -> String {
    let quoted = |s: &str| toml::Value::String(s.to_string()).to_string();
    let mut out = format!(
        "[[keys]]\nname = {}\naccess_key = {}\nsecret_key = {}\n",
        quoted(&key.name),
        quoted(&key.access_key),
        quoted(&key.secret_key)
    );
    if key.root {
        out.push_str("root = true\n");
    }
    out
}

const DIGITS_UPPER: Chars = Chars(&[(b'0', b'9'), (b'A', b'Z')]);
/// Access keys as AWS issues them (`AKIA` + 16): 16 to 128 upper-case
/// letters and digits. That also keeps out `/` (the SigV4 credential scope's
/// separator) and `.` (the Ozone back end's system buckets belong to a
/// dotted owner no key may be).
pub const ACCESS_KEY: Word = Word {
    min: 16,
    max: Some(128),
    first: DIGITS_UPPER,
    chars: DIGITS_UPPER,
};
/// Printable ASCII but space.
const GRAPHIC: Chars = Chars(&[(b'!', b'~')]);
/// Secrets at least as long as AWS's 40-character ones less a margin: a
/// short secret can be guessed offline from one signed request.
pub const SECRET_KEY: Word = Word {
    min: 30,
    max: Some(128),
    first: GRAPHIC,
    chars: GRAPHIC,
};
const ALPHANUMERIC: Chars = Chars(&[(b'0', b'9'), (b'A', b'Z'), (b'a', b'z')]);
/// Key names: what a shell, a URL query and a log line carry unquoted.
pub const NAME: Word = Word {
    min: 1,
    max: Some(64),
    first: ALPHANUMERIC,
    chars: Chars(&[
        (b'-', b'.'),
        (b'0', b'9'),
        (b'@', b'@'),
        (b'A', b'Z'),
        (b'_', b'_'),
        (b'a', b'z'),
    ]),
};
/// [`NAME`] in words, for messages and `--help`.
pub const NAME_PATTERN: &str =
    "1 to 64 characters of A-Z, a-z, 0-9 and . _ @ -, starting with a letter or digit";

/// Checks a key name against [`NAME`].
pub fn validate_name(name: &str) -> Result<(), String> {
    if NAME.accepts(name) {
        Ok(())
    } else {
        Err(format!("name must be {NAME_PATTERN}"))
    }
}

/// The JSON Schema of one `[[keys]]` table: the rules [`validate_key`]
/// checks, for tools that write keys (the Helm chart's values schema).
/// Names and access keys unique within a file are beyond it.
pub fn key_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["name", "access_key", "secret_key"],
        "properties": {
            "name": {"type": "string", "pattern": NAME.pattern()},
            "access_key": {"type": "string", "pattern": ACCESS_KEY.pattern()},
            "secret_key": {"type": "string", "pattern": SECRET_KEY.pattern()},
            "root": {"type": "boolean"},
        },
    })
}

/// The JSON Schema of a credentials file.
pub fn schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {"keys": {"type": "array", "items": key_schema()}},
    })
}

/// Checks the shape of a key loaded from a file or the environment; the
/// keys the gateway generates (`S3GW` + 16, 40-character secrets) comply.
pub fn validate_key(key: &KeyEntry) -> Result<(), String> {
    validate_name(&key.name)?;
    let length = |word: Word| format!("{} to {}", word.min, word.max.unwrap_or(usize::MAX));
    if !ACCESS_KEY.accepts(&key.access_key) {
        return Err(format!(
            "access_key must be {} characters of A-Z and 0-9 (as AWS issues them)",
            length(ACCESS_KEY)
        ));
    }
    if !SECRET_KEY.accepts(&key.secret_key) {
        return Err(format!(
            "secret_key must be {} printable ASCII characters without spaces",
            length(SECRET_KEY)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn file_with(text: &str) -> tempfile::NamedTempFile {
        let mut file = tempfile::NamedTempFile::new().expect("temp file");
        file.write_all(text.as_bytes()).expect("write temp file");
        file
    }

    #[test]
    fn rendered_keys_read_back_from_a_credentials_file() {
        let keys = [
            KeyEntry {
                name: "alice@example.com".into(),
                access_key: "S3GWABCDEFGHIJKLMNOP".into(),
                secret_key: "secret\"and\\with-quotes-and-backslashes".into(),
                root: false,
            },
            KeyEntry {
                name: "root".into(),
                access_key: "S3GWROOT00000001".into(),
                secret_key: "rootsecret-rootsecret-rootsecret".into(),
                root: true,
            },
        ];
        let text: Vec<String> = keys.iter().map(render).collect();
        let file = file_with(&text.join("\n"));
        assert_eq!(load(file.path()).expect("valid"), keys);
    }

    #[test]
    fn names_follow_the_documented_pattern() {
        for good in [
            "alice",
            "ops-1",
            "backup.nightly",
            "a_b",
            "x@example.com",
            "0",
        ] {
            validate_name(good).expect(good);
        }
        let too_long = "a".repeat(65);
        for bad in [
            "",
            "bad/name",
            "-dash",
            "with space",
            "quote\"",
            "é",
            too_long.as_str(),
        ] {
            let why = validate_name(bad).expect_err(bad);
            assert!(why.contains(NAME_PATTERN), "{bad:?}: {why}");
        }
    }
}
