//! PutObject with an SSE-C key: the body is sealed segment by segment (see
//! `crate::sse::segments`) on its way into the writer, while the checksums
//! the client asked for, and Content-MD5, are computed over the plaintext
//! it sent. The object key is sealed under the customer key once the
//! plaintext size is known, and recorded in the object's metadata.

use http::HeaderMap;
use md5::{Digest, Md5};
use storage_client::{ObjectMeta, ObjectWriter};

use crate::auth::Payload;
use crate::checksum::{Checksummer, Digests};
use crate::error::S3Error;
use crate::ops::headers::insert;
use crate::sse::customer_key::{self, CustomerKey};
use crate::sse::object_key::ObjectKey;
use crate::sse::record::Record;
use crate::sse::segments::{SealError, Sealer};

/// An object stored sealed.
pub struct Sealed {
    /// AWS gives an SSE-C object an ETag that is not its plaintext's MD5
    /// (which would tell whoever lists the bucket whether an object holds
    /// a guessed text); here it is the MD5 of the stored bytes.
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
    customer: &CustomerKey,
    max_size: u64,
) -> Result<(Digests, Sealed), S3Error> {
    let too_large = |_: SealError| S3Error::entity_too_large(max_size);
    let object_key = ObjectKey::random();
    let mut sealer = Sealer::new(object_key.cipher(), object_key.base);
    let mut stored_md5 = Md5::new();
    let mut received: u64 = 0;
    while let Some(chunk) = payload.next_chunk().await {
        let chunk = chunk?;
        received += chunk.len() as u64;
        if received > max_size {
            return Err(S3Error::entity_too_large(max_size));
        }
        summer.update(&chunk);
        for segment in sealer.push(&chunk).map_err(too_large)? {
            stored_md5.update(&segment);
            writer.write(segment).await?;
        }
    }
    let last = sealer.finish().map_err(too_large)?;
    stored_md5.update(&last);
    writer.write(last).await?;
    let record = Record {
        plain_size: received,
        customer_key_md5: customer.md5.clone(),
        sealed_key: object_key
            .seal(&customer.key, received)
            .map_err(too_large)?,
    };
    let sealed = Sealed {
        etag: hex::encode(stored_md5.finalize()),
        record,
    };
    Ok((summer.finish(), sealed))
}

/// The SSE-C headers AWS echoes on every answer about an SSE-C object: the
/// algorithm and the key's MD5 (never the key).
pub fn echo_customer_key(out: &mut HeaderMap, key_md5: &str) {
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
