//! The OM's redb database, opened again after an I/O failure. Once a read,
//! write or fsync of its file has failed, redb refuses every later
//! transaction, reads included (its cache may no longer match the file),
//! until the database is opened anew, which runs its crash recovery.
//! Without this, one moment of a full disk would leave the gateway failing
//! every request until it was restarted.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use redb::{Builder, Database, ReadTransaction, WriteTransaction};

use super::super::DbResult;
use crate::{Result, StorageError};

/// How long reopening waits for the transactions still running on the
/// failed database to end: they hold its file lock.
const REOPEN_WAIT: Duration = Duration::from_secs(5);

pub(crate) struct ReopeningDb {
    path: PathBuf,
    /// redb's page cache, in bytes, for every opening.
    cache_bytes: usize,
    /// `None` while a reopen is due and has not succeeded yet.
    db: RwLock<Option<Arc<Database>>>,
    failed: AtomicBool,
}

impl ReopeningDb {
    pub(crate) fn open(path: &Path, cache_bytes: usize) -> Result<Self> {
        Ok(Self {
            path: path.to_owned(),
            cache_bytes,
            db: RwLock::new(Some(Arc::new(create(path, cache_bytes).db()?))),
            failed: AtomicBool::new(false),
        })
    }

    pub(crate) fn begin_read(&self) -> Result<ReadTransaction> {
        self.begin(|db| db.begin_read().db())
    }

    pub(crate) fn begin_write(&self) -> Result<WriteTransaction> {
        self.begin(|db| db.begin_write().db())
    }

    /// True once an I/O error hit the database and until it is reopened,
    /// which may wait for the transactions still running on it.
    pub(crate) fn reopen_due(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// Records that an I/O error hit the database (a failed commit), so the
    /// next transaction reopens it first.
    pub(crate) fn failed_io(&self) {
        self.failed.store(true, Ordering::Release);
    }

    /// Starts a transaction; one refused for an I/O failure (redb's
    /// "previous I/O error" among them) is retried once on a reopened database.
    fn begin<T>(&self, start: impl Fn(&Database) -> Result<T>) -> Result<T> {
        match start(&*self.current()?) {
            Err(StorageError::Io(_)) => {
                self.failed_io();
                start(&*self.current()?)
            }
            other => other,
        }
    }

    fn current(&self) -> Result<Arc<Database>> {
        if self.failed.load(Ordering::Acquire) {
            self.reopen()?;
        }
        let slot = self
            .db
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        slot.clone().ok_or_else(unavailable)
    }

    fn reopen(&self) -> Result<()> {
        let mut slot = self
            .db
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if !self.failed.load(Ordering::Acquire) {
            return Ok(()); // another caller reopened it meanwhile
        }
        let deadline = Instant::now() + REOPEN_WAIT;
        if let Some(mut old) = slot.take() {
            // Callers between `current` and their transaction's start hold
            // a clone for a moment; the database closes with the last one.
            while let Err(shared) = Arc::try_unwrap(old) {
                if Instant::now() > deadline {
                    *slot = Some(shared);
                    return Err(unavailable());
                }
                old = shared;
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        loop {
            match create(&self.path, self.cache_bytes) {
                Ok(db) => {
                    tracing::warn!(path = %self.path.display(), "metadata store reopened after an I/O error");
                    *slot = Some(Arc::new(db));
                    self.failed.store(false, Ordering::Release);
                    return Ok(());
                }
                // Transactions begun before the failure still hold the file.
                Err(redb::DatabaseError::DatabaseAlreadyOpen) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => {
                    tracing::warn!(error = %e, "metadata store cannot be reopened yet");
                    return Err(e).db();
                }
            }
        }
    }
}

fn unavailable() -> StorageError {
    StorageError::Unavailable("the metadata store is recovering from an I/O error".into())
}

/// Opens (or creates) the database at `path` with a page cache of
/// `cache_bytes`.
fn create(path: &Path, cache_bytes: usize) -> std::result::Result<Database, redb::DatabaseError> {
    Builder::new().set_cache_size(cache_bytes).create(path)
}
