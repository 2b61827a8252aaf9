//! Reads block bytes from Ozone datanodes over gRPC
//! (`hadoop.hdds.datanode.XceiverClientProtocolService/send`): `GetBlock`
//! for the chunk list, then one `ReadChunk` per chunk the range touches; a
//! small block of one chunk (most small objects) in one `GetSmallFile`.
//!
//! Reads never go through Ratis; any replica serves them. A replica that
//! fails (down, behind the block's commit sequence id, bad data) is skipped
//! for the next one. Every byte handed out has passed its stored checksum:
//! a sub-range read is widened to whole checksum windows, verified, then
//! trimmed.

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt, stream};
use tonic::transport::Channel;

use crate::blocks::ByteStream;
use crate::calls::CallTable;
use crate::{Result, StorageError};

use super::channels::Channels;
use super::checksum;
use super::cluster_view::{Reachability, answered};
use super::dn_protocol::{container_command, datanode_block_id, result_error};
use super::model::{Datanode, OzoneBlock};
use super::one_reply::one_reply;
use super::proto::hadoop::hdds::datanode::{
    self as dn, ChunkInfo, ContainerCommandRequest, ContainerCommandResponse, ReadChunkVersion,
    read_chunk_response::ResponseData,
    xceiver_client_protocol_service_client::XceiverClientProtocolServiceClient,
};
use crate::ozone_tls::OzoneTls;

/// Slots in the call table: datanode command numbers are below this.
const DN_COMMANDS: usize = 32;

/// A datanode answers with at most 32 MiB per message.
const MAX_MESSAGE_BYTES: usize = 32 * 1024 * 1024;

/// A block up to this long is read whole with one `GetSmallFile` (the chunk
/// list and the data in one round trip) instead of `GetBlock` then
/// `ReadChunk`: the round trip saved is worth more than the bytes outside a
/// range that come with it (BENCHMARKS.md, "Ozone: a small block in one
/// call each way").
const ONE_CALL_READ_MAX: u64 = 1024 * 1024;

/// Connection settings of the datanode client.
#[derive(Clone, Debug)]
pub struct DnConfig {
    pub connect_timeout: Duration,
    /// Deadline of one command at one datanode, answer included.
    pub request_timeout: Duration,
    /// TLS to the datanodes, on a cluster with `hdds.grpc.tls.enabled`.
    pub tls: Option<OzoneTls>,
}

impl Default for DnConfig {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(30),
            tls: None,
        }
    }
}

type Rpc = XceiverClientProtocolServiceClient<Channel>;

/// A datanode read client; clones share one channel per datanode.
#[derive(Clone)]
pub struct DnClient {
    config: DnConfig,
    channels: Channels<Rpc>,
    calls: Arc<CallTable>,
    datanodes: Arc<Reachability>,
}

/// One ReadChunk to send: `wanted` (block offsets) lies inside `chunk`.
struct ChunkRead {
    chunk: ChunkInfo,
    wanted: Range<u64>,
}

impl DnClient {
    pub fn new(config: DnConfig) -> Self {
        Self {
            channels: Channels::new(config.connect_timeout, config.tls.clone()),
            config,
            calls: Arc::new(CallTable::new("dn", DN_COMMANDS, dn_command_name)),
            datanodes: Arc::default(),
        }
    }

    /// Notes in `datanodes` whether each call got an answer.
    pub(crate) fn reporting_to(mut self, datanodes: Arc<Reachability>) -> Self {
        self.datanodes = datanodes;
        self
    }

    /// Latency and failures of the commands sent so far.
    pub(crate) fn calls(&self) -> Arc<CallTable> {
        Arc::clone(&self.calls)
    }

    /// Streams bytes `range` of `block` (offsets within the block), each
    /// piece verified against its stored checksums. The chunk list is
    /// fetched before this returns, so a block no replica can serve fails
    /// here rather than mid-stream.
    pub async fn read(&self, block: &OzoneBlock, range: Range<u64>) -> Result<ByteStream> {
        if range.start > range.end || range.end > block.length {
            return Err(StorageError::InvalidArgument(format!(
                "range {range:?} outside block of {} bytes",
                block.length
            )));
        }
        if range.is_empty() {
            return Ok(stream::empty().boxed());
        }
        if block.length <= ONE_CALL_READ_MAX
            && let Some(buffers) = self.read_small(block, &range).await?
        {
            return Ok(stream::iter(buffers.into_iter().map(Ok)).boxed());
        }
        let (first, chunks) = self.get_block(block).await?;
        let reads: Vec<ChunkRead> = chunks
            .into_iter()
            .filter(|c| c.offset < range.end && c.offset + c.len > range.start)
            .map(|chunk| ChunkRead {
                wanted: range.start.max(chunk.offset)..range.end.min(chunk.offset + chunk.len),
                chunk,
            })
            .collect();
        let covered: u64 = reads.iter().map(|r| r.wanted.end - r.wanted.start).sum();
        if covered != range.end - range.start {
            return Err(StorageError::Corrupt(format!(
                "block {:?} has chunks for {covered} of the {} bytes asked for",
                block.id,
                range.end - range.start
            )));
        }
        // Ask the replica that served GetBlock first, then the others.
        let mut order = block.datanodes.clone();
        order.rotate_left(first);
        let client = self.clone();
        let block = block.clone();
        let pieces = stream::iter(reads)
            .then(move |read| {
                let (client, block, order) = (client.clone(), block.clone(), order.clone());
                async move { client.read_chunk(&block, &order, read).await }
            })
            .map_ok(|buffers| stream::iter(buffers.into_iter().map(Ok)))
            .try_flatten();
        Ok(pieces.boxed())
    }

    /// The block's chunk list from the first replica that has the block
    /// at its commit sequence id, and that replica's index.
    async fn get_block(&self, block: &OzoneBlock) -> Result<(usize, Vec<ChunkInfo>)> {
        let mut last = unavailable("the block has no datanode");
        for (index, node) in block.datanodes.iter().enumerate() {
            let request = ContainerCommandRequest {
                get_block: Some(dn::GetBlockRequest {
                    block_id: datanode_block_id(block),
                }),
                ..container_command(dn::Type::GetBlock, block, &node.uuid)
            };
            match self.call(node, request).await {
                Ok(response) => match response.get_block {
                    Some(answer) => return Ok((index, answer.block_data.chunks)),
                    None => last = internal(node, "GetBlock answer without block data"),
                },
                Err(error) => last = error,
            }
            tracing::debug!(datanode = %node.address, error = %last, "GetBlock failed, next replica");
        }
        Err(last)
    }

    /// The verified bytes `range` of a block read whole with GetSmallFile,
    /// from the first replica that serves it intact; `None` when the block
    /// has more than one chunk, whose checksums the answer does not all
    /// carry (GetBlock and ReadChunk read it then).
    async fn read_small(
        &self,
        block: &OzoneBlock,
        range: &Range<u64>,
    ) -> Result<Option<Vec<Bytes>>> {
        let mut last = unavailable("the block has no datanode");
        for node in &block.datanodes {
            let request = ContainerCommandRequest {
                get_small_file: Some(dn::GetSmallFileRequest {
                    block: dn::GetBlockRequest {
                        block_id: datanode_block_id(block),
                    },
                    read_chunk_version: Some(ReadChunkVersion::V1 as i32),
                }),
                ..container_command(dn::Type::GetSmallFile, block, &node.uuid)
            };
            let answer = match self.call(node, request).await {
                Ok(response) => match response.get_small_file {
                    Some(small) => small.data,
                    None => {
                        last = internal(node, "GetSmallFile answer without data");
                        continue;
                    }
                },
                Err(error) => {
                    tracing::debug!(datanode = %node.address, %error, "GetSmallFile failed, next replica");
                    last = error;
                    continue;
                }
            };
            // The answer describes the block's last chunk only.
            let chunk = answer.chunk_data.clone();
            if chunk.offset != 0 || chunk.len != block.length {
                return Ok(None);
            }
            let checked = read_chunk_buffers(node, answer, "GetSmallFile").and_then(|buffers| {
                let got: u64 = buffers.iter().map(|b| b.len() as u64).sum();
                if got != block.length {
                    return Err(StorageError::Corrupt(format!(
                        "{} sent {got} bytes of a block of {}",
                        node.address, block.length
                    )));
                }
                let checksums = &chunk.checksum_data;
                if checksums.r#type() != dn::ChecksumType::None && checksums.bytes_per_checksum > 0
                {
                    checksum::verify(checksums, 0, &buffers)?;
                }
                Ok(trim(buffers, range.start, range.end - range.start))
            });
            match checked {
                Ok(bytes) => return Ok(Some(bytes)),
                Err(error) => {
                    tracing::debug!(datanode = %node.address, %error, "GetSmallFile data refused, next replica");
                    last = error;
                }
            }
        }
        Err(last)
    }

    /// The verified bytes `read.wanted`, from the first replica in `order`
    /// that serves them intact.
    async fn read_chunk(
        &self,
        block: &OzoneBlock,
        order: &[Datanode],
        read: ChunkRead,
    ) -> Result<Vec<Bytes>> {
        let checksums = &read.chunk.checksum_data;
        let window = u64::from(checksums.bytes_per_checksum);
        let verifies = checksums.r#type() != dn::ChecksumType::None && window > 0;
        // Offsets within the chunk: what was asked for, widened to windows.
        let start = read.wanted.start - read.chunk.offset;
        let end = read.wanted.end - read.chunk.offset;
        let (from, to) = if verifies {
            (
                start / window * window,
                end.div_ceil(window)
                    .saturating_mul(window)
                    .min(read.chunk.len),
            )
        } else {
            (start, end)
        };
        let narrowed = ChunkInfo {
            offset: read.chunk.offset + from,
            len: to - from,
            ..read.chunk.clone()
        };
        let mut last = unavailable("the block has no datanode");
        for node in order {
            let request = ContainerCommandRequest {
                read_chunk: Some(dn::ReadChunkRequest {
                    block_id: datanode_block_id(block),
                    chunk_data: narrowed.clone(),
                    read_chunk_version: Some(ReadChunkVersion::V1 as i32),
                }),
                ..container_command(dn::Type::ReadChunk, block, &node.uuid)
            };
            let buffers = match self.call(node, request).await {
                Ok(response) => chunk_buffers(node, response),
                Err(error) => Err(error),
            };
            let checked = buffers.and_then(|buffers| {
                let got: u64 = buffers.iter().map(|b| b.len() as u64).sum();
                if got != to - from {
                    return Err(StorageError::Corrupt(format!(
                        "{} sent {got} bytes of chunk {} for {} asked",
                        node.address,
                        read.chunk.chunk_name,
                        to - from
                    )));
                }
                if verifies {
                    checksum::verify(checksums, (from / window) as usize, &buffers)?;
                }
                Ok(trim(buffers, start - from, end - start))
            });
            match checked {
                Ok(bytes) => return Ok(bytes),
                Err(error) => {
                    tracing::debug!(datanode = %node.address, %error, "ReadChunk failed, next replica");
                    last = error;
                }
            }
        }
        Err(last)
    }

    /// One command on its own stream: send, half-close, read one answer.
    async fn call(
        &self,
        node: &Datanode,
        request: ContainerCommandRequest,
    ) -> Result<ContainerCommandResponse> {
        let command = usize::try_from(request.cmd_type).unwrap_or(usize::MAX);
        self.calls.time(command, self.exchange(node, request)).await
    }

    async fn exchange(
        &self,
        node: &Datanode,
        request: ContainerCommandRequest,
    ) -> Result<ContainerCommandResponse> {
        let mut rpc = self.rpc(node)?;
        let exchange =
            async { one_reply(rpc.send(stream::iter([request])).await?.into_inner()).await };
        let outcome = tokio::time::timeout(self.config.request_timeout, exchange).await;
        self.datanodes.record(node, answered(&outcome));
        let answer = match outcome {
            Err(_) => return Err(unavailable_at(node, "timed out")),
            Ok(Err(status)) => {
                let what = format!("{:?} {}", status.code(), status.message());
                return Err(unavailable_at(node, &what));
            }
            Ok(Ok(None)) => return Err(unavailable_at(node, "no answer")),
            Ok(Ok(Some(answer))) => answer,
        };
        match answer.result() {
            dn::Result::Success => Ok(answer),
            result => Err(result_error(node, result, answer.message())),
        }
    }

    /// The reused client for `node`, created (unconnected) on first use.
    fn rpc(&self, node: &Datanode) -> Result<Rpc> {
        self.channels.get(&node.address, |channel| {
            XceiverClientProtocolServiceClient::new(channel)
                .max_decoding_message_size(MAX_MESSAGE_BYTES)
        })
    }
}

fn dn_command_name(number: usize) -> Option<&'static str> {
    let number = i32::try_from(number).ok()?;
    dn::Type::try_from(number).ok().map(|cmd| cmd.as_str_name())
}

fn chunk_buffers(node: &Datanode, response: ContainerCommandResponse) -> Result<Vec<Bytes>> {
    match response.read_chunk {
        Some(answer) => read_chunk_buffers(node, answer, "ReadChunk"),
        None => Err(internal(node, "ReadChunk answer without data")),
    }
}

/// The data of a ReadChunk answer, or of the one in a `command`'s answer.
fn read_chunk_buffers(
    node: &Datanode,
    answer: dn::ReadChunkResponse,
    command: &str,
) -> Result<Vec<Bytes>> {
    match answer.response_data {
        Some(ResponseData::DataBuffers(buffers)) => Ok(buffers.buffers),
        Some(ResponseData::Data(data)) => Ok(vec![data]),
        None => Err(internal(node, &format!("{command} answer without data"))),
    }
}

/// Drops `skip` bytes from the front of `buffers` and keeps the next `keep`,
/// slicing without copying.
fn trim(buffers: Vec<Bytes>, mut skip: u64, mut keep: u64) -> Vec<Bytes> {
    let mut out = Vec::with_capacity(buffers.len());
    for mut buffer in buffers {
        let len = buffer.len() as u64;
        if skip >= len {
            skip -= len;
            continue;
        }
        let from = skip as usize;
        let to = (skip + keep).min(len) as usize;
        skip = 0;
        keep -= (to - from) as u64;
        buffer.truncate(to);
        out.push(buffer.slice(from..));
        if keep == 0 {
            break;
        }
    }
    out
}

fn unavailable(text: &str) -> StorageError {
    StorageError::Unavailable(text.to_owned())
}

fn unavailable_at(node: &Datanode, text: &str) -> StorageError {
    StorageError::Unavailable(format!("datanode {}: {text}", node.address))
}

fn internal(node: &Datanode, text: &str) -> StorageError {
    StorageError::Internal(format!("datanode {}: {text}", node.address))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(parts: &[&'static [u8]]) -> Vec<Bytes> {
        parts.iter().map(|p| Bytes::from_static(p)).collect()
    }

    fn joined(buffers: Vec<Bytes>) -> Vec<u8> {
        buffers.concat()
    }

    #[test]
    fn trims_across_buffers() {
        let buffers = pieces(&[b"abcd", b"efgh", b"ijkl"]);
        assert_eq!(joined(trim(buffers, 3, 6)), b"defghi");
    }

    #[test]
    fn trims_inside_one_buffer() {
        let buffers = pieces(&[b"abcd", b"efgh"]);
        assert_eq!(joined(trim(buffers, 5, 2)), b"fg");
    }

    #[test]
    fn keeps_everything_when_nothing_is_trimmed() {
        let buffers = pieces(&[b"ab", b"cd"]);
        assert_eq!(joined(trim(buffers, 0, 4)), b"abcd");
    }

    #[tokio::test]
    async fn refuses_a_range_outside_the_block() {
        let block = OzoneBlock {
            id: crate::BlockId {
                container: 1,
                local: 2,
            },
            commit_sequence_id: 0,
            offset: 0,
            length: 10,
            token: None,
            datanodes: Vec::new(),
            part_number: None,
            pipeline: None,
        };
        let client = DnClient::new(DnConfig::default());
        assert!(matches!(
            client.read(&block, 5..11).await,
            Err(StorageError::InvalidArgument(_))
        ));
        assert!(matches!(
            client.read(&block, 0..10).await,
            Err(StorageError::Unavailable(_))
        ));
    }
}
