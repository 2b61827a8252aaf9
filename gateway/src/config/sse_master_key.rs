//! The file of `sse_master_key_file`: SSE-S3's keyring (see
//! `crate::sse::keyring`). Whoever holds it can open every SSE-S3 object
//! whose stored bytes they can read, so it must be private as every secret
//! file is (`private_file`); no error ever quotes its content.

use std::path::Path;

use crate::sse::keyring::Keyring;

/// Reads the keyring; `Err` is a one-line reason naming the file.
pub fn read(path: &Path) -> Result<Keyring, String> {
    let text = super::private_file::read(path, "the SSE-S3 master keys")?;
    Keyring::parse(&text, path)
}

#[cfg(test)]
mod tests {
    use super::super::private_file::file_with;
    use super::*;

    const LINE: &str = "k1 q8Wl3mJ0c2Z1n3VgYkQx0tJmH1m5o8YbQp0yqK3wRz8=\n";

    #[test]
    fn reads_a_private_keyring_and_refuses_a_shared_one() {
        assert_eq!(
            read(file_with(LINE, 0o600).path()).unwrap().active().id,
            "k1"
        );
        assert!(read(file_with(LINE, 0o400).path()).is_ok());
        for mode in [0o644, 0o604, 0o660] {
            let message = read(file_with(LINE, mode).path()).unwrap_err();
            assert!(message.contains("chmod 600"), "{message}");
            assert!(!message.contains("q8Wl3"), "{message}");
        }
        let missing = read(Path::new("/nonexistent/sse.keys")).unwrap_err();
        assert!(missing.contains("/nonexistent/sse.keys"), "{missing}");
    }
}
