//! The whole-object checksum of a multipart object, from the part
//! checksums alone: COMPOSITE is the checksum of the concatenated binary
//! part checksums with a `-N` suffix; FULL_OBJECT is the CRC of the whole
//! object, combined from the part CRCs and lengths.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;

use super::crc_combine::Crc;
use storage_client::ChecksumType;

use crate::checksum::{AlgorithmHeader, ChecksumAlgorithm};

/// AWS's default type for `alg`: CRC64NVME exists only as a full-object checksum.
pub fn default_type(alg: ChecksumAlgorithm) -> ChecksumType {
    match alg {
        ChecksumAlgorithm::Crc64Nvme => ChecksumType::FullObject,
        _ => ChecksumType::Composite,
    }
}

/// Whether `kind` works with `alg`: SHA digests cannot be combined, and
/// CRC64NVME is never composite.
pub fn supports(kind: ChecksumType, alg: ChecksumAlgorithm) -> bool {
    match kind {
        ChecksumType::Composite => alg != ChecksumAlgorithm::Crc64Nvme,
        ChecksumType::FullObject => Crc::for_algorithm(alg).is_some(),
    }
}

/// The object checksum from `(part size, base64 part checksum)` in part
/// order; `None` if a part value is not a digest of `alg` or the type
/// does not support the algorithm.
pub fn combine(
    alg: ChecksumAlgorithm,
    kind: ChecksumType,
    parts: &[(u64, &str)],
) -> Option<String> {
    let mut raw_parts = Vec::with_capacity(parts.len());
    for (size, value) in parts {
        let raw = BASE64.decode(value).ok()?;
        if raw.len() != alg.digest_len() {
            return None;
        }
        raw_parts.push((*size, raw));
    }
    match kind {
        ChecksumType::Composite if supports(kind, alg) => {
            let joined: Vec<u8> = raw_parts.into_iter().flat_map(|(_, raw)| raw).collect();
            Some(format!("{}-{}", alg.digest(&joined), parts.len()))
        }
        ChecksumType::Composite => None,
        ChecksumType::FullObject => {
            let crc = Crc::for_algorithm(alg)?;
            let mut whole = 0;
            for (size, raw) in raw_parts {
                whole = crc.combine(whole, crc.decode(&raw)?, size);
            }
            Some(BASE64.encode(crc.encode(whole)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_object_crc_equals_the_crc_of_all_parts() {
        let parts: [&[u8]; 3] = [b"hello ", b"multipart ", b"world"];
        for alg in [
            ChecksumAlgorithm::Crc32,
            ChecksumAlgorithm::Crc32c,
            ChecksumAlgorithm::Crc64Nvme,
        ] {
            let values: Vec<String> = parts.iter().map(|p| alg.digest(p)).collect();
            let sized: Vec<(u64, &str)> = parts
                .iter()
                .zip(&values)
                .map(|(p, v)| (p.len() as u64, v.as_str()))
                .collect();
            assert_eq!(
                combine(alg, ChecksumType::FullObject, &sized),
                Some(alg.digest(&parts.concat())),
                "{alg:?}"
            );
        }
    }

    #[test]
    fn composite_is_the_checksum_of_the_part_checksums() {
        let one = ChecksumAlgorithm::Sha256.digest(b"one");
        let two = ChecksumAlgorithm::Sha256.digest(b"two");
        let joined = [BASE64.decode(&one).unwrap(), BASE64.decode(&two).unwrap()].concat();
        assert_eq!(
            combine(
                ChecksumAlgorithm::Sha256,
                ChecksumType::Composite,
                &[(3, &one), (3, &two)]
            ),
            Some(format!("{}-2", ChecksumAlgorithm::Sha256.digest(&joined)))
        );
    }

    #[test]
    fn impossible_combinations_give_nothing() {
        let crc = ChecksumAlgorithm::Crc64Nvme.digest(b"x");
        assert_eq!(
            combine(
                ChecksumAlgorithm::Crc64Nvme,
                ChecksumType::Composite,
                &[(1, &crc)]
            ),
            None
        );
        let sha = ChecksumAlgorithm::Sha1.digest(b"x");
        assert_eq!(
            combine(
                ChecksumAlgorithm::Sha1,
                ChecksumType::FullObject,
                &[(1, &sha)]
            ),
            None
        );
        assert_eq!(
            combine(
                ChecksumAlgorithm::Crc32,
                ChecksumType::FullObject,
                &[(1, &sha)]
            ),
            None
        );
    }
}
