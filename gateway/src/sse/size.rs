//! The size an object shows where it is described without being opened:
//! ListObjects, ListObjectsV2, ListObjectVersions and lifecycle size
//! filters. An encrypted object is stored larger than its plaintext (see
//! [`super::segments`] and [`super::multipart`]); its plaintext size
//! follows from what a listing already carries of it, its record and its
//! parts' stored sizes, the way a read finds it (`ops::sse::read`), so a
//! listing reads nothing more per object.

use storage_client::ObjectMeta;

use super::multipart;
use super::record::Stored;
use super::segments::sealed_size;

/// The size clients see of an object stored as `stored_size` bytes with
/// `meta` and, if it is multipart, parts stored as `part_sizes` (in object
/// order): an encrypted object's plaintext size (its record's, for one
/// written in one piece; the sum of its parts' plaintext sizes, for one
/// written part by part), the stored size for any other.
///
/// An encrypted object whose record cannot be read, or does not match its
/// stored size, is given its stored size: it is still listed, and a read
/// of it reports the damage.
pub fn client_size(meta: &ObjectMeta, stored_size: u64, part_sizes: &[u64]) -> u64 {
    plain_size(meta, stored_size, part_sizes).unwrap_or(stored_size)
}

/// The plaintext size of an encrypted object, `None` for an unencrypted
/// one or one whose record and sizes do not agree.
fn plain_size(meta: &ObjectMeta, stored_size: u64, part_sizes: &[u64]) -> Option<u64> {
    match Stored::of(meta).ok()?? {
        Stored::Object(record) => {
            (sealed_size(record.plain_size) == stored_size).then_some(record.plain_size)
        }
        Stored::Multipart(_) => {
            let stored = part_sizes
                .iter()
                .try_fold(0u64, |sum, &part| sum.checked_add(part))?;
            if part_sizes.is_empty() || stored != stored_size {
                return None;
            }
            part_sizes.iter().try_fold(0u64, |sum, &part| {
                sum.checked_add(multipart::plain_size(part)?)
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sse::multipart::stored_size;
    use crate::sse::record::{ENTRY, Record, UploadRecord, Wrapping};
    use crate::sse::segments::SEGMENT;

    fn wrapping() -> Wrapping {
        Wrapping::Master {
            key_id: "k1".into(),
        }
    }

    fn single(plain: u64) -> ObjectMeta {
        let mut meta = ObjectMeta::default();
        Record {
            plain_size: plain,
            wrapping: wrapping(),
            sealed_key: "c2VhbGVk".into(),
        }
        .store(&mut meta);
        meta
    }

    fn multipart() -> ObjectMeta {
        let mut meta = ObjectMeta::default();
        UploadRecord {
            wrapping: wrapping(),
            sealed_key: "c2VhbGVk".into(),
        }
        .store(&mut meta);
        meta
    }

    #[test]
    fn an_unencrypted_object_shows_its_stored_size() {
        let mut meta = ObjectMeta::default();
        meta.user.insert("color".into(), "blue".into());
        assert_eq!(client_size(&meta, 70_000, &[]), 70_000);
        assert_eq!(client_size(&meta, 10, &[4, 6]), 10);
    }

    #[test]
    fn an_object_written_in_one_piece_shows_its_recorded_plaintext_size() {
        for plain in [0, 1, SEGMENT - 1, SEGMENT, SEGMENT + 1, 5 << 20] {
            assert_eq!(client_size(&single(plain), sealed_size(plain), &[]), plain);
        }
        // A record that does not match the stored bytes: the stored size.
        assert_eq!(client_size(&single(5), 5, &[]), 5);
    }

    #[test]
    fn a_multipart_object_shows_the_sum_of_its_parts_plaintext() {
        let plain = [5 << 20, SEGMENT + 3, 1];
        let parts: Vec<u64> = plain.iter().map(|&p| stored_size(p)).collect();
        let stored = parts.iter().sum();
        assert_eq!(
            client_size(&multipart(), stored, &parts),
            plain.iter().sum::<u64>()
        );
        // Damage: no parts, parts that do not add up, a size no part
        // seals to, sizes that overflow: the stored size.
        assert_eq!(client_size(&multipart(), stored, &[]), stored);
        assert_eq!(client_size(&multipart(), stored + 1, &parts), stored + 1);
        assert_eq!(client_size(&multipart(), 3, &[1, 2]), 3);
        assert_eq!(client_size(&multipart(), 7, &[u64::MAX, 8]), 7);
    }

    #[test]
    fn an_unreadable_record_shows_the_stored_size() {
        let mut meta = ObjectMeta::default();
        meta.user.insert(ENTRY.into(), "v9 something".into());
        assert_eq!(client_size(&meta, 100, &[]), 100);
    }
}
