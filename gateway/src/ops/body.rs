//! Reading request bodies that are not object data.

use bytes::{Bytes, BytesMut};

use crate::auth::Payload;
use crate::error::S3Error;

/// How much of an unread body an error response still consumes, so that a
/// small request refused early (403, 400) leaves its keep-alive connection
/// usable. Anything bigger is abandoned and the connection closes.
const DRAIN_LIMIT: u64 = 1024 * 1024;

/// Reads a whole (XML) request body, refusing more than `limit` bytes.
pub async fn read_to_end(payload: &mut Payload, limit: usize) -> Result<Bytes, S3Error> {
    if payload
        .declared_length()
        .is_some_and(|length| length > limit as u64)
    {
        return Err(S3Error::max_message_length_exceeded());
    }
    let mut body = BytesMut::new();
    while let Some(piece) = payload.next_chunk().await {
        let piece = piece?;
        if body.len() + piece.len() > limit {
            return Err(S3Error::max_message_length_exceeded());
        }
        body.extend_from_slice(&piece);
    }
    Ok(body.freeze())
}

/// Discards what is left of the body, up to [`DRAIN_LIMIT`].
pub async fn drain(payload: &mut Payload) {
    if payload
        .declared_length()
        .is_some_and(|length| length > DRAIN_LIMIT)
    {
        return;
    }
    let mut drained: u64 = 0;
    while let Some(Ok(piece)) = payload.next_chunk().await {
        drained += piece.len() as u64;
        if drained > DRAIN_LIMIT {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use futures::stream;

    use super::*;

    fn payload(pieces: &[&'static [u8]], declared: Option<u64>) -> Payload {
        let items: Vec<Result<Bytes, std::io::Error>> = pieces
            .iter()
            .map(|piece| Ok(Bytes::from_static(piece)))
            .collect();
        Payload::unsigned(Body::from_stream(stream::iter(items)), declared)
    }

    #[tokio::test]
    async fn reads_a_body_in_pieces() {
        let mut body = payload(&[b"<a>", b"</a>"], None);
        assert_eq!(read_to_end(&mut body, 7).await.unwrap(), "<a></a>");
    }

    #[tokio::test]
    async fn refuses_bodies_over_the_limit_declared_or_streamed() {
        let mut declared = payload(&[b"12345678"], Some(8));
        assert_eq!(
            read_to_end(&mut declared, 7).await.unwrap_err().code,
            "MaxMessageLengthExceeded"
        );
        let mut streamed = payload(&[b"1234", b"5678"], None);
        assert_eq!(
            read_to_end(&mut streamed, 7).await.unwrap_err().code,
            "MaxMessageLengthExceeded"
        );
    }

    #[tokio::test]
    async fn drain_consumes_a_small_body() {
        let mut body = payload(&[b"ab", b"cd"], Some(4));
        drain(&mut body).await;
        assert!(body.next_chunk().await.is_none());
    }
}
