//! GetObject and HeadObject of an encrypted object: for SSE-C the
//! request's key is checked against the one that wrote the object, for
//! SSE-S3 the master key the record names is taken from the keyring; the
//! object key is opened with it, and the plaintext range asked for is
//! served from the segments it overlaps. Refusals are AWS's: no key for an
//! SSE-C object, a customer key for an object not stored under one (400),
//! a different key (403).

use std::ops::Range;

use aes_gcm::Aes256Gcm;
use bytes::Bytes;
use futures::Stream;
use storage_client::{ByteStream, KeyInfo};

use crate::error::S3Error;
use crate::sse::customer_key::CustomerKey;
use crate::sse::keyring::Keyring;
use crate::sse::object_key::ObjectKey;
use crate::sse::record::{Record, Wrapping};
use crate::sse::segments::{OpenError, SealedRange, sealed_size};

/// An encrypted object, opened.
pub struct Opened {
    pub plain_size: u64,
    /// What sealed its key, for the headers that describe it.
    pub wrapping: Wrapping,
    cipher: Aes256Gcm,
    base: [u8; 12],
}

impl Opened {
    /// The object as the request's key (and the gateway's keyring) finds
    /// it: `None` when it is stored unencrypted and no key was sent.
    pub fn check(
        info: &KeyInfo,
        key: Option<&CustomerKey>,
        keyring: Option<&Keyring>,
    ) -> Result<Option<Self>, S3Error> {
        let record = Record::of(&info.meta).map_err(|err| damaged(info, &err))?;
        let not_applicable = || {
            S3Error::invalid_request("The encryption parameters are not applicable to this object.")
        };
        let Some(record) = record else {
            return match key {
                None => Ok(None),
                Some(_) => Err(not_applicable()),
            };
        };
        let wrapping_key = match (&record.wrapping, key) {
            (Wrapping::Customer { .. }, None) => return Err(key_required()),
            (Wrapping::Customer { key_md5 }, Some(key)) => {
                if *key_md5 != key.md5 {
                    return Err(S3Error::access_denied());
                }
                key.key
            }
            (Wrapping::Master { .. }, Some(_)) => return Err(not_applicable()),
            (Wrapping::Master { key_id }, None) => keyring
                .and_then(|ring| ring.get(key_id))
                .map(|master| master.key)
                .ok_or_else(|| {
                    damaged(
                        info,
                        &format!(
                            "its master key {key_id} is not in the keyring (sse_master_key_file): a key was removed, or the file is not the one that sealed it"
                        ),
                    )
                })?,
        };
        if sealed_size(record.plain_size) != info.size {
            return Err(damaged(info, &"its stored size does not match its record"));
        }
        let aad = record.wrapping.aad(record.plain_size);
        let object_key =
            ObjectKey::open(&record.sealed_key, &wrapping_key, &aad).ok_or_else(|| {
                damaged(
                    info,
                    &"its sealed key does not open with the key that wrote it",
                )
            })?;
        Ok(Some(Self {
            plain_size: record.plain_size,
            wrapping: record.wrapping,
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

/// Never the keys: only what a log line about a copy may show.
impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened")
            .field("plain_size", &self.plain_size)
            .field("wrapping", &self.wrapping)
            .finish_non_exhaustive()
    }
}

/// AWS's answer to a read of an encrypted object that does not carry its
/// key (and, here, to an operation that cannot open encrypted objects).
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
