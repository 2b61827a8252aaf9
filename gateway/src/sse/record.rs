//! What an encrypted object keeps beside its bytes to be opened again: one
//! reserved user-metadata entry, [`ENTRY`], whose name no client can send
//! (a space is not allowed in a header name) and which no response shows.
//! It holds the scheme, the plaintext size, what wrapped the object key
//! (SSE-C: the customer key's MD5, to tell a wrong key from damage;
//! SSE-S3: the master key's id, so rotated keys keep opening what they
//! sealed) and the sealed object key; never a key in the clear.

use storage_client::ObjectMeta;

/// The reserved `meta.user` entry.
pub const ENTRY: &str = "s3gw sse";
const VERSION: &str = "v1";
const SSE_C: &str = "SSE-C";
const SSE_S3: &str = "SSE-S3";

/// The key that sealed the object key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wrapping {
    /// SSE-C: base64 MD5 of the customer key.
    Customer { key_md5: String },
    /// SSE-S3: the id of the master key in the keyring.
    Master { key_id: String },
}

impl Wrapping {
    /// What sealing the object key binds it to: the scheme, the wrapping
    /// key's name and the plaintext size, so a sealed key opens only as
    /// what it was recorded as. SSE-C's stays what v1 wrote.
    pub fn aad(&self, plain_size: u64) -> Vec<u8> {
        match self {
            Self::Customer { .. } => format!("s3gw sse object key v1 {plain_size}"),
            Self::Master { key_id } => {
                format!("s3gw sse object key v1 {SSE_S3} {key_id} {plain_size}")
            }
        }
        .into_bytes()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub plain_size: u64,
    pub wrapping: Wrapping,
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
        let (Some(VERSION), Some(scheme), Some(size), Some(wrapper), Some(sealed), None) = (
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
        ) else {
            return Err(Unreadable);
        };
        let wrapping = match scheme {
            SSE_C => Wrapping::Customer {
                key_md5: wrapper.to_owned(),
            },
            SSE_S3 => Wrapping::Master {
                key_id: wrapper.to_owned(),
            },
            _ => return Err(Unreadable),
        };
        Ok(Some(Self {
            plain_size: size.parse().map_err(|_| Unreadable)?,
            wrapping,
            sealed_key: sealed.to_owned(),
        }))
    }

    pub fn store(&self, meta: &mut ObjectMeta) {
        let (scheme, wrapper) = match &self.wrapping {
            Wrapping::Customer { key_md5 } => (SSE_C, key_md5),
            Wrapping::Master { key_id } => (SSE_S3, key_id),
        };
        meta.user.insert(
            ENTRY.to_owned(),
            format!(
                "{VERSION} {scheme} {} {wrapper} {}",
                self.plain_size, self.sealed_key
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_and_no_client_can_name_it() {
        for wrapping in [
            Wrapping::Customer {
                key_md5: "bWQ1".into(),
            },
            Wrapping::Master {
                key_id: "k1".into(),
            },
        ] {
            let record = Record {
                plain_size: 70_000,
                wrapping,
                sealed_key: "c2VhbGVk".into(),
            };
            let mut meta = ObjectMeta::default();
            assert_eq!(Record::of(&meta).unwrap(), None);
            record.store(&mut meta);
            assert_eq!(Record::of(&meta).unwrap(), Some(record));
        }
        assert!(http::HeaderName::from_bytes(format!("x-amz-meta-{ENTRY}").as_bytes()).is_err());
    }

    #[test]
    fn v1_records_read_as_written_before_sse_s3() {
        let mut meta = ObjectMeta::default();
        meta.user
            .insert(ENTRY.into(), "v1 SSE-C 5 bWQ1 c2VhbGVk".into());
        let record = Record::of(&meta).unwrap().unwrap();
        assert_eq!(
            record.wrapping,
            Wrapping::Customer {
                key_md5: "bWQ1".into()
            }
        );
        assert_eq!(record.wrapping.aad(5), b"s3gw sse object key v1 5".to_vec());
        let mut meta = ObjectMeta::default();
        meta.user
            .insert(ENTRY.into(), "v1 SSE-S3 5 k1 c2VhbGVk".into());
        assert_eq!(
            Record::of(&meta).unwrap().unwrap().wrapping,
            Wrapping::Master {
                key_id: "k1".into()
            }
        );
    }

    #[test]
    fn an_unknown_record_is_unreadable() {
        for text in [
            "v2 SSE-C 1 a b",
            "v1 SSE-KMS 1 a b",
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
