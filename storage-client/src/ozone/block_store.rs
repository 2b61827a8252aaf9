//! The block role on Ozone datanodes: chunks are written through the
//! block's Raft group ([`RatisClient`]), a block is sealed
//! ([`RatisClient::seal`]) and its commit sequence id handed back for
//! CommitKey, and reads go
//! to the datanodes' gRPC service ([`DnClient`]), checksums verified.

use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;

use crate::blocks::{BlockStore, ByteStream};
use crate::{BlockId, BlockLocation, Result, StorageError};

use super::checksum;
use super::dn_client::DnClient;
use super::object_mapping::block_from_location;
use super::proto::hadoop::hdds::datanode::ChunkInfo;
use super::ratis_client::RatisClient;

/// The chunks written to one block so far, in order.
type ChunkList = Arc<Mutex<Vec<ChunkInfo>>>;

pub(crate) struct OzoneBlocks {
    reader: DnClient,
    writer: RatisClient,
    bytes_per_checksum: u32,
    /// Chunks of blocks not sealed yet: PutBlock must list every chunk of
    /// the block. Lists of abandoned uploads expire.
    unsealed: moka::future::Cache<BlockId, ChunkList>,
}

impl OzoneBlocks {
    /// `abandon_after`: how long an unsealed block's chunk list is kept
    /// without a write.
    pub(crate) fn new(
        reader: DnClient,
        writer: RatisClient,
        bytes_per_checksum: u32,
        abandon_after: Duration,
    ) -> Self {
        Self {
            reader,
            writer,
            bytes_per_checksum,
            unsealed: moka::future::Cache::builder()
                .time_to_idle(abandon_after)
                .build(),
        }
    }
}

fn poisoned() -> StorageError {
    StorageError::Internal("a block's chunk list lock was poisoned".into())
}

#[async_trait]
impl BlockStore for OzoneBlocks {
    async fn write_chunk(&self, block: &BlockLocation, offset: u64, data: Bytes) -> Result<()> {
        let chunks = self
            .unsealed
            .get_with(block.block, async { ChunkList::default() })
            .await;
        let number = chunks.lock().map_err(|_| poisoned())?.len() + 1;
        let chunk = checksum::new_chunk(
            block.block.local,
            number,
            offset,
            &data,
            self.bytes_per_checksum,
        );
        self.writer
            .write_chunk(&block_from_location(block, None), chunk.clone(), data)
            .await?;
        chunks.lock().map_err(|_| poisoned())?.push(chunk);
        Ok(())
    }

    async fn put_block(&self, block: &BlockLocation, length: u64) -> Result<u64> {
        let chunks = match self.unsealed.remove(&block.block).await {
            Some(list) => std::mem::take(&mut *list.lock().map_err(|_| poisoned())?),
            None => Vec::new(),
        };
        let written: u64 = chunks.iter().map(|c| c.len).sum();
        if written != length {
            return Err(StorageError::Internal(format!(
                "block {:?}: sealing at {length} bytes but {written} were written",
                block.block
            )));
        }
        self.writer
            .seal(&block_from_location(block, None), chunks, length)
            .await
    }

    async fn put_small_block(&self, block: &BlockLocation, data: Bytes) -> Result<u64> {
        let length = data.len() as u64;
        self.write_chunk(block, 0, data).await?;
        self.put_block(block, length).await
    }

    async fn read(&self, block: &BlockLocation, range: Range<u64>) -> Result<ByteStream> {
        self.reader
            .read(&block_from_location(block, None), range)
            .await
    }
}
