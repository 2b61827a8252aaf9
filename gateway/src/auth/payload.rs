//! The verified request body handed to operations, for every payload mode
//! `x-amz-content-sha256` can name.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use http::HeaderMap;
use http_body_util::BodyExt;
use sha2::{Digest, Sha256};
use tokio::sync::OwnedSemaphorePermit;

use super::CredentialSource;
use super::chunk_budget::ChunkBudget;
use super::chunked::{ChunkedDecoder, Voucher};
use super::errors::{
    body_too_short, chunk_signature_mismatch, incomplete_body, invalid_argument, invalid_request,
    sha256_mismatch,
};
use crate::config::Limits;
use crate::error::S3Error;

/// How request bodies may be read.
#[derive(Clone)]
pub(crate) struct BodyLimits {
    /// The longest wait for the next piece of a body: `400 RequestTimeout`.
    pub idle_timeout: Duration,
    pub max_signed_chunk: usize,
    /// Shared by every request of one server.
    pub chunk_budget: ChunkBudget,
}

impl BodyLimits {
    pub(crate) fn new(limits: &Limits) -> Self {
        Self {
            idle_timeout: limits.body_idle_timeout,
            max_signed_chunk: limits.max_signed_chunk,
            chunk_budget: ChunkBudget::new(limits.chunk_buffer_budget, limits.chunk_buffer_wait),
        }
    }
}

/// What `x-amz-content-sha256` says about the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PayloadMode {
    Unsigned,
    /// Lower-case hex SHA-256 of the whole body.
    Sha256(String),
    /// aws-chunked framing; `signed` chunks carry signatures; `trailer`
    /// bodies end with a trailer block.
    Chunked {
        signed: bool,
        trailer: bool,
    },
}

impl PayloadMode {
    pub(crate) fn parse(value: &str) -> Result<Self, S3Error> {
        Ok(match value {
            "UNSIGNED-PAYLOAD" => Self::Unsigned,
            "STREAMING-AWS4-HMAC-SHA256-PAYLOAD" => Self::Chunked {
                signed: true,
                trailer: false,
            },
            "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER" => Self::Chunked {
                signed: true,
                trailer: true,
            },
            "STREAMING-UNSIGNED-PAYLOAD-TRAILER" => Self::Chunked {
                signed: false,
                trailer: true,
            },
            hash if hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
                Self::Sha256(hash.to_ascii_lowercase())
            }
            other => {
                return Err(invalid_argument(
                    "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD, \
                     STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER, STREAMING-UNSIGNED-PAYLOAD-TRAILER \
                     or a valid sha256 value.",
                    "x-amz-content-sha256",
                    other,
                ));
            }
        })
    }
}

/// The request body after framing is removed: yields only verified bytes.
/// A chunk whose signature fails, a payload whose SHA-256 does not match, or
/// a malformed frame ends the stream with an error item, never with `None`,
/// so a consumer that commits only after `None` never commits bad data.
/// After an error every further call returns the same error.
pub struct Payload {
    body: Body,
    idle_timeout: Duration,
    framing: Framing,
    declared_length: Option<u64>,
    trailers: HeaderMap,
    outcome: Outcome,
}

enum Framing {
    Plain(PlainCheck),
    Chunked {
        decoder: Box<ChunkedDecoder>,
        budget: ChunkBudget,
        /// Room in the budget for the signed chunk being buffered.
        reserved: Option<OwnedSemaphorePermit>,
        /// Who vouches for the chunk signatures, where the key is not here.
        vouching: Option<Vouching>,
    },
}

/// The store that vouches for the chunk signatures of a key the gateway
/// holds no secret for, one round trip per signature.
pub(crate) struct Vouching {
    pub source: Arc<dyn CredentialSource>,
    pub access_key: String,
}

impl Vouching {
    /// Whether every signature of `vouchers` is vouched for, in order.
    async fn settle(&self, vouchers: Vec<Voucher>) -> Result<(), S3Error> {
        for voucher in vouchers {
            let vouched = self
                .source
                .vouch(
                    &self.access_key,
                    &voucher.string_to_sign,
                    &voucher.signature,
                )
                .await?;
            if vouched.is_none() {
                return Err(chunk_signature_mismatch());
            }
        }
        Ok(())
    }
}

enum Outcome {
    Streaming,
    Finished,
    Failed(S3Error),
}

/// Length and (optionally) SHA-256 checks of a body sent as is.
struct PlainCheck {
    content_length: Option<u64>,
    received: u64,
    sha256: Option<(Sha256, String)>,
}

impl PlainCheck {
    fn update(&mut self, data: &[u8]) -> Result<(), S3Error> {
        self.received += data.len() as u64;
        if self
            .content_length
            .is_some_and(|length| self.received > length)
        {
            return Err(invalid_request(
                "The request body is longer than Content-Length",
            ));
        }
        if let Some((hasher, _)) = &mut self.sha256 {
            hasher.update(data);
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), S3Error> {
        if self
            .content_length
            .is_some_and(|length| self.received < length)
        {
            return Err(body_too_short());
        }
        if let Some((hasher, claimed)) = self.sha256.take() {
            let computed = hex::encode(hasher.finalize());
            if computed != claimed {
                return Err(sha256_mismatch(&claimed, &computed));
            }
        }
        Ok(())
    }
}

impl Payload {
    /// A body taken as sent, checked only against `content_length` — what
    /// `UNSIGNED-PAYLOAD` means. Also how callers that authenticated a body
    /// by other means (tests, internal requests) build a `Payload`; read
    /// with the default limits.
    pub fn unsigned(body: Body, content_length: Option<u64>) -> Self {
        Self::plain(
            body,
            content_length,
            None,
            &BodyLimits::new(&Limits::default()),
        )
    }

    /// A body whose SHA-256 must equal `sha256_hex` once fully read.
    pub(crate) fn plain(
        body: Body,
        content_length: Option<u64>,
        sha256_hex: Option<String>,
        limits: &BodyLimits,
    ) -> Self {
        Self::with_framing(
            body,
            limits,
            Framing::Plain(PlainCheck {
                content_length,
                received: 0,
                sha256: sha256_hex.map(|claimed| (Sha256::new(), claimed)),
            }),
            content_length,
        )
    }

    /// An aws-chunked body of `decoded_length` bytes once decoded.
    /// `vouching` with a decoder whose chain is vouched for elsewhere.
    pub(crate) fn chunked(
        body: Body,
        decoder: ChunkedDecoder,
        decoded_length: u64,
        limits: &BodyLimits,
        vouching: Option<Vouching>,
    ) -> Self {
        let framing = Framing::Chunked {
            decoder: Box::new(decoder),
            budget: limits.chunk_budget.clone(),
            reserved: None,
            vouching,
        };
        Self::with_framing(body, limits, framing, Some(decoded_length))
    }

    fn with_framing(
        body: Body,
        limits: &BodyLimits,
        framing: Framing,
        declared_length: Option<u64>,
    ) -> Self {
        Self {
            body,
            idle_timeout: limits.idle_timeout,
            framing,
            declared_length,
            trailers: HeaderMap::new(),
            outcome: Outcome::Streaming,
        }
    }

    /// The object length the client declared (`x-amz-decoded-content-length`
    /// for aws-chunked bodies, else `Content-Length`), if any.
    pub fn declared_length(&self) -> Option<u64> {
        self.declared_length
    }

    /// The next verified piece of the body; `None` only after the whole body
    /// (and any trailer) has been read and verified.
    pub async fn next_chunk(&mut self) -> Option<Result<Bytes, S3Error>> {
        match &self.outcome {
            Outcome::Finished => return None,
            Outcome::Failed(error) => return Some(Err(error.clone())),
            Outcome::Streaming => {}
        }
        match self.advance().await {
            Ok(Some(data)) => Some(Ok(data)),
            Ok(None) => {
                self.outcome = Outcome::Finished;
                None
            }
            Err(error) => {
                self.outcome = Outcome::Failed(error.clone());
                Some(Err(error))
            }
        }
    }

    /// Trailing headers (e.g. `x-amz-checksum-crc32`), available once
    /// `next_chunk` has returned `None`.
    pub fn trailers(&self) -> &HeaderMap {
        &self.trailers
    }

    async fn advance(&mut self) -> Result<Option<Bytes>, S3Error> {
        match &mut self.framing {
            Framing::Plain(check) => loop {
                match read_data(&mut self.body, self.idle_timeout).await? {
                    Some(data) if data.is_empty() => {}
                    Some(data) => {
                        check.update(&data)?;
                        return Ok(Some(data));
                    }
                    None => {
                        check.finish()?;
                        return Ok(None);
                    }
                }
            },
            Framing::Chunked {
                decoder,
                budget,
                reserved,
                vouching,
            } => loop {
                if let Some(data) = decoder.next()? {
                    if let Some(vouching) = vouching {
                        vouching.settle(decoder.take_vouchers()).await?;
                    }
                    // A verified chunk has left the decoder's buffer.
                    *reserved = None;
                    return Ok(Some(data));
                }
                if reserved.is_none()
                    && let Some(size) = decoder.buffering_signed_chunk()
                {
                    *reserved = Some(budget.reserve(size).await?);
                }
                match read_data(&mut self.body, self.idle_timeout).await? {
                    Some(data) => decoder.push(data),
                    None => {
                        let trailers = decoder.finish()?;
                        if let Some(vouching) = vouching {
                            vouching.settle(decoder.take_vouchers()).await?;
                        }
                        self.trailers = trailers;
                        return Ok(None);
                    }
                }
            },
        }
    }
}

/// The next data frame of the body; HTTP trailer frames are skipped (S3
/// trailers travel inside the aws-chunked body). A client silent for
/// `idle_timeout` gets `RequestTimeout`, as S3 answers it.
async fn read_data(body: &mut Body, idle_timeout: Duration) -> Result<Option<Bytes>, S3Error> {
    loop {
        let frame = tokio::time::timeout(idle_timeout, body.frame())
            .await
            .map_err(|_| S3Error::request_timeout())?;
        match frame {
            None => return Ok(None),
            Some(Err(_)) => {
                return Err(incomplete_body(
                    "The request body could not be read to its end",
                ));
            }
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    return Ok(Some(data));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use futures::{StreamExt, stream};

    use super::*;
    use crate::auth::sigv4::sha256_hex;

    fn streamed(pieces: &[&'static [u8]]) -> Body {
        let items: Vec<Result<Bytes, std::io::Error>> = pieces
            .iter()
            .map(|piece| Ok(Bytes::from_static(piece)))
            .collect();
        Body::from_stream(stream::iter(items))
    }

    fn limits() -> BodyLimits {
        BodyLimits::new(&Limits::default())
    }

    async fn drain(payload: &mut Payload) -> (Vec<u8>, Option<S3Error>) {
        let mut data = Vec::new();
        while let Some(piece) = payload.next_chunk().await {
            match piece {
                Ok(piece) => data.extend_from_slice(&piece),
                Err(error) => return (data, Some(error)),
            }
        }
        (data, None)
    }

    #[test]
    fn parses_payload_modes() {
        assert_eq!(
            PayloadMode::parse("UNSIGNED-PAYLOAD").unwrap(),
            PayloadMode::Unsigned
        );
        assert_eq!(
            PayloadMode::parse(&"AB".repeat(32)).unwrap(),
            PayloadMode::Sha256("ab".repeat(32))
        );
        assert_eq!(
            PayloadMode::parse("STREAMING-UNSIGNED-PAYLOAD-TRAILER").unwrap(),
            PayloadMode::Chunked {
                signed: false,
                trailer: true
            }
        );
        let error = PayloadMode::parse("STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD").unwrap_err();
        assert_eq!(error.code, "InvalidArgument");
        assert!(PayloadMode::parse(&"g".repeat(64)).is_err());
    }

    #[tokio::test]
    async fn a_matching_sha256_streams_through() {
        let mut payload = Payload::plain(
            streamed(&[b"hello ", b"world"]),
            Some(11),
            Some(sha256_hex(b"hello world")),
            &limits(),
        );
        assert_eq!(payload.declared_length(), Some(11));
        let (data, error) = drain(&mut payload).await;
        assert_eq!(data, b"hello world");
        assert!(error.is_none(), "{error:?}");
        assert!(payload.next_chunk().await.is_none());
    }

    #[tokio::test]
    async fn a_wrong_sha256_ends_with_an_error_and_keeps_failing() {
        let mut payload = Payload::plain(
            streamed(&[b"hello"]),
            Some(5),
            Some(sha256_hex(b"other")),
            &limits(),
        );
        let (data, error) = drain(&mut payload).await;
        assert_eq!(data, b"hello");
        let error = error.unwrap();
        assert_eq!(
            (error.code, error.status.as_u16()),
            ("XAmzContentSHA256Mismatch", 400)
        );
        assert_eq!(
            payload.next_chunk().await.unwrap().unwrap_err().code,
            "XAmzContentSHA256Mismatch"
        );
    }

    #[tokio::test]
    async fn a_short_body_is_incomplete() {
        let mut payload = Payload::unsigned(streamed(&[b"hel"]), Some(5));
        assert_eq!(drain(&mut payload).await.1.unwrap().code, "IncompleteBody");
    }

    #[tokio::test]
    async fn a_body_that_breaks_off_is_incomplete() {
        let items: Vec<Result<Bytes, std::io::Error>> = vec![
            Ok(Bytes::from_static(b"he")),
            Err(std::io::Error::other("reset")),
        ];
        let mut payload = Payload::unsigned(Body::from_stream(stream::iter(items)), None);
        let (data, error) = drain(&mut payload).await;
        assert_eq!(data, b"he");
        assert_eq!(error.unwrap().code, "IncompleteBody");
    }

    #[tokio::test]
    async fn chunked_bodies_expose_trailers_after_the_end() {
        let decoder = ChunkedDecoder::new(
            None,
            vec!["x-amz-checksum-crc32".to_owned()],
            false,
            5,
            1 << 20,
        );
        let mut payload = Payload::chunked(
            streamed(&[
                b"5\r\nhel",
                b"lo\r\n0\r\nx-amz-checksum-crc32:AAAA\r\n",
                b"\r\n",
            ]),
            decoder,
            5,
            &limits(),
            None,
        );
        assert_eq!(payload.declared_length(), Some(5));
        let (data, error) = drain(&mut payload).await;
        assert_eq!(data, b"hello");
        assert!(error.is_none(), "{error:?}");
        assert_eq!(payload.trailers()["x-amz-checksum-crc32"], "AAAA");
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_stops_arriving_is_a_request_timeout() {
        // One byte of a declared thousand, then silence.
        let first: Vec<Result<Bytes, std::io::Error>> = vec![Ok(Bytes::from_static(b"x"))];
        let body = Body::from_stream(stream::iter(first).chain(stream::pending()));
        let mut payload = Payload::plain(body, Some(1000), None, &limits());
        let (data, error) = drain(&mut payload).await;
        assert_eq!(data, b"x");
        let error = error.expect("timed out");
        assert_eq!((error.code, error.status.as_u16()), ("RequestTimeout", 400));
    }
}
