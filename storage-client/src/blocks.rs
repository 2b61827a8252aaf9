//! The block role (Ozone's datanode): stores and serves byte ranges of
//! blocks, checking the block token the OM issued on every access (WRITE
//! for writes, READ for reads).
//!
//! Writes follow Ozone's shape: chunks appended at increasing offsets
//! (`WriteChunk`), then `put_block` (`PutBlock`) which makes the block
//! durable; only after that may the OM commit the key.

use std::ops::Range;
use std::pin::Pin;

use async_trait::async_trait;
use bytes::Bytes;
use futures::Stream;

use crate::{BlockLocation, Result};

/// Object bytes as they stream out of the block role, already verified.
pub type ByteStream = Pin<Box<dyn Stream<Item = Result<Bytes>> + Send>>;

#[async_trait]
pub(crate) trait BlockStore: Send + Sync {
    /// Writes `data` at `offset` within the block. Chunks arrive in order.
    async fn write_chunk(&self, block: &BlockLocation, offset: u64, data: Bytes) -> Result<()>;

    /// Seals the block at `length` bytes and makes it durable (fsync).
    /// Returns the block's commit sequence id, which the OM must be given
    /// with the block (0 where the back end keeps none).
    async fn put_block(&self, block: &BlockLocation, length: u64) -> Result<u64>;

    /// Writes a block of one chunk and seals it: `write_chunk` at offset 0
    /// then `put_block`, in one call (on Ozone, one WriteChunk carrying its
    /// PutBlock where every member takes that). Most small objects are one
    /// such block.
    async fn put_small_block(&self, block: &BlockLocation, data: Bytes) -> Result<u64>;

    /// Streams `range` (offsets within the block) after checking the token;
    /// every byte yielded has passed its stored checksum.
    async fn read(&self, block: &BlockLocation, range: Range<u64>) -> Result<ByteStream>;
}
