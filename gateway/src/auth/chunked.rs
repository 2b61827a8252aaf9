//! The aws-chunked body decoder: strips the chunk framing, verifies every
//! chunk signature (chained from the request's seed signature) and the
//! trailer block, and checks the decoded length.
//!
//! It is push-based and does no I/O: the caller pushes whatever the network
//! delivered, in pieces of any size, and pulls decoded data. In the signed
//! modes a chunk is buffered whole and released only after its signature
//! verifies, so no unverified byte ever reaches storage; chunk size is capped
//! to bound that buffer. In the unsigned mode data is released as it arrives.

use bytes::{Buf, Bytes, BytesMut};
use http::HeaderMap;

use super::errors::{chunk_signature_mismatch, incomplete_body, malformed_chunk};
use super::sigv4::{SigningContext, signatures_match};
use super::trailer::{MAX_TRAILER_BYTES, TrailerCollector, TrailerSigning};
use crate::error::S3Error;

/// Longest chunk-size line: 16 hex digits plus `;chunk-signature=` and 64
/// hex digits fit with room to spare.
const MAX_SIZE_LINE: usize = 256;

/// The chain of chunk signatures of a signed body.
pub(crate) struct SignatureChain {
    pub context: SigningContext,
    /// The previous signature: the request's seed signature at first.
    pub previous: String,
    /// `Some` where the signing key is not here (a key whose secret the
    /// back end's store holds, [`super::CredentialSource::vouch`]): each
    /// signature is queued with what it signs, to be vouched for before
    /// its chunk is released ([`ChunkedDecoder::take_vouchers`]), and the
    /// chain goes on from the signature as provided, which the vouching
    /// checks.
    pub vouched: Option<Vec<Voucher>>,
}

/// A signature to be vouched for, and the string it signs.
pub(crate) struct Voucher {
    pub string_to_sign: String,
    pub signature: String,
}

pub(crate) struct ChunkedDecoder {
    input: BytesMut,
    /// A pushed piece not copied into `input`: while chunk data streams
    /// unsigned and nothing else is buffered, it is handed out as it came,
    /// so object bytes are not copied here.
    pending: Option<Bytes>,
    state: State,
    chain: Option<SignatureChain>,
    /// Whether the trailer block must carry `x-amz-trailer-signature`.
    signed_trailer: bool,
    declared_trailers: Vec<String>,
    /// Largest signed chunk buffered (`max_signed_chunk`).
    max_signed_chunk: u64,
    decoded_length: u64,
    decoded_so_far: u64,
    trailer: TrailerCollector,
    trailers: HeaderMap,
}

enum State {
    SizeLine,
    SignedData { size: usize, signature: String },
    UnsignedData { remaining: u64 },
    DataEnd,
    Trailer,
    Done,
}

impl ChunkedDecoder {
    /// `chain` is `Some` for the signed modes; `declared_trailers` lists the
    /// `x-amz-trailer` names (empty when trailers are not allowed);
    /// `signed_trailer` is set for STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER;
    /// a signed chunk beyond `max_signed_chunk` bytes is refused unread.
    pub(crate) fn new(
        chain: Option<SignatureChain>,
        declared_trailers: Vec<String>,
        signed_trailer: bool,
        decoded_length: u64,
        max_signed_chunk: usize,
    ) -> Self {
        Self {
            input: BytesMut::new(),
            pending: None,
            state: State::SizeLine,
            chain,
            signed_trailer,
            declared_trailers,
            max_signed_chunk: max_signed_chunk as u64,
            decoded_length,
            decoded_so_far: 0,
            trailer: TrailerCollector::default(),
            trailers: HeaderMap::new(),
        }
    }

    pub(crate) fn push(&mut self, data: Bytes) {
        self.buffer_pending();
        if self.input.is_empty() && matches!(self.state, State::UnsignedData { .. }) {
            self.pending = Some(data);
        } else {
            self.input.extend_from_slice(&data);
        }
    }

    /// Moves a kept piece into `input`, for the states that parse framing.
    fn buffer_pending(&mut self) {
        if let Some(piece) = self.pending.take() {
            self.input.extend_from_slice(&piece);
        }
    }

    /// The next piece of verified data, or `None` when more input is needed
    /// or the body is complete.
    pub(crate) fn next(&mut self) -> Result<Option<Bytes>, S3Error> {
        if !matches!(self.state, State::UnsignedData { .. }) {
            self.buffer_pending();
        }
        loop {
            match &mut self.state {
                State::SizeLine => {
                    let Some(end) = find_line(&self.input, MAX_SIZE_LINE, "chunk-size line")?
                    else {
                        return Ok(None);
                    };
                    let line = self.input.split_to(end + 2);
                    self.start_chunk(&line[..end])?;
                }
                State::SignedData { size, signature } => {
                    let size = *size;
                    if self.input.len() < size + 2 {
                        return Ok(None);
                    }
                    if &self.input[size..size + 2] != b"\r\n" {
                        return Err(malformed_chunk("chunk data is not followed by CRLF"));
                    }
                    let signature = std::mem::take(signature);
                    let data = self.input.split_to(size).freeze();
                    self.input.advance(2);
                    self.verify_chunk(&data, &signature)?;
                    self.state = State::SizeLine;
                    return Ok(Some(data));
                }
                State::UnsignedData { remaining } => {
                    if self.input.is_empty()
                        && let Some(piece) = self.pending.as_mut()
                    {
                        let take = usize::try_from(*remaining)
                            .unwrap_or(usize::MAX)
                            .min(piece.len());
                        let data = piece.split_to(take);
                        if piece.is_empty() {
                            self.pending = None;
                        }
                        *remaining -= take as u64;
                        if *remaining == 0 {
                            self.state = State::DataEnd;
                            self.buffer_pending();
                        }
                        return Ok(Some(data));
                    }
                    if self.input.is_empty() {
                        return Ok(None);
                    }
                    let take = usize::try_from(*remaining)
                        .unwrap_or(usize::MAX)
                        .min(self.input.len());
                    *remaining -= take as u64;
                    if *remaining == 0 {
                        self.state = State::DataEnd;
                    }
                    return Ok(Some(self.input.split_to(take).freeze()));
                }
                State::DataEnd => {
                    if self.input.len() < 2 {
                        return Ok(None);
                    }
                    if &self.input[..2] != b"\r\n" {
                        return Err(malformed_chunk("chunk data is not followed by CRLF"));
                    }
                    self.input.advance(2);
                    self.state = State::SizeLine;
                }
                State::Trailer => {
                    let Some(end) = find_line(&self.input, MAX_TRAILER_BYTES, "trailer line")?
                    else {
                        return Ok(None);
                    };
                    let line = self.input.split_to(end + 2);
                    if end == 0 {
                        self.finish_trailer()?;
                    } else {
                        self.trailer
                            .add_line(&line[..end], &self.declared_trailers)?;
                    }
                }
                State::Done => {
                    if !self.input.is_empty() {
                        return Err(malformed_chunk("data follows the final chunk"));
                    }
                    return Ok(None);
                }
            }
        }
    }

    /// The size of the signed chunk being buffered, while it is: the memory
    /// this decoder is about to hold until the chunk verifies.
    pub(crate) fn buffering_signed_chunk(&self) -> Option<usize> {
        match self.state {
            State::SignedData { size, .. } => Some(size),
            _ => None,
        }
    }

    /// Called when the request body ended: the final chunk and trailer
    /// block must have been received. Returns the trailers.
    pub(crate) fn finish(&mut self) -> Result<HeaderMap, S3Error> {
        match self.state {
            State::Done => Ok(std::mem::take(&mut self.trailers)),
            // Some clients omit the blank line that closes the trailer
            // block. Every chunk is verified by now, and what the block
            // must hold (declared trailers, signature) is still checked.
            State::Trailer if self.input.is_empty() => {
                self.finish_trailer()?;
                Ok(std::mem::take(&mut self.trailers))
            }
            _ => Err(incomplete_body(
                "The request body ended before the final aws-chunked chunk",
            )),
        }
    }

    fn start_chunk(&mut self, line: &[u8]) -> Result<(), S3Error> {
        let line = std::str::from_utf8(line)
            .map_err(|_| malformed_chunk("the chunk-size line is not ASCII"))?;
        let (size_text, extensions) = line.split_once(';').unwrap_or((line, ""));
        let size = parse_size(size_text)?;
        let signature = match &self.chain {
            Some(_) => Some(
                extensions
                    .strip_prefix("chunk-signature=")
                    .ok_or_else(|| malformed_chunk("a chunk has no chunk-signature"))?
                    .to_owned(),
            ),
            None => None,
        };
        if self.decoded_so_far.saturating_add(size) > self.decoded_length {
            return Err(incomplete_body(
                "The decoded body is longer than x-amz-decoded-content-length",
            ));
        }
        self.decoded_so_far += size;
        if size == 0 {
            if let Some(signature) = signature {
                self.verify_chunk(&[], &signature)?;
            }
            if self.decoded_so_far != self.decoded_length {
                return Err(incomplete_body(
                    "The decoded body is shorter than x-amz-decoded-content-length",
                ));
            }
            self.state = State::Trailer;
            return Ok(());
        }
        self.state = match signature {
            Some(signature) => {
                if size > self.max_signed_chunk {
                    return Err(malformed_chunk(&format!(
                        "a signed chunk is larger than {} bytes",
                        self.max_signed_chunk
                    )));
                }
                State::SignedData {
                    size: usize::try_from(size).map_err(|_| malformed_chunk("chunk too large"))?,
                    signature,
                }
            }
            None => State::UnsignedData { remaining: size },
        };
        Ok(())
    }

    /// The signatures queued for vouching since the last call, in order
    /// (empty unless the chain is [`SignatureChain::vouched`]). The caller
    /// releases the chunk [`Self::next`] just returned, or takes the end of
    /// the body, only once all of them are vouched for.
    pub(crate) fn take_vouchers(&mut self) -> Vec<Voucher> {
        self.chain
            .as_mut()
            .and_then(|chain| chain.vouched.as_mut())
            .map(std::mem::take)
            .unwrap_or_default()
    }

    fn verify_chunk(&mut self, data: &[u8], provided: &str) -> Result<(), S3Error> {
        let Some(chain) = &mut self.chain else {
            return Ok(());
        };
        if let Some(pending) = &mut chain.vouched {
            pending.push(Voucher {
                string_to_sign: chain.context.chunk_string_to_sign(&chain.previous, data),
                signature: provided.to_owned(),
            });
            provided.clone_into(&mut chain.previous);
            return Ok(());
        }
        let expected = chain.context.chunk_signature(&chain.previous, data);
        if !signatures_match(&expected, provided) {
            return Err(chunk_signature_mismatch());
        }
        chain.previous = expected;
        Ok(())
    }

    fn finish_trailer(&mut self) -> Result<(), S3Error> {
        let mut collector = std::mem::take(&mut self.trailer);
        let signing = match (&mut self.chain, self.signed_trailer) {
            (Some(chain), true) => match &mut chain.vouched {
                Some(pending) => {
                    if let Some((string_to_sign, signature)) =
                        collector.signed(&chain.context, &chain.previous)
                    {
                        pending.push(Voucher {
                            string_to_sign,
                            signature,
                        });
                    }
                    TrailerSigning::Vouched
                }
                None => TrailerSigning::Check(&chain.context, chain.previous.as_str()),
            },
            _ => TrailerSigning::Unsigned,
        };
        self.trailers = collector.finish(&self.declared_trailers, signing)?;
        self.state = State::Done;
        Ok(())
    }
}

/// 1 to 16 hex digits.
fn parse_size(text: &str) -> Result<u64, S3Error> {
    let valid = !text.is_empty() && text.len() <= 16 && text.bytes().all(|b| b.is_ascii_hexdigit());
    if !valid {
        return Err(malformed_chunk("the chunk size is not hexadecimal"));
    }
    u64::from_str_radix(text, 16).map_err(|_| malformed_chunk("the chunk size is not hexadecimal"))
}

/// The offset of the CRLF ending the first line of `input`, if it has
/// arrived; an error if `max` bytes arrived without one.
fn find_line(input: &[u8], max: usize, what: &str) -> Result<Option<usize>, S3Error> {
    let window = &input[..input.len().min(max + 2)];
    match window.windows(2).position(|pair| pair == b"\r\n") {
        Some(end) => Ok(Some(end)),
        None if input.len() >= max + 2 => Err(malformed_chunk(&format!("the {what} is too long"))),
        None => Ok(None),
    }
}

/// Builds an aws-chunked body the way SDKs do, for any mode.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) struct Encoder {
    pub context: Option<SigningContext>,
    pub seed: String,
}

#[cfg(any(test, feature = "fuzzing"))]
impl Encoder {
    pub(crate) fn encode(
        &self,
        chunks: &[&[u8]],
        trailers: &[(&str, &str)],
        trailer_mode: bool,
    ) -> Vec<u8> {
        let mut out = Vec::new();
        let mut previous = self.seed.clone();
        for data in chunks.iter().copied().chain(std::iter::once(&[][..])) {
            match &self.context {
                Some(context) => {
                    let signature = context.chunk_signature(&previous, data);
                    out.extend_from_slice(
                        format!("{:x};chunk-signature={signature}\r\n", data.len()).as_bytes(),
                    );
                    previous = signature;
                }
                None => out.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes()),
            }
            if !data.is_empty() {
                out.extend_from_slice(data);
                out.extend_from_slice(b"\r\n");
            }
        }
        let mut canonical = String::new();
        for (name, value) in trailers {
            out.extend_from_slice(format!("{name}:{value}\r\n").as_bytes());
            canonical.push_str(&format!("{name}:{value}\n"));
        }
        if let (Some(context), true) = (&self.context, trailer_mode) {
            let signature = context.trailer_signature(&previous, &canonical);
            out.extend_from_slice(format!("x-amz-trailer-signature:{signature}\r\n").as_bytes());
        }
        out.extend_from_slice(b"\r\n");
        out
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::auth::sigv4::hmac_sha256;

    fn context() -> SigningContext {
        SigningContext {
            key: hmac_sha256(b"key", b"test"),
            stamp: "20250101T000000Z".to_owned(),
            scope: "20250101/us-east-1/s3/aws4_request".to_owned(),
        }
    }

    const SEED: &str = "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9";

    fn decoder(signed: bool, trailers: &[&str], trailer_mode: bool, length: u64) -> ChunkedDecoder {
        let chain = signed.then(|| SignatureChain {
            context: context(),
            previous: SEED.to_owned(),
            vouched: None,
        });
        let declared = trailers.iter().map(|name| (*name).to_owned()).collect();
        ChunkedDecoder::new(
            chain,
            declared,
            signed && trailer_mode,
            length,
            MAX_SIGNED_CHUNK,
        )
    }

    const MAX_SIGNED_CHUNK: usize = 1 << 20;

    /// Feeds `wire` in pieces split at `cuts` and returns the data and trailers.
    fn run(
        mut decoder: ChunkedDecoder,
        wire: &[u8],
        cuts: &[usize],
    ) -> Result<(Vec<u8>, HeaderMap), S3Error> {
        let mut data = Vec::new();
        let mut start = 0;
        for &cut in cuts.iter().chain(std::iter::once(&wire.len())) {
            decoder.push(Bytes::copy_from_slice(&wire[start..cut]));
            start = cut;
            while let Some(piece) = decoder.next()? {
                data.extend_from_slice(&piece);
            }
        }
        let trailers = decoder.finish()?;
        Ok((data, trailers))
    }

    fn encoder(signed: bool) -> Encoder {
        Encoder {
            context: signed.then(context),
            seed: SEED.to_owned(),
        }
    }

    /// "hello world" in two chunks, with a CRC32 trailer in trailer mode,
    /// and the trailer names the request declares.
    fn hello_world(signed: bool, trailer_mode: bool) -> (Vec<u8>, &'static [&'static str]) {
        let (trailers, names): (&[(&str, &str)], &'static [&'static str]) = if trailer_mode {
            (
                &[("x-amz-checksum-crc32", "sOO8/Q==")],
                &["x-amz-checksum-crc32"],
            )
        } else {
            (&[], &[])
        };
        let wire = encoder(signed).encode(&[b"hello ", b"world"], trailers, trailer_mode);
        (wire, names)
    }

    const MODES: [(bool, bool); 4] = [(false, false), (true, false), (false, true), (true, true)];

    #[test]
    fn decodes_every_mode_split_at_every_byte() {
        for (signed, trailer_mode) in MODES {
            let (wire, names) = hello_world(signed, trailer_mode);
            for cut in 0..=wire.len() {
                let (data, headers) =
                    run(decoder(signed, names, trailer_mode, 11), &wire, &[cut]).unwrap();
                assert_eq!(
                    data, b"hello world",
                    "signed={signed} trailer={trailer_mode} cut={cut}"
                );
                assert_eq!(headers.len(), names.len());
            }
            let every_byte: Vec<usize> = (1..wire.len()).collect();
            let (data, _) =
                run(decoder(signed, names, trailer_mode, 11), &wire, &every_byte).unwrap();
            assert_eq!(data, b"hello world");
        }
    }

    #[test]
    fn every_truncation_is_refused_but_a_missing_final_blank_line() {
        for (signed, trailer_mode) in MODES {
            let (wire, names) = hello_world(signed, trailer_mode);
            let zero_chunk = wire.windows(2).rposition(|pair| pair == b"\n0").unwrap() + 1;
            for end in 0..wire.len() {
                let outcome = run(decoder(signed, names, trailer_mode, 11), &wire[..end], &[]);
                let context = format!("signed={signed} trailer={trailer_mode} end={end}");
                if end == wire.len() - 2 {
                    assert_eq!(outcome.unwrap().0, b"hello world", "{context}");
                } else if end < zero_chunk {
                    assert_eq!(outcome.unwrap_err().code, "IncompleteBody", "{context}");
                } else {
                    assert!(outcome.is_err(), "{context}");
                }
            }
        }
    }

    #[test]
    fn a_tampered_signed_body_never_yields_the_tampered_chunk() {
        for trailer_mode in [false, true] {
            let (wire, names) = hello_world(true, trailer_mode);
            for at in 0..wire.len() {
                let mut tampered = wire.clone();
                tampered[at] ^= 0x01;
                let mut decoder = decoder(true, names, trailer_mode, 11);
                decoder.push(Bytes::copy_from_slice(&tampered));
                let mut yielded = Vec::new();
                let outcome = loop {
                    match decoder.next() {
                        Ok(Some(piece)) => yielded.extend_from_slice(&piece),
                        Ok(None) => break decoder.finish().map(|_| ()),
                        Err(error) => break Err(error),
                    }
                };
                assert!(
                    outcome.is_err(),
                    "flip at {at} accepted (trailer={trailer_mode})"
                );
                assert!(
                    b"hello world".starts_with(&yielded),
                    "flip at {at} yielded {yielded:?}"
                );
            }
        }
    }

    #[test]
    fn a_chunk_signed_with_another_key_is_refused() {
        let mut other = context();
        other.key = hmac_sha256(b"other", b"key");
        let wire = Encoder {
            context: Some(other),
            seed: SEED.to_owned(),
        }
        .encode(&[b"hello"], &[], false);
        let error = run(decoder(true, &[], false, 5), &wire, &[]).unwrap_err();
        assert_eq!(
            (error.code, error.status.as_u16()),
            ("SignatureDoesNotMatch", 403)
        );
    }

    #[test]
    fn decoded_length_must_match() {
        let wire = encoder(false).encode(&[b"hello"], &[], false);
        assert_eq!(
            run(decoder(false, &[], false, 4), &wire, &[])
                .unwrap_err()
                .code,
            "IncompleteBody"
        );
        assert_eq!(
            run(decoder(false, &[], false, 6), &wire, &[])
                .unwrap_err()
                .code,
            "IncompleteBody"
        );
    }

    #[test]
    fn malformed_framing_is_refused() {
        for wire in [
            &b"zz\r\nhello\r\n0\r\n\r\n"[..],
            b"5\r\nhelloX\r\n0\r\n\r\n",
            b"5\r\nhello\r\n0\r\n\r\nextra",
            b"11111111111111111\r\n",
        ] {
            let error = run(decoder(false, &[], false, 5), wire, &[]).unwrap_err();
            assert_eq!(
                error.code,
                "InvalidRequest",
                "{}",
                String::from_utf8_lossy(wire)
            );
        }
        let endless = vec![b'1'; 300];
        assert_eq!(
            run(decoder(false, &[], false, 5), &endless, &[])
                .unwrap_err()
                .code,
            "InvalidRequest"
        );
        let unsigned_in_signed = b"5\r\nhello\r\n0\r\n\r\n";
        assert_eq!(
            run(decoder(true, &[], false, 5), unsigned_in_signed, &[])
                .unwrap_err()
                .code,
            "InvalidRequest"
        );
    }

    #[test]
    fn oversized_signed_chunks_are_refused_before_buffering() {
        let mut oversized = decoder(true, &[], false, u64::MAX);
        oversized.push(Bytes::from(format!(
            "{:x};chunk-signature={SEED}\r\n",
            MAX_SIGNED_CHUNK + 1
        )));
        assert_eq!(oversized.next().unwrap_err().code, "InvalidRequest");
        let mut largest = decoder(true, &[], false, u64::MAX);
        largest.push(Bytes::from(format!(
            "{MAX_SIGNED_CHUNK:x};chunk-signature={SEED}\r\n"
        )));
        assert!(largest.next().unwrap().is_none(), "waits for the chunk");
        assert_eq!(largest.buffering_signed_chunk(), Some(MAX_SIGNED_CHUNK));
    }

    #[test]
    fn trailers_must_be_declared_present_and_signed() {
        let wire =
            encoder(false).encode(&[b"hello"], &[("x-amz-checksum-crc32", "AAAAAA==")], true);
        assert!(run(decoder(false, &[], true, 5), &wire, &[]).is_err());
        let without = encoder(false).encode(&[b"hello"], &[], true);
        assert!(
            run(
                decoder(false, &["x-amz-checksum-crc32"], true, 5),
                &without,
                &[]
            )
            .is_err()
        );
        let signed =
            encoder(true).encode(&[b"hello"], &[("x-amz-checksum-crc32", "AAAAAA==")], true);
        let forged = String::from_utf8(signed)
            .unwrap()
            .replace("AAAAAA==", "BBBBBB==");
        let error = run(
            decoder(true, &["x-amz-checksum-crc32"], true, 5),
            forged.as_bytes(),
            &[],
        )
        .unwrap_err();
        assert_eq!(error.code, "SignatureDoesNotMatch");
    }

    #[test]
    fn the_aws_multiple_chunks_example() {
        // "Transferring Payload in Multiple Chunks": 64 KiB then 1 KiB of 'a'.
        let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
        let k_date = hmac_sha256(format!("AWS4{secret}").as_bytes(), b"20130524");
        let k_region = hmac_sha256(&k_date, b"us-east-1");
        let k_service = hmac_sha256(&k_region, b"s3");
        let context = SigningContext {
            key: hmac_sha256(&k_service, b"aws4_request"),
            stamp: "20130524T000000Z".to_owned(),
            scope: "20130524/us-east-1/s3/aws4_request".to_owned(),
        };
        let first = vec![b'a'; 65_536];
        let second = vec![b'a'; 1024];
        let signature_1 = context.chunk_signature(SEED, &first);
        assert_eq!(
            signature_1,
            "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648"
        );
        let signature_2 = context.chunk_signature(&signature_1, &second);
        assert_eq!(
            signature_2,
            "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497"
        );
        let signature_3 = context.chunk_signature(&signature_2, &[]);
        assert_eq!(
            signature_3,
            "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"
        );

        let wire = Encoder {
            context: Some(context.clone()),
            seed: SEED.to_owned(),
        }
        .encode(&[&first, &second], &[], false);
        assert_eq!(wire.len(), 66_824, "the example's Content-Length");
        let chain = SignatureChain {
            context,
            previous: SEED.to_owned(),
            vouched: None,
        };
        let (data, _) = run(
            ChunkedDecoder::new(Some(chain), Vec::new(), false, 66_560, MAX_SIGNED_CHUNK),
            &wire,
            &[100, 60_000],
        )
        .unwrap();
        assert_eq!(data.len(), 66_560);
    }
}
