//! The encrypted object format: the plaintext cut into segments of
//! [`SEGMENT`] bytes, each sealed on its own with AES-256-GCM, so a write
//! and a read each hold one segment at a time and a range read opens only
//! the segments it overlaps. Segment `i`'s nonce is the object's random
//! base with `i` and a last-segment flag folded in: a segment moved to
//! another place, or an object cut short at a segment boundary (whose new
//! last segment was sealed as "not last"), fails to open. Every object has
//! at least one segment (an empty object is one empty, tagged segment), and
//! only the last may be short, so the sealed size follows from the
//! plaintext size and back.

use std::ops::Range;

use aes_gcm::aead::{Aead, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use bytes::{Bytes, BytesMut};
use futures::{Stream, StreamExt};

/// Plaintext bytes per segment.
pub const SEGMENT: u64 = 64 * 1024;
/// The GCM tag that follows each segment's ciphertext.
pub const TAG: u64 = 16;
const SEALED_SEGMENT: u64 = SEGMENT + TAG;
/// Binds every segment to this format, so a segment can never be mistaken
/// for another use of the same key.
const SEGMENT_AAD: &[u8] = b"s3gw sse segment v1";

/// How many segments an object of `plain` bytes has.
fn segment_count(plain: u64) -> u64 {
    plain.div_ceil(SEGMENT).max(1)
}

/// The stored size of an object of `plain` bytes.
pub fn sealed_size(plain: u64) -> u64 {
    plain + TAG * segment_count(plain)
}

/// The plaintext size of a stored stream of `sealed` bytes; `None` when no
/// plaintext seals to that size.
pub fn plain_size(sealed: u64) -> Option<u64> {
    let segments = sealed.div_ceil(SEALED_SEGMENT).max(1);
    let plain = sealed.checked_sub(segments * TAG)?;
    (sealed_size(plain) == sealed).then_some(plain)
}

/// A segment's nonce: the base, with the index in bytes 7..11 and the
/// last-segment flag in byte 11.
fn nonce(base: &[u8; 12], index: u32, last: bool) -> [u8; 12] {
    let mut nonce = *base;
    for (byte, mixed) in nonce[7..11].iter_mut().zip(index.to_be_bytes()) {
        *byte ^= mixed;
    }
    nonce[11] ^= u8::from(last);
    nonce
}

/// Why a stored object could not be opened: its bytes, or the record that
/// describes them, are not what was written (or the key is not the one
/// that wrote them).
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("encrypted object is damaged: segment {0} failed authentication")]
    Tampered(u64),
    #[error("encrypted object is damaged: it ends before segment {0} is complete")]
    Truncated(u64),
    #[error("encrypted object is damaged: {0}")]
    Layout(&'static str),
    #[error("reading the encrypted object failed: {0}")]
    Read(String),
}

/// Seals a plaintext stream: push bytes as they come, take the sealed
/// segments it gives back, and [`Sealer::finish`] for the last one. A full
/// segment is held back until more bytes arrive, because only then is it
/// known not to be the last.
pub struct Sealer {
    cipher: Aes256Gcm,
    base: [u8; 12],
    pending: BytesMut,
    index: u32,
}

impl Sealer {
    pub fn new(cipher: Aes256Gcm, base: [u8; 12]) -> Self {
        Self {
            cipher,
            base,
            pending: BytesMut::new(),
            index: 0,
        }
    }

    /// Takes `data`; returns the segments it completed, sealed, in order.
    pub fn push(&mut self, data: &[u8]) -> Result<Vec<Bytes>, SealError> {
        self.pending.extend_from_slice(data);
        let mut sealed = Vec::new();
        while self.pending.len() as u64 > SEGMENT {
            let segment = self.pending.split_to(SEGMENT as usize);
            sealed.push(self.seal(&segment, false)?);
        }
        Ok(sealed)
    }

    /// Seals what is left as the last segment.
    pub fn finish(mut self) -> Result<Bytes, SealError> {
        let rest = std::mem::take(&mut self.pending);
        self.seal(&rest, true)
    }

    fn seal(&mut self, plain: &[u8], last: bool) -> Result<Bytes, SealError> {
        let nonce = nonce(&self.base, self.index, last);
        self.index = self.index.checked_add(1).ok_or(SealError)?;
        let payload = Payload {
            msg: plain,
            aad: SEGMENT_AAD,
        };
        self.cipher
            .encrypt(Nonce::from_slice(&nonce), payload)
            .map(Bytes::from)
            .map_err(|_| SealError)
    }
}

/// AES-GCM refused to seal: only possible past 2^32 segments (256 TiB),
/// far beyond any object S3 allows.
#[derive(Debug, thiserror::Error)]
#[error("the object is too large to encrypt")]
pub struct SealError;

/// What to read of a stored object to serve `plain` (a plaintext range of
/// an object of `plain_size` bytes): the stored byte range, from the start
/// of the first segment `plain` touches to the end of the last.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SealedRange {
    pub stored: Range<u64>,
    first_segment: u64,
    /// Plaintext bytes of the first segment before `plain` starts.
    skip: u64,
    /// Plaintext bytes to serve.
    len: u64,
    plain_size: u64,
}

impl SealedRange {
    /// `plain` must be a non-empty range inside the object.
    pub fn new(plain: Range<u64>, plain_size: u64) -> Self {
        let first_segment = plain.start / SEGMENT;
        let last_segment = plain.end.saturating_sub(1) / SEGMENT;
        let end = ((last_segment + 1) * SEALED_SEGMENT).min(sealed_size(plain_size));
        Self {
            stored: first_segment * SEALED_SEGMENT..end,
            first_segment,
            skip: plain.start - first_segment * SEGMENT,
            len: plain.end - plain.start,
            plain_size,
        }
    }

    /// Opens the stored bytes of this range as they stream in, yielding
    /// exactly the plaintext asked for; holds one segment at a time.
    pub fn open<E: std::fmt::Display>(
        self,
        cipher: Aes256Gcm,
        base: [u8; 12],
        stored: impl Stream<Item = Result<Bytes, E>> + Send + Unpin + 'static,
    ) -> impl Stream<Item = Result<Bytes, OpenError>> + Send + 'static {
        let state = Opening {
            cipher,
            base,
            stored,
            buffer: BytesMut::new(),
            segment: self.first_segment,
            last_segment: segment_count(self.plain_size) - 1,
            plain_size: self.plain_size,
            skip: self.skip,
            remaining: self.len,
        };
        futures::stream::unfold(Some(state), |state| async move {
            let mut state = state?;
            if state.remaining == 0 {
                return None;
            }
            match state.next_segment().await {
                Ok(plain) => Some((Ok(plain), Some(state))),
                // An error ends the stream: nothing after it can be trusted.
                Err(err) => Some((Err(err), None)),
            }
        })
    }
}

struct Opening<S> {
    cipher: Aes256Gcm,
    base: [u8; 12],
    stored: S,
    buffer: BytesMut,
    segment: u64,
    last_segment: u64,
    plain_size: u64,
    skip: u64,
    remaining: u64,
}

impl<S, E> Opening<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    /// Reads, opens and trims the next segment.
    async fn next_segment(&mut self) -> Result<Bytes, OpenError> {
        let last = self.segment == self.last_segment;
        let plain_len = if last {
            self.plain_size - self.segment * SEGMENT
        } else {
            SEGMENT
        };
        let sealed_len = (plain_len + TAG) as usize;
        while self.buffer.len() < sealed_len {
            match self.stored.next().await {
                Some(Ok(piece)) => self.buffer.extend_from_slice(&piece),
                Some(Err(err)) => return Err(OpenError::Read(err.to_string())),
                None => return Err(OpenError::Truncated(self.segment)),
            }
        }
        let sealed = self.buffer.split_to(sealed_len);
        let index =
            u32::try_from(self.segment).map_err(|_| OpenError::Layout("too many segments"))?;
        let nonce = nonce(&self.base, index, last);
        let payload = Payload {
            msg: &sealed,
            aad: SEGMENT_AAD,
        };
        let plain = self
            .cipher
            .decrypt(Nonce::from_slice(&nonce), payload)
            .map_err(|_| OpenError::Tampered(self.segment))?;
        let mut plain = Bytes::from(plain);
        let skip = std::mem::take(&mut self.skip) as usize;
        plain = plain.slice(skip.min(plain.len())..);
        plain.truncate(self.remaining.min(plain.len() as u64) as usize);
        self.remaining -= plain.len() as u64;
        self.segment += 1;
        if self.remaining > 0 && last {
            return Err(OpenError::Layout("range reaches past the last segment"));
        }
        Ok(plain)
    }
}

#[cfg(test)]
mod tests {
    use aes_gcm::KeyInit;
    use futures::TryStreamExt;

    use super::*;

    fn cipher() -> Aes256Gcm {
        Aes256Gcm::new_from_slice(&[7; 32]).unwrap()
    }

    const BASE: [u8; 12] = [9; 12];

    fn plaintext(len: u64) -> Vec<u8> {
        (0..len).map(|i| (i * 31 % 251) as u8).collect()
    }

    /// Seals `plain`, pushed in pieces of `piece` bytes.
    fn seal(plain: &[u8], piece: usize) -> Vec<u8> {
        let mut sealer = Sealer::new(cipher(), BASE);
        let mut out = Vec::new();
        for chunk in plain.chunks(piece.max(1)) {
            for sealed in sealer.push(chunk).unwrap() {
                out.extend_from_slice(&sealed);
            }
        }
        out.extend_from_slice(&sealer.finish().unwrap());
        out
    }

    /// Opens `range` of `stored`, fed in pieces of `piece` bytes.
    fn open(
        stored: &[u8],
        plain_size: u64,
        range: Range<u64>,
        piece: usize,
    ) -> Result<Vec<u8>, OpenError> {
        let sealed = SealedRange::new(range, plain_size);
        let bytes = stored
            .get(sealed.stored.start as usize..(sealed.stored.end as usize).min(stored.len()))
            .unwrap_or_default()
            .chunks(piece)
            .map(|c| Ok::<_, OpenError>(Bytes::copy_from_slice(c)))
            .collect::<Vec<_>>();
        let stream = sealed.open(cipher(), BASE, futures::stream::iter(bytes));
        let pieces: Result<Vec<Bytes>, OpenError> =
            futures::executor::block_on(stream.try_collect());
        pieces.map(|pieces| pieces.concat())
    }

    #[test]
    fn sealed_size_follows_the_plaintext_size() {
        for len in [
            0,
            1,
            SEGMENT - 1,
            SEGMENT,
            SEGMENT + 1,
            3 * SEGMENT,
            3 * SEGMENT + 5,
        ] {
            let plain = plaintext(len);
            let stored = seal(&plain, 1000);
            assert_eq!(stored.len() as u64, sealed_size(len), "{len}");
            if len > 0 {
                assert_eq!(open(&stored, len, 0..len, 4096).unwrap(), plain);
            }
        }
        assert_eq!(sealed_size(0), TAG);
        for len in [0, 1, SEGMENT - 1, SEGMENT, SEGMENT + 1, 5 * SEGMENT + 7] {
            assert_eq!(plain_size(sealed_size(len)), Some(len), "{len}");
        }
        for sealed in [0, TAG - 1, SEALED_SEGMENT + 1, SEALED_SEGMENT + TAG] {
            assert_eq!(plain_size(sealed), None, "{sealed}");
        }
    }

    #[test]
    fn the_stored_bytes_are_not_the_plaintext() {
        let plain = b"a marker that must not be stored as is".repeat(100);
        let stored = seal(&plain, 7);
        assert!(!stored.windows(20).any(|w| w == &plain[..20]));
    }

    #[test]
    fn ranges_at_and_across_segment_boundaries() {
        let size = 3 * SEGMENT + 100;
        let plain = plaintext(size);
        let stored = seal(&plain, 65_000);
        let s = SEGMENT;
        for range in [
            0..1,
            s - 1..s,
            s..s + 1,
            s - 1..s + 1,
            s..2 * s,
            10..3 * s + 3,
            3 * s..size,
            size - 1..size,
            0..size,
        ] {
            let expected = &plain[range.start as usize..range.end as usize];
            assert_eq!(
                open(&stored, size, range.clone(), 999).unwrap(),
                expected,
                "{range:?}"
            );
        }
        // A range within one segment reads only that segment.
        assert_eq!(
            SealedRange::new(s + 5..s + 10, size).stored,
            SEALED_SEGMENT..2 * SEALED_SEGMENT
        );
    }

    #[test]
    fn a_changed_byte_fails_to_open() {
        let plain = plaintext(2 * SEGMENT + 10);
        let mut stored = seal(&plain, 4096);
        stored[SEALED_SEGMENT as usize + 3] ^= 1;
        let size = plain.len() as u64;
        assert!(matches!(
            open(&stored, size, 0..size, 4096),
            Err(OpenError::Tampered(1))
        ));
        // The segment before it still opens.
        assert!(open(&stored, size, 0..10, 4096).is_ok());
    }

    #[test]
    fn truncation_is_detected() {
        let size = 2 * SEGMENT;
        let stored = seal(&plaintext(size), 4096);
        // Cut inside the last segment: the read runs out.
        let cut = &stored[..stored.len() - 1];
        assert!(matches!(
            open(cut, size, 0..size, 4096),
            Err(OpenError::Truncated(1))
        ));
        // Cut at a segment boundary and described as the shorter object:
        // its new last segment was sealed as "not last".
        let first = &stored[..SEALED_SEGMENT as usize];
        assert!(matches!(
            open(first, SEGMENT, 0..SEGMENT, 4096),
            Err(OpenError::Tampered(0))
        ));
    }

    #[test]
    fn segments_do_not_open_elsewhere() {
        let size = 2 * SEGMENT;
        let stored = seal(&plaintext(size), 4096);
        let (a, b) = stored.split_at(SEALED_SEGMENT as usize);
        let swapped = [b, a].concat();
        assert!(matches!(
            open(&swapped, size, 0..size, 4096),
            Err(OpenError::Tampered(0))
        ));
    }
}
