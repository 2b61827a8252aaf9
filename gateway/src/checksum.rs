//! Streaming digests for uploads: MD5 always (it is the ETag), plus at most
//! one of the S3 additional checksums, each reported as S3 does (base64 of
//! the big-endian digest).

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use md5::{Digest, Md5};
use sha1::Sha1;
use sha2::Sha256;
use storage_client::{ChecksumType, ObjectChecksum};

pub use storage_client::ChecksumAlgorithm;

/// What HTTP adds to a [`ChecksumAlgorithm`]: its header, and the digest
/// that header carries.
pub trait AlgorithmHeader: Copy {
    /// Recognises `x-amz-checksum-<alg>` header names.
    fn from_header_name(header: &str) -> Option<Self>;
    fn header_name(self) -> &'static str;
    /// Length in bytes of the raw digest, used to reject malformed values.
    fn digest_len(self) -> usize;
    /// Whether `value` is base64 of a digest of the right length.
    fn is_well_formed(self, value: &str) -> bool;
    /// One-shot digest, base64 encoded.
    fn digest(self, data: &[u8]) -> String;
}

impl AlgorithmHeader for ChecksumAlgorithm {
    fn from_header_name(header: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|alg| alg.header_name().eq_ignore_ascii_case(header))
    }

    fn header_name(self) -> &'static str {
        match self {
            Self::Crc32 => "x-amz-checksum-crc32",
            Self::Crc32c => "x-amz-checksum-crc32c",
            Self::Crc64Nvme => "x-amz-checksum-crc64nvme",
            Self::Sha1 => "x-amz-checksum-sha1",
            Self::Sha256 => "x-amz-checksum-sha256",
        }
    }

    fn digest_len(self) -> usize {
        match self {
            Self::Crc32 | Self::Crc32c => 4,
            Self::Crc64Nvme => 8,
            Self::Sha1 => 20,
            Self::Sha256 => 32,
        }
    }

    fn is_well_formed(self, value: &str) -> bool {
        BASE64
            .decode(value.trim())
            .is_ok_and(|raw| raw.len() == self.digest_len())
    }

    fn digest(self, data: &[u8]) -> String {
        let mut state = State::new(self);
        state.update(data);
        state.finish()
    }
}

/// The running state of one additional checksum.
enum State {
    Crc32(crc32fast::Hasher),
    Crc32c(u32),
    Crc64Nvme(crc64fast_nvme::Digest),
    Sha1(Sha1),
    Sha256(Sha256),
}

impl State {
    fn new(alg: ChecksumAlgorithm) -> Self {
        match alg {
            ChecksumAlgorithm::Crc32 => Self::Crc32(crc32fast::Hasher::new()),
            ChecksumAlgorithm::Crc32c => Self::Crc32c(0),
            ChecksumAlgorithm::Crc64Nvme => Self::Crc64Nvme(crc64fast_nvme::Digest::new()),
            ChecksumAlgorithm::Sha1 => Self::Sha1(Sha1::new()),
            ChecksumAlgorithm::Sha256 => Self::Sha256(Sha256::new()),
        }
    }

    fn update(&mut self, data: &[u8]) {
        match self {
            Self::Crc32(h) => h.update(data),
            Self::Crc32c(crc) => *crc = crc32c::crc32c_append(*crc, data),
            Self::Crc64Nvme(h) => h.write(data),
            Self::Sha1(h) => h.update(data),
            Self::Sha256(h) => h.update(data),
        }
    }

    fn finish(self) -> String {
        match self {
            Self::Crc32(h) => BASE64.encode(h.finalize().to_be_bytes()),
            Self::Crc32c(crc) => BASE64.encode(crc.to_be_bytes()),
            Self::Crc64Nvme(h) => BASE64.encode(h.sum64().to_be_bytes()),
            Self::Sha1(h) => BASE64.encode(h.finalize()),
            Self::Sha256(h) => BASE64.encode(h.finalize()),
        }
    }
}

/// MD5 plus an optional additional checksum, fed once per body chunk.
pub struct Checksummer {
    md5: Md5,
    extra: Option<(ChecksumAlgorithm, State)>,
}

/// What a [`Checksummer`] computed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Digests {
    pub md5: [u8; 16],
    /// The additional checksum, base64 encoded.
    pub checksum: Option<(ChecksumAlgorithm, String)>,
}

impl Checksummer {
    pub fn new(extra: Option<ChecksumAlgorithm>) -> Self {
        Self {
            md5: Md5::new(),
            extra: extra.map(|alg| (alg, State::new(alg))),
        }
    }

    pub fn update(&mut self, data: &[u8]) {
        self.md5.update(data);
        if let Some((_, state)) = &mut self.extra {
            state.update(data);
        }
    }

    pub fn finish(self) -> Digests {
        Digests {
            md5: self.md5.finalize().into(),
            checksum: self.extra.map(|(alg, state)| (alg, state.finish())),
        }
    }
}

impl Digests {
    /// The S3 ETag (hex MD5) without quotes.
    pub fn etag(&self) -> String {
        hex::encode(self.md5)
    }

    /// The additional checksum as stored: computed over all the bytes
    /// written, so it describes the whole object (or part).
    pub fn stored_checksum(&self) -> Option<ObjectChecksum> {
        self.checksum.as_ref().map(|(alg, value)| ObjectChecksum {
            algorithm: *alg,
            value: value.clone(),
            kind: ChecksumType::FullObject,
        })
    }
}

/// Decodes a `Content-MD5` header value; `None` if it is not base64 of 16 bytes.
pub fn decode_content_md5(value: &str) -> Option<[u8; 16]> {
    BASE64.decode(value.trim()).ok()?.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHECK: &[u8] = b"123456789";

    fn raw(alg: ChecksumAlgorithm, data: &[u8]) -> Vec<u8> {
        BASE64.decode(alg.digest(data)).expect("base64 output")
    }

    #[test]
    fn crc_check_values_match_their_catalogues() {
        assert_eq!(
            raw(ChecksumAlgorithm::Crc32, CHECK),
            0xCBF4_3926u32.to_be_bytes()
        );
        assert_eq!(
            raw(ChecksumAlgorithm::Crc32c, CHECK),
            0xE306_9283u32.to_be_bytes()
        );
        assert_eq!(
            raw(ChecksumAlgorithm::Crc64Nvme, CHECK),
            0xAE8B_1486_0A79_9888u64.to_be_bytes()
        );
    }

    #[test]
    fn sha_values_match_known_digests() {
        assert_eq!(
            hex::encode(raw(ChecksumAlgorithm::Sha1, b"abc")),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert_eq!(
            hex::encode(raw(ChecksumAlgorithm::Sha256, b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn s3_documented_empty_body_checksums() {
        // Values S3 returns for a zero-byte object.
        assert_eq!(ChecksumAlgorithm::Crc32.digest(b""), "AAAAAA==");
        assert_eq!(ChecksumAlgorithm::Crc64Nvme.digest(b""), "AAAAAAAAAAA=");
        assert_eq!(
            ChecksumAlgorithm::Sha256.digest(b""),
            "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
        );
    }

    #[test]
    fn streaming_equals_one_shot_for_every_algorithm() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        for alg in ChecksumAlgorithm::ALL {
            let mut summer = Checksummer::new(Some(alg));
            for piece in data.chunks(333) {
                summer.update(piece);
            }
            let digests = summer.finish();
            assert_eq!(digests.checksum, Some((alg, alg.digest(&data))), "{alg:?}");
        }
    }

    #[test]
    fn md5_gives_etag_and_content_md5_forms() {
        let mut summer = Checksummer::new(None);
        summer.update(b"hello ");
        summer.update(b"world");
        let digests = summer.finish();
        assert_eq!(digests.etag(), "5eb63bbbe01eeed093cb22bb8f5acdc3");
        assert_eq!(BASE64.encode(digests.md5), "XrY7u+Ae7tCTyyK7j1rNww==");
        assert_eq!(digests.checksum, None);
        assert_eq!(
            decode_content_md5("XrY7u+Ae7tCTyyK7j1rNww=="),
            Some(digests.md5)
        );
    }

    #[test]
    fn malformed_digests_are_recognised() {
        assert_eq!(decode_content_md5("not base64!"), None);
        assert_eq!(decode_content_md5("AAAA"), None);
        assert!(ChecksumAlgorithm::Crc32.is_well_formed("yZRlqg=="));
        assert!(!ChecksumAlgorithm::Crc32.is_well_formed("AAAAAAAAAAA="));
        assert!(!ChecksumAlgorithm::Sha1.is_well_formed("%%%"));
    }

    #[test]
    fn names_parse_case_insensitively() {
        assert_eq!(
            ChecksumAlgorithm::from_name("CRC64NVME"),
            Some(ChecksumAlgorithm::Crc64Nvme)
        );
        assert_eq!(
            ChecksumAlgorithm::from_header_name("X-Amz-Checksum-Sha256"),
            Some(ChecksumAlgorithm::Sha256)
        );
        assert_eq!(ChecksumAlgorithm::from_name("md5"), None);
    }
}
