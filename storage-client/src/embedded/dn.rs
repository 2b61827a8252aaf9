//! The embedded block role: container directories on local disk, one file
//! pair per block (see [`super::block_file`]), and small blocks written in
//! one piece in a group-committed table (see [`super::small_blocks`]).
//! Every call checks the block token first; file I/O runs on the blocking
//! pool, except small reads.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream;

use super::block_file::{self, BlockPaths, BlockReader};
use super::small_blocks::SmallBlocks;
use super::{blocking, now_ms};
use crate::backend::{DiskUsage, SmallBlockUsage};
use crate::blocks::{BlockStore, ByteStream};
use crate::token::{self, Access, AccessMode, KeyRing};
use crate::{BlockId, BlockLocation, Result, StorageError};

pub(super) struct EmbeddedDn {
    containers: PathBuf,
    keys: Arc<KeyRing>,
    bytes_per_checksum: u32,
    read_buffer: usize,
    inline_read: usize,
    small: Arc<SmallBlocks>,
    small_block_max: usize,
}

/// How the DN stores and reads blocks (see `StorageConfig`).
pub(crate) struct DnSettings {
    pub(crate) bytes_per_checksum: u32,
    pub(crate) read_buffer: usize,
    pub(crate) inline_read: usize,
    pub(crate) small_block_max: usize,
}

impl EmbeddedDn {
    pub(crate) fn new(
        containers: &Path,
        keys: Arc<KeyRing>,
        small: SmallBlocks,
        settings: DnSettings,
    ) -> Self {
        Self {
            containers: containers.to_owned(),
            keys,
            bytes_per_checksum: settings.bytes_per_checksum,
            read_buffer: settings.read_buffer,
            inline_read: settings.inline_read,
            small: Arc::new(small),
            small_block_max: settings.small_block_max,
        }
    }

    fn check(&self, location: &BlockLocation, mode: AccessMode, end: u64) -> Result<()> {
        let access = Access {
            block: location.block,
            mode,
            end,
        };
        token::verify(&self.keys, location.token.as_ref(), access, now_ms()).map(drop)
    }

    /// Removes the files of `first` and every later block id, which the OM
    /// has not handed out; called at start-up, before any upload. Returns
    /// how many blocks had files.
    pub(crate) async fn remove_unallocated(&self, first: BlockId) -> Result<usize> {
        let containers = self.containers.clone();
        let small = Arc::clone(&self.small);
        blocking(move || {
            Ok(block_file::remove_from(&containers, first)? + small.remove_from(first)?)
        })
        .await
    }

    /// Removes blocks, wherever each is kept; called by the reclaimer only,
    /// after the OM has dropped every reference to them.
    pub(crate) async fn delete_blocks(&self, blocks: Vec<BlockId>) -> Result<()> {
        let containers = self.containers.clone();
        let small = Arc::clone(&self.small);
        blocking(move || {
            // One durable transaction for the batch's small blocks.
            small.delete(&blocks)?;
            for block in blocks {
                block_file::delete(&BlockPaths::new(&containers, block))?;
            }
            Ok(())
        })
        .await
    }

    /// The verified bytes of `range` of a block kept in the small-block
    /// store, or `None` if it is kept in files.
    async fn read_small(&self, block: &BlockLocation, range: &Range<u64>) -> Result<Option<Bytes>> {
        if !self.small.may_hold(block.length) {
            return Ok(None);
        }
        let (id, length) = (block.block, block.length);
        let found = if length <= self.inline_read as u64 && !self.small.reopen_due() {
            // As with files (`inline_read`): cached pages cost less than the hop.
            self.small.get(id, length)?
        } else {
            let small = Arc::clone(&self.small);
            blocking(move || small.get(id, length)).await?
        };
        Ok(found.map(|bytes| bytes.slice(range.start as usize..range.end as usize)))
    }
}

impl EmbeddedDn {
    /// What the small-block store (`dn.redb`) holds.
    pub(crate) fn small_block_usage(&self) -> SmallBlockUsage {
        self.small.usage()
    }

    /// The file system holding the block files; `None` if it cannot be read.
    pub(crate) fn disk_usage(&self) -> Option<DiskUsage> {
        let stat = rustix::fs::statvfs(&self.containers).ok()?;
        Some(DiskUsage {
            total_bytes: stat.f_blocks.saturating_mul(stat.f_frsize),
            available_bytes: stat.f_bavail.saturating_mul(stat.f_frsize),
        })
    }
}

#[async_trait]
impl BlockStore for EmbeddedDn {
    async fn write_chunk(&self, block: &BlockLocation, offset: u64, data: Bytes) -> Result<()> {
        self.check(block, AccessMode::Write, offset + data.len() as u64)?;
        let paths = BlockPaths::new(&self.containers, block.block);
        let window = self.bytes_per_checksum;
        blocking(move || block_file::append(&paths, offset, &data, window)).await
    }

    async fn put_block(&self, block: &BlockLocation, length: u64) -> Result<u64> {
        self.check(block, AccessMode::Write, length)?;
        let paths = BlockPaths::new(&self.containers, block.block);
        blocking(move || block_file::seal(&paths, length)).await?;
        // Local blocks are never behind: there is no sequence to report.
        Ok(0)
    }

    async fn put_small_block(&self, block: &BlockLocation, data: Bytes) -> Result<u64> {
        self.check(block, AccessMode::Write, data.len() as u64)?;
        if data.len() <= self.small_block_max {
            self.small.put(block.block, &data).await?;
            return Ok(0);
        }
        let paths = BlockPaths::new(&self.containers, block.block);
        let window = self.bytes_per_checksum;
        // One trip to the blocking pool and one open of each file, where
        // write_chunk and put_block take two of each.
        blocking(move || block_file::write_sealed(&paths, &data, window)).await?;
        Ok(0)
    }

    async fn read(&self, block: &BlockLocation, range: Range<u64>) -> Result<ByteStream> {
        if range.start > range.end || range.end > block.length {
            return Err(StorageError::InvalidArgument(format!(
                "range {range:?} outside a block of {} bytes",
                block.length
            )));
        }
        self.check(block, AccessMode::Read, range.end)?;
        if range.is_empty() {
            return Ok(Box::pin(stream::empty()));
        }
        if let Some(bytes) = self.read_small(block, &range).await? {
            return Ok(Box::pin(stream::once(async move { Ok(bytes) })));
        }
        let (id, length) = (block.block, block.length);
        let paths = BlockPaths::new(&self.containers, id);
        let (start, end) = (range.start, range.end);
        let read_all =
            move || BlockReader::open(&paths, id, length, start, end)?.read_all(id, start..end);
        if end - start <= self.inline_read as u64 {
            // Opening and reading a few KiB of a cached file costs less than
            // the trip to the blocking pool and back (see `inline_read`).
            let bytes = read_all()?;
            return Ok(Box::pin(stream::once(async move { Ok(bytes) })));
        }
        if end - start <= self.read_buffer as u64 {
            // A small range is one trip to the blocking pool: open, read and
            // verify together, instead of one trip to open and one to read.
            let bytes = blocking(read_all).await?;
            return Ok(Box::pin(stream::once(async move { Ok(bytes) })));
        }
        let paths = BlockPaths::new(&self.containers, id);
        let reader =
            Arc::new(blocking(move || BlockReader::open(&paths, id, length, start, end)).await?);
        let window = reader.window();
        // `read_buffer` is a whole number of windows (StorageConfig::read_piece).
        let per_piece = (self.read_buffer as u64 / window).max(1);
        let end_window = range.end.div_ceil(window);
        let pieces = stream::try_unfold(range.start / window, move |next| {
            let reader = Arc::clone(&reader);
            let range = range.clone();
            async move {
                if next >= end_window {
                    return Ok(None);
                }
                let count = per_piece.min(end_window - next);
                let bytes = blocking(move || reader.read_windows(id, next, count, range)).await?;
                Ok(Some((bytes, next + count)))
            }
        });
        Ok(Box::pin(pieces))
    }
}
