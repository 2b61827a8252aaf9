//! SSE-S3's master keys: the keys that seal each SSE-S3 object's key. A
//! keyring file holds one key a line, `<key-id> <base64 of 32 bytes>`
//! (blank lines and `#` comments aside). The LAST line is the active key,
//! sealing every new object; every line opens the objects it sealed, whose
//! record names the key id. Rotation is appending a line and restarting:
//! old objects keep reading under their old key, new ones use the new key.
//!
//! On the embedded back end with no `sse_master_key_file`, the gateway
//! makes [`GENERATED_FILE`] in the data directory on first start (0600),
//! so SSE-S3 works out of the box on a laptop. No key ever appears in a log
//! line, an error or `Debug`.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rand::RngCore;
use storage_client::private_files;

use crate::word::{Chars, Word};

/// The keyring the embedded back end makes on first start.
pub const GENERATED_FILE: &str = "sse-master-keys";

/// Key ids: what a record (space-separated) and a log line carry as is.
const KEY_ID: Word = Word {
    min: 1,
    max: Some(64),
    first: Chars(&[(b'0', b'9'), (b'A', b'Z'), (b'a', b'z')]),
    chars: Chars(&[
        (b'0', b'9'),
        (b'A', b'Z'),
        (b'a', b'z'),
        (b'-', b'.'),
        (b'_', b'_'),
    ]),
};

/// One master key.
#[derive(Clone, PartialEq, Eq)]
pub struct MasterKey {
    pub id: String,
    pub key: [u8; 32],
}

/// Every master key of a keyring file, the active one last.
#[derive(Clone, PartialEq, Eq)]
pub struct Keyring {
    keys: Vec<MasterKey>,
    /// Where the keys came from, for the operator's messages.
    pub file: PathBuf,
}

impl fmt::Debug for Keyring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ids: Vec<&str> = self.keys.iter().map(|key| key.id.as_str()).collect();
        f.debug_struct("Keyring")
            .field("file", &self.file)
            .field("ids", &ids)
            .finish()
    }
}

impl Keyring {
    /// Parses a keyring file's text; `Err` is a one-line reason that
    /// quotes no key.
    pub fn parse(text: &str, file: &Path) -> Result<Self, String> {
        let shown = file.display();
        let mut keys: Vec<MasterKey> = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let number = index + 1;
            let mut fields = line.split_whitespace();
            let (Some(id), Some(encoded), None) = (fields.next(), fields.next(), fields.next())
            else {
                return Err(format!(
                    "{shown} line {number}: expected `<key-id> <base64 of 32 bytes>`"
                ));
            };
            if !KEY_ID.accepts(id) {
                return Err(format!(
                    "{shown} line {number}: a key id is 1 to 64 letters, digits, `-`, `.` or \
                     `_`, starting with a letter or digit"
                ));
            }
            let key: [u8; 32] = STANDARD
                .decode(encoded)
                .ok()
                .and_then(|bytes| bytes.try_into().ok())
                .ok_or_else(|| {
                    format!(
                        "{shown} line {number}: key {id} is not base64 of 32 bytes \
                         (make one with `openssl rand -base64 32`)"
                    )
                })?;
            if keys.iter().any(|known| known.id == id) {
                return Err(format!("{shown} line {number}: key id {id} appears twice"));
            }
            keys.push(MasterKey {
                id: id.to_owned(),
                key,
            });
        }
        if keys.is_empty() {
            return Err(format!(
                "{shown} holds no key: write a line `<key-id> <base64 of 32 bytes>`, e.g. \
                 `echo \"k1 $(openssl rand -base64 32)\"`"
            ));
        }
        Ok(Self {
            keys,
            file: file.to_path_buf(),
        })
    }

    /// The key new objects are sealed with: the file's last.
    pub fn active(&self) -> &MasterKey {
        // `parse` refuses an empty keyring.
        &self.keys[self.keys.len() - 1]
    }

    /// The key named `id`, to open an object it sealed.
    pub fn get(&self, id: &str) -> Option<&MasterKey> {
        self.keys.iter().find(|key| key.id == id)
    }

    /// The keyring in `dir`'s [`GENERATED_FILE`], made with one fresh key
    /// (owner-only) when there is none yet; a file that exists is read
    /// as it is, so an operator may append keys to it to rotate.
    pub fn generated_in(dir: &Path) -> Result<Self, String> {
        let path = dir.join(GENERATED_FILE);
        let shown = path.display();
        if !path.exists() {
            let mut key = [0u8; 32];
            rand::rng().fill_bytes(&mut key);
            let text = format!(
                "# SSE-S3 master keys: `<key-id> <base64 key>`, the last one seals new \
                 objects.\n# Rotate by appending a line; never remove a line objects still use.\n\
                 k1 {}\n",
                STANDARD.encode(key)
            );
            private_files::ensure_private_dir(dir)
                .and_then(|()| {
                    let mut file = private_files::private_file_options()
                        .write(true)
                        .create_new(true)
                        .open(&path)?;
                    file.write_all(text.as_bytes())?;
                    file.sync_all()
                })
                .map_err(|e| format!("cannot write {shown}: {e}"))?;
            tracing::info!(file = %shown, "generated an SSE-S3 master key");
        }
        private_files::tighten_file(&path).map_err(|e| format!("cannot read {shown}: {e}"))?;
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("cannot read {shown}: {e}"))?;
        Self::parse(&text, &path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_line(id: &str, byte: u8) -> String {
        format!("{id} {}\n", STANDARD.encode([byte; 32]))
    }

    #[test]
    fn the_last_key_is_active_and_every_key_opens() {
        let text = format!(
            "# comment\n\n{}{}",
            key_line("k1", 1),
            key_line("2026-12.b_x", 2)
        );
        let ring = Keyring::parse(&text, Path::new("f")).unwrap();
        assert_eq!(ring.active().id, "2026-12.b_x");
        assert_eq!(ring.active().key, [2; 32]);
        assert_eq!(ring.get("k1").unwrap().key, [1; 32]);
        assert!(ring.get("k3").is_none());
        let debug = format!("{ring:?}");
        assert!(debug.contains("k1") && !debug.contains(&STANDARD.encode([1u8; 32])));
    }

    #[test]
    fn malformed_keyrings_are_refused_without_quoting_keys() {
        let secret = STANDARD.encode([7u8; 31]);
        for (text, expected) in [
            (String::new(), "holds no key"),
            ("# only\n".to_owned(), "holds no key"),
            (format!("k1 {secret}\n"), "not base64 of 32 bytes"),
            ("k1\n".to_owned(), "expected"),
            (format!("{} extra", key_line("k1", 1).trim()), "expected"),
            (key_line("k/1", 1), "key id"),
            (key_line("-k", 1), "key id"),
            (
                format!("{}{}", key_line("k1", 1), key_line("k1", 2)),
                "twice",
            ),
        ] {
            let err = Keyring::parse(&text, Path::new("/etc/keys")).unwrap_err();
            assert!(err.contains(expected), "{text:?}: {err}");
            assert!(err.contains("/etc/keys"), "{err}");
            assert!(!err.contains(&secret) && !err.contains('\n'), "{err}");
        }
    }

    #[test]
    fn a_generated_keyring_is_private_and_kept() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let first = Keyring::generated_in(&data).unwrap();
        let path = data.join(GENERATED_FILE);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(first.active().id, "k1");
        let again = Keyring::generated_in(&data).unwrap();
        assert_eq!(again, first);
    }
}
