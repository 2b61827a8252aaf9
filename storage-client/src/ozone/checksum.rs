//! Chunk checksums as Ozone keeps them: one checksum per window of
//! `bytes_per_checksum` bytes, computed by the writer (here when we write
//! a chunk) and verified by the reader.

use bytes::Bytes;
use md5::Md5;
use sha2::{Digest, Sha256};

use crate::{Result, StorageError};

use super::proto::hadoop::hdds::datanode::{ChecksumData, ChecksumType, ChunkInfo};

/// One window's running checksum, in the algorithm the writer chose.
enum Hasher {
    Crc32(crc32fast::Hasher),
    Crc32c(u32),
    Sha256(Sha256),
    Md5(Md5),
}

impl Hasher {
    fn new(kind: ChecksumType) -> Option<Self> {
        match kind {
            ChecksumType::Crc32 => Some(Self::Crc32(crc32fast::Hasher::new())),
            ChecksumType::Crc32c => Some(Self::Crc32c(0)),
            ChecksumType::Sha256 => Some(Self::Sha256(Sha256::new())),
            ChecksumType::Md5 => Some(Self::Md5(Md5::new())),
            ChecksumType::None | ChecksumType::Unspecified => None,
        }
    }

    fn update(&mut self, data: &[u8]) {
        match self {
            Self::Crc32(h) => h.update(data),
            Self::Crc32c(crc) => *crc = crc32c::crc32c_append(*crc, data),
            Self::Sha256(h) => h.update(data),
            Self::Md5(h) => h.update(data),
        }
    }

    /// The checksum as Ozone stores it: CRCs as 4 big-endian bytes.
    fn finish(self) -> Vec<u8> {
        match self {
            Self::Crc32(h) => h.finalize().to_be_bytes().to_vec(),
            Self::Crc32c(crc) => crc.to_be_bytes().to_vec(),
            Self::Sha256(h) => h.finalize().to_vec(),
            Self::Md5(h) => h.finalize().to_vec(),
        }
    }
}

/// The CRC32 of every `window`-byte slice of `data` (the last may be
/// shorter), as Ozone's writers store them with a chunk.
pub(super) fn crc32_windows(data: &[u8], window: u32) -> ChecksumData {
    // A zero window would never advance; one checksum over all is the
    // closest meaning.
    let step = (window as usize).max(1);
    ChecksumData {
        r#type: ChecksumType::Crc32 as i32,
        bytes_per_checksum: window.max(1),
        checksums: data
            .chunks(step)
            .map(|w| Bytes::copy_from_slice(&crc32fast::hash(w).to_be_bytes()))
            .collect(),
    }
}

/// The description of chunk `number` (from 1) of block `local`, holding
/// `data` at `offset`, as WriteChunk and PutBlock carry it.
pub(super) fn new_chunk(
    local: u64,
    number: usize,
    offset: u64,
    data: &[u8],
    bytes_per_checksum: u32,
) -> ChunkInfo {
    ChunkInfo {
        // Ozone's names: `<localID>_chunk_<n>`.
        chunk_name: format!("{local}_chunk_{number}"),
        offset,
        len: data.len() as u64,
        metadata: Vec::new(),
        checksum_data: crc32_windows(data, bytes_per_checksum),
    }
}

/// Checks `data`, which starts at window `first_window` of the chunk and
/// covers whole windows (the last may be the chunk's short tail).
pub(super) fn verify(checksums: &ChecksumData, first_window: usize, data: &[Bytes]) -> Result<()> {
    let kind = checksums.r#type();
    let window = checksums.bytes_per_checksum as usize;
    if Hasher::new(kind).is_none() {
        return Ok(());
    }
    if window == 0 {
        return Err(StorageError::Corrupt(
            "chunk checksum window of 0 bytes".into(),
        ));
    }
    let mut index = first_window;
    let mut hasher = Hasher::new(kind);
    let mut filled = 0;
    let check = |hasher: Option<Hasher>, index: usize| -> Result<()> {
        let actual = hasher.map(Hasher::finish).unwrap_or_default();
        match checksums.checksums.get(index) {
            Some(expected) if expected[..] == actual[..] => Ok(()),
            Some(_) => Err(StorageError::Corrupt(format!(
                "checksum mismatch in window {index} ({kind:?}, {window} bytes per checksum)"
            ))),
            None => Err(StorageError::Corrupt(format!(
                "no stored checksum for window {index}"
            ))),
        }
    };
    for buffer in data {
        let mut rest = &buffer[..];
        while !rest.is_empty() {
            let take = rest.len().min(window - filled);
            if let Some(h) = hasher.as_mut() {
                h.update(&rest[..take]);
            }
            filled += take;
            rest = &rest[take..];
            if filled == window {
                check(hasher.take(), index)?;
                hasher = Hasher::new(kind);
                index += 1;
                filled = 0;
            }
        }
    }
    if filled > 0 {
        check(hasher, index)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_chunk_is_named_placed_and_checksummed_as_ozone_does() {
        let data = [7u8; 10];
        let chunk = new_chunk(111, 2, 4096, &data, 4);
        assert_eq!(chunk.chunk_name, "111_chunk_2");
        assert_eq!((chunk.offset, chunk.len), (4096, 10));
        assert_eq!(chunk.checksum_data.checksums.len(), 3);
        verify(&chunk.checksum_data, 0, &[Bytes::copy_from_slice(&data)]).unwrap();
    }

    #[test]
    fn computed_windows_verify_and_stay_big_endian() {
        let data: Vec<u8> = (0..40u8).collect();
        let sums = crc32_windows(&data, 16);
        assert_eq!(sums.checksums.len(), 3);
        assert_eq!(
            sums.checksums[2][..],
            crc32fast::hash(&data[32..]).to_be_bytes()
        );
        verify(&sums, 0, &[Bytes::from(data)]).unwrap();
    }

    #[test]
    fn accepts_windows_split_across_buffers() {
        let data: Vec<u8> = (0..100u8).collect();
        let sums = crc32_windows(&data, 16);
        let buffers = [
            Bytes::copy_from_slice(&data[..5]),
            Bytes::copy_from_slice(&data[5..40]),
            Bytes::copy_from_slice(&data[40..]),
        ];
        verify(&sums, 0, &buffers).unwrap();
    }

    #[test]
    fn checks_from_a_later_window() {
        let data: Vec<u8> = (0..100u8).collect();
        let sums = crc32_windows(&data, 16);
        verify(&sums, 2, &[Bytes::copy_from_slice(&data[32..])]).unwrap();
    }

    #[test]
    fn refuses_a_flipped_bit() {
        let mut data: Vec<u8> = (0..100u8).collect();
        let sums = crc32_windows(&data, 16);
        data[50] ^= 1;
        let result = verify(&sums, 0, &[Bytes::from(data)]);
        assert!(
            matches!(&result, Err(StorageError::Corrupt(m)) if m.contains("window 3")),
            "{result:?}"
        );
    }

    #[test]
    fn refuses_data_beyond_the_stored_checksums() {
        let data: Vec<u8> = (0..100u8).collect();
        let sums = crc32_windows(&data[..64], 16);
        let result = verify(&sums, 0, &[Bytes::from(data)]);
        assert!(
            matches!(result, Err(StorageError::Corrupt(_))),
            "{result:?}"
        );
    }

    #[test]
    fn verifies_crc32c() {
        let data = b"hello, ozone".to_vec();
        let sums = ChecksumData {
            r#type: ChecksumType::Crc32c as i32,
            bytes_per_checksum: 1024,
            checksums: vec![Bytes::copy_from_slice(&crc32c::crc32c(&data).to_be_bytes())],
        };
        verify(&sums, 0, &[Bytes::from(data)]).unwrap();
    }

    #[test]
    fn skips_unchecksummed_chunks() {
        let sums = ChecksumData {
            r#type: ChecksumType::None as i32,
            bytes_per_checksum: 0,
            checksums: Vec::new(),
        };
        verify(&sums, 0, &[Bytes::from_static(b"anything")]).unwrap();
    }
}
