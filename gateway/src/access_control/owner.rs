//! Canonical user ids: what ACLs, ListBuckets and ListObjects call an
//! owner. AWS shows a 64-hex-digit id per account; ours is the SHA-256 of
//! the access key, so it is stable, needs no storage and reveals nothing
//! of the key that a signature does not already name.

use crate::access_control::Identity;
use sha2::{Digest, Sha256};

/// The canonical id of the key `access_key`.
pub fn canonical_id(access_key: &str) -> String {
    hex::encode(Sha256::digest(access_key.as_bytes()))
}

/// The caller's canonical id; `None` for an anonymous caller.
pub fn of(who: &Identity) -> Option<String> {
    (!super::is_anonymous(who)).then(|| canonical_id(&who.access_key))
}

/// Whether `text` has the shape of a canonical id.
pub fn is_canonical_id(text: &str) -> bool {
    text.len() == 64
        && text
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_hex_and_differ_per_key() {
        let id = canonical_id("S3GWAAAAAAAAAAAAAAAA");
        assert!(is_canonical_id(&id), "{id}");
        assert_eq!(id, canonical_id("S3GWAAAAAAAAAAAAAAAA"));
        assert_ne!(id, canonical_id("S3GWAAAAAAAAAAAAAAAB"));
        assert!(!is_canonical_id("S3GWAAAAAAAAAAAAAAAA"));
    }
}
