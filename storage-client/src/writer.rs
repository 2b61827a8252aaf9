//! Streaming object upload: bytes go to the block role as they arrive, and
//! the object becomes visible only at `commit`.
//!
//! Bytes are cut into chunks of `chunk_size` (the unit of buffered write);
//! a block takes `block_size / chunk_size` chunks (fewer if the OM allocated
//! smaller blocks), then the next block is allocated.
//!
//! Each block is written by a task of its own ([`BlockTask`]): its chunks
//! go to the block role in order, then it is sealed. Up to
//! `blocks_in_flight` blocks are written or sealed at once, so on a back
//! end where a chunk or a seal is a network round trip (Ozone) the next
//! block's chunks travel while the last one's are still being answered.
//! An upload buffers at most one chunk, plus one per block in flight
//! waiting for its task and what each block's writes hold until answered
//! (one chunk; on Ozone up to `chunks_in_flight`).

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::blocks::BlockStore;
use crate::metadata::{Metadata, OpenKey, PartName, UploadName};
use crate::{
    BlockLocation, BytesWithKey, KeyInfo, NewObject, Owner, PartCommit, PartInfo, PartNumber,
    Result, StorageError,
};

/// An open key: blocks allocated with WRITE tokens, nothing visible yet.
/// Dropping it without `commit` leaves only blocks that will be reclaimed.
pub struct ObjectWriter {
    om: Arc<dyn Metadata>,
    dn: Arc<dyn BlockStore>,
    owner: Owner,
    open: OpenKey,
    block_size: u64,
    chunk_size: usize,
    /// The most blocks written or sealed at once, the one being filled included.
    blocks_in_flight: usize,
    /// See [`WriteSizes::with_key_max`].
    with_key_max: usize,
    /// Bytes received but not yet a full chunk.
    pending: VecDeque<Bytes>,
    pending_len: usize,
    /// Blocks the OM allocated in advance that nobody has written yet.
    spare: VecDeque<BlockLocation>,
    /// The block being filled.
    current: Option<BlockTask>,
    /// Blocks filled and being sealed by their tasks, in object order.
    sealing: VecDeque<BlockTask>,
    /// Sealed blocks, in object order (before those in `sealing`).
    sealed: Vec<BlockLocation>,
    /// Where the next block starts in the object: the bytes of every block
    /// handed to a task so far.
    next_offset: u64,
    len: u64,
}

/// One block written by its own task: chunks go in through `chunks` in
/// order, `None` asks for the seal. The task is aborted when this is
/// dropped, so an upload given up leaves no write behind it.
struct BlockTask {
    chunks: mpsc::Sender<Option<Bytes>>,
    task: JoinHandle<Result<BlockLocation>>,
    /// Bytes handed to the task.
    length: u64,
    /// Bytes the block may hold: the block size, or less where the OM
    /// allocated smaller blocks (an Ozone cluster's `ozone.scm.block.size`).
    capacity: u64,
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
        sizes: WriteSizes,
    ) -> Self {
        Self {
            spare: std::mem::take(&mut open.first_blocks).into(),
            om,
            dn,
            owner,
            open,
            block_size: sizes.block_size,
            chunk_size: sizes.chunk_size,
            blocks_in_flight: sizes.blocks_in_flight.max(1),
            with_key_max: sizes.with_key_max,
            pending: VecDeque::new(),
            pending_len: 0,
            current: None,
            sealing: VecDeque::new(),
            sealed: Vec::new(),
            next_offset: 0,
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
        let blocks = self.durable_blocks(self.with_key_max).await?;
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
        // A part's bytes are always a block's: completing the upload
        // moves blocks, not data, into the object.
        let blocks = self.durable_blocks(0).await?;
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
        if self.open.is_unopened() {
            return;
        }
        if let Err(e) = self.om.abort_object(&self.owner, &self.open).await {
            // The open key expires on its own; nothing is visible either way.
            tracing::warn!(error = %e, upload = self.open.id, "abort failed");
        }
    }

    /// Flushes and seals everything written, giving up the upload if that
    /// fails; the sealed blocks in object order. An object of at most
    /// `with_key_max` bytes in one piece is one block carrying its bytes,
    /// written by nothing: the commit keeps them.
    async fn durable_blocks(&mut self, with_key_max: usize) -> Result<Vec<BlockLocation>> {
        if let Err(e) = self.flush_and_seal(with_key_max).await {
            self.abort_quietly().await;
            return Err(e);
        }
        Ok(std::mem::take(&mut self.sealed))
    }

    async fn flush_and_seal(&mut self, with_key_max: usize) -> Result<()> {
        if self.pending_len > 0 {
            let chunk = self.take_pending(self.pending_len);
            let whole_object = self.current.is_none() && self.sealing.is_empty();
            if whole_object && self.sealed.is_empty() && chunk.len() <= with_key_max {
                let mut block = if self.open.is_unopened() {
                    // The commit takes the block's id.
                    BlockLocation::default()
                } else {
                    self.next_block().await?.0
                };
                block.length = chunk.len() as u64;
                block.bytes_with_key = Some(BytesWithKey(chunk));
                self.sealed.push(block);
                return Ok(());
            }
            if self.current.is_none() {
                // The last block holds just this chunk (a small object's
                // only block): written and sealed in one call, after the
                // blocks before it.
                self.settle(0).await?;
                let (mut block, _) = self.next_block().await?;
                block.length = chunk.len() as u64;
                block.commit_sequence_id = self.dn.put_small_block(&block, chunk).await?;
                self.sealed.push(block);
                return Ok(());
            }
            self.write_chunk(chunk).await?;
        }
        self.seal_current().await?;
        self.settle(0).await
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
            .is_some_and(|b| b.length > 0 && b.length + chunk_len > b.capacity)
        {
            self.seal_current().await?;
        }
        let mut block = match self.current.take() {
            Some(block) => block,
            None => self.start_block().await?,
        };
        block.length += chunk_len;
        if block.chunks.send(Some(chunk)).await.is_err() {
            // The task stopped early: it failed, and says why.
            return Err(block.finish().await.err().unwrap_or_else(ended_early));
        }
        self.current = Some(block);
        Ok(())
    }

    /// The next block, allocated if none is spare, with its capacity.
    async fn next_block(&mut self) -> Result<(BlockLocation, u64)> {
        if self.open.is_unopened() {
            // Larger than declared: its blocks need an open key.
            let object = self.open.object.clone();
            let intent = self.open.intent.clone();
            let mut open = self.om.create_object(&self.owner, object, intent).await?;
            self.spare = std::mem::take(&mut open.first_blocks).into();
            self.open = open;
        }
        let mut block = match self.spare.pop_front() {
            Some(block) => block,
            None => self.om.allocate_block(&self.owner, &self.open).await?,
        };
        // An allocation states the block's capacity in `length`.
        let capacity = match block.length {
            0 => self.block_size,
            allocated => allocated.min(self.block_size),
        };
        block.offset = self.next_offset;
        block.length = 0;
        Ok((block, capacity))
    }

    /// Starts the task of the next block.
    async fn start_block(&mut self) -> Result<BlockTask> {
        let (block, capacity) = self.next_block().await?;
        // One chunk waits for the task while it writes the one before.
        let (chunks, received) = mpsc::channel(1);
        Ok(BlockTask {
            chunks,
            task: tokio::spawn(write_block(Arc::clone(&self.dn), block, received)),
            length: 0,
            capacity,
        })
    }

    /// Hands the block being filled to its task to seal, then waits for
    /// the oldest seals until the next block fits the window.
    async fn seal_current(&mut self) -> Result<()> {
        if let Some(block) = self.current.take() {
            self.next_offset += block.length;
            // A task that stopped early says why when it is awaited.
            let _ = block.chunks.send(None).await;
            self.sealing.push_back(block);
        }
        self.settle(self.blocks_in_flight - 1).await
    }

    /// Waits for the oldest blocks being sealed until at most `left` are.
    async fn settle(&mut self, left: usize) -> Result<()> {
        while self.sealing.len() > left {
            if let Some(block) = self.sealing.pop_front() {
                self.sealed.push(block.finish().await?);
            }
        }
        Ok(())
    }
}

impl BlockTask {
    /// The sealed block, or why it could not be written.
    async fn finish(mut self) -> Result<BlockLocation> {
        match (&mut self.task).await {
            Ok(outcome) => outcome,
            Err(e) => Err(StorageError::Internal(format!(
                "a block's writer ended: {e}"
            ))),
        }
    }
}

impl Drop for BlockTask {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn ended_early() -> StorageError {
    StorageError::Internal("a block's writer ended before its seal".into())
}

/// A block's task: writes the chunks as they come, in order, and seals the
/// block when asked. Without that ask (the upload was given up) it seals
/// nothing.
async fn write_block(
    dn: Arc<dyn BlockStore>,
    mut block: BlockLocation,
    mut chunks: mpsc::Receiver<Option<Bytes>>,
) -> Result<BlockLocation> {
    while let Some(piece) = chunks.recv().await {
        let Some(chunk) = piece else {
            block.commit_sequence_id = dn.put_block(&block, block.length).await?;
            return Ok(block);
        };
        let chunk_len = chunk.len() as u64;
        dn.write_chunk(&block, block.length, chunk).await?;
        block.length += chunk_len;
    }
    Err(ended_early())
}

/// How the writer cuts an upload: see the module's documentation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WriteSizes {
    pub block_size: u64,
    pub chunk_size: usize,
    pub blocks_in_flight: usize,
    /// An object of at most this many bytes, written in one piece, is
    /// handed to the metadata role's commit with its bytes instead of
    /// being written to a block (see [`crate::BlockLocation::inline`]);
    /// 0 where the back end keeps no data with its keys.
    pub with_key_max: usize,
}
