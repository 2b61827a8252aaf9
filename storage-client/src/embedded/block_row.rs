//! One block stored as a database row (the DN's small blocks in `dn.redb`,
//! small objects kept with their key in `om.redb`): the checksum window
//! (u32 BE), the CRC32 (BE) of every window, then the bytes. A read
//! verifies every window, so a flipped bit is an error, never wrong bytes.

use bytes::Bytes;

use crate::{BlockId, Result, StorageError};

/// The row holding `data`, with a CRC32 per `bytes_per_checksum` bytes.
pub(crate) fn encode(data: &[u8], bytes_per_checksum: u32) -> Vec<u8> {
    let window = bytes_per_checksum as usize;
    let mut row = Vec::with_capacity(4 + data.len().div_ceil(window) * 4 + data.len());
    row.extend_from_slice(&bytes_per_checksum.to_be_bytes());
    for piece in data.chunks(window) {
        row.extend_from_slice(&crc32fast::hash(piece).to_be_bytes());
    }
    row.extend_from_slice(data);
    row
}

/// A row's data length, from its layout.
pub(crate) fn stored_len(row: &[u8]) -> u64 {
    let window = row
        .get(..4)
        .map_or(0, |w| u32::from_be_bytes([w[0], w[1], w[2], w[3]]) as usize);
    let body = row.len().saturating_sub(4);
    if window == 0 {
        return body as u64;
    }
    // body = 4 * ceil(len / window) + len: the largest len that fits.
    let windows = body.div_ceil(window + 4);
    body.saturating_sub(4 * windows) as u64
}

pub(crate) fn decode(block: BlockId, row: &[u8], length: u64) -> Result<Bytes> {
    let corrupt = |what: &str| {
        StorageError::Corrupt(format!(
            "small block {}/{}: {what}",
            block.container, block.local
        ))
    };
    let window = row
        .get(..4)
        .map(|w| u32::from_be_bytes([w[0], w[1], w[2], w[3]]) as usize)
        .ok_or_else(|| corrupt("row too short"))?;
    if window == 0 {
        return Err(corrupt("checksum window is zero"));
    }
    let length = usize::try_from(length).map_err(|_| corrupt("length too large"))?;
    let windows = length.div_ceil(window);
    let data_start = 4 + 4 * windows;
    if row.len() != data_start + length {
        return Err(corrupt("row does not match the block's committed length"));
    }
    let (sums, data) = row[4..].split_at(4 * windows);
    for (i, (piece, sum)) in data.chunks(window).zip(sums.chunks_exact(4)).enumerate() {
        if crc32fast::hash(piece).to_be_bytes() != sum {
            return Err(corrupt(&format!("window {i} failed its checksum")));
        }
    }
    Ok(Bytes::copy_from_slice(data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_len_inverts_the_layout() {
        for window in [1u32, 7, 512, 16 * 1024] {
            for len in [0usize, 1, 6, 7, 8, 511, 512, 513, 1000, 16 * 1024 + 3] {
                let row = encode(&vec![5u8; len], window);
                assert_eq!(stored_len(&row), len as u64, "window {window}, len {len}");
            }
        }
    }

    #[test]
    fn a_flipped_bit_is_corrupt_never_wrong_bytes() {
        let block = BlockId {
            container: 1,
            local: 2,
        };
        let data: Vec<u8> = (0..3000u32).map(|i| i as u8).collect();
        let mut row = encode(&data, 1024);
        assert_eq!(decode(block, &row, 3000).unwrap(), data);
        let last = row.len() - 1;
        row[last] ^= 1;
        assert!(matches!(
            decode(block, &row, 3000),
            Err(StorageError::Corrupt(_))
        ));
        assert!(matches!(
            decode(block, &row, 2999),
            Err(StorageError::Corrupt(_))
        ));
    }
}
