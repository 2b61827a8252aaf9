//! Writes an object's bytes into an open Ozone key, as Ozone's own writers
//! do: the body is cut into chunks (never across a block), each chunk goes
//! to the block's Raft group as a WriteChunk with CRC32 checksums over
//! fixed windows, a full block is closed with PutBlock (eof) and its commit
//! sequence id kept, and a new block is asked of the OM when the ones it
//! handed out are full. The caller then commits the key or part with the
//! written blocks; `put_object` and `put_part` do all of it.

use bytes::{Bytes, BytesMut};
use futures::TryStreamExt;
use md5::{Digest, Md5};

use crate::storage::ByteStream;
use crate::{Result, StorageError};

use super::checksum;
use super::model::{OzoneBlock, OzoneOpenKey};
use super::om_client::OmClient;
use super::proto::hadoop::hdds::datanode::ChunkInfo;
use super::ratis_client::RatisClient;

/// How the writer cuts data.
#[derive(Clone, Debug)]
pub struct WriterConfig {
    /// The largest chunk sent in one WriteChunk (Ozone's default is 4 MiB).
    pub chunk_size: usize,
    /// Bytes covered by one CRC32 (Ozone's default is 16 KiB).
    pub bytes_per_checksum: u32,
}

impl Default for WriterConfig {
    fn default() -> Self {
        Self {
            chunk_size: 4 * 1024 * 1024,
            bytes_per_checksum: 16 * 1024,
        }
    }
}

/// What a body came to once written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrittenData {
    /// The written blocks in order, with their lengths and commit sequence
    /// ids: what CommitKey / CommitMultiPartUpload must be given.
    pub blocks: Vec<OzoneBlock>,
    pub size: u64,
    /// Hex MD5 of the body: the object's (or part's) S3 ETag.
    pub etag: String,
}

/// A written multipart part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrittenPart {
    /// The OM's name for the part.
    pub name: String,
    pub etag: String,
    pub size: u64,
}

/// An object to create: where it goes and what travels with it.
#[derive(Clone, Copy, Debug)]
pub struct NewObject<'a> {
    pub bucket: &'a str,
    pub key: &'a str,
    /// The body's size if known (0 if not): the OM then hands out the
    /// first blocks with the key, saving AllocateBlock round trips.
    pub size_hint: u64,
    /// Stored with the key besides the ETag.
    pub metadata: &'a [(String, String)],
    pub tags: &'a [(String, String)],
}

/// A part of a multipart upload to write.
#[derive(Clone, Copy, Debug)]
pub struct NewPart<'a> {
    pub bucket: &'a str,
    pub key: &'a str,
    pub upload_id: &'a str,
    pub number: u32,
    pub size_hint: u64,
}

/// Writes bodies into open keys; cheap to clone.
#[derive(Clone)]
pub struct KeyWriter {
    ratis: RatisClient,
    config: WriterConfig,
}

/// The block being filled.
struct OpenBlock {
    block: OzoneBlock,
    /// How many bytes the OM sized the block for.
    capacity: u64,
    written: u64,
    chunks: Vec<ChunkInfo>,
}

/// One body's progress through the key's blocks.
struct Progress<'a> {
    writer: &'a KeyWriter,
    om: &'a OmClient,
    access_id: &'a str,
    open: &'a OzoneOpenKey,
    /// Blocks the OM handed out with the key and not used yet.
    spare: std::vec::IntoIter<OzoneBlock>,
    current: Option<OpenBlock>,
    done: Vec<OzoneBlock>,
}

impl KeyWriter {
    pub fn new(ratis: RatisClient, config: WriterConfig) -> Self {
        Self { ratis, config }
    }

    /// Sends `data` as the next chunk of `block`, checksummed.
    async fn write_chunk(&self, block: &mut OpenBlock, data: Bytes) -> Result<()> {
        let chunk = checksum::new_chunk(
            block.block.id.local,
            block.chunks.len() + 1,
            block.written,
            &data,
            self.config.bytes_per_checksum,
        );
        self.ratis
            .write_chunk(&block.block, chunk.clone(), data)
            .await?;
        block.written += chunk.len;
        block.chunks.push(chunk);
        Ok(())
    }

    /// Writes `body` into the blocks of `open`, asking the OM for more as
    /// they fill up. Nothing is visible until the caller commits.
    pub async fn write(
        &self,
        om: &OmClient,
        access_id: &str,
        open: &OzoneOpenKey,
        mut body: ByteStream,
    ) -> Result<WrittenData> {
        if self.config.chunk_size == 0 {
            return Err(StorageError::InvalidArgument("chunk size of 0".into()));
        }
        let mut progress = Progress {
            writer: self,
            om,
            access_id,
            open,
            spare: open.blocks.clone().into_iter(),
            current: None,
            done: Vec::new(),
        };
        let mut md5 = Md5::new();
        let mut size = 0;
        let mut buffer = BytesMut::new();
        while let Some(piece) = body.try_next().await? {
            md5.update(&piece);
            size += piece.len() as u64;
            buffer.extend_from_slice(&piece);
            progress.drain(&mut buffer, false).await?;
        }
        progress.drain(&mut buffer, true).await?;
        progress.finish().await?;
        Ok(WrittenData {
            blocks: progress.done,
            size,
            etag: hex::encode(md5.finalize()),
        })
    }

    /// Creates, writes and commits an object: CreateKey (the tags go
    /// there), the data, then CommitKey with the ETag and the metadata.
    /// Returns what was written.
    pub async fn put_object(
        &self,
        om: &OmClient,
        access_id: &str,
        object: &NewObject<'_>,
        body: ByteStream,
    ) -> Result<WrittenData> {
        let open = om
            .create_key(
                access_id,
                object.bucket,
                object.key,
                object.size_hint,
                object.tags,
            )
            .await?;
        let written = self.write(om, access_id, &open, body).await?;
        om.commit_key(
            access_id,
            &open,
            &written.blocks,
            &written.etag,
            object.metadata,
        )
        .await?;
        Ok(written)
    }

    /// Writes part `number` of an upload: create_part, the data, then
    /// commit_part with the part's ETag.
    pub async fn put_part(
        &self,
        om: &OmClient,
        access_id: &str,
        part: &NewPart<'_>,
        body: ByteStream,
    ) -> Result<WrittenPart> {
        let open = om
            .create_part(
                access_id,
                part.bucket,
                part.key,
                part.upload_id,
                part.number,
                part.size_hint,
            )
            .await?;
        let written = self.write(om, access_id, &open, body).await?;
        let name = om
            .commit_part(access_id, &open, &written.blocks, &written.etag)
            .await?;
        Ok(WrittenPart {
            name,
            etag: written.etag,
            size: written.size,
        })
    }
}

impl Progress<'_> {
    /// Writes whole chunks out of `buffer`; with `last`, also the short
    /// remainder.
    async fn drain(&mut self, buffer: &mut BytesMut, last: bool) -> Result<()> {
        while !buffer.is_empty() {
            let mut current = match self.current.take() {
                Some(current) if current.written < current.capacity => current,
                full => {
                    if let Some(full) = full {
                        self.seal(full).await?;
                    }
                    self.next_block().await?
                }
            };
            let chunk_size = self.writer.config.chunk_size as u64;
            let want = chunk_size.min(current.capacity - current.written);
            if (buffer.len() as u64) < want && !last {
                self.current = Some(current);
                return Ok(());
            }
            let take = want.min(buffer.len() as u64) as usize;
            self.writer
                .write_chunk(&mut current, buffer.split_to(take).freeze())
                .await?;
            self.current = Some(current);
        }
        Ok(())
    }

    /// Seals the last block, if any.
    async fn finish(&mut self) -> Result<()> {
        match self.current.take() {
            Some(current) => self.seal(current).await,
            None => Ok(()),
        }
    }

    /// A block the OM already handed out, or a new one.
    async fn next_block(&mut self) -> Result<OpenBlock> {
        let block = match self.spare.next() {
            Some(block) => block,
            None => self.om.allocate_block(self.access_id, self.open).await?,
        };
        // The OM sizes every allocated block at the cluster's block size.
        if block.length == 0 {
            return Err(StorageError::Internal(format!(
                "the OM allocated block {:?} with no room",
                block.id
            )));
        }
        Ok(OpenBlock {
            capacity: block.length,
            block,
            written: 0,
            chunks: Vec::new(),
        })
    }

    /// Closes a block and records it as written.
    async fn seal(&mut self, current: OpenBlock) -> Result<()> {
        let commit_sequence_id = self
            .writer
            .ratis
            .seal(&current.block, current.chunks, current.written)
            .await?;
        self.done.push(OzoneBlock {
            length: current.written,
            commit_sequence_id,
            ..current.block
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use futures::stream;

    use super::*;
    use crate::BlockId;
    use crate::ozone::om_client::OmConfig;
    use crate::ozone::ratis_client::RatisConfig;
    use crate::ozone::{OzoneOpenKey, Replication};

    /// An OM client that cannot reach any OM (port 1 refuses at once).
    fn unreachable_om() -> OmClient {
        let config = OmConfig {
            max_attempts: 1,
            retry_backoff: Duration::from_millis(1),
            ..OmConfig::new(vec!["127.0.0.1:1".into()])
        };
        OmClient::new(&config).unwrap()
    }

    fn open_key(blocks: Vec<OzoneBlock>) -> OzoneOpenKey {
        OzoneOpenKey {
            bucket: "b".into(),
            key: "k".into(),
            id: 1,
            blocks,
            replication: Replication { kind: 1, factor: 1 },
            part: None,
        }
    }

    fn body(pieces: &[&'static [u8]]) -> ByteStream {
        let pieces: Vec<Result<Bytes>> = pieces.iter().map(|p| Ok(Bytes::from_static(p))).collect();
        Box::pin(stream::iter(pieces))
    }

    fn writer() -> KeyWriter {
        KeyWriter::new(
            RatisClient::new(RatisConfig::default()),
            WriterConfig::default(),
        )
    }

    #[tokio::test]
    async fn an_empty_body_needs_no_block() {
        let om = unreachable_om();
        let written = writer()
            .write(&om, "a", &open_key(Vec::new()), body(&[b"", b""]))
            .await
            .unwrap();
        assert!(written.blocks.is_empty());
        assert_eq!(written.size, 0);
        assert_eq!(written.etag, "d41d8cd98f00b204e9800998ecf8427e");
    }

    #[tokio::test]
    async fn asks_the_om_for_a_block_when_none_is_spare() {
        let om = unreachable_om();
        let result = writer()
            .write(&om, "a", &open_key(Vec::new()), body(&[b"data"]))
            .await;
        assert!(
            matches!(result, Err(StorageError::Unavailable(_))),
            "{result:?}"
        );
    }

    #[tokio::test]
    async fn uses_the_spare_block_first() {
        let om = unreachable_om();
        // A block the OM handed out without a pipeline cannot be written:
        // the error shows the spare block was chosen over a new one.
        let spare = OzoneBlock {
            id: BlockId {
                container: 1,
                local: 2,
            },
            commit_sequence_id: 0,
            offset: 0,
            length: 1024,
            token: None,
            datanodes: Vec::new(),
            part_number: None,
            pipeline: None,
        };
        let result = writer()
            .write(&om, "a", &open_key(vec![spare]), body(&[b"data"]))
            .await;
        assert!(
            matches!(&result, Err(StorageError::Internal(m)) if m.contains("Ratis pipeline")),
            "{result:?}"
        );
    }

    #[tokio::test]
    async fn refuses_a_zero_chunk_size() {
        let writer = KeyWriter::new(
            RatisClient::new(RatisConfig::default()),
            WriterConfig {
                chunk_size: 0,
                ..WriterConfig::default()
            },
        );
        let result = writer
            .write(&unreachable_om(), "a", &open_key(Vec::new()), body(&[b"x"]))
            .await;
        assert!(matches!(result, Err(StorageError::InvalidArgument(_))));
    }
}
