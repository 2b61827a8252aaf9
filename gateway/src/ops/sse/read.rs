//! GetObject and HeadObject of an SSE-C object: the request's key is
//! checked against the one that wrote the object, the object key is
//! opened with it, and the plaintext range asked for is served from the
//! segments it overlaps. Refusals are AWS's: no key, a key for an object
//! stored unencrypted (400), a different key (403).

use std::ops::Range;

use aes_gcm::Aes256Gcm;
use bytes::Bytes;
use futures::Stream;
use storage_client::{ByteStream, KeyInfo};

use crate::error::S3Error;
use crate::sse::customer_key::CustomerKey;
use crate::sse::object_key::ObjectKey;
use crate::sse::record::Record;
use crate::sse::segments::{OpenError, SealedRange, sealed_size};

/// An SSE-C object the request's key opens.
pub struct Opened {
    pub plain_size: u64,
    pub key_md5: String,
    cipher: Aes256Gcm,
    base: [u8; 12],
}

impl Opened {
    /// The object as the request's key finds it: `None` when it is stored
    /// unencrypted and no key was sent.
    pub fn check(info: &KeyInfo, key: Option<&CustomerKey>) -> Result<Option<Self>, S3Error> {
        let record = Record::of(&info.meta).map_err(|err| damaged(info, &err))?;
        let (record, key) = match (record, key) {
            (None, None) => return Ok(None),
            (None, Some(_)) => {
                return Err(S3Error::invalid_request(
                    "The encryption parameters are not applicable to this object.",
                ));
            }
            (Some(_), None) => return Err(key_required()),
            (Some(record), Some(key)) => (record, key),
        };
        if record.customer_key_md5 != key.md5 {
            return Err(S3Error::access_denied());
        }
        if sealed_size(record.plain_size) != info.size {
            return Err(damaged(info, &"its stored size does not match its record"));
        }
        let object_key = ObjectKey::open(&record.sealed_key, &key.key, record.plain_size)
            .ok_or_else(|| {
                damaged(
                    info,
                    &"its sealed key does not open with the key that wrote it",
                )
            })?;
        Ok(Some(Self {
            plain_size: record.plain_size,
            key_md5: record.customer_key_md5,
            cipher: object_key.cipher(),
            base: object_key.base,
        }))
    }

    /// The stored bytes to read for plaintext `range` (non-empty).
    pub fn stored_range(&self, range: Range<u64>) -> SealedRange {
        SealedRange::new(range, self.plain_size)
    }

    /// The plaintext of `range`, from the stored bytes it selected.
    pub fn open(
        &self,
        range: SealedRange,
        stored: ByteStream,
    ) -> impl Stream<Item = Result<Bytes, OpenError>> + Send + 'static {
        range.open(self.cipher.clone(), self.base, stored)
    }
}

/// AWS's answer to a read of an SSE-C object that does not carry its key.
pub fn key_required() -> S3Error {
    S3Error::invalid_request(
        "The object was stored using a form of Server Side Encryption. The correct parameters \
         must be provided to retrieve the object.",
    )
}

/// An encrypted object that cannot be opened although the key is right:
/// the fault is the store's, never the client's, and is logged.
fn damaged(info: &KeyInfo, why: &dyn std::fmt::Display) -> S3Error {
    tracing::error!(bucket = %info.bucket, key = %info.key, "encrypted object is damaged: {why}");
    S3Error::internal("The encrypted object is damaged and cannot be read")
}
