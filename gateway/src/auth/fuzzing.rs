//! Entry points for the fuzz targets in `fuzz/` (cargo feature `fuzzing`):
//! the aws-chunked decoder is private to `auth`, so its target drives it
//! through these two functions, with a fixed signing key and seed.

use bytes::Bytes;
use http::HeaderMap;

use super::chunked::{ChunkedDecoder, Encoder, SignatureChain};
use super::sigv4::{SigningContext, hmac_sha256};
use crate::error::S3Error;

/// The four `x-amz-content-sha256` values that mean aws-chunked.
#[derive(Clone, Copy, Debug)]
pub enum ChunkedMode {
    Unsigned,
    Signed,
    UnsignedTrailer,
    SignedTrailer,
}

impl ChunkedMode {
    fn signed(self) -> bool {
        matches!(self, Self::Signed | Self::SignedTrailer)
    }

    fn trailer(self) -> bool {
        matches!(self, Self::UnsignedTrailer | Self::SignedTrailer)
    }
}

const SEED: &str = "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9";

fn context() -> SigningContext {
    SigningContext {
        key: hmac_sha256(b"fuzz", b"key"),
        stamp: "20250101T000000Z".to_owned(),
        scope: "20250101/us-east-1/s3/aws4_request".to_owned(),
    }
}

/// The body a client in `mode` sends for `chunks` and `trailers`.
pub fn encode(mode: ChunkedMode, chunks: &[&[u8]], trailers: &[(&str, &str)]) -> Vec<u8> {
    let encoder = Encoder {
        context: mode.signed().then(context),
        seed: SEED.to_owned(),
    };
    encoder.encode(chunks, trailers, mode.trailer())
}

/// What the decoder released, and how the body ended.
pub struct Decoded {
    /// Every byte the decoder handed on, up to an error if there was one.
    pub data: Vec<u8>,
    /// The trailers, or the error that stopped decoding.
    pub outcome: Result<HeaderMap, S3Error>,
}

/// Decodes `wire` as a request in `mode` that declared `trailers` and
/// `decoded_length`, pushing it in pieces cut at `cuts` (ascending offsets).
pub fn decode(
    mode: ChunkedMode,
    trailers: &[&str],
    decoded_length: u64,
    wire: &[u8],
    cuts: &[usize],
) -> Decoded {
    let chain = mode.signed().then(|| SignatureChain {
        context: context(),
        previous: SEED.to_owned(),
        vouched: None,
    });
    let declared = trailers.iter().map(|name| (*name).to_owned()).collect();
    let mut decoder = ChunkedDecoder::new(
        chain,
        declared,
        mode.signed() && mode.trailer(),
        decoded_length,
        crate::config::Limits::default().max_signed_chunk,
    );
    let mut data = Vec::new();
    let mut start = 0;
    for &cut in cuts.iter().chain(std::iter::once(&wire.len())) {
        decoder.push(Bytes::copy_from_slice(&wire[start..cut]));
        start = cut;
        loop {
            match decoder.next() {
                Ok(Some(piece)) => data.extend_from_slice(&piece),
                Ok(None) => break,
                Err(error) => {
                    return Decoded {
                        data,
                        outcome: Err(error),
                    };
                }
            }
        }
    }
    let outcome = decoder.finish();
    Decoded { data, outcome }
}
