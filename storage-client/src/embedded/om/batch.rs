//! Group commit for the OM's hot write operations (open, allocate, commit,
//! abort and delete of keys).
//!
//! Callers queue an operation to one writer thread. The thread takes every
//! operation queued so far, applies them in order inside one redb write
//! transaction and commits once, so a batch of concurrent PUTs costs one
//! fsync instead of one each; only then is each caller answered, so an
//! acknowledged write is as durable as before. The commit is durable
//! (`Immediate`) when any operation in the batch asks for it, and `None`
//! when all of them are bookkeeping that may be lost in a crash (see
//! `EmbeddedOm::open_key`).
//!
//! The contract that keeps one request's failure from touching another's:
//! an operation returns its outcome as `Ok(Ok(..))` or `Ok(Err(..))`, and
//! whatever it left in the transaction is committed with that outcome, so
//! an operation that refuses (missing bucket, failed condition) validates
//! before it mutates. `Err(..)` means the store itself failed part-way
//! (an I/O error inside redb): the transaction is then abandoned, every
//! operation already applied in it is answered with an error (none of it
//! was committed), and the operations not yet applied go to the next batch.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;

use redb::{Durability, WriteTransaction};
use tokio::sync::oneshot;

use super::Inner;
use crate::embedded::DbResult;
use crate::token::SecretKey;
use crate::{Result, StorageError};

/// Operations per transaction at most, bounding how long the first caller
/// of a batch waits behind the others and how large one transaction grows.
const MAX_BATCH: usize = 256;

/// An operation inside the batch transaction: the outer `Result` is a
/// failure of the store, the inner one the operation's own outcome.
pub(super) type Op<T> =
    Box<dyn FnOnce(&Inner, &SecretKey, &WriteTransaction) -> Result<Result<T>> + Send>;

/// Answers one caller with the batch's commit result.
type Reply = Box<dyn FnOnce(Result<()>) + Send>;

/// A queued operation with its caller's answer channel.
struct Queued<T> {
    durable: bool,
    op: Op<T>,
    answer: oneshot::Sender<Result<T>>,
}

/// What the writer thread needs of a queued operation, whatever its `T`.
trait Job: Send {
    fn durable(&self) -> bool;
    /// Applies the operation; on a store failure, answers the caller with it
    /// and returns `None`.
    fn apply(
        self: Box<Self>,
        inner: &Inner,
        signer: &SecretKey,
        txn: &WriteTransaction,
    ) -> Option<Reply>;
    /// Answers the caller without applying (the batch could not start).
    fn refuse(self: Box<Self>, e: StorageError);
}

impl<T: Send + 'static> Job for Queued<T> {
    fn durable(&self) -> bool {
        self.durable
    }

    fn apply(
        self: Box<Self>,
        inner: &Inner,
        signer: &SecretKey,
        txn: &WriteTransaction,
    ) -> Option<Reply> {
        let answer = self.answer;
        match (self.op)(inner, signer, txn) {
            Ok(outcome) => Some(Box::new(move |committed: Result<()>| {
                // The caller may have gone away; nothing to tell then.
                let _ = answer.send(committed.and(outcome));
            })),
            Err(e) => {
                if matches!(e, StorageError::Io(_)) {
                    inner.db.failed_io();
                }
                let _ = answer.send(Err(e));
                None
            }
        }
    }

    fn refuse(self: Box<Self>, e: StorageError) {
        let _ = self.answer.send(Err(e));
    }
}

pub(super) struct Batcher {
    queue: Option<Sender<Box<dyn Job>>>,
    thread: Option<JoinHandle<()>>,
}

impl Batcher {
    pub(super) fn start(inner: Arc<Inner>) -> Result<Self> {
        let (queue, jobs) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("om-group-commit".into())
            .spawn(move || run(&inner, &jobs))?;
        Ok(Self {
            queue: Some(queue),
            thread: Some(thread),
        })
    }

    /// Queues `op` and waits until the transaction holding it has committed.
    /// `durable`: the caller's result must survive a crash once answered.
    pub(super) async fn submit<T: Send + 'static>(&self, durable: bool, op: Op<T>) -> Result<T> {
        let (answer, rx) = oneshot::channel();
        let stopped = || StorageError::Unavailable("the metadata store is shutting down".into());
        self.queue
            .as_ref()
            .ok_or_else(stopped)?
            .send(Box::new(Queued {
                durable,
                op,
                answer,
            }))
            .map_err(|_| stopped())?;
        rx.await.map_err(|_| stopped())?
    }
}

impl Drop for Batcher {
    /// Finishes the queued batches, so the database is closed when the
    /// store is dropped and can be opened again at once.
    fn drop(&mut self) {
        drop(self.queue.take());
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            tracing::error!("the OM group-commit thread panicked");
        }
    }
}

/// One error per caller for a failure they all share.
fn shared(e: &StorageError) -> StorageError {
    match e {
        StorageError::Io(io) => StorageError::Io(std::io::Error::new(io.kind(), io.to_string())),
        StorageError::Unavailable(m) => StorageError::Unavailable(m.clone()),
        other => StorageError::Internal(format!("metadata batch failed: {other}")),
    }
}

fn run(inner: &Inner, jobs: &Receiver<Box<dyn Job>>) {
    let mut pending: VecDeque<Box<dyn Job>> = VecDeque::new();
    loop {
        if pending.is_empty() {
            match jobs.recv() {
                Ok(job) => pending.push_back(job),
                // Every sender is gone: the store was dropped.
                Err(_) => return,
            }
        }
        while pending.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => pending.push_back(job),
                Err(_) => break,
            }
        }
        commit_batch(inner, &mut pending);
    }
}

/// Applies and commits queued jobs from the front of `pending`: all of
/// them, or those before a job whose store failure abandoned the batch.
fn commit_batch(inner: &Inner, pending: &mut VecDeque<Box<dyn Job>>) {
    let refuse_all = |pending: &mut VecDeque<Box<dyn Job>>, e: &StorageError| {
        for job in pending.drain(..) {
            job.refuse(shared(e));
        }
    };
    // Taken before the transaction: rotating the key writes a transaction
    // of its own, which would wait forever behind ours.
    let signer = match inner.signing_key() {
        Ok(signer) => signer,
        Err(e) => return refuse_all(pending, &e),
    };
    let mut txn = match inner.db.begin_write() {
        Ok(txn) => txn,
        Err(e) => return refuse_all(pending, &e),
    };
    let durable = pending.iter().any(|job| job.durable());
    txn.set_durability(if durable {
        Durability::Immediate
    } else {
        Durability::None
    });
    let mut replies = Vec::with_capacity(pending.len());
    while let Some(job) = pending.pop_front() {
        match job.apply(inner, &signer, &txn) {
            Some(reply) => replies.push(reply),
            None => {
                // Dropping the transaction aborts it: nothing applied so far
                // is committed, and its callers must hear so.
                drop(txn);
                for reply in replies {
                    reply(Err(StorageError::Internal(
                        "metadata batch abandoned after a store failure".into(),
                    )));
                }
                return;
            }
        }
    }
    let committed = txn.commit().db();
    if let Err(StorageError::Io(_)) = committed {
        inner.db.failed_io();
    }
    for reply in replies {
        reply(committed.as_ref().map(|_| ()).map_err(shared));
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::embedded::om::{EmbeddedOm, OmSettings};
    use crate::metadata::{BucketStore, ObjectName, ObjectStore, OpenKey};
    use crate::token::KeyRing;
    use crate::{
        BlockLocation, BucketRef, NewObject, ObjectMeta, Owner, WriteCondition, WriteIntent,
    };

    fn open_om(dir: &std::path::Path) -> EmbeddedOm {
        let settings = OmSettings {
            block_size: 1 << 20,
            token_lifetime: Duration::from_secs(3600),
            key_rotation: Duration::from_secs(3600),
            db_cache: 1 << 20,
            bytes_per_checksum: 512,
        };
        EmbeddedOm::open(&dir.join("om.redb"), Arc::new(KeyRing::default()), settings).unwrap()
    }

    fn object(etag: &str) -> NewObject {
        NewObject {
            etag: etag.into(),
            meta: ObjectMeta::default(),
            checksum: None,
        }
    }

    fn intent(condition: WriteCondition) -> WriteIntent {
        WriteIntent {
            condition,
            ..WriteIntent::default()
        }
    }

    /// The open key's first block, as if 10 bytes had been written to it.
    fn written(open: &OpenKey) -> Vec<BlockLocation> {
        let mut block = open.first_blocks[0].clone();
        block.length = 10;
        vec![block]
    }

    /// A commit queued as the batch thread would receive it.
    fn commit_job(
        owner: &Owner,
        open: &OpenKey,
        blocks: Vec<BlockLocation>,
        obj: NewObject,
    ) -> (Box<dyn Job>, oneshot::Receiver<Result<crate::KeyInfo>>) {
        let (answer, rx) = oneshot::channel();
        let (owner, open) = (owner.clone(), open.clone());
        let op: Op<crate::KeyInfo> = Box::new(move |om, signer, txn| {
            om.commit_object(signer, txn, &owner, &open, &blocks, obj)
        });
        let job = Queued {
            durable: true,
            op,
            answer,
        };
        (Box::new(job), rx)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn refused_commits_do_not_fail_the_rest_of_their_batch() {
        let dir = tempfile::tempdir().unwrap();
        let om = open_om(dir.path());
        let owner = Owner::new("alice");
        om.create_bucket(BucketRef::new(&owner, "b"), "")
            .await
            .unwrap();
        let taken = om
            .create_object(
                &owner,
                ObjectName::new("b", "taken"),
                WriteIntent::default(),
            )
            .await
            .unwrap();
        om.commit_object(&owner, taken.clone(), written(&taken), object("old"))
            .await
            .unwrap();

        let mut opens = Vec::new();
        let none = WriteCondition::None;
        let absent = WriteCondition::IfAbsent;
        // The second and the last are conditional: the second is refused by
        // an older object, the last by the first commit of the same batch.
        for (key, condition) in [
            ("k1", none.clone()),
            ("taken", absent.clone()),
            ("bad", none.clone()),
            ("k2", none),
            ("k1", absent),
        ] {
            opens.push(
                om.create_object(&owner, ObjectName::new("b", key), intent(condition))
                    .await
                    .unwrap(),
            );
        }
        let mut bad_layout = written(&opens[2]);
        bad_layout[0].length = 0;
        let jobs = vec![
            commit_job(&owner, &opens[0], written(&opens[0]), object("e1")),
            // Refused after its check: the open key is consumed.
            commit_job(&owner, &opens[1], written(&opens[1]), object("new")),
            // Refused before any change: the open key stays.
            commit_job(&owner, &opens[2], bad_layout, object("bad")),
            commit_job(&owner, &opens[3], written(&opens[3]), object("e2")),
            // Sees the first commit of the same batch.
            commit_job(&owner, &opens[4], written(&opens[4]), object("e3")),
        ];
        let (mut pending, answers): (VecDeque<_>, Vec<_>) = jobs.into_iter().unzip();
        let inner = Arc::clone(&om.inner);
        tokio::task::spawn_blocking(move || commit_batch(&inner, &mut pending))
            .await
            .unwrap();
        let mut outcomes = Vec::new();
        for rx in answers {
            outcomes.push(rx.await.unwrap());
        }
        assert_eq!(outcomes[0].as_ref().unwrap().etag, "e1");
        assert!(matches!(outcomes[1], Err(StorageError::PreconditionFailed)));
        assert!(matches!(outcomes[2], Err(StorageError::InvalidArgument(_))));
        assert_eq!(outcomes[3].as_ref().unwrap().etag, "e2");
        assert!(matches!(outcomes[4], Err(StorageError::PreconditionFailed)));

        assert_eq!(
            om.lookup(BucketRef::new(&owner, "b").object("k1"))
                .await
                .unwrap()
                .etag,
            "e1"
        );
        assert_eq!(
            om.lookup(BucketRef::new(&owner, "b").object("k2"))
                .await
                .unwrap()
                .etag,
            "e2"
        );
        assert_eq!(
            om.lookup(BucketRef::new(&owner, "b").object("taken"))
                .await
                .unwrap()
                .etag,
            "old"
        );
        assert!(
            om.lookup(BucketRef::new(&owner, "b").object("bad"))
                .await
                .is_err()
        );
        om.abort_object(&owner, &opens[2]).await.unwrap();
        assert!(om.abort_object(&owner, &opens[1]).await.is_err());
        // The refused commits' blocks, and the aborted one's, await reclamation.
        let queued = om.deleted_blocks(u64::MAX, 100).await.unwrap();
        for open in [&opens[1], &opens[2], &opens[4]] {
            let block = open.first_blocks[0].block;
            assert!(queued.contains(&block), "{block:?} not queued");
        }
        assert_eq!(queued.len(), 3);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_store_failure_abandons_the_batch_and_defers_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let om = open_om(dir.path());
        let owner = Owner::new("alice");
        om.create_bucket(BucketRef::new(&owner, "b"), "")
            .await
            .unwrap();
        let first = om
            .create_object(
                &owner,
                ObjectName::new("b", "first"),
                WriteIntent::default(),
            )
            .await
            .unwrap();
        let later = om
            .create_object(
                &owner,
                ObjectName::new("b", "later"),
                WriteIntent::default(),
            )
            .await
            .unwrap();
        let (applied, applied_rx) = commit_job(&owner, &first, written(&first), object("e1"));
        // Mutates, then fails as a broken disk would, half-way.
        let (answer, failed_rx) = oneshot::channel();
        let failing: Op<()> = Box::new(|_, _, txn| {
            txn.open_table(crate::embedded::schema::DELETED_BLOCKS)
                .db()?
                .insert((9, 9), 0)
                .db()?;
            Err(StorageError::Io(std::io::Error::other("disk gone")))
        });
        let failing = Box::new(Queued {
            durable: true,
            op: failing,
            answer,
        });
        let (deferred, deferred_rx) = commit_job(&owner, &later, written(&later), object("e2"));
        let mut pending: VecDeque<Box<dyn Job>> = VecDeque::from([applied, failing, deferred]);
        let inner = Arc::clone(&om.inner);
        let mut pending = tokio::task::spawn_blocking(move || {
            commit_batch(&inner, &mut pending);
            pending
        })
        .await
        .unwrap();
        assert!(applied_rx.await.unwrap().is_err());
        assert!(matches!(failed_rx.await.unwrap(), Err(StorageError::Io(_))));
        // Nothing of the abandoned transaction was committed.
        assert!(
            om.lookup(BucketRef::new(&owner, "b").object("first"))
                .await
                .is_err()
        );
        assert!(om.deleted_blocks(u64::MAX, 10).await.unwrap().is_empty());
        om.abort_object(&owner, &first).await.unwrap();
        // The operation after the failure was not applied; the next batch takes it.
        assert_eq!(pending.len(), 1);
        let inner = Arc::clone(&om.inner);
        tokio::task::spawn_blocking(move || commit_batch(&inner, &mut pending))
            .await
            .unwrap();
        assert_eq!(deferred_rx.await.unwrap().unwrap().etag, "e2");
    }
}
