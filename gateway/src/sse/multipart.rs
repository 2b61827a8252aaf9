//! A multipart upload encrypted part by part. CreateMultipartUpload makes
//! a random upload key (an [`ObjectKey`]) and records it sealed under the
//! customer's key or a master key (`super::record::UploadRecord`), in the
//! upload's metadata, which becomes the object's. Each part is then its
//! own segmented stream (`super::segments`): stored as a random salt of
//! [`SALT`] bytes followed by its segments, sealed under a key derived
//! from the upload key, the part number and the salt
//! (`ObjectKey::for_part`). So:
//!
//! - a part re-uploaded under the same number gets a fresh key (no nonce
//!   is ever reused);
//! - a part moved to another number, another upload or another object,
//!   or parts swapped or reordered, fail to open: the reader derives each
//!   part's key from the number the object's part list gives it, in
//!   object order, and the upload key of the object's own record;
//! - a part cut short (even at a segment boundary) fails to open, as any
//!   segmented stream does: its last segment is sealed as last.
//!
//! A part's stored size is [`stored_size`] of its plaintext, and back
//! ([`plain_size`]), so the object's plaintext layout follows from its
//! stored part sizes, which both back ends keep.

use rand::RngCore;

use super::segments::{self, sealed_size};

pub use super::object_key::ObjectKey;

/// The random salt at the start of each stored part.
pub const SALT: u64 = 16;

/// A fresh salt for one upload of one part.
pub fn new_salt() -> [u8; SALT as usize] {
    let mut salt = [0u8; SALT as usize];
    rand::rng().fill_bytes(&mut salt);
    salt
}

/// The stored size of a part of `plain` bytes.
pub fn stored_size(plain: u64) -> u64 {
    SALT + sealed_size(plain)
}

/// The plaintext size of a stored part of `stored` bytes; `None` when no
/// part is stored at that size (the part is damaged).
pub fn plain_size(stored: u64) -> Option<u64> {
    segments::plain_size(stored.checked_sub(SALT)?)
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use futures::TryStreamExt;

    use super::*;
    use crate::sse::segments::{OpenError, SealedRange, Sealer};

    fn plaintext(len: usize, seed: u8) -> Vec<u8> {
        (0..len)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect()
    }

    /// Part `number` of the upload as stored: salt, then segments.
    fn seal_part(upload: &ObjectKey, number: u16, plain: &[u8]) -> Vec<u8> {
        let salt = new_salt();
        let key = upload.for_part(number, &salt);
        let mut sealer = Sealer::new(key.cipher(), key.base);
        let mut out = salt.to_vec();
        for chunk in plain.chunks(10_000) {
            for sealed in sealer.push(chunk).unwrap() {
                out.extend_from_slice(&sealed);
            }
        }
        out.extend_from_slice(&sealer.finish().unwrap());
        out
    }

    /// Opens a stored part as part `number` of the upload, as a read does.
    fn open_part(upload: &ObjectKey, number: u16, stored: &[u8]) -> Result<Vec<u8>, OpenError> {
        let plain = plain_size(stored.len() as u64).ok_or(OpenError::Layout("size"))?;
        let (salt, sealed) = stored.split_at(SALT as usize);
        let key = upload.for_part(number, salt);
        if plain == 0 {
            return Ok(Vec::new());
        }
        let range = SealedRange::new(0..plain, plain);
        let bytes = vec![Ok::<_, OpenError>(Bytes::copy_from_slice(sealed))];
        let stream = range.open(key.cipher(), key.base, futures::stream::iter(bytes));
        futures::executor::block_on(stream.try_collect::<Vec<Bytes>>()).map(|p| p.concat())
    }

    #[test]
    fn a_part_opens_as_its_number_of_its_upload_only() {
        let upload = ObjectKey::random();
        let plain = plaintext(3 * segments::SEGMENT as usize + 5, 1);
        let stored = seal_part(&upload, 2, &plain);
        assert_eq!(stored.len() as u64, stored_size(plain.len() as u64));
        assert_eq!(open_part(&upload, 2, &stored).unwrap(), plain);
        // Renumbered (moved, or two parts swapped): fails.
        assert!(open_part(&upload, 1, &stored).is_err());
        assert!(open_part(&upload, 3, &stored).is_err());
        // Another upload's part, even of the same number: fails.
        assert!(open_part(&ObjectKey::random(), 2, &stored).is_err());
    }

    #[test]
    fn parts_swapped_or_reordered_fail() {
        let upload = ObjectKey::random();
        let one = seal_part(&upload, 1, &plaintext(1000, 1));
        let two = seal_part(&upload, 2, &plaintext(1000, 2));
        // Object order gives part 1 the first place: the other's bytes fail.
        assert!(open_part(&upload, 1, &two).is_err());
        assert!(open_part(&upload, 2, &one).is_err());
        assert!(open_part(&upload, 1, &one).is_ok());
    }

    #[test]
    fn a_part_uploaded_again_gets_a_fresh_key() {
        let upload = ObjectKey::random();
        let plain = plaintext(2000, 3);
        let first = seal_part(&upload, 1, &plain);
        let again = seal_part(&upload, 1, &plain);
        assert_ne!(first[..SALT as usize], again[..SALT as usize]);
        assert_ne!(first[SALT as usize..], again[SALT as usize..]);
        assert_eq!(open_part(&upload, 1, &again).unwrap(), plain);
    }

    #[test]
    fn tampered_or_truncated_parts_fail() {
        let upload = ObjectKey::random();
        let plain = plaintext(2 * segments::SEGMENT as usize, 4);
        let stored = seal_part(&upload, 1, &plain);
        // A changed byte in a segment, or in the salt.
        for at in [SALT as usize + 10, stored.len() - 1, 3] {
            let mut changed = stored.clone();
            changed[at] ^= 1;
            assert!(open_part(&upload, 1, &changed).is_err(), "byte {at}");
        }
        // Cut at the segment boundary: a valid size, but its new last
        // segment was sealed as not last.
        let cut = &stored[..(SALT + segments::SEGMENT + segments::TAG) as usize];
        assert_eq!(plain_size(cut.len() as u64), Some(segments::SEGMENT));
        assert!(matches!(
            open_part(&upload, 1, cut),
            Err(OpenError::Tampered(0))
        ));
        // Cut by a byte: its last segment no longer authenticates.
        assert!(open_part(&upload, 1, &stored[..stored.len() - 1]).is_err());
        // Sizes no part can have.
        assert_eq!(plain_size(SALT - 1), None);
        assert_eq!(
            plain_size(SALT + segments::SEGMENT + 2 * segments::TAG),
            None
        );
    }

    #[test]
    fn sizes_round_trip() {
        for plain in [
            0,
            1,
            segments::SEGMENT,
            5 * 1024 * 1024,
            5 * 1024 * 1024 + 3,
        ] {
            assert_eq!(plain_size(stored_size(plain)), Some(plain), "{plain}");
        }
    }
}
