//! What an encrypted object keeps beside its bytes to be opened again: one
//! reserved user-metadata entry, [`ENTRY`], whose name no client can send
//! (a space is not allowed in a header name) and which no response shows.
//! It holds the scheme, the plaintext size, what wrapped the object key
//! (SSE-C: the customer key's MD5, to tell a wrong key from damage;
//! SSE-S3: the master key's id, so rotated keys keep opening what they
//! sealed; SSE-KMS: the KMS key's name and the data key the KMS encrypted)
//! and the sealed object key; never a key in the clear.

use std::borrow::Cow;

use storage_client::ObjectMeta;

use super::kms::SealedDataKey;

/// The reserved `meta.user` entry.
pub const ENTRY: &str = "s3gw sse";
const VERSION: &str = "v1";
const SSE_C: &str = "SSE-C";
const SSE_S3: &str = "SSE-S3";
const SSE_KMS: &str = "SSE-KMS";
/// The version of an upload's record (and of the object it completes
/// into): encrypted part by part, see `super::multipart`.
const MULTIPART_VERSION: &str = "mp1";

/// The key that sealed the object key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wrapping {
    /// SSE-C: base64 MD5 of the customer key.
    Customer { key_md5: String },
    /// SSE-S3: the id of the master key in the keyring.
    Master { key_id: String },
    /// SSE-KMS: the data key the KMS made under the client's KMS key.
    Kms(SealedDataKey),
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
            Self::Kms(sealed) => format!(
                "s3gw sse object key v1 {SSE_KMS} {} {plain_size}",
                sealed.to_field()
            ),
        }
        .into_bytes()
    }
}

impl Wrapping {
    fn fields(&self) -> (&'static str, Cow<'_, str>) {
        match self {
            Self::Customer { key_md5 } => (SSE_C, Cow::Borrowed(key_md5)),
            Self::Master { key_id } => (SSE_S3, Cow::Borrowed(key_id)),
            Self::Kms(sealed) => (SSE_KMS, Cow::Owned(sealed.to_field())),
        }
    }

    fn parse(scheme: &str, wrapper: &str) -> Result<Self, Unreadable> {
        match scheme {
            SSE_C => Ok(Self::Customer {
                key_md5: wrapper.to_owned(),
            }),
            SSE_S3 => Ok(Self::Master {
                key_id: wrapper.to_owned(),
            }),
            SSE_KMS => SealedDataKey::from_field(wrapper)
                .map(Self::Kms)
                .ok_or(Unreadable),
            _ => Err(Unreadable),
        }
    }

    /// What sealing a multipart upload's key binds it to: the scheme and
    /// the wrapping key's name (the size is not known when it is sealed).
    pub fn upload_aad(&self) -> Vec<u8> {
        let (scheme, wrapper) = self.fields();
        format!("s3gw sse upload key v1 {scheme} {wrapper}").into_bytes()
    }
}

/// A multipart upload encrypted part by part, and the object it completes
/// into (the upload's metadata becomes the object's): what wrapped the
/// upload key and the upload key, sealed. Each part's own key is derived
/// from it (see `super::multipart`); sizes come from the parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UploadRecord {
    pub wrapping: Wrapping,
    /// The upload key, sealed (see `ObjectKey::seal`).
    pub sealed_key: String,
}

impl UploadRecord {
    pub fn store(&self, meta: &mut ObjectMeta) {
        let (scheme, wrapper) = self.wrapping.fields();
        meta.user.insert(
            ENTRY.to_owned(),
            format!("{MULTIPART_VERSION} {scheme} {wrapper} {}", self.sealed_key),
        );
    }
}

/// Whatever an encrypted object's (or upload's) entry records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stored {
    /// Written in one piece (PutObject, CopyObject, PostObject).
    Object(Record),
    /// Written part by part (a multipart upload).
    Multipart(UploadRecord),
}

impl Stored {
    /// The entry of an object or upload, `None` when it is unencrypted.
    pub fn of(meta: &ObjectMeta) -> Result<Option<Self>, Unreadable> {
        let Some(text) = meta.user.get(ENTRY) else {
            return Ok(None);
        };
        let Some(rest) = text
            .strip_prefix(MULTIPART_VERSION)
            .and_then(|r| r.strip_prefix(' '))
        else {
            return Ok(Record::of(meta)?.map(Self::Object));
        };
        let mut fields = rest.split(' ');
        let (Some(scheme), Some(wrapper), Some(sealed), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(Unreadable);
        };
        Ok(Some(Self::Multipart(UploadRecord {
            wrapping: Wrapping::parse(scheme, wrapper)?,
            sealed_key: sealed.to_owned(),
        })))
    }

    pub fn wrapping(&self) -> &Wrapping {
        match self {
            Self::Object(record) => &record.wrapping,
            Self::Multipart(upload) => &upload.wrapping,
        }
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
        let wrapping = Wrapping::parse(scheme, wrapper)?;
        Ok(Some(Self {
            plain_size: size.parse().map_err(|_| Unreadable)?,
            wrapping,
            sealed_key: sealed.to_owned(),
        }))
    }

    pub fn store(&self, meta: &mut ObjectMeta) {
        let (scheme, wrapper) = self.wrapping.fields();
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

    fn kms() -> Wrapping {
        Wrapping::Kms(SealedDataKey {
            key_id: "testkey-1".into(),
            version: "testkey-1@0".into(),
            iv: "aXY".into(),
            material: "ZWRlaw".into(),
        })
    }

    #[test]
    fn a_record_reads_back_and_no_client_can_name_it() {
        for wrapping in [
            Wrapping::Customer {
                key_md5: "bWQ1".into(),
            },
            Wrapping::Master {
                key_id: "k1".into(),
            },
            kms(),
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
    fn an_upload_record_reads_back_as_multipart() {
        for wrapping in [
            Wrapping::Customer {
                key_md5: "bWQ1".into(),
            },
            Wrapping::Master {
                key_id: "k1".into(),
            },
            kms(),
        ] {
            let upload = UploadRecord {
                wrapping: wrapping.clone(),
                sealed_key: "c2VhbGVk".into(),
            };
            let mut meta = ObjectMeta::default();
            upload.store(&mut meta);
            let stored = Stored::of(&meta).unwrap().unwrap();
            assert_eq!(stored.wrapping(), &wrapping);
            assert_eq!(stored, Stored::Multipart(upload));
            // A gateway that knows only whole objects cannot read it.
            assert!(Record::of(&meta).is_err());
        }
        let mut meta = ObjectMeta::default();
        meta.user
            .insert(ENTRY.into(), "v1 SSE-S3 5 k1 c2VhbGVk".into());
        assert!(matches!(Stored::of(&meta), Ok(Some(Stored::Object(_)))));
        for text in ["mp1 SSE-C a", "mp1 SSE-KMS a b", "mp1 SSE-C a b c", "mp1"] {
            let mut meta = ObjectMeta::default();
            meta.user.insert(ENTRY.into(), text.into());
            assert!(Stored::of(&meta).is_err(), "{text}");
        }
    }

    #[test]
    fn an_unknown_record_is_unreadable() {
        for text in [
            "v2 SSE-C 1 a b",
            "v1 SSE-KMS 1 a b",
            "v1 SSE-XYZ 1 a b",
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
