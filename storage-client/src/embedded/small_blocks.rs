//! The DN role's store for small blocks: `dn.redb` beside the OM's
//! database, one row per block (a block written and sealed in one piece of
//! at most `small_block_max` bytes), with group commit.
//!
//! A small block in a file of its own costs a file create, two fdatasyncs
//! (bytes and checksums) and a directory fsync, none of them shared with
//! the PUTs around it. Here concurrent writers queue their blocks to one
//! thread, which inserts every block queued so far in one durable redb
//! transaction and only then answers them: N concurrent small PUTs cost one
//! fsync of the DN and (in the OM's own group commit) one of the OM.
//!
//! A row holds what a block file pair holds: the checksum window, the
//! CRC32 of every window and the bytes; reads verify them, so a flipped bit
//! is an error, never wrong bytes. Rows are addressed by block id, and the
//! DN checks the block token before it touches them (see [`super::dn`]).
//! The store knows the longest block it holds, so that a read of a block
//! kept in files looks here only if the block could be here.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use bytes::Bytes;
use redb::{ReadableTable, TableDefinition, WriteTransaction};
use tokio::sync::oneshot;

use super::DbResult;
use super::block_row::{decode, encode, stored_len};
use super::om::reopening_db::ReopeningDb;
use crate::backend::SmallBlockUsage;
use crate::{BlockId, Result, StorageError};

/// (container, local id) -> window (u32 BE), the CRC32 (BE) of every
/// window, then the block's bytes.
const BLOCKS: TableDefinition<(u64, u64), &[u8]> = TableDefinition::new("small_blocks");
/// Name -> total: how many rows `BLOCKS` holds and their bytes, kept in the
/// same transactions, so the DN can say what it stores without a scan
/// (tests and `/metrics` compare it with the live objects), and the
/// longest block stored since the store was last empty.
const USAGE: TableDefinition<&str, u64> = TableDefinition::new("usage");
const COUNT: &str = "blocks";
const BYTES: &str = "bytes";
const LONGEST: &str = "longest";

/// Blocks per transaction at most, bounding one commit's size and how long
/// the first writer of a batch waits behind the others.
const MAX_BATCH: usize = 256;

/// The largest `small_block_max` accepted: the longest block a store that
/// predates `LONGEST` may hold.
const SMALL_BLOCK_LIMIT: u64 = 1024 * 1024;

struct Put {
    block: BlockId,
    row: Vec<u8>,
    answer: oneshot::Sender<Result<()>>,
}

/// What one write transaction did to the store.
#[derive(Default)]
struct Change {
    added: SmallBlockUsage,
    removed: SmallBlockUsage,
    /// The length of the longest block added.
    longest_added: u64,
}

/// The store's totals as of a commit.
struct Totals {
    usage: SmallBlockUsage,
    longest: u64,
}

/// The database and the totals its last commit left.
struct Store {
    db: ReopeningDb,
    /// Held across every write transaction (redb runs one at a time
    /// anyway), so that commits publish their totals in commit order.
    writing: Mutex<()>,
    usage: Mutex<SmallBlockUsage>,
    /// Published after the commit that stores a longer block and before
    /// its writer is answered: no reader can know of the block before.
    longest: AtomicU64,
}

impl Store {
    /// Runs `f` in a durable write transaction and commits; `f` says what
    /// it changed.
    fn write(&self, f: impl FnOnce(&WriteTransaction) -> Result<Change>) -> Result<()> {
        let _writing = lock(&self.writing);
        let outcome = (|| {
            // Durability::Immediate, redb's default: committed means fsync'd.
            let txn = self.db.begin_write()?;
            let change = f(&txn)?;
            let after = change_totals(&txn, &change)?;
            txn.commit().db()?;
            Ok(after)
        })();
        match outcome {
            Ok(after) => {
                *lock(&self.usage) = after.usage;
                self.longest.store(after.longest, Ordering::Release);
                Ok(())
            }
            Err(e) => {
                if matches!(e, StorageError::Io(_)) {
                    self.db.failed_io();
                }
                Err(e)
            }
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub(crate) struct SmallBlocks {
    store: Arc<Store>,
    queue: Option<Sender<Put>>,
    thread: Option<JoinHandle<()>>,
    bytes_per_checksum: u32,
}

impl SmallBlocks {
    /// Opens (creating) the store at `path`; blocks. The file must exist
    /// already with the mode it is to keep (redb would use the umask's).
    pub(crate) fn open(path: &Path, bytes_per_checksum: u32, cache_bytes: usize) -> Result<Self> {
        let db = ReopeningDb::open(path, cache_bytes)?;
        let txn = db.begin_write()?;
        txn.open_table(BLOCKS).db()?;
        let totals = read_totals(&txn.open_table(USAGE).db()?)?;
        txn.commit().db()?;
        let store = Arc::new(Store {
            db,
            writing: Mutex::new(()),
            usage: Mutex::new(totals.usage),
            longest: AtomicU64::new(totals.longest),
        });
        let (queue, puts) = mpsc::channel();
        let writer = Arc::clone(&store);
        let thread = std::thread::Builder::new()
            .name("dn-group-commit".into())
            .spawn(move || run(&writer, &puts))?;
        Ok(Self {
            store,
            queue: Some(queue),
            thread: Some(thread),
            bytes_per_checksum,
        })
    }

    /// Stores a whole block durably; returns once the transaction holding
    /// it has committed. A block written again (a retry) is replaced.
    pub(crate) async fn put(&self, block: BlockId, data: &[u8]) -> Result<()> {
        let (answer, rx) = oneshot::channel();
        let stopped = || StorageError::Unavailable("the block store is shutting down".into());
        let put = Put {
            block,
            row: encode(data, self.bytes_per_checksum),
            answer,
        };
        self.queue
            .as_ref()
            .ok_or_else(stopped)?
            .send(put)
            .map_err(|_| stopped())?;
        rx.await.map_err(|_| stopped())?
    }

    /// Whether a block of `length` bytes may be stored here: false for a
    /// block longer than any stored since the store was last empty, which
    /// is then kept in files (every block when `small_block_max` is 0).
    pub(crate) fn may_hold(&self, length: u64) -> bool {
        length <= self.store.longest.load(Ordering::Acquire)
    }

    /// The block's bytes, verified, if it is stored here; `length` is its
    /// committed length. Reads cached pages: cheap enough for the caller's
    /// thread when the block is small.
    pub(crate) fn get(&self, block: BlockId, length: u64) -> Result<Option<Bytes>> {
        let txn = self.store.db.begin_read()?;
        let table = txn.open_table(BLOCKS).db()?;
        let Some(row) = table.get((block.container, block.local)).db()? else {
            return Ok(None);
        };
        decode(block, row.value(), length).map(Some)
    }

    /// Removes those of `blocks` stored here, durably; writes nothing when
    /// none is.
    pub(crate) fn delete(&self, blocks: &[BlockId]) -> Result<()> {
        let present = {
            let txn = self.store.db.begin_read()?;
            let table = txn.open_table(BLOCKS).db()?;
            let mut present = Vec::new();
            for block in blocks {
                if table.get((block.container, block.local)).db()?.is_some() {
                    present.push(*block);
                }
            }
            present
        };
        if present.is_empty() {
            return Ok(());
        }
        self.store.write(|txn| {
            let mut table = txn.open_table(BLOCKS).db()?;
            let mut change = Change::default();
            for block in present {
                if let Some(row) = table.remove((block.container, block.local)).db()? {
                    change.removed.blocks += 1;
                    change.removed.bytes += stored_len(row.value());
                }
            }
            Ok(change)
        })
    }

    /// Removes the rows of `first` and every later block id, which the OM
    /// has not handed out (see `block_file::remove_from`); returns how many.
    pub(crate) fn remove_from(&self, first: BlockId) -> Result<usize> {
        let doomed: Vec<(u64, u64)> = {
            let txn = self.store.db.begin_read()?;
            let table = txn.open_table(BLOCKS).db()?;
            let mut doomed = Vec::new();
            for row in table.range((first.container, first.local)..).db()? {
                let key = row.db()?.0.value();
                if key.1 >= first.local {
                    doomed.push(key);
                }
            }
            doomed
        };
        let ids: Vec<BlockId> = doomed
            .iter()
            .map(|&(container, local)| BlockId { container, local })
            .collect();
        self.delete(&ids)?;
        Ok(ids.len())
    }

    /// What the store holds, as of its last commit.
    pub(crate) fn usage(&self) -> SmallBlockUsage {
        *lock(&self.store.usage)
    }

    /// True while the database waits to be reopened after an I/O error:
    /// the next transaction may wait for that, so not on an async thread.
    pub(crate) fn reopen_due(&self) -> bool {
        self.store.db.reopen_due()
    }
}

impl Drop for SmallBlocks {
    /// Finishes the queued writes, so that the file is closed when the
    /// store is dropped and can be opened again at once.
    fn drop(&mut self) {
        drop(self.queue.take());
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            tracing::error!("the DN group-commit thread panicked");
        }
    }
}

fn read_totals(table: &impl ReadableTable<&'static str, u64>) -> Result<Totals> {
    let get = |name| -> Result<Option<u64>> { Ok(table.get(name).db()?.map(|v| v.value())) };
    let usage = SmallBlockUsage {
        blocks: get(COUNT)?.unwrap_or(0),
        bytes: get(BYTES)?.unwrap_or(0),
    };
    // A store written before `LONGEST` was kept may hold any small block.
    let unrecorded = if usage.blocks == 0 {
        0
    } else {
        SMALL_BLOCK_LIMIT
    };
    let longest = get(LONGEST)?.unwrap_or(unrecorded);
    Ok(Totals { usage, longest })
}

/// Records what a transaction changed; returns the new totals.
fn change_totals(txn: &WriteTransaction, change: &Change) -> Result<Totals> {
    let mut table = txn.open_table(USAGE).db()?;
    let now = read_totals(&table)?;
    let (added, removed) = (&change.added, &change.removed);
    let usage = SmallBlockUsage {
        blocks: (now.usage.blocks + added.blocks).saturating_sub(removed.blocks),
        bytes: (now.usage.bytes + added.bytes).saturating_sub(removed.bytes),
    };
    let longest = if usage.blocks == 0 {
        0
    } else {
        now.longest.max(change.longest_added)
    };
    table.insert(COUNT, usage.blocks).db()?;
    table.insert(BYTES, usage.bytes).db()?;
    table.insert(LONGEST, longest).db()?;
    Ok(Totals { usage, longest })
}

/// The group-commit thread: every put queued so far in one transaction.
fn run(store: &Store, puts: &Receiver<Put>) {
    // Every sender gone: the store was dropped.
    while let Ok(first) = puts.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match puts.try_recv() {
                Ok(put) => batch.push(put),
                Err(_) => break,
            }
        }
        let committed = store.write(|txn| insert_batch(txn, &batch));
        for put in batch {
            // The caller may have gone away; nothing to tell then.
            let _ = put
                .answer
                .send(committed.as_ref().map(|_| ()).map_err(shared));
        }
    }
}

/// Inserts a batch of blocks; says what it added and what it replaced.
fn insert_batch(txn: &WriteTransaction, batch: &[Put]) -> Result<Change> {
    let mut table = txn.open_table(BLOCKS).db()?;
    let mut change = Change::default();
    for put in batch {
        let key = (put.block.container, put.block.local);
        if let Some(old) = table.insert(key, put.row.as_slice()).db()? {
            change.removed.blocks += 1;
            change.removed.bytes += stored_len(old.value());
        }
        let length = stored_len(&put.row);
        change.added.blocks += 1;
        change.added.bytes += length;
        change.longest_added = change.longest_added.max(length);
    }
    Ok(change)
}

/// One error per caller for a failure they all share.
fn shared(e: &StorageError) -> StorageError {
    match e {
        StorageError::Io(io) => StorageError::Io(std::io::Error::new(io.kind(), io.to_string())),
        StorageError::Unavailable(m) => StorageError::Unavailable(m.clone()),
        other => StorageError::Internal(format!("small-block batch failed: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn only_a_block_no_longer_than_one_stored_may_be_here() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dn.redb");
        let id = |local| BlockId {
            container: 1,
            local,
        };
        let store = SmallBlocks::open(&path, 512, 1 << 20).unwrap();
        // Empty (as with small_block_max = 0): reads never look here.
        assert!(!store.may_hold(1));
        store.put(id(1), &[7u8; 100]).await.unwrap();
        store.put(id(2), &[7u8; 40]).await.unwrap();
        assert!(store.may_hold(100));
        assert!(!store.may_hold(101));
        store.delete(&[id(2)]).unwrap();
        assert!(store.may_hold(100), "a 100-byte block is still stored");
        drop(store);
        let store = SmallBlocks::open(&path, 512, 1 << 20).unwrap();
        assert!(store.may_hold(100), "the length outlives a restart");
        assert!(!store.may_hold(101));
        store.delete(&[id(1)]).unwrap();
        assert!(!store.may_hold(1), "an emptied store holds nothing");
    }

    #[tokio::test]
    async fn a_block_written_again_replaces_its_row() {
        let dir = tempfile::tempdir().unwrap();
        let store = SmallBlocks::open(&dir.path().join("dn.redb"), 512, 1 << 20).unwrap();
        let id = BlockId {
            container: 1,
            local: 1,
        };
        store.put(id, &[1u8; 1000]).await.unwrap();
        store.put(id, &[2u8; 600]).await.unwrap();
        let usage = store.usage();
        assert_eq!((usage.blocks, usage.bytes), (1, 600));
        assert_eq!(store.get(id, 600).unwrap().unwrap(), vec![2u8; 600]);
    }
}
