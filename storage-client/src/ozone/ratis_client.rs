//! Writes block data to Ozone datanodes through their Raft groups
//! (`ratis.grpc.RaftClientProtocolService/unordered`): a write to a RATIS
//! pipeline must go through the group's Raft log, never straight to a
//! datanode's container gRPC service.
//!
//! Every container command travels as a Ratis message whose content is a
//! 4-byte big-endian header length, the `ContainerCommandRequest` with its
//! chunk data left out, then the raw chunk data; the state machine's answer
//! comes back as a serialized `ContainerCommandResponse`. One request uses
//! one gRPC stream (send, half-close, read one reply) on a channel shared by
//! every request to that datanode. A call keeps its call id across retries:
//! Ratis's retry cache answers a resent call instead of applying it twice.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::{BufMut, Bytes, BytesMut};
use futures::stream;
use prost::Message;
use tonic::transport::Channel;

use crate::calls::CallTable;
use crate::{Result, StorageError};

use super::channels::Channels;
use super::cluster_view::{Reachability, answered};
use super::dn_protocol::{container_command, datanode_block_id, result_error};
use super::model::{Datanode, OzoneBlock, RatisPipeline};
use super::one_reply::one_reply;
use super::proto::hadoop::hdds::datanode::{
    self as dn, BlockData, ChunkInfo, ContainerCommandRequest, ContainerCommandResponse,
};
use super::proto::ratis::common::{
    ClientMessage, RaftClientReply, RaftClientRequest, RaftGroupId, RaftRpcRequest,
    ReplicationLevel, WatchRequestType, WriteRequestType, raft_client_reply::Exception,
    raft_client_request::Kind,
};
use super::proto::ratis::grpc::raft_client_protocol_service_client::RaftClientProtocolServiceClient;
use crate::ozone_tls::OzoneTls;

/// A message carries one chunk plus its header; Ozone's datanodes accept
/// Ratis messages of up to 32 MiB plus a margin.
const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// The calls this client makes, as the call table numbers them.
const RATIS_CALLS: [&str; 3] = ["WRITE_CHUNK", "PUT_BLOCK", "WATCH"];
pub(super) const WRITE_CHUNK: usize = 0;
const PUT_BLOCK: usize = 1;
const WATCH: usize = 2;

/// The block metadata Ozone's writers attach to every block.
const BLOCK_TYPE_METADATA: (&str, &str) = ("TYPE", "KEY");

/// Connection, deadline and retry settings of the Ratis client.
#[derive(Clone, Debug)]
pub struct RatisConfig {
    pub connect_timeout: Duration,
    /// Deadline of one write over the whole pipeline: every attempt at
    /// every member, replies included.
    pub request_timeout: Duration,
    /// Deadline of one watch, likewise (the server holds a watch until the
    /// index is replicated as asked, or its own timeout passes).
    pub watch_timeout: Duration,
    /// Attempts per request over the pipeline's members.
    pub max_attempts: usize,
    /// Pause before retrying after a failure or while a leader is elected.
    pub retry_backoff: Duration,
    /// How long a pipeline whose watch for every member failed is watched
    /// for a majority only.
    pub lagging_for: Duration,
    /// TLS to the datanodes' Ratis port, on a cluster with `hdds.grpc.tls.enabled`.
    pub tls: Option<OzoneTls>,
}

impl Default for RatisConfig {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(30),
            watch_timeout: Duration::from_secs(30),
            // With the leader gone, a round over three members costs about
            // two pauses; 40 attempts outlast the pipeline's leader election
            // (5-10 s at Ozone's default election timeout, 6-12 s measured
            // with a datanode killed on the dev cluster), and request_timeout
            // still bounds the whole call.
            max_attempts: 40,
            retry_backoff: Duration::from_millis(500),
            // A member that is down costs one server watch timeout (30 s by
            // Ozone's default) per pipeline per minute, not per block; one
            // that came back is waited for again within the minute.
            lagging_for: Duration::from_secs(60),
            tls: None,
        }
    }
}

/// What the datanodes report after a block's chunk list was recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommittedBlock {
    /// The block's commit sequence id, which CommitKey must carry.
    pub commit_sequence_id: u64,
    /// The block length the datanode recorded.
    pub length: u64,
    /// The Raft log index of the PutBlock, to watch for replication.
    pub log_index: u64,
}

/// How far a watched log index was found replicated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replicated {
    /// Committed on every member of the pipeline.
    AllCommitted,
    /// Committed on a majority only (a member is lagging or down).
    MajorityCommitted,
}

pub(super) type Rpc = RaftClientProtocolServiceClient<Channel>;

/// A Ratis client; clones share the client id, call ids and one channel
/// per datanode.
#[derive(Clone)]
pub struct RatisClient {
    pub(super) config: RatisConfig,
    /// Our 16-byte Ratis client id (a random UUID).
    client_id: Bytes,
    next_call: Arc<AtomicU64>,
    channels: Channels<Rpc>,
    /// Pipelines (by id) where a watch for every member failed lately:
    /// their writes settle for a majority without waiting for it again.
    lagging: moka::future::Cache<uuid::Uuid, ()>,
    pub(super) calls: Arc<CallTable>,
    pub(super) datanodes: Arc<Reachability>,
}

/// A reply the state machine produced, and the member that sent it.
pub(super) struct Answered {
    pub reply: RaftClientReply,
    pub node: Datanode,
}

/// Why an exchange brought no reply.
struct NoReply {
    reason: String,
    /// Whether another attempt (here or at another member) can help.
    retry: bool,
    /// The deadline passed without an answer.
    timed_out: bool,
}

/// What to do with one reply.
#[derive(Debug)]
pub(super) enum Verdict {
    /// The request is finished (successfully or with a reply the caller
    /// inspects, such as not replicated).
    Done,
    /// Not the leader: try the member at this index, or the next one.
    Redirect(Option<usize>),
    /// Ask the same member again after a pause.
    Wait(String),
    Fail(StorageError),
}

impl RatisClient {
    pub fn new(config: RatisConfig) -> Self {
        Self {
            channels: Channels::new(config.connect_timeout, config.tls.clone()),
            lagging: moka::future::Cache::builder()
                .time_to_live(config.lagging_for)
                .build(),
            config,
            client_id: Bytes::copy_from_slice(uuid::Uuid::new_v4().as_bytes()),
            next_call: Arc::new(AtomicU64::new(1)),
            calls: Arc::new(CallTable::new("ratis", RATIS_CALLS.len(), |call| {
                RATIS_CALLS.get(call).copied()
            })),
            datanodes: Arc::default(),
        }
    }

    /// Notes in `datanodes` whether each request got a reply.
    pub(crate) fn reporting_to(mut self, datanodes: Arc<Reachability>) -> Self {
        self.datanodes = datanodes;
        self
    }

    /// Latency and failures of the calls made so far.
    pub(crate) fn calls(&self) -> Arc<CallTable> {
        Arc::clone(&self.calls)
    }

    /// Writes `data` as the chunk `chunk` (name, offset within the block,
    /// length and checksums) of `block`. Returns the Raft log index.
    pub async fn write_chunk(
        &self,
        block: &OzoneBlock,
        chunk: ChunkInfo,
        data: Bytes,
    ) -> Result<u64> {
        let content = write_chunk_message(block, chunk, &data)?;
        self.send_chunk(pipeline_of(block)?, content, self.next_call_id())
            .await
    }

    /// Sends a WriteChunk message (see [`write_chunk_message`]) as call
    /// `call_id`, answered by the Raft log index. A call id already sent
    /// is answered from the leader's retry cache, not applied again.
    pub(super) async fn send_chunk(
        &self,
        pipeline: &RatisPipeline,
        content: Bytes,
        call_id: u64,
    ) -> Result<u64> {
        let answered = self
            .calls
            .time(
                WRITE_CHUNK,
                self.submit_to_leader(pipeline, write_kind(), Some(content), call_id),
            )
            .await?;
        container_response(&answered)?;
        Ok(answered.reply.log_index)
    }

    /// A new call id of this client.
    pub(super) fn next_call_id(&self) -> u64 {
        self.next_call.fetch_add(1, Ordering::Relaxed)
    }

    /// Records `chunks` as the block's chunk list; with `eof` the block is
    /// complete and can no longer grow.
    pub async fn put_block(
        &self,
        block: &OzoneBlock,
        chunks: Vec<ChunkInfo>,
        eof: bool,
    ) -> Result<CommittedBlock> {
        let pipeline = pipeline_of(block)?;
        let header = ContainerCommandRequest {
            put_block: Some(put_block_request(block, chunks, eof)),
            ..command(dn::Type::PutBlock, block, pipeline)
        };
        let answered = self
            .submit(
                PUT_BLOCK,
                pipeline,
                write_kind(),
                Some(message_content(&header, &Bytes::new())),
            )
            .await?;
        let response = container_response(&answered)?;
        committed(
            &answered,
            response.put_block.map(|p| p.committed_block_length),
        )
    }

    /// Closes `block` with its `chunks` (PutBlock with eof), checks the
    /// datanode recorded the `length` bytes written and, with more than one
    /// replica, waits until the others have it too, as Ozone's own writer
    /// does. Returns the commit sequence id CommitKey must carry.
    pub async fn seal(
        &self,
        block: &OzoneBlock,
        chunks: Vec<ChunkInfo>,
        length: u64,
    ) -> Result<u64> {
        let committed = self.put_block(block, chunks, true).await?;
        self.settle(block, committed, length).await
    }

    /// Writes `data` as the only chunk of `block` and seals the block in the
    /// same Raft transaction: one WriteChunk that carries the PutBlock, which
    /// only a pipeline that [`RatisPipeline::seals_with_last_write`] takes.
    /// As [`Self::seal`], checks the recorded length and waits for the other
    /// replicas; returns the commit sequence id.
    pub async fn write_sealed(
        &self,
        block: &OzoneBlock,
        chunk: ChunkInfo,
        data: Bytes,
    ) -> Result<u64> {
        let pipeline = pipeline_of(block)?;
        if !pipeline.seals_with_last_write {
            return Err(StorageError::Internal(format!(
                "block {:?}: a member of its pipeline cannot seal with a write",
                block.id
            )));
        }
        let length = data.len() as u64;
        let seal = put_block_request(block, vec![chunk.clone()], true);
        let content = chunk_message(block, chunk, Some(seal), &data)?;
        let answered = self
            .calls
            .time(
                WRITE_CHUNK,
                self.submit_to_leader(pipeline, write_kind(), Some(content), self.next_call_id()),
            )
            .await?;
        let response = container_response(&answered)?;
        let committed = committed(
            &answered,
            response.write_chunk.and_then(|w| w.committed_block_length),
        )?;
        self.settle(block, committed, length).await
    }

    /// A sealed block's last steps: the datanode recorded `length` bytes
    /// and, with more than one replica, the others have the seal too.
    async fn settle(
        &self,
        block: &OzoneBlock,
        committed: CommittedBlock,
        length: u64,
    ) -> Result<u64> {
        if committed.length != length {
            return Err(StorageError::Internal(format!(
                "datanode recorded {} bytes of block {:?}, {length} were written",
                committed.length, block.id
            )));
        }
        if let Some(pipeline) = block.pipeline.as_ref().filter(|p| p.members.len() > 1) {
            self.watch(pipeline, committed.log_index).await?;
        }
        Ok(committed.commit_sequence_id)
    }

    /// Waits until log `index` is committed on every member, or, when that
    /// does not happen in time, on a majority (as Ozone's own client does).
    /// A pipeline where that happened lately is watched for a majority
    /// only, so a member that is down delays one write, not every block.
    pub async fn watch(&self, pipeline: &RatisPipeline, index: u64) -> Result<Replicated> {
        if !self.lagging.contains_key(&pipeline.id) {
            match self
                .watch_at(pipeline, index, ReplicationLevel::AllCommitted)
                .await
            {
                Ok(()) => return Ok(Replicated::AllCommitted),
                Err(error) => {
                    tracing::info!(pipeline = %pipeline.id, %error, "a pipeline member lags: settling for a majority");
                    self.lagging.insert(pipeline.id, ()).await;
                }
            }
        }
        self.watch_at(pipeline, index, ReplicationLevel::MajorityCommitted)
            .await
            .map(|()| Replicated::MajorityCommitted)
    }

    async fn watch_at(
        &self,
        pipeline: &RatisPipeline,
        index: u64,
        level: ReplicationLevel,
    ) -> Result<()> {
        let answered = self
            .submit(WATCH, pipeline, watch_kind(index, level), None)
            .await?;
        match answered.reply.exception {
            None if success(&answered.reply) => Ok(()),
            Some(Exception::NotReplicatedException(e)) => Err(StorageError::Unavailable(format!(
                "log index {} of pipeline {} not replicated as {:?}",
                e.log_index, pipeline.id, level
            ))),
            _ => Err(StorageError::Unavailable(format!(
                "watch of log index {index} at {} failed",
                answered.node.address
            ))),
        }
    }

    /// Sends one request to the pipeline's leader, following not-leader
    /// redirects and retrying other members when one cannot be reached.
    async fn submit(
        &self,
        call: usize,
        pipeline: &RatisPipeline,
        kind: Kind,
        content: Option<Bytes>,
    ) -> Result<Answered> {
        let call_id = self.next_call_id();
        self.calls
            .time(
                call,
                self.submit_to_leader(pipeline, kind, content, call_id),
            )
            .await
    }

    async fn submit_to_leader(
        &self,
        pipeline: &RatisPipeline,
        kind: Kind,
        content: Option<Bytes>,
        call_id: u64,
    ) -> Result<Answered> {
        let members = pipeline.members.len();
        if members == 0 {
            return Err(StorageError::Unavailable(format!(
                "pipeline {} has no members",
                pipeline.id
            )));
        }
        let watching = matches!(kind, Kind::Watch(_));
        let deadline = if watching {
            self.config.watch_timeout
        } else {
            self.config.request_timeout
        };
        // Every attempt shares one deadline, so a member that hangs bounds
        // the whole call by it, not by it times the attempts.
        let give_up = Instant::now() + deadline;
        let mut target = 0;
        let mut pause = false;
        let mut last = String::from("no attempt made");
        let mut attempts = 0;
        // Members that could not be reached, or said they are not the
        // leader, during this call: until a new leader is elected the
        // followers name a dead or former leader, and following those hints
        // without a pause would spend every attempt in a moment.
        let mut passed_over = vec![false; members];
        for _ in 0..self.config.max_attempts.max(1) {
            if pause {
                tokio::time::sleep(self.config.retry_backoff).await;
            }
            let left = give_up.saturating_duration_since(Instant::now());
            if left.is_zero() {
                last = format!("{last}; no time left within {deadline:?}");
                break;
            }
            attempts += 1;
            let node = &pipeline.members[target];
            let request = RaftClientRequest {
                rpc_request: Some(self.rpc_request(pipeline, node, call_id, deadline)),
                message: content.clone().map(|content| ClientMessage { content }),
                kind: Some(kind),
            };
            let reply = match self.exchange(node, request, left).await {
                Ok(reply) => reply,
                // A watch that timed out was waiting at the leader: asking
                // again only waits again.
                Err(NoReply {
                    reason,
                    retry: true,
                    timed_out,
                }) if !(watching && timed_out) => {
                    tracing::debug!(datanode = %node.address, %reason, "Ratis request failed, next member");
                    last = reason;
                    passed_over[target] = true;
                    target = (target + 1) % members;
                    // Pause once every member has been tried.
                    pause = target == 0;
                    continue;
                }
                Err(NoReply { reason, .. }) => {
                    return Err(StorageError::Unavailable(format!(
                        "pipeline {}: {reason}",
                        pipeline.id
                    )));
                }
            };
            match judge(&reply, pipeline, watching) {
                Verdict::Done => {
                    return Ok(Answered {
                        reply,
                        node: node.clone(),
                    });
                }
                Verdict::Fail(error) => return Err(error),
                Verdict::Redirect(hint) => {
                    last = format!("{} is not the leader", node.address);
                    passed_over[target] = true;
                    // Without a hint, or with one naming a member already
                    // passed over, an election may be under way.
                    let hint = hint.filter(|&leader| !passed_over[leader]);
                    pause = hint.is_none();
                    target = hint.unwrap_or((target + 1) % members);
                }
                Verdict::Wait(reason) => {
                    last = reason;
                    pause = true;
                }
            }
        }
        Err(StorageError::Unavailable(format!(
            "pipeline {}: no member took the request after {attempts} attempts: {last}",
            pipeline.id
        )))
    }

    pub(super) fn rpc_request(
        &self,
        pipeline: &RatisPipeline,
        node: &Datanode,
        call_id: u64,
        deadline: Duration,
    ) -> RaftRpcRequest {
        RaftRpcRequest {
            requestor_id: self.client_id.clone(),
            // A datanode's Ratis peer id is its UUID string.
            reply_id: Bytes::copy_from_slice(node.uuid.as_bytes()),
            raft_group_id: Some(RaftGroupId {
                id: Bytes::copy_from_slice(pipeline.id.as_bytes()),
            }),
            call_id,
            to_leader: true,
            timeout_ms: u64::try_from(deadline.as_millis()).unwrap_or(u64::MAX),
            sliding_window_entry: None,
        }
    }

    /// One request on its own stream: send, half-close, read one reply.
    async fn exchange(
        &self,
        node: &Datanode,
        request: RaftClientRequest,
        deadline: Duration,
    ) -> Result<RaftClientReply, NoReply> {
        let mut rpc = self.rpc(node).map_err(|e| NoReply {
            reason: e.to_string(),
            retry: false,
            timed_out: false,
        })?;
        let exchange =
            async { one_reply(rpc.unordered(stream::iter([request])).await?.into_inner()).await };
        let retry = |reason: String| NoReply {
            reason,
            retry: true,
            timed_out: false,
        };
        let outcome = tokio::time::timeout(deadline, exchange).await;
        self.datanodes.record(node, answered(&outcome));
        match outcome {
            Err(_) => Err(NoReply {
                reason: format!("{}: no reply within {deadline:?}", node.address),
                retry: true,
                timed_out: true,
            }),
            Ok(Err(status)) => Err(status_failure(node, &status)),
            Ok(Ok(None)) => Err(retry(format!(
                "{}: stream closed without a reply",
                node.address
            ))),
            Ok(Ok(Some(reply))) => Ok(reply),
        }
    }

    /// The reused client for `node`, created (unconnected) on first use.
    pub(super) fn rpc(&self, node: &Datanode) -> Result<Rpc> {
        self.channels.get(&node.address, |channel| {
            RaftClientProtocolServiceClient::new(channel)
                .max_decoding_message_size(MAX_MESSAGE_BYTES)
                .max_encoding_message_size(MAX_MESSAGE_BYTES)
        })
    }
}

/// A gRPC error from a Ratis server. Ratis names the Java exception in
/// the `exception-type` trailer; a group the server does not serve
/// (`GroupMismatchException`) stays so however often it is asked.
fn status_failure(node: &Datanode, status: &tonic::Status) -> NoReply {
    let exception = status
        .metadata()
        .get("exception-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    NoReply {
        reason: format!(
            "{}: {:?} {exception} {}",
            node.address,
            status.code(),
            status.message()
        ),
        retry: !exception.ends_with("GroupMismatchException"),
        timed_out: false,
    }
}

pub(super) fn write_kind() -> Kind {
    Kind::Write(WriteRequestType {
        replication: ReplicationLevel::Majority as i32,
    })
}

fn watch_kind(index: u64, level: ReplicationLevel) -> Kind {
    Kind::Watch(WatchRequestType {
        index,
        replication: level as i32,
    })
}

fn success(reply: &RaftClientReply) -> bool {
    reply.rpc_reply.as_ref().is_some_and(|r| r.success)
}

/// Sorts a reply into done, retry elsewhere, retry later or failure.
pub(super) fn judge(reply: &RaftClientReply, pipeline: &RatisPipeline, watching: bool) -> Verdict {
    let failed = |what: &str, class: &str, text: &str| {
        Verdict::Fail(StorageError::Unavailable(format!(
            "pipeline {}: {what}: {class}: {text}",
            pipeline.id
        )))
    };
    match &reply.exception {
        None if success(reply) => Verdict::Done,
        None => failed("request refused", "no exception given", ""),
        Some(Exception::NotLeaderException(e)) => Verdict::Redirect(
            e.suggested_leader
                .as_ref()
                .and_then(|leader| std::str::from_utf8(&leader.id).ok())
                .and_then(|uuid| pipeline.members.iter().position(|m| m.uuid == uuid)),
        ),
        Some(Exception::LeaderNotReadyException(_)) => {
            Verdict::Wait(format!("pipeline {}: leader not ready", pipeline.id))
        }
        // The watcher decides what an index short of its level means.
        Some(Exception::NotReplicatedException(_)) if watching => Verdict::Done,
        Some(Exception::NotReplicatedException(e)) => failed(
            "write not replicated",
            "NotReplicatedException",
            &format!("log index {}", e.log_index),
        ),
        // The leader checks the block token before it logs a write (the
        // datanode's read path answers BLOCK_TOKEN_VERIFICATION_FAILED too).
        Some(Exception::StateMachineException(e))
            if e.error_msg.contains("BLOCK_TOKEN_VERIFICATION_FAILED") =>
        {
            Verdict::Fail(StorageError::TokenRefused(format!(
                "pipeline {}: {}",
                pipeline.id, e.error_msg
            )))
        }
        Some(Exception::StateMachineException(e)) => {
            failed("datanode refused", &e.exception_class_name, &e.error_msg)
        }
        Some(Exception::AlreadyClosedException(e)) => {
            failed("group closed", &e.exception_class_name, &e.error_msg)
        }
        Some(
            Exception::LeaderSteppingDownException(e) | Exception::TransferLeadershipException(e),
        ) => Verdict::Wait(format!(
            "pipeline {}: {}: {}",
            pipeline.id, e.class_name, e.error_message
        )),
        Some(
            Exception::DataStreamException(e)
            | Exception::ReadException(e)
            | Exception::ReadIndexException(e),
        ) => failed("request failed", &e.class_name, &e.error_message),
    }
}

/// The container command a Ratis reply carries, if it succeeded.
pub(super) fn container_response(answered: &Answered) -> Result<ContainerCommandResponse> {
    let content = answered
        .reply
        .message
        .as_ref()
        .map(|m| m.content.clone())
        .unwrap_or_default();
    let response = ContainerCommandResponse::decode(content).map_err(|e| {
        StorageError::Internal(format!(
            "datanode {}: undecodable container answer: {e}",
            answered.node.address
        ))
    })?;
    match response.result() {
        dn::Result::Success => Ok(response),
        result => Err(result_error(&answered.node, result, response.message())),
    }
}

/// A Ratis message's content for a container command: the header's length
/// (4 bytes, big-endian), the header, then the data that was left out of it.
fn message_content(header: &ContainerCommandRequest, data: &Bytes) -> Bytes {
    let header = header.encode_to_vec();
    let mut content = BytesMut::with_capacity(4 + header.len() + data.len());
    // A header is a few hundred bytes: far below 4 GiB.
    content.put_u32(header.len() as u32);
    content.extend_from_slice(&header);
    content.extend_from_slice(data);
    content.freeze()
}

/// The WriteChunk message of `data` as chunk `chunk` of `block`.
pub(super) fn write_chunk_message(
    block: &OzoneBlock,
    chunk: ChunkInfo,
    data: &Bytes,
) -> Result<Bytes> {
    chunk_message(block, chunk, None, data)
}

/// A WriteChunk message, carrying the block's PutBlock when `seal` is given.
fn chunk_message(
    block: &OzoneBlock,
    chunk: ChunkInfo,
    seal: Option<dn::PutBlockRequest>,
    data: &Bytes,
) -> Result<Bytes> {
    let pipeline = pipeline_of(block)?;
    if chunk.len != data.len() as u64 {
        return Err(StorageError::InvalidArgument(format!(
            "chunk {} says {} bytes but carries {}",
            chunk.chunk_name,
            chunk.len,
            data.len()
        )));
    }
    let header = ContainerCommandRequest {
        write_chunk: Some(dn::WriteChunkRequest {
            block_id: datanode_block_id(block),
            chunk_data: Some(chunk),
            data: None,
            block: seal,
        }),
        ..command(dn::Type::WriteChunk, block, pipeline)
    };
    Ok(message_content(&header, data))
}

/// Records `chunks` as `block`'s chunk list; `eof` closes the block.
fn put_block_request(block: &OzoneBlock, chunks: Vec<ChunkInfo>, eof: bool) -> dn::PutBlockRequest {
    dn::PutBlockRequest {
        block_data: BlockData {
            block_id: datanode_block_id(block),
            flags: None,
            metadata: vec![dn::KeyValue {
                key: BLOCK_TYPE_METADATA.0.into(),
                value: Some(BLOCK_TYPE_METADATA.1.into()),
            }],
            chunks,
            size: None,
        },
        eof: Some(eof),
    }
}

/// The block as the datanode that answered recorded it.
fn committed(
    answered: &Answered,
    block: Option<dn::CommittedBlockLength>,
) -> Result<CommittedBlock> {
    let block = block.ok_or_else(|| {
        StorageError::Internal(format!(
            "datanode {}: the answer to a seal lacks the committed block",
            answered.node.address
        ))
    })?;
    Ok(CommittedBlock {
        commit_sequence_id: block.block_id.block_commit_sequence_id(),
        length: u64::try_from(block.block_length).unwrap_or_default(),
        log_index: answered.reply.log_index,
    })
}

pub(super) fn pipeline_of(block: &OzoneBlock) -> Result<&RatisPipeline> {
    block.pipeline.as_ref().ok_or_else(|| {
        StorageError::Internal(format!(
            "block {:?} came without a Ratis pipeline",
            block.id
        ))
    })
}

/// A container command addressed to the group's leader, as Ozone's client
/// sends it.
fn command(cmd: dn::Type, block: &OzoneBlock, pipeline: &RatisPipeline) -> ContainerCommandRequest {
    let leader = pipeline.members.first().map_or("", |m| m.uuid.as_str());
    container_command(cmd, block, leader)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BlockId;
    use crate::ozone::dn_protocol::CLIENT_VERSION;
    use crate::ozone::proto::ratis::common::{
        NotLeaderException, NotReplicatedException, RaftPeer, RaftRpcReply, StateMachineException,
    };

    const GROUP: &str = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";

    fn pipeline() -> RatisPipeline {
        RatisPipeline {
            id: uuid::Uuid::parse_str(GROUP).unwrap(),
            members: ["leader", "f1", "f2"]
                .iter()
                .enumerate()
                .map(|(i, uuid)| Datanode {
                    uuid: (*uuid).into(),
                    address: format!("127.0.0.1:{}", 1 + i),
                })
                .collect(),
            seals_with_last_write: true,
        }
    }

    fn block() -> OzoneBlock {
        OzoneBlock {
            id: BlockId {
                container: 3,
                local: 111,
            },
            commit_sequence_id: 0,
            offset: 0,
            length: 1024,
            token: None,
            datanodes: Vec::new(),
            part_number: None,
            pipeline: Some(pipeline()),
        }
    }

    fn reply(success: bool, exception: Option<Exception>) -> RaftClientReply {
        RaftClientReply {
            rpc_reply: Some(RaftRpcReply {
                success,
                ..Default::default()
            }),
            exception,
            ..Default::default()
        }
    }

    /// The bytes of field `field` in `message` when it is length-delimited.
    fn field(message: &[u8], wanted: u32) -> Option<Vec<u8>> {
        let mut rest = message;
        while !rest.is_empty() {
            let key = prost::encoding::decode_varint(&mut rest).ok()?;
            let (number, wire) = ((key >> 3) as u32, key & 7);
            let value = match wire {
                0 => {
                    let v = prost::encoding::decode_varint(&mut rest).ok()?;
                    let mut out = Vec::new();
                    prost::encoding::encode_varint(v, &mut out);
                    out
                }
                2 => {
                    let len = prost::encoding::decode_varint(&mut rest).ok()? as usize;
                    let (value, tail) = rest.split_at(len);
                    rest = tail;
                    value.to_vec()
                }
                _ => return None,
            };
            if number == wanted {
                return Some(value);
            }
        }
        None
    }

    #[test]
    fn frames_the_header_then_the_raw_data() {
        let data = Bytes::from_static(b"chunk bytes");
        let header = ContainerCommandRequest {
            write_chunk: Some(dn::WriteChunkRequest {
                block_id: datanode_block_id(&block()),
                chunk_data: None,
                data: None,
                block: None,
            }),
            ..command(dn::Type::WriteChunk, &block(), &pipeline())
        };
        let content = message_content(&header, &data);
        let length = u32::from_be_bytes(content[..4].try_into().unwrap()) as usize;
        let decoded = ContainerCommandRequest::decode(&content[4..4 + length]).unwrap();
        assert_eq!(decoded.cmd_type(), dn::Type::WriteChunk);
        assert_eq!(decoded.cmd_type, 12);
        assert_eq!(decoded.container_id, 3);
        assert_eq!(decoded.datanode_uuid, "leader");
        assert_eq!(decoded.version, Some(CLIENT_VERSION));
        let write = decoded.write_chunk.unwrap();
        assert_eq!(write.block_id.local_id, 111);
        assert_eq!(write.data, None, "the data travels after the header");
        assert_eq!(&content[4 + length..], b"chunk bytes");
        // WriteChunk is field 17 of the command.
        assert!(field(&content[4..4 + length], 17).is_some());
    }

    #[test]
    fn a_sealing_write_carries_the_closing_put_block_of_its_one_chunk() {
        let data = Bytes::from_static(b"abc");
        let seal = put_block_request(&block(), vec![three_byte_chunk()], true);
        let content = chunk_message(&block(), three_byte_chunk(), Some(seal), &data).unwrap();
        let length = u32::from_be_bytes(content[..4].try_into().unwrap()) as usize;
        let decoded = ContainerCommandRequest::decode(&content[4..4 + length]).unwrap();
        assert_eq!(decoded.cmd_type(), dn::Type::WriteChunk);
        let write = decoded.write_chunk.unwrap();
        let put = write.block.expect("the PutBlock rides along");
        assert_eq!(put.eof, Some(true));
        assert_eq!(put.block_data.block_id.local_id, 111);
        assert_eq!(put.block_data.chunks, vec![three_byte_chunk()]);
        assert_eq!(&content[4 + length..], b"abc");
        // A plain write carries none.
        let plain = write_chunk_message(&block(), three_byte_chunk(), &data).unwrap();
        let length = u32::from_be_bytes(plain[..4].try_into().unwrap()) as usize;
        let decoded = ContainerCommandRequest::decode(&plain[4..4 + length]).unwrap();
        assert_eq!(decoded.write_chunk.unwrap().block, None);
    }

    #[tokio::test]
    async fn a_pipeline_with_an_older_member_is_never_sent_a_sealing_write() {
        let client = RatisClient::new(RatisConfig::default());
        let mut old = block();
        old.pipeline.as_mut().unwrap().seals_with_last_write = false;
        let error = client
            .write_sealed(&old, three_byte_chunk(), Bytes::from_static(b"abc"))
            .await
            .unwrap_err();
        assert!(matches!(error, StorageError::Internal(_)), "{error}");
    }

    #[test]
    fn a_put_block_has_no_trailing_data() {
        let header = command(dn::Type::PutBlock, &block(), &pipeline());
        let content = message_content(&header, &Bytes::new());
        let length = u32::from_be_bytes(content[..4].try_into().unwrap()) as usize;
        assert_eq!(content.len(), 4 + length);
        assert_eq!(
            ContainerCommandRequest::decode(&content[4..])
                .unwrap()
                .cmd_type,
            6
        );
    }

    #[test]
    fn addresses_the_leader_of_the_group() {
        let client = RatisClient::new(RatisConfig::default());
        let p = pipeline();
        let rpc = client.rpc_request(&p, &p.members[1], 42, Duration::from_secs(7));
        let encoded = rpc.encode_to_vec();
        let requestor = field(&encoded, 1).unwrap();
        assert_eq!(requestor.len(), 16);
        assert_eq!(field(&encoded, 2).unwrap(), b"f1");
        let group = field(&field(&encoded, 3).unwrap(), 1).unwrap();
        assert_eq!(group, uuid::Uuid::parse_str(GROUP).unwrap().as_bytes());
        assert_eq!(field(&encoded, 4).unwrap(), [42]);
        assert_eq!(field(&encoded, 5).unwrap(), [1]);
        let mut millis = Vec::new();
        prost::encoding::encode_varint(7000, &mut millis);
        assert_eq!(field(&encoded, 13).unwrap(), millis);
    }

    #[test]
    fn encodes_a_watch_and_a_majority_write() {
        let watch = RaftClientRequest {
            kind: Some(watch_kind(99, ReplicationLevel::AllCommitted)),
            ..Default::default()
        }
        .encode_to_vec();
        let body = field(&watch, 6).expect("watch is field 6");
        assert_eq!(field(&body, 1).unwrap(), [99]);
        assert_eq!(field(&body, 2).unwrap(), [3], "ALL_COMMITTED is 3");
        assert_eq!(ReplicationLevel::MajorityCommitted as i32, 2);
        assert!(field(&watch, 2).is_none(), "a watch carries no message");

        let write = RaftClientRequest {
            message: Some(ClientMessage {
                content: Bytes::from_static(b"x"),
            }),
            kind: Some(write_kind()),
            ..Default::default()
        }
        .encode_to_vec();
        // MAJORITY is 0, so the write type is present but empty.
        assert_eq!(field(&write, 3).unwrap(), Vec::<u8>::new());
        assert_eq!(field(&field(&write, 2).unwrap(), 1).unwrap(), b"x");
    }

    #[test]
    fn follows_the_suggested_leader() {
        let p = pipeline();
        let suggested = |id: &[u8]| {
            reply(
                false,
                Some(Exception::NotLeaderException(NotLeaderException {
                    suggested_leader: Some(RaftPeer {
                        id: Bytes::copy_from_slice(id),
                        ..Default::default()
                    }),
                    peers_in_conf: Vec::new(),
                })),
            )
        };
        assert!(matches!(
            judge(&suggested(b"f2"), &p, false),
            Verdict::Redirect(Some(2))
        ));
        assert!(matches!(
            judge(&suggested(b"stranger"), &p, false),
            Verdict::Redirect(None)
        ));
    }

    #[test]
    fn judges_replies() {
        let p = pipeline();
        assert!(matches!(
            judge(&reply(true, None), &p, false),
            Verdict::Done
        ));
        assert!(matches!(
            judge(&reply(false, None), &p, false),
            Verdict::Fail(StorageError::Unavailable(_))
        ));
        let refused = reply(
            false,
            Some(Exception::StateMachineException(StateMachineException {
                exception_class_name: "StorageContainerException".into(),
                error_msg: "ContainerNotOpen".into(),
            })),
        );
        assert!(matches!(
            judge(&refused, &p, false),
            Verdict::Fail(StorageError::Unavailable(m)) if m.contains("ContainerNotOpen")
        ));
        let forged = reply(
            false,
            Some(Exception::StateMachineException(StateMachineException {
                exception_class_name: "StorageContainerException".into(),
                error_msg: "BLOCK_TOKEN_VERIFICATION_FAILED: Invalid token for user: s3gw".into(),
            })),
        );
        assert!(matches!(
            judge(&forged, &p, false),
            Verdict::Fail(StorageError::TokenRefused(_))
        ));
        let not_ready = reply(
            false,
            Some(Exception::LeaderNotReadyException(Default::default())),
        );
        assert!(matches!(judge(&not_ready, &p, false), Verdict::Wait(_)));
        let short = reply(
            false,
            Some(Exception::NotReplicatedException(NotReplicatedException {
                call_id: 1,
                replication: ReplicationLevel::AllCommitted as i32,
                log_index: 5,
            })),
        );
        assert!(matches!(judge(&short, &p, true), Verdict::Done));
        assert!(matches!(judge(&short, &p, false), Verdict::Fail(_)));
    }

    #[test]
    fn reads_the_container_answer() {
        let node = pipeline().members[0].clone();
        let answer = |result: dn::Result| Answered {
            reply: RaftClientReply {
                message: Some(ClientMessage {
                    content: ContainerCommandResponse {
                        cmd_type: dn::Type::PutBlock as i32,
                        result: result as i32,
                        message: Some("why".into()),
                        ..Default::default()
                    }
                    .encode_to_vec()
                    .into(),
                }),
                ..Default::default()
            },
            node: node.clone(),
        };
        assert!(container_response(&answer(dn::Result::Success)).is_ok());
        assert!(matches!(
            container_response(&answer(dn::Result::ContainerNotFound)),
            Err(StorageError::Unavailable(m)) if m.contains("why")
        ));
    }

    #[test]
    fn gives_up_on_a_group_the_server_does_not_serve() {
        let node = pipeline().members[0].clone();
        let mut status = tonic::Status::internal("group-0D5C0A3C2F11 not found.");
        status.metadata_mut().insert(
            "exception-type",
            "org.apache.ratis.protocol.exceptions.GroupMismatchException"
                .parse()
                .unwrap(),
        );
        let failure = status_failure(&node, &status);
        assert!(!failure.retry);
        assert!(failure.reason.contains("not found"), "{}", failure.reason);
        assert!(status_failure(&node, &tonic::Status::unavailable("down")).retry);
    }

    /// The first chunk of block 111, three bytes, unchecksummed.
    fn three_byte_chunk() -> ChunkInfo {
        ChunkInfo {
            chunk_name: "111_chunk_1".into(),
            offset: 0,
            len: 3,
            metadata: Vec::new(),
            checksum_data: Default::default(),
        }
    }

    #[tokio::test]
    async fn an_unreachable_pipeline_is_unavailable() {
        let client = RatisClient::new(RatisConfig {
            max_attempts: 3,
            retry_backoff: Duration::from_millis(1),
            ..RatisConfig::default()
        });
        let chunk = three_byte_chunk();
        let result = client
            .write_chunk(&block(), chunk, Bytes::from_static(b"abc"))
            .await;
        assert!(
            matches!(&result, Err(StorageError::Unavailable(m)) if m.contains("3 attempts")),
            "{result:?}"
        );
    }

    #[tokio::test]
    async fn a_member_that_never_answers_is_bounded_by_one_deadline() {
        // Accepts connections and never says a word, as a hung datanode.
        let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = silent.local_addr().unwrap().to_string();
        let held = tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((socket, _)) = silent.accept().await {
                open.push(socket);
            }
        });
        let client = RatisClient::new(RatisConfig {
            request_timeout: Duration::from_millis(300),
            max_attempts: 5,
            retry_backoff: Duration::from_millis(1),
            ..RatisConfig::default()
        });
        let mut hung = block();
        if let Some(p) = hung.pipeline.as_mut() {
            p.members.truncate(1);
            p.members[0].address = address;
        }
        let chunk = three_byte_chunk();
        let result = tokio::time::timeout(
            Duration::from_secs(10),
            client.write_chunk(&hung, chunk, Bytes::from_static(b"abc")),
        )
        .await
        .expect("the call ends by itself");
        assert!(
            matches!(&result, Err(StorageError::Unavailable(m)) if m.contains("no time left")),
            "{result:?}"
        );
        held.abort();
    }

    #[tokio::test]
    async fn refuses_a_chunk_whose_length_lies() {
        let client = RatisClient::new(RatisConfig::default());
        let chunk = ChunkInfo {
            chunk_name: "111_chunk_1".into(),
            offset: 0,
            len: 4,
            metadata: Vec::new(),
            checksum_data: Default::default(),
        };
        let result = client
            .write_chunk(&block(), chunk, Bytes::from_static(b"abc"))
            .await;
        assert!(matches!(result, Err(StorageError::InvalidArgument(_))));
    }
}
