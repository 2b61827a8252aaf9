//! The file of `ozone_records_key_file`: the key the Ozone back end seals
//! its own records with (see docs/security.md). Whoever holds it can forge
//! a root credential, so it must be private as every secret file is
//! (`private_file`); no error ever quotes its content. Every replica reads
//! the same key.

use std::path::Path;

use storage_client::RecordsKey;

/// How to make a key, for the errors that need one.
pub const HOW_TO_MAKE: &str = "make one with `(umask 077; openssl rand -base64 32 > FILE)`";

/// Reads the key: the file's text without surrounding whitespace, at
/// least [`RecordsKey::MIN_BYTES`] bytes with no whitespace inside (the
/// output of `openssl rand -base64 32` or `-hex 32`). `Err` is a one-line
/// reason naming the file.
pub fn read(path: &Path) -> Result<RecordsKey, String> {
    let shown = path.display();
    if !path.exists() {
        return Err(format!("cannot read {shown}: no such file ({HOW_TO_MAKE})"));
    }
    let text =
        super::private_file::read(path, "the key that seals the gateway's records in Ozone")?;
    let key = text.trim();
    if key.len() < RecordsKey::MIN_BYTES || key.contains(char::is_whitespace) {
        return Err(format!(
            "{shown} holds no records key (one line of at least {} characters): {HOW_TO_MAKE}",
            RecordsKey::MIN_BYTES
        ));
    }
    Ok(RecordsKey::new(key.as_bytes().to_vec()))
}

#[cfg(test)]
mod tests {
    use super::super::private_file::file_with;
    use super::*;

    const KEY: &str = "q8Wl3mJ0c2Z1n3VgYkQx0tJmH1m5o8YbQp0yqK3wRz8=";

    #[test]
    fn reads_one_line_of_key() {
        let file = file_with(&format!("{KEY}\n"), 0o600);
        assert_eq!(
            read(file.path()),
            Ok(RecordsKey::new(KEY.as_bytes().to_vec()))
        );
        let read_only = file_with(KEY, 0o400);
        assert!(read(read_only.path()).is_ok());
    }

    #[test]
    fn refuses_a_file_others_may_read_without_quoting_it() {
        for mode in [0o604, 0o660, 0o644, 0o620, 0o606] {
            let file = file_with(KEY, mode);
            let message = read(file.path()).expect_err("open to others");
            assert!(message.contains(&format!("{mode:o}")), "{message}");
            assert!(message.contains("chmod 600"), "{message}");
            assert!(!message.contains(KEY), "{message}");
        }
    }

    #[test]
    fn refuses_a_short_or_missing_key_and_says_how_to_make_one() {
        for text in [
            "",
            "\n",
            "short\n",
            "two words of a key that is long enough\n",
        ] {
            let file = file_with(text, 0o600);
            let message = read(file.path()).expect_err(text);
            assert!(message.contains("openssl rand"), "{text:?}: {message}");
            assert!(!message.contains('\n'), "{message}");
        }
        let missing = read(Path::new("/nonexistent/records.key")).expect_err("missing");
        assert!(missing.contains("/nonexistent/records.key"), "{missing}");
        assert!(missing.contains("openssl rand"), "{missing}");
    }
}
