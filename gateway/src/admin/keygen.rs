//! New access keys and secrets.

use rand::Rng;
use storage_client::{Credential, Storage, StorageError};

const ACCESS_KEY_PREFIX: &str = "S3GW";
const ACCESS_KEY_LEN: usize = 20;
const SECRET_KEY_LEN: usize = 40;
const UPPER_ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
/// Alphanumeric only, so a secret pastes into shells and TOML without quoting
/// surprises; 40 of 62 symbols is still over 230 bits.
const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// A fresh credential: `S3GW` + 16 upper-case alphanumerics, and a 40-character
/// secret, drawn from the thread-local CSPRNG.
pub fn generate(name: &str, is_root: bool) -> Credential {
    Credential {
        name: name.to_string(),
        access_key: format!(
            "{ACCESS_KEY_PREFIX}{}",
            random_text(UPPER_ALNUM, ACCESS_KEY_LEN - ACCESS_KEY_PREFIX.len())
        ),
        secret_key: random_text(ALNUM, SECRET_KEY_LEN),
        is_root,
    }
}

/// A fresh credential as [`generate`] makes it, with the secret issued by
/// the storage back end where it keeps S3 secrets of its own (Ozone), so
/// the key works there too.
pub async fn issue(
    storage: &Storage,
    name: &str,
    is_root: bool,
) -> Result<Credential, StorageError> {
    let mut credential = generate(name, is_root);
    if let Some(secret) = storage.issue_secret(&credential.access_key).await? {
        credential.secret_key = secret;
    }
    Ok(credential)
}

fn random_text(alphabet: &[u8], len: usize) -> String {
    let mut rng = rand::rng();
    (0..len)
        .map(|_| char::from(alphabet[rng.random_range(0..alphabet.len())]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_pass_the_checks_loaded_keys_must() {
        for _ in 0..100 {
            let key = generate("any", false);
            let entry = crate::credentials_file::KeyEntry {
                name: key.name,
                access_key: key.access_key,
                secret_key: key.secret_key,
                root: false,
            };
            crate::credentials_file::validate_key(&entry).expect("generated keys comply");
        }
    }

    #[test]
    fn keys_have_the_documented_shape() {
        let cred = generate("alice", false);
        assert_eq!(cred.name, "alice");
        assert!(!cred.is_root);
        assert_eq!(cred.access_key.len(), 20);
        assert!(cred.access_key.starts_with("S3GW"));
        assert!(
            cred.access_key
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        );
        assert_eq!(cred.secret_key.len(), 40);
        assert!(cred.secret_key.bytes().all(|b| b.is_ascii_alphanumeric()));
    }

    #[test]
    fn keys_differ_between_calls() {
        let a = generate("a", true);
        let b = generate("a", true);
        assert_ne!(a.access_key, b.access_key);
        assert_ne!(a.secret_key, b.secret_key);
    }
}
