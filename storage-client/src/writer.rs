//! Streaming object upload: bytes go to the block role as they arrive, and
//! the object becomes visible only at `commit`.
//!
//! Bytes are cut into chunks of `chunk_size` (the unit of buffered write);
//! a block takes `block_size / chunk_size` chunks (fewer if the OM allocated
//! smaller blocks), then the next block is allocated. At most one chunk is
//! buffered per upload.

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};

use crate::blocks::BlockStore;
use crate::metadata::{Metadata, OpenKey, PartName, UploadName};
use crate::{BlockLocation, KeyInfo, NewObject, Owner, PartCommit, PartInfo, PartNumber, Result};

/// An open key: blocks allocated with WRITE tokens, nothing visible yet.
/// Dropping it without `commit` leaves only blocks that will be reclaimed.
pub struct ObjectWriter {
    om: Arc<dyn Metadata>,
    dn: Arc<dyn BlockStore>,
    owner: Owner,
    open: OpenKey,
    block_size: u64,
    chunk_size: usize,
    /// Bytes received but not yet a full chunk.
    pending: VecDeque<Bytes>,
    pending_len: usize,
    /// Blocks the OM allocated in advance that nobody has written yet.
    spare: VecDeque<BlockLocation>,
    /// The block being filled; its `offset` is set, its `length` is the bytes written.
    current: Option<BlockLocation>,
    /// Bytes `current` may hold: the block size, or less where the OM
    /// allocated smaller blocks (an Ozone cluster's `ozone.scm.block.size`).
    capacity: u64,
    /// Sealed blocks, in object order.
    sealed: Vec<BlockLocation>,
    len: u64,
}

impl std::fmt::Debug for ObjectWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectWriter")
            .field("upload", &self.open.id)
            .field("bucket", &self.open.object.bucket)
            .field("key", &self.open.object.key)
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl ObjectWriter {
    pub(crate) fn new(
        om: Arc<dyn Metadata>,
        dn: Arc<dyn BlockStore>,
        owner: Owner,
        mut open: OpenKey,
        block_size: u64,
        chunk_size: usize,
    ) -> Self {
        Self {
            spare: std::mem::take(&mut open.first_blocks).into(),
            om,
            dn,
            owner,
            open,
            block_size,
            chunk_size,
            pending: VecDeque::new(),
            pending_len: 0,
            current: None,
            capacity: block_size,
            sealed: Vec::new(),
            len: 0,
        }
    }

    /// Appends bytes to the object.
    pub async fn write(&mut self, data: Bytes) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        self.len += data.len() as u64;
        self.pending_len += data.len();
        self.pending.push_back(data);
        while self.pending_len >= self.chunk_size {
            let chunk = self.take_pending(self.chunk_size);
            self.write_chunk(chunk).await?;
        }
        Ok(())
    }

    /// Bytes written so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True until the first non-empty `write`.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Makes the data durable, then makes the object visible atomically
    /// (replacing any previous object under the key) if the write
    /// condition given to `create_object` holds.
    pub async fn commit(mut self, obj: NewObject) -> Result<KeyInfo> {
        let blocks = self.durable_blocks().await?;
        self.om
            .commit_object(&self.owner, self.open, blocks, obj)
            .await
    }

    /// Makes the data durable, then makes it part `number` of the multipart
    /// upload `upload_id` (started for this writer's bucket and key),
    /// replacing any earlier part with that number.
    pub async fn commit_part(
        mut self,
        upload_id: &str,
        number: PartNumber,
        part: PartCommit,
    ) -> Result<PartInfo> {
        let blocks = self.durable_blocks().await?;
        let name = PartName {
            upload: UploadName {
                object: self.open.object.clone(),
                upload_id: upload_id.to_owned(),
            },
            number: number.get(),
        };
        self.om
            .commit_part(&self.owner, self.open, name, blocks, part)
            .await
    }

    /// Gives up the upload; its blocks are reclaimed.
    pub async fn abort(self) {
        self.abort_quietly().await;
    }

    async fn abort_quietly(&self) {
        if let Err(e) = self.om.abort_object(&self.owner, &self.open).await {
            // The open key expires on its own; nothing is visible either way.
            tracing::warn!(error = %e, upload = self.open.id, "abort failed");
        }
    }

    /// Flushes and seals everything written, giving up the upload if that
    /// fails; the sealed blocks in object order.
    async fn durable_blocks(&mut self) -> Result<Vec<BlockLocation>> {
        if let Err(e) = self.flush_and_seal().await {
            self.abort_quietly().await;
            return Err(e);
        }
        Ok(std::mem::take(&mut self.sealed))
    }

    async fn flush_and_seal(&mut self) -> Result<()> {
        if self.pending_len > 0 {
            let chunk = self.take_pending(self.pending_len);
            if self.current.is_none() {
                // The last block holds just this chunk (a small object's
                // only block): written and sealed in one call.
                let mut block = self.next_block().await?;
                block.length = chunk.len() as u64;
                block.commit_sequence_id = self.dn.put_small_block(&block, chunk).await?;
                self.sealed.push(block);
                return Ok(());
            }
            self.write_chunk(chunk).await?;
        }
        self.seal_current().await
    }

    /// The next `n` buffered bytes as one piece, copied only if they span pieces.
    fn take_pending(&mut self, n: usize) -> Bytes {
        self.pending_len -= n;
        if let Some(front) = self.pending.front_mut()
            && front.len() >= n
        {
            let piece = front.split_to(n);
            if front.is_empty() {
                self.pending.pop_front();
            }
            return piece;
        }
        let mut chunk = BytesMut::with_capacity(n);
        while chunk.len() < n {
            let Some(front) = self.pending.front_mut() else {
                break;
            };
            let take = (n - chunk.len()).min(front.len());
            chunk.extend_from_slice(&front.split_to(take));
            if front.is_empty() {
                self.pending.pop_front();
            }
        }
        chunk.freeze()
    }

    async fn write_chunk(&mut self, chunk: Bytes) -> Result<()> {
        let chunk_len = chunk.len() as u64;
        if self
            .current
            .as_ref()
            .is_some_and(|b| b.length > 0 && b.length + chunk_len > self.capacity)
        {
            self.seal_current().await?;
        }
        let mut block = match self.current.take() {
            Some(block) => block,
            None => self.next_block().await?,
        };
        let written = self.dn.write_chunk(&block, block.length, chunk).await;
        if written.is_ok() {
            block.length += chunk_len;
        }
        self.current = Some(block);
        written
    }

    async fn next_block(&mut self) -> Result<BlockLocation> {
        let mut block = match self.spare.pop_front() {
            Some(block) => block,
            None => self.om.allocate_block(&self.owner, &self.open).await?,
        };
        // An allocation states the block's capacity in `length`.
        self.capacity = match block.length {
            0 => self.block_size,
            allocated => allocated.min(self.block_size),
        };
        block.offset = self.sealed.iter().map(|b| b.length).sum();
        block.length = 0;
        Ok(block)
    }

    async fn seal_current(&mut self) -> Result<()> {
        if let Some(mut block) = self.current.take() {
            block.commit_sequence_id = self.dn.put_block(&block, block.length).await?;
            self.sealed.push(block);
        }
        Ok(())
    }
}
