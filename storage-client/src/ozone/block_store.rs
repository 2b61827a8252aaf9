//! The block role on Ozone datanodes: chunks are written through the
//! block's Raft group ([`RatisClient`]), a block is sealed
//! ([`RatisClient::seal`]) and its commit sequence id handed back for
//! CommitKey, and reads go
//! to the datanodes' gRPC service ([`DnClient`]), checksums verified.

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;

use crate::blocks::{BlockStore, ByteStream};
use crate::{BlockId, BlockLocation, Result, StorageError};

use super::checksum;
use super::dn_client::DnClient;
use super::object_mapping::block_from_location;
use super::ordered_chunks::OrderedChunks;
use super::proto::hadoop::hdds::datanode::ChunkInfo;
use super::ratis_client::{RatisClient, pipeline_of, write_chunk_message};

/// A block being written: its chunks so far, in order, and the stream
/// they travel on.
struct Unsealed {
    chunks: Vec<ChunkInfo>,
    writes: OrderedChunks,
}

/// Only the block's own writer uses it, one call after another.
type UnsealedBlock = Arc<tokio::sync::Mutex<Unsealed>>;

pub(crate) struct OzoneBlocks {
    reader: DnClient,
    writer: RatisClient,
    bytes_per_checksum: u32,
    /// Chunks of one block unanswered at once (its `ordered` stream's window).
    chunks_in_flight: usize,
    /// Blocks not sealed yet: PutBlock must list every chunk of the block.
    /// Those of abandoned uploads expire.
    unsealed: moka::future::Cache<BlockId, UnsealedBlock>,
}

impl OzoneBlocks {
    /// `abandon_after`: how long an unsealed block's chunk list is kept
    /// without a write.
    pub(crate) fn new(
        reader: DnClient,
        writer: RatisClient,
        bytes_per_checksum: u32,
        chunks_in_flight: usize,
        abandon_after: Duration,
    ) -> Self {
        Self {
            reader,
            writer,
            bytes_per_checksum,
            chunks_in_flight,
            unsealed: moka::future::Cache::builder()
                .time_to_idle(abandon_after)
                .build(),
        }
    }
}

#[async_trait]
impl BlockStore for OzoneBlocks {
    async fn write_chunk(&self, block: &BlockLocation, offset: u64, data: Bytes) -> Result<()> {
        let ozone_block = block_from_location(block, None);
        let pipeline = pipeline_of(&ozone_block)?;
        // The block's first chunk opens its entry; later ones find it.
        let unsealed = self
            .unsealed
            .get_with(block.block, async {
                Arc::new(tokio::sync::Mutex::new(Unsealed {
                    chunks: Vec::new(),
                    writes: OrderedChunks::new(
                        self.writer.clone(),
                        pipeline.clone(),
                        self.chunks_in_flight,
                    ),
                }))
            })
            .await;
        let mut unsealed = unsealed.lock().await;
        let chunk = checksum::new_chunk(
            block.block.local,
            unsealed.chunks.len() + 1,
            offset,
            &data,
            self.bytes_per_checksum,
        );
        let message = write_chunk_message(&ozone_block, chunk.clone(), &data)?;
        unsealed.writes.send(message).await?;
        unsealed.chunks.push(chunk);
        Ok(())
    }

    async fn put_block(&self, block: &BlockLocation, length: u64) -> Result<u64> {
        let chunks = match self.unsealed.remove(&block.block).await {
            Some(unsealed) => {
                let mut unsealed = unsealed.lock().await;
                // Every chunk answered before the block lists them.
                unsealed.writes.finish().await?;
                std::mem::take(&mut unsealed.chunks)
            }
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
        // One chunk: calls on the `unordered` stream, no stream to open.
        let length = data.len() as u64;
        let chunk = checksum::new_chunk(block.block.local, 1, 0, &data, self.bytes_per_checksum);
        let ozone_block = block_from_location(block, None);
        if pipeline_of(&ozone_block)?.seals_with_last_write {
            // One Raft transaction (one log write on each member) where a
            // chunk and a seal take two.
            return self.writer.write_sealed(&ozone_block, chunk, data).await;
        }
        self.writer
            .write_chunk(&ozone_block, chunk.clone(), data)
            .await?;
        self.writer.seal(&ozone_block, vec![chunk], length).await
    }

    async fn read(&self, block: &BlockLocation, range: Range<u64>) -> Result<ByteStream> {
        self.reader
            .read(&block_from_location(block, None), range)
            .await
    }
}
