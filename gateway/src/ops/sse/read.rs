//! GetObject and HeadObject of an encrypted object: for SSE-C the
//! request's key is checked against the one that wrote the object, for
//! SSE-S3 the master key the record names is taken from the keyring, for
//! SSE-KMS the KMS opens the data key the record keeps; the
//! object key is opened with it, and the plaintext range asked for is
//! served from the segments it overlaps. Refusals are AWS's: no key for an
//! SSE-C object, a customer key for an object not stored under one (400),
//! a different key (403).

use std::ops::Range;
use std::sync::Arc;

use aes_gcm::Aes256Gcm;
use bytes::{Bytes, BytesMut};
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use storage_client::{KeyInfo, Owner, Storage, StorageError};

use crate::error::S3Error;
use crate::sse::customer_key::CustomerKey;
use crate::sse::multipart::{self, SALT};
use crate::sse::object_key::ObjectKey;
use crate::sse::record::{Stored, Wrapping};
use crate::sse::segments::{OpenError, SealedRange, sealed_size};

use super::Keys;

/// An encrypted object, opened (or only described).
pub struct Opened {
    pub plain_size: u64,
    /// What sealed its key, for the headers that describe it.
    pub wrapping: Wrapping,
    layout: Layout,
}

/// What an encrypted object is opened for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Its plaintext is to be read: its key is opened.
    Read,
    /// Only its sizes and encryption are described (HEAD,
    /// GetObjectAttributes): an SSE-C key is still checked, but no key is
    /// opened, so a HEAD of an SSE-KMS object asks nothing of the KMS, as
    /// on AWS.
    Describe,
}

enum Layout {
    /// Written in one piece: one segmented stream; its key `None` when
    /// only described.
    Whole { key: Option<WholeKey> },
    /// Written part by part: each part its own stream (`crate::sse::multipart`).
    Parts {
        upload: Option<ObjectKey>,
        parts: Vec<PlainPart>,
    },
}

/// The key of an object written in one piece. (The cipher's key schedule
/// is large: boxed.)
struct WholeKey {
    cipher: Box<Aes256Gcm>,
    base: [u8; 12],
}

/// A part of a multipart object, where its bytes are stored and what
/// plaintext they hold.
#[derive(Clone, Debug)]
struct PlainPart {
    number: u16,
    stored_start: u64,
    plain_start: u64,
    plain_size: u64,
}

impl Opened {
    /// The object as the request's key (and the gateway's keyring) finds
    /// it: `None` when it is stored unencrypted and no key was sent.
    pub async fn check(
        info: &KeyInfo,
        key: Option<&CustomerKey>,
        keys: Keys<'_>,
        purpose: Purpose,
    ) -> Result<Option<Self>, S3Error> {
        let stored = Stored::of(&info.meta).map_err(|err| damaged(info, &err))?;
        let Some(stored) = stored else {
            return match key {
                None => Ok(None),
                Some(_) => Err(not_applicable()),
            };
        };
        let wrapping_key = match (purpose, stored.wrapping(), key) {
            (Purpose::Describe, Wrapping::Kms(_), None) => None,
            (purpose, wrapping, key) => {
                let wrapping_key =
                    wrapping_key(wrapping, key, keys, |why| damaged(info, &why)).await?;
                (purpose == Purpose::Read).then_some(wrapping_key)
            }
        };
        let not_opened = || {
            damaged(
                info,
                &"its sealed key does not open with the key that wrote it",
            )
        };
        match stored {
            Stored::Object(record) => {
                if sealed_size(record.plain_size) != info.size {
                    return Err(damaged(info, &"its stored size does not match its record"));
                }
                let aad = record.wrapping.aad(record.plain_size);
                let key = wrapping_key
                    .map(|wrapping_key| {
                        let object_key = ObjectKey::open(&record.sealed_key, &wrapping_key, &aad)
                            .ok_or_else(not_opened)?;
                        Ok::<_, S3Error>(WholeKey {
                            cipher: Box::new(object_key.cipher()),
                            base: object_key.base,
                        })
                    })
                    .transpose()?;
                Ok(Some(Self {
                    plain_size: record.plain_size,
                    wrapping: record.wrapping,
                    layout: Layout::Whole { key },
                }))
            }
            Stored::Multipart(upload) => {
                let aad = upload.wrapping.upload_aad();
                let upload_key = wrapping_key
                    .map(|wrapping_key| {
                        ObjectKey::open(&upload.sealed_key, &wrapping_key, &aad)
                            .ok_or_else(not_opened)
                    })
                    .transpose()?;
                let parts = plain_parts(info).map_err(|why| damaged(info, &why))?;
                Ok(Some(Self {
                    plain_size: parts.last().map_or(0, |p| p.plain_start + p.plain_size),
                    wrapping: upload.wrapping,
                    layout: Layout::Parts {
                        upload: upload_key,
                        parts,
                    },
                }))
            }
        }
    }

    /// The plaintext sizes of a multipart object's parts, in object order
    /// (`None` for an object written in one piece).
    pub fn part_sizes(&self) -> Option<Vec<u64>> {
        match &self.layout {
            Layout::Whole { .. } => None,
            Layout::Parts { parts, .. } => Some(parts.iter().map(|p| p.plain_size).collect()),
        }
    }

    /// The plaintext of `range` (non-empty, inside the object), read from
    /// `storage` as `owner`: only the segments it overlaps (and, for each
    /// part it overlaps, the part's salt). A storage failure after the
    /// first read is the stream's error.
    pub async fn read(
        &self,
        storage: &Arc<Storage>,
        owner: &Owner,
        info: &KeyInfo,
        range: Range<u64>,
    ) -> Result<BoxStream<'static, Result<Bytes, OpenError>>, StorageError> {
        let described_only =
            || StorageError::Corrupt("an encrypted object only described was read".into());
        match &self.layout {
            Layout::Whole { key } => {
                let WholeKey { cipher, base } = key.as_ref().ok_or_else(described_only)?;
                let sealed = SealedRange::new(range, self.plain_size);
                let stored = storage.read(owner, info, sealed.stored.clone()).await?;
                Ok(sealed.open(Aes256Gcm::clone(cipher), *base, stored).boxed())
            }
            Layout::Parts { upload, parts } => {
                let upload = upload.as_ref().ok_or_else(described_only)?;
                let pieces: Vec<(PlainPart, Range<u64>)> = parts
                    .iter()
                    .filter_map(|part| {
                        let start = range.start.max(part.plain_start);
                        let end = range.end.min(part.plain_start + part.plain_size);
                        (start < end).then(|| {
                            let within = start - part.plain_start..end - part.plain_start;
                            (part.clone(), within)
                        })
                    })
                    .collect();
                let (storage, owner, info, upload) =
                    (storage.clone(), owner.clone(), info.clone(), upload.clone());
                let opened = futures::stream::iter(pieces).then(move |(part, within)| {
                    let (storage, owner, info, upload) =
                        (storage.clone(), owner.clone(), info.clone(), upload.clone());
                    async move { open_part(&storage, &owner, &info, &upload, &part, within).await }
                });
                Ok(opened.try_flatten().boxed())
            }
        }
    }
}

/// What the client stored of `info`, opened (`opened`) if it is encrypted:
/// the object's size and a multipart object's part sizes in object order
/// (empty for one written in one piece), an encrypted one's plaintext sizes.
pub fn client_sizes(opened: Option<&Opened>, info: &KeyInfo) -> (u64, Vec<u64>) {
    let size = opened.map_or(info.size, |opened| opened.plain_size);
    let part_sizes = opened
        .and_then(Opened::part_sizes)
        .unwrap_or_else(|| info.parts.iter().map(|part| part.size).collect());
    (size, part_sizes)
}

/// Reads the salt of `part`, derives its key and opens plaintext `within`
/// (a range of the part's plaintext) from the segments it overlaps.
async fn open_part(
    storage: &Storage,
    owner: &Owner,
    info: &KeyInfo,
    upload: &ObjectKey,
    part: &PlainPart,
    within: Range<u64>,
) -> Result<BoxStream<'static, Result<Bytes, OpenError>>, OpenError> {
    let read_error = |err: StorageError| OpenError::Read(err.to_string());
    let salt_range = part.stored_start..part.stored_start + SALT;
    let mut salt = BytesMut::new();
    let mut pieces = storage
        .read(owner, info, salt_range)
        .await
        .map_err(read_error)?;
    while let Some(piece) = pieces.next().await {
        salt.extend_from_slice(&piece.map_err(read_error)?);
    }
    if salt.len() as u64 != SALT {
        return Err(OpenError::Layout("a part's salt is cut short"));
    }
    let key = upload.for_part(part.number, &salt);
    let sealed = SealedRange::new(within, part.plain_size);
    let segments_start = part.stored_start + SALT;
    let stored = storage
        .read(
            owner,
            info,
            segments_start + sealed.stored.start..segments_start + sealed.stored.end,
        )
        .await
        .map_err(read_error)?;
    Ok(sealed.open(key.cipher(), key.base, stored).boxed())
}

/// A multipart object's parts from its stored part list: each stored size
/// must be one a part's plaintext seals to, and they must add up to the
/// object.
fn plain_parts(info: &KeyInfo) -> Result<Vec<PlainPart>, &'static str> {
    if info.parts.is_empty() {
        return Err("it is recorded as multipart but has no parts");
    }
    let mut parts = Vec::with_capacity(info.parts.len());
    let (mut stored_start, mut plain_start) = (0u64, 0u64);
    let mut previous = 0u16;
    for part in &info.parts {
        if part.number <= previous {
            return Err("its parts are not in ascending order");
        }
        previous = part.number;
        let plain_size =
            multipart::plain_size(part.size).ok_or("a part's stored size is not a sealed size")?;
        parts.push(PlainPart {
            number: part.number,
            stored_start,
            plain_start,
            plain_size,
        });
        stored_start += part.size;
        plain_start += plain_size;
    }
    if stored_start != info.size {
        return Err("its parts do not add up to its stored size");
    }
    Ok(parts)
}

fn not_applicable() -> S3Error {
    S3Error::invalid_request("The encryption parameters are not applicable to this object.")
}

/// The key that wrapped an object's (or upload's) key: the request's
/// customer key, checked against the one recorded, the master key the
/// record names, or the data key the KMS opens. `damaged` describes a
/// fault of the store's (or of the configuration's).
pub(super) async fn wrapping_key(
    wrapping: &Wrapping,
    key: Option<&CustomerKey>,
    keys: Keys<'_>,
    damaged: impl FnOnce(String) -> S3Error,
) -> Result<[u8; 32], S3Error> {
    match (wrapping, key) {
        (Wrapping::Customer { .. }, None) => Err(key_required()),
        (Wrapping::Customer { key_md5 }, Some(key)) => {
            if *key_md5 != key.md5 {
                return Err(S3Error::access_denied());
            }
            Ok(key.key)
        }
        (Wrapping::Master { .. } | Wrapping::Kms(_), Some(_)) => Err(not_applicable()),
        (Wrapping::Kms(sealed), None) => match keys.kms {
            Some(kms) => Ok(kms.open(sealed).await?),
            None => Err(super::no_kms()),
        },
        (Wrapping::Master { key_id }, None) => keys
            .keyring
            .and_then(|ring| ring.get(key_id))
            .map(|master| master.key)
            .ok_or_else(|| {
                damaged(format!(
                    "its master key {key_id} is not in the keyring (sse_master_key_file): a key was removed, or the file is not the one that sealed it"
                ))
            }),
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

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use storage_client::{ObjectMeta, PartSummary};

    use super::*;
    use crate::sse::multipart::stored_size;

    fn info(parts: &[(u16, u64)]) -> KeyInfo {
        KeyInfo {
            bucket: "b".into(),
            key: "k".into(),
            size: parts.iter().map(|part| part.1).sum(),
            etag: "e-2".into(),
            last_modified: SystemTime::UNIX_EPOCH,
            owner: "o".into(),
            meta: ObjectMeta::default(),
            tags: Vec::new(),
            checksum: None,
            locations: Vec::new(),
            parts: parts
                .iter()
                .map(|&(number, size)| PartSummary {
                    number,
                    size,
                    etag: "e".into(),
                    checksum: None,
                })
                .collect(),
            version_id: None,
        }
    }

    #[test]
    fn a_multipart_layout_follows_from_the_stored_part_sizes() {
        let (first, last) = (stored_size(5 << 20), stored_size(7));
        let parts = plain_parts(&info(&[(1, first), (4, last)])).unwrap();
        let layout: Vec<_> = parts
            .iter()
            .map(|p| (p.number, p.stored_start, p.plain_start, p.plain_size))
            .collect();
        assert_eq!(layout, vec![(1, 0, 0, 5 << 20), (4, first, 5 << 20, 7)]);
        // Damage: no parts, parts out of order, a size no part seals to,
        // parts that do not add up to the object.
        assert!(plain_parts(&info(&[])).is_err());
        assert!(plain_parts(&info(&[(2, first), (1, last)])).is_err());
        assert!(plain_parts(&info(&[(1, first + 1)])).is_err());
        let mut short = info(&[(1, first)]);
        short.size -= 1;
        assert!(plain_parts(&short).is_err());
    }
}
