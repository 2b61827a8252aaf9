//! PutObject encrypted (SSE-C, SSE-S3 or SSE-KMS): the body is sealed segment by
//! segment (see `crate::sse::segments`) on its way into the writer, while
//! the checksums the client asked for, and Content-MD5, are computed over
//! the plaintext it sent. The object key is sealed under the customer key
//! the active master key or the KMS's data key once the plaintext size is
//! known, and recorded
//! in the object's metadata.

use bytes::Bytes;
use http::HeaderMap;
use md5::{Digest, Md5};
use storage_client::{ObjectMeta, ObjectWriter};

use crate::auth::Payload;
use crate::checksum::{Checksummer, Digests};
use crate::error::S3Error;
use crate::ops::headers::insert;
use crate::sse::customer_key::{self, CustomerKey};
use crate::sse::keyring::MasterKey;
use crate::sse::kms::DataKey;
use crate::sse::multipart::new_salt;
use crate::sse::object_key::ObjectKey;
use crate::sse::record::{Record, Stored, UploadRecord, Wrapping};
use crate::sse::segments::{SealError, Sealer};

use super::Keys;

/// How a write is to be encrypted.
pub enum Encryption {
    /// SSE-C: under the key the request carries.
    Customer(CustomerKey),
    /// SSE-S3: under the keyring's active master key.
    Master(MasterKey),
    /// SSE-KMS: under a data key the KMS made for this write.
    Kms(DataKey),
}

impl Encryption {
    fn wrapping(&self) -> (Wrapping, &[u8; 32]) {
        match self {
            Self::Customer(customer) => (
                Wrapping::Customer {
                    key_md5: customer.md5.clone(),
                },
                &customer.key,
            ),
            Self::Master(master) => (
                Wrapping::Master {
                    key_id: master.id.clone(),
                },
                &master.key,
            ),
            Self::Kms(data_key) => (
                Wrapping::Kms(data_key.sealed.clone()),
                &data_key.wrapping_key,
            ),
        }
    }

    /// The headers AWS answers a write encrypted this way with.
    pub fn echo(&self, out: &mut HeaderMap) {
        echo(out, &self.wrapping().0);
    }

    /// Starts a multipart upload encrypted this way: a fresh upload key,
    /// recorded sealed in the upload's metadata (which becomes the
    /// object's at completion).
    pub fn begin_upload(&self, meta: &mut ObjectMeta) -> Result<(), S3Error> {
        let (wrapping, wrapping_key) = self.wrapping();
        let sealed_key = ObjectKey::random()
            .seal(wrapping_key, &wrapping.upload_aad())
            .map_err(|_| S3Error::internal("the upload key could not be sealed"))?;
        UploadRecord {
            wrapping,
            sealed_key,
        }
        .store(meta);
        Ok(())
    }
}

/// A multipart upload encrypted part by part, opened for its parts.
pub struct Upload {
    wrapping: Wrapping,
    key: ObjectKey,
}

impl Upload {
    /// The upload whose metadata is `meta`, as a part request finds it
    /// with `key` (its SSE-C key, if it sent one): `None` when the upload
    /// is not encrypted (and no key was sent). As AWS: an SSE-C upload's
    /// part needs the upload's key (`400 InvalidRequest` without it or with
    /// another), and a key is refused for an upload not begun with one.
    pub async fn open(
        meta: &ObjectMeta,
        key: Option<&CustomerKey>,
        keys: Keys<'_>,
    ) -> Result<Option<Self>, S3Error> {
        let damaged = |why: &dyn std::fmt::Display| {
            tracing::error!("encrypted multipart upload is damaged: {why}");
            S3Error::internal("The encrypted upload is damaged and cannot take parts")
        };
        let upload = match Stored::of(meta) {
            Ok(None) if key.is_none() => return Ok(None),
            Ok(None) => {
                return Err(S3Error::invalid_request(
                    "The encryption parameters are not applicable to this upload: it was not \
                     initiated with a customer-provided key.",
                ));
            }
            Ok(Some(Stored::Multipart(upload))) => upload,
            Ok(Some(Stored::Object(_))) | Err(_) => {
                return Err(damaged(&"its encryption record is not an upload's"));
            }
        };
        let wrapping_key = match (&upload.wrapping, key) {
            (Wrapping::Customer { .. }, None) => {
                return Err(S3Error::invalid_request(
                    "The multipart upload initiate requested encryption. Subsequent part \
                     requests must include the appropriate encryption parameters.",
                ));
            }
            (Wrapping::Customer { key_md5 }, Some(key)) if *key_md5 != key.md5 => {
                return Err(S3Error::invalid_request(
                    "The provided encryption parameters did not match the ones used originally.",
                ));
            }
            (wrapping, key) => {
                super::read::wrapping_key(wrapping, key, keys, |why| damaged(&why)).await?
            }
        };
        let key = ObjectKey::open(
            &upload.sealed_key,
            &wrapping_key,
            &upload.wrapping.upload_aad(),
        )
        .ok_or_else(|| damaged(&"its sealed key does not open with the key that wrote it"))?;
        Ok(Some(Self {
            wrapping: upload.wrapping,
            key,
        }))
    }

    /// The headers AWS answers a part of this upload with.
    pub fn echo(&self, out: &mut HeaderMap) {
        echo(out, &self.wrapping);
    }

    /// What sealed the upload key.
    pub fn wrapping(&self) -> &Wrapping {
        &self.wrapping
    }
}

/// An object stored sealed.
pub struct Sealed {
    /// AWS gives an SSE-C object an ETag that is not its plaintext's MD5
    /// (which would tell whoever lists the bucket whether an object holds
    /// a guessed text); here it is the MD5 of the stored bytes. An SSE-S3
    /// object's ETag is its plaintext's MD5, as on AWS, where clients
    /// check downloads against it.
    pub etag: String,
    /// `None` for a part: its upload's record describes it.
    record: Option<Record>,
}

impl Sealed {
    /// Records in `meta` what opening the object takes.
    pub fn store(&self, meta: &mut ObjectMeta) {
        if let Some(record) = &self.record {
            record.store(meta);
        }
    }
}

/// Streams the payload (at most `max_size` bytes) into the writer sealed
/// under a fresh object key; returns the plaintext's digests once the
/// payload has ended cleanly.
pub async fn receive_sealed(
    writer: &mut ObjectWriter,
    payload: &mut Payload,
    summer: Checksummer,
    encryption: &Encryption,
    max_size: u64,
) -> Result<(Digests, Sealed), S3Error> {
    receive_sealing(
        writer,
        payload,
        summer,
        Sealing::new(encryption, max_size),
        max_size,
    )
    .await
}

/// As [`receive_sealed`], sealed by `sealing` (a part's, say).
pub async fn receive_sealing(
    writer: &mut ObjectWriter,
    payload: &mut Payload,
    mut summer: Checksummer,
    mut sealing: Sealing<'_>,
    max_size: u64,
) -> Result<(Digests, Sealed), S3Error> {
    let mut received: u64 = 0;
    while let Some(chunk) = payload.next_chunk().await {
        let chunk = chunk?;
        received += chunk.len() as u64;
        if received > max_size {
            return Err(S3Error::entity_too_large(max_size));
        }
        summer.update(&chunk);
        sealing.write(writer, &chunk).await?;
    }
    let digests = summer.finish();
    let sealed = sealing.finish(writer, received, &digests).await?;
    Ok((digests, sealed))
}

/// A body being sealed on its way into a writer, whatever it comes from
/// (a PutObject's payload, a PostObject's file part, a copy source, a
/// part): push plaintext chunks, then [`Sealing::finish`] with the
/// plaintext's size and digests.
pub struct Sealing<'a> {
    target: Target<'a>,
    sealer: Sealer,
    /// What is written before the first segment: a part's salt.
    header: Option<Bytes>,
    stored_md5: Md5,
    /// The size limit a sealing failure is reported against.
    max_size: u64,
}

enum Target<'a> {
    /// A whole object, under its own fresh key.
    Object {
        encryption: &'a Encryption,
        object_key: ObjectKey,
    },
    /// A part, under a key derived from its upload's (see
    /// `crate::sse::multipart`).
    Part { wrapping: &'a Wrapping },
}

impl<'a> Sealing<'a> {
    pub fn new(encryption: &'a Encryption, max_size: u64) -> Self {
        let object_key = ObjectKey::random();
        let sealer = Sealer::new(object_key.cipher(), object_key.base);
        Self {
            target: Target::Object {
                encryption,
                object_key,
            },
            sealer,
            header: None,
            stored_md5: Md5::new(),
            max_size,
        }
    }

    /// Part `number` of `upload`: a fresh salt, then its segments.
    pub fn part(upload: &'a Upload, number: u16, max_size: u64) -> Self {
        let salt = new_salt();
        let key = upload.key.for_part(number, &salt);
        Self {
            target: Target::Part {
                wrapping: &upload.wrapping,
            },
            sealer: Sealer::new(key.cipher(), key.base),
            header: Some(Bytes::copy_from_slice(&salt)),
            stored_md5: Md5::new(),
            max_size,
        }
    }

    fn too_large(&self) -> S3Error {
        S3Error::entity_too_large(self.max_size)
    }

    /// Seals `chunk` and writes the segments it completed.
    pub async fn write(&mut self, writer: &mut ObjectWriter, chunk: &[u8]) -> Result<(), S3Error> {
        let segments = self
            .sealer
            .push(chunk)
            .map_err(|_: SealError| self.too_large())?;
        for segment in segments {
            write_stored(&mut self.header, &mut self.stored_md5, writer, segment).await?;
        }
        Ok(())
    }

    /// Writes the last segment; `plain_size` bytes were pushed, whose
    /// digests are `digests`.
    pub async fn finish(
        self,
        writer: &mut ObjectWriter,
        plain_size: u64,
        digests: &Digests,
    ) -> Result<Sealed, S3Error> {
        let too_large = self.too_large();
        let Self {
            target,
            sealer,
            mut header,
            mut stored_md5,
            ..
        } = self;
        let last = sealer.finish().map_err(|_| too_large.clone())?;
        write_stored(&mut header, &mut stored_md5, writer, last).await?;
        // An SSE-C or SSE-KMS object's (or part's) ETag is opaque: the
        // stored bytes' MD5; an SSE-S3 one's is its plaintext's, as on AWS.
        let etag = |opaque: bool| {
            if opaque {
                hex::encode(stored_md5.finalize())
            } else {
                digests.etag()
            }
        };
        match target {
            Target::Object {
                encryption,
                object_key,
            } => {
                let (wrapping, wrapping_key) = encryption.wrapping();
                let record = Record {
                    plain_size,
                    sealed_key: object_key
                        .seal(wrapping_key, &wrapping.aad(plain_size))
                        .map_err(|_| too_large)?,
                    wrapping,
                };
                Ok(Sealed {
                    etag: etag(!matches!(encryption, Encryption::Master(_))),
                    record: Some(record),
                })
            }
            Target::Part { wrapping } => Ok(Sealed {
                etag: etag(!matches!(wrapping, Wrapping::Master { .. })),
                record: None,
            }),
        }
    }
}

/// Writes sealed bytes, after the header still to be written (if any),
/// adding them to the stored bytes' MD5.
async fn write_stored(
    header: &mut Option<Bytes>,
    stored_md5: &mut Md5,
    writer: &mut ObjectWriter,
    stored: Bytes,
) -> Result<(), S3Error> {
    if let Some(header) = header.take() {
        stored_md5.update(&header);
        writer.write(header).await?;
    }
    stored_md5.update(&stored);
    writer.write(stored).await?;
    Ok(())
}

/// The headers AWS echoes on every answer about an encrypted object:
/// SSE-C's algorithm and key MD5 (never the key), SSE-S3's algorithm, or
/// SSE-KMS's with the KMS key's id.
pub fn echo(out: &mut HeaderMap, wrapping: &Wrapping) {
    match wrapping {
        Wrapping::Customer { key_md5 } => {
            insert(
                out,
                http::HeaderName::from_static(customer_key::ALGORITHM),
                customer_key::AES256,
            );
            insert(
                out,
                http::HeaderName::from_static(customer_key::KEY_MD5),
                key_md5,
            );
        }
        Wrapping::Master { .. } => insert(
            out,
            http::HeaderName::from_static(super::SSE_HEADER),
            customer_key::AES256,
        ),
        Wrapping::Kms(sealed) => {
            insert(
                out,
                http::HeaderName::from_static(super::SSE_HEADER),
                super::AWS_KMS,
            );
            insert(
                out,
                http::HeaderName::from_static(super::KMS_KEY_ID_HEADER),
                &sealed.key_id,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::sse::keyring::Keyring;
    use crate::sse::record::ENTRY;

    fn customer(byte: u8) -> CustomerKey {
        CustomerKey {
            key: [byte; 32],
            md5: format!("md5-of-{byte}"),
        }
    }

    /// What opening the upload of `meta` for a part answers.
    fn opened(
        meta: &ObjectMeta,
        key: Option<&CustomerKey>,
        keyring: Option<&Keyring>,
    ) -> Result<bool, (u16, &'static str)> {
        let keys = Keys { keyring, kms: None };
        futures::executor::block_on(Upload::open(meta, key, keys))
            .map(|upload| upload.is_some())
            .map_err(|err| (err.status.as_u16(), err.code))
    }

    #[test]
    fn every_part_of_an_sse_c_upload_needs_its_key() {
        let mut meta = ObjectMeta::default();
        Encryption::Customer(customer(1))
            .begin_upload(&mut meta)
            .unwrap();
        assert_eq!(opened(&meta, Some(&customer(1)), None), Ok(true));
        // Without the key, or with another: AWS's 400.
        assert_eq!(opened(&meta, None, None), Err((400, "InvalidRequest")));
        assert_eq!(
            opened(&meta, Some(&customer(2)), None),
            Err((400, "InvalidRequest"))
        );
        // A key for an upload not begun with one.
        let plain = ObjectMeta::default();
        assert_eq!(opened(&plain, None, None), Ok(false));
        assert_eq!(
            opened(&plain, Some(&customer(1)), None),
            Err((400, "InvalidRequest"))
        );
        // A record whose sealed key was changed: the store's fault, never
        // the client's, and nothing is sealed with a key it cannot open.
        let text = meta.user[ENTRY].clone();
        let (head, _) = text.rsplit_once(' ').unwrap();
        let mut damaged = meta.clone();
        damaged
            .user
            .insert(ENTRY.into(), format!("{head} c2VhbGVk"));
        assert_eq!(
            opened(&damaged, Some(&customer(1)), None),
            Err((500, "InternalError"))
        );
    }

    #[test]
    fn an_sse_s3_upload_opens_with_the_keyring_that_sealed_it() {
        let ring = Keyring::parse(
            "k1 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
            Path::new("keys"),
        )
        .unwrap();
        let mut meta = ObjectMeta::default();
        Encryption::Master(ring.active().clone())
            .begin_upload(&mut meta)
            .unwrap();
        assert_eq!(opened(&meta, None, Some(&ring)), Ok(true));
        // A customer key is not applicable to it.
        assert_eq!(
            opened(&meta, Some(&customer(1)), Some(&ring)),
            Err((400, "InvalidRequest"))
        );
        // Its master key gone from the keyring: damage, not the client's.
        assert_eq!(opened(&meta, None, None), Err((500, "InternalError")));
        let other = Keyring::parse(
            "k2 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
            Path::new("keys"),
        )
        .unwrap();
        assert_eq!(
            opened(&meta, None, Some(&other)),
            Err((500, "InternalError"))
        );
    }
}
