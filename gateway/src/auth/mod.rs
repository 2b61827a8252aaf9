//! Request authentication: AWS SigV4 (header and presigned), verified by the
//! gateway itself, and the request body wrapped so that every byte it yields
//! has been checked (aws-chunked chunk signatures, trailers, payload hash).
//!
//! Public contract used by `server` and `ops`:
//! - [`Verifier::authenticate`] turns request parts + body into an
//!   [`Authenticated`] caller with a verified [`Payload`], or an `S3Error`.
//! - [`Verifier::forget`] drops everything cached for an access key.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::body::Body;
use bytes::Bytes;
use http::HeaderMap;
use storage_client::{Credential, Identity};

use crate::error::S3Error;

/// Where the verifier finds secrets. The server implements it over
/// `storage_client::Storage` (whose credential cache is keyed by access key);
/// unit tests implement it over a map.
pub trait CredentialSource: Send + Sync {
    fn credential<'a>(
        &'a self,
        access_key: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<Option<Credential>, S3Error>> + Send + 'a>>;
}

/// Verifies signatures; caches signing keys per (access key, date, region, service).
pub struct Verifier {
    _source: Arc<dyn CredentialSource>,
    _region: String,
}

/// A caller whose signature checked out.
pub struct Authenticated {
    pub identity: Identity,
    /// Whether the key is a root key (may use the admin API).
    pub is_root: bool,
    pub payload: Payload,
}

/// The request body after framing is removed: yields only verified bytes.
/// A chunk whose signature fails, a payload whose SHA-256 does not match, or
/// a malformed frame ends the stream with an error item, never with `None`,
/// so a consumer that commits only after `None` never commits bad data.
pub struct Payload {}

impl Verifier {
    pub fn new(source: Arc<dyn CredentialSource>, region: impl Into<String>) -> Self {
        Self {
            _source: source,
            _region: region.into(),
        }
    }

    pub async fn authenticate(
        &self,
        _parts: &http::request::Parts,
        _body: Body,
    ) -> Result<Authenticated, S3Error> {
        todo!()
    }

    pub fn forget(&self, _access_key: &str) {}
}

impl Payload {
    /// The object length the client declared (`x-amz-decoded-content-length`
    /// for aws-chunked bodies, else `Content-Length`), if any.
    pub fn declared_length(&self) -> Option<u64> {
        todo!()
    }

    /// The next verified piece of the body; `None` only after the whole body
    /// (and any trailer) has been read and verified.
    pub async fn next_chunk(&mut self) -> Option<Result<Bytes, S3Error>> {
        todo!()
    }

    /// Trailing headers (e.g. `x-amz-checksum-crc32`), available once
    /// `next_chunk` has returned `None`.
    pub fn trailers(&self) -> &HeaderMap {
        todo!()
    }

    /// Reads the whole body into memory, refusing more than `limit` bytes
    /// (for XML request bodies).
    pub async fn collect(self, _limit: usize) -> Result<Bytes, S3Error> {
        todo!()
    }
}
