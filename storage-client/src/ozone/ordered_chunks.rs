//! A block's chunks on Ratis's `ordered` stream, several in flight.
//!
//! A datanode refuses a chunk that reaches the block's file before the one
//! ahead of it (and marks the container UNHEALTHY), so on the `unordered`
//! stream a block's chunks must go one round trip after another. The
//! `ordered` stream numbers its requests (`sliding_window_entry`) and the
//! leader submits them to the Raft log in that order, as Ozone's own
//! client sends them: up to `window` chunks travel at once. A block's first
//! chunk waits for its second before a stream is opened, so a block of one
//! chunk costs one `unordered` call and no stream.
//!
//! When the stream fails (not the leader, a broken connection, no answer in
//! time) every unanswered chunk is sent again, one after another and in
//! order, on the `unordered` stream under its own call id: a chunk the
//! leader already took is answered from its retry cache, not written twice,
//! and the rest of the block follows the same way.

use std::collections::VecDeque;
use std::time::Instant;

use bytes::Bytes;
use futures::SinkExt;
use futures::channel::mpsc;
use tokio::task::JoinHandle;

use crate::{Result, StorageError};

use super::model::{Datanode, RatisPipeline};
use super::proto::ratis::common::{
    ClientMessage, RaftClientReply, RaftClientRequest, RaftRpcRequest, SlidingWindowEntry,
};
use super::ratis_client::{
    Answered, RatisClient, Verdict, WRITE_CHUNK, container_response, judge, write_kind,
};

/// The chunks of one block, written in order with up to `window` unanswered.
pub(crate) struct OrderedChunks {
    client: RatisClient,
    pipeline: RatisPipeline,
    window: usize,
    stream: Option<OrderedStream>,
    /// Sent on the stream and not answered yet, oldest first.
    unanswered: VecDeque<Sent>,
    /// The block's first chunk, not sent until a second one comes.
    held: Option<(u64, Bytes)>,
    /// The stream failed: the block's remaining chunks go one by one.
    one_by_one: bool,
    next_seq: u64,
}

struct Sent {
    call_id: u64,
    content: Bytes,
    at: Instant,
}

/// One `ordered` call to the pipeline's leader; its replies are read by a
/// task of their own (the call's answer headers come with the first reply).
struct OrderedStream {
    node: Datanode,
    requests: mpsc::Sender<RaftClientRequest>,
    replies: tokio::sync::mpsc::Receiver<std::result::Result<RaftClientReply, tonic::Status>>,
    /// Cancelled when the stream is given up; left to see the server's end
    /// of a stream that [`OrderedStream::close`]d.
    reader: Option<JoinHandle<()>>,
}

impl OrderedStream {
    /// Ends the requests; the server ends the stream once it has answered
    /// them all (a cancelled stream is a warning in the datanode's log).
    fn close(mut self) {
        self.reader = None;
    }
}

impl Drop for OrderedStream {
    fn drop(&mut self) {
        if let Some(reader) = &self.reader {
            reader.abort();
        }
    }
}

impl OrderedChunks {
    pub(crate) fn new(client: RatisClient, pipeline: RatisPipeline, window: usize) -> Self {
        Self {
            client,
            pipeline,
            window: window.max(1),
            stream: None,
            unanswered: VecDeque::new(),
            held: None,
            one_by_one: window <= 1,
            next_seq: 1,
        }
    }

    /// Sends the next chunk's WriteChunk message, waiting first while
    /// `window` chunks are unanswered. A failure of an earlier chunk
    /// surfaces here or at [`Self::finish`].
    pub(crate) async fn send(&mut self, content: Bytes) -> Result<()> {
        let call_id = self.client.next_call_id();
        if self.one_by_one {
            return self.send_one(content, call_id).await;
        }
        if self.stream.is_none() {
            // A block of one chunk (most blocks of a cluster whose blocks
            // are one chunk long) needs no stream: the first chunk waits
            // for a second one before a stream is opened.
            let Some((first_call, first)) = self.held.take() else {
                self.held = Some((call_id, content));
                return Ok(());
            };
            self.open();
            self.enqueue(first, first_call).await?;
        }
        self.enqueue(content, call_id).await
    }

    /// Waits until every chunk sent is answered.
    pub(crate) async fn finish(&mut self) -> Result<()> {
        if let Some((call_id, content)) = self.held.take() {
            self.send_one(content, call_id).await?;
        }
        while !self.unanswered.is_empty() {
            self.settle_oldest().await?;
        }
        if let Some(stream) = self.stream.take() {
            stream.close();
        }
        Ok(())
    }

    /// One chunk on the `unordered` stream, answered before it returns.
    async fn send_one(&self, content: Bytes, call_id: u64) -> Result<()> {
        self.client
            .send_chunk(&self.pipeline, content, call_id)
            .await
            .map(drop)
    }

    /// Puts a chunk on the ordered stream once fewer than `window` are
    /// unanswered (or sends it one by one once the stream failed).
    async fn enqueue(&mut self, content: Bytes, call_id: u64) -> Result<()> {
        while !self.one_by_one && self.unanswered.len() >= self.window {
            self.settle_oldest().await?;
        }
        let Some(stream) = self.stream.as_mut().filter(|_| !self.one_by_one) else {
            return self.send_one(content, call_id).await;
        };
        let deadline = self.client.config.request_timeout;
        let request = RaftClientRequest {
            rpc_request: Some(RaftRpcRequest {
                sliding_window_entry: Some(SlidingWindowEntry {
                    seq_num: self.next_seq,
                    is_first: self.next_seq == 1,
                }),
                ..self
                    .client
                    .rpc_request(&self.pipeline, &stream.node, call_id, deadline)
            }),
            message: Some(ClientMessage {
                content: content.clone(),
            }),
            kind: Some(write_kind()),
        };
        self.next_seq += 1;
        self.unanswered.push_back(Sent {
            call_id,
            content,
            at: Instant::now(),
        });
        if stream.requests.send(request).await.is_err() {
            return self.one_by_one("the ordered stream closed").await;
        }
        Ok(())
    }

    fn open(&mut self) {
        let Some(node) = self.pipeline.members.first().cloned() else {
            self.one_by_one = true;
            return;
        };
        let Ok(mut rpc) = self.client.rpc(&node) else {
            self.one_by_one = true;
            return;
        };
        let (requests, outgoing) = mpsc::channel(self.window);
        let (answer, replies) = tokio::sync::mpsc::channel(self.window + 1);
        let reader = tokio::spawn(async move {
            let mut incoming = match rpc.ordered(outgoing).await {
                Ok(response) => response.into_inner(),
                Err(status) => {
                    let _ = answer.send(Err(status)).await;
                    return;
                }
            };
            loop {
                let next = match incoming.message().await {
                    Ok(Some(reply)) => Ok(reply),
                    Ok(None) => return,
                    Err(status) => Err(status),
                };
                let failed = next.is_err();
                if answer.send(next).await.is_err() || failed {
                    return;
                }
            }
        });
        self.stream = Some(OrderedStream {
            node,
            requests,
            replies,
            reader: Some(reader),
        });
    }

    /// Reads the oldest chunk's answer; on a stream that failed, sends the
    /// unanswered chunks one by one instead.
    async fn settle_oldest(&mut self) -> Result<()> {
        let (Some(stream), Some(oldest)) = (self.stream.as_mut(), self.unanswered.front()) else {
            return self.one_by_one("no ordered stream").await;
        };
        let deadline = self.client.config.request_timeout;
        let next = tokio::time::timeout(deadline, stream.replies.recv()).await;
        let node = stream.node.clone();
        let reply = match next {
            Ok(Some(Ok(reply))) => reply,
            Ok(Some(Err(status))) => {
                self.client
                    .datanodes
                    .record(&node, status.code() != tonic::Code::Unavailable);
                let why = format!("{}: {:?} {}", node.address, status.code(), status.message());
                return self.one_by_one(&why).await;
            }
            Ok(None) => return self.one_by_one("the ordered stream ended").await,
            Err(_) => {
                self.client.datanodes.record(&node, false);
                return self.one_by_one("no answer in time").await;
            }
        };
        self.client.datanodes.record(&node, true);
        let answered_call = reply.rpc_reply.as_ref().map(|r| r.call_id);
        if answered_call != Some(oldest.call_id) {
            return Err(StorageError::Internal(format!(
                "pipeline {}: the ordered stream answered call {answered_call:?} before call {}",
                self.pipeline.id, oldest.call_id
            )));
        }
        match judge(&reply, &self.pipeline, false) {
            Verdict::Done => {
                let elapsed = oldest.at.elapsed();
                self.unanswered.pop_front();
                let outcome = container_response(&Answered { reply, node }).map(drop);
                let failed = matches!(
                    outcome,
                    Err(StorageError::Unavailable(_) | StorageError::Internal(_))
                );
                self.client.calls.observe(WRITE_CHUNK, elapsed, failed);
                outcome
            }
            Verdict::Fail(error) => {
                let failed = matches!(
                    error,
                    StorageError::Unavailable(_) | StorageError::Internal(_)
                );
                self.client
                    .calls
                    .observe(WRITE_CHUNK, oldest.at.elapsed(), failed);
                Err(error)
            }
            Verdict::Redirect(_) | Verdict::Wait(_) => {
                self.one_by_one(&format!("{} is not ready to lead", node.address))
                    .await
            }
        }
    }

    /// Gives up the stream: the unanswered chunks, then every later one,
    /// go one after another on the `unordered` stream.
    async fn one_by_one(&mut self, why: &str) -> Result<()> {
        if !self.one_by_one {
            tracing::debug!(pipeline = %self.pipeline.id, why, "ordered chunk writes fall back to one at a time");
        }
        self.one_by_one = true;
        self.stream = None;
        while let Some(sent) = self.unanswered.pop_front() {
            self.client
                .send_chunk(&self.pipeline, sent.content, sent.call_id)
                .await?;
        }
        Ok(())
    }
}
