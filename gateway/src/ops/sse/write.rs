//! PutObject encrypted (SSE-C or SSE-S3): the body is sealed segment by
//! segment (see `crate::sse::segments`) on its way into the writer, while
//! the checksums the client asked for, and Content-MD5, are computed over
//! the plaintext it sent. The object key is sealed under the customer key
//! or the active master key once the plaintext size is known, and recorded
//! in the object's metadata.

use http::HeaderMap;
use md5::{Digest, Md5};
use storage_client::{ObjectMeta, ObjectWriter};

use crate::auth::Payload;
use crate::checksum::{Checksummer, Digests};
use crate::error::S3Error;
use crate::ops::headers::insert;
use crate::sse::customer_key::{self, CustomerKey};
use crate::sse::keyring::MasterKey;
use crate::sse::object_key::ObjectKey;
use crate::sse::record::{Record, Wrapping};
use crate::sse::segments::{SealError, Sealer};

/// How a write is to be encrypted.
pub enum Encryption {
    /// SSE-C: under the key the request carries.
    Customer(CustomerKey),
    /// SSE-S3: under the keyring's active master key.
    Master(MasterKey),
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
        }
    }

    /// The headers AWS answers a write encrypted this way with.
    pub fn echo(&self, out: &mut HeaderMap) {
        echo(out, &self.wrapping().0);
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
    record: Record,
}

impl Sealed {
    /// Records in `meta` what opening the object takes.
    pub fn store(&self, meta: &mut ObjectMeta) {
        self.record.store(meta);
    }
}

/// Streams the payload (at most `max_size` bytes) into the writer sealed
/// under a fresh object key; returns the plaintext's digests once the
/// payload has ended cleanly.
pub async fn receive_sealed(
    writer: &mut ObjectWriter,
    payload: &mut Payload,
    mut summer: Checksummer,
    encryption: &Encryption,
    max_size: u64,
) -> Result<(Digests, Sealed), S3Error> {
    let mut sealing = Sealing::new(encryption, max_size);
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
/// (a PutObject's payload, a PostObject's file part): push plaintext
/// chunks, then [`Sealing::finish`] with the plaintext's size and digests.
pub struct Sealing<'a> {
    encryption: &'a Encryption,
    object_key: ObjectKey,
    sealer: Sealer,
    stored_md5: Md5,
    /// The size limit a sealing failure is reported against.
    max_size: u64,
}

impl<'a> Sealing<'a> {
    pub fn new(encryption: &'a Encryption, max_size: u64) -> Self {
        let object_key = ObjectKey::random();
        let sealer = Sealer::new(object_key.cipher(), object_key.base);
        Self {
            encryption,
            object_key,
            sealer,
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
            self.stored_md5.update(&segment);
            writer.write(segment).await?;
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
            encryption,
            object_key,
            sealer,
            mut stored_md5,
            ..
        } = self;
        let last = sealer.finish().map_err(|_| too_large.clone())?;
        stored_md5.update(&last);
        writer.write(last).await?;
        let (wrapping, wrapping_key) = encryption.wrapping();
        let record = Record {
            plain_size,
            sealed_key: object_key
                .seal(wrapping_key, &wrapping.aad(plain_size))
                .map_err(|_| too_large)?,
            wrapping,
        };
        let etag = match encryption {
            Encryption::Customer(_) => hex::encode(stored_md5.finalize()),
            Encryption::Master(_) => digests.etag(),
        };
        Ok(Sealed { etag, record })
    }
}

/// The headers AWS echoes on every answer about an encrypted object:
/// SSE-C's algorithm and key MD5 (never the key), or SSE-S3's algorithm.
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
    }
}
