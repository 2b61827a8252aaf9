//! What an encrypted object keeps beside its bytes to be opened again: one
//! reserved user-metadata entry, [`ENTRY`], whose name no client can send
//! (a space is not allowed in a header name) and which no response shows.
//! It holds the scheme, the plaintext size, the customer key's MD5 (to
//! tell a wrong key from damage) and the sealed object key; never a key
//! in the clear.

use storage_client::ObjectMeta;

/// The reserved `meta.user` entry.
pub const ENTRY: &str = "s3gw sse";
const VERSION: &str = "v1";
const SSE_C: &str = "SSE-C";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub plain_size: u64,
    /// Base64 MD5 of the customer key that sealed the object key.
    pub customer_key_md5: String,
    /// The object key, sealed (see `ObjectKey::seal`).
    pub sealed_key: String,
}

/// A reserved entry this gateway cannot read: written by a newer version,
/// or changed. The object is not served rather than served as ciphertext.
#[derive(Debug, thiserror::Error)]
#[error("the object's encryption record is not readable")]
pub struct Unreadable;

impl Record {
    /// The record of an object, `None` when it was stored unencrypted.
    pub fn of(meta: &ObjectMeta) -> Result<Option<Self>, Unreadable> {
        let Some(text) = meta.user.get(ENTRY) else {
            return Ok(None);
        };
        let mut fields = text.split(' ');
        let (Some(VERSION), Some(SSE_C), Some(size), Some(md5), Some(sealed), None) = (
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
        ) else {
            return Err(Unreadable);
        };
        Ok(Some(Self {
            plain_size: size.parse().map_err(|_| Unreadable)?,
            customer_key_md5: md5.to_owned(),
            sealed_key: sealed.to_owned(),
        }))
    }

    pub fn store(&self, meta: &mut ObjectMeta) {
        meta.user.insert(
            ENTRY.to_owned(),
            format!(
                "{VERSION} {SSE_C} {} {} {}",
                self.plain_size, self.customer_key_md5, self.sealed_key
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_and_no_client_can_name_it() {
        let record = Record {
            plain_size: 70_000,
            customer_key_md5: "bWQ1".into(),
            sealed_key: "c2VhbGVk".into(),
        };
        let mut meta = ObjectMeta::default();
        assert_eq!(Record::of(&meta).unwrap(), None);
        record.store(&mut meta);
        assert_eq!(Record::of(&meta).unwrap(), Some(record));
        assert!(http::HeaderName::from_bytes(format!("x-amz-meta-{ENTRY}").as_bytes()).is_err());
    }

    #[test]
    fn an_unknown_record_is_unreadable() {
        for text in [
            "v2 SSE-C 1 a b",
            "v1 SSE-C x a b",
            "v1 SSE-C 1 a",
            "v1 SSE-C 1 a b c",
            "",
        ] {
            let mut meta = ObjectMeta::default();
            meta.user.insert(ENTRY.into(), text.into());
            assert!(Record::of(&meta).is_err(), "{text}");
        }
    }
}
