//! The embedded metadata role: an OM on one redb file. Every write is one
//! redb transaction, so an overwrite, the reclamation bookkeeping and the
//! write condition all happen atomically. A write that returned survives
//! power loss: it was committed with `Durability::Immediate` (fsync), the
//! hot key operations several to a commit (see [`batch`]). The exceptions
//! are the allocations of an upload in progress (`open_key`,
//! `allocate_block`) and its abort, whose loss a crash may cause and
//! start-up repairs.

use std::ops::Bound;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use redb::{Durability, ReadableTable, WriteTransaction};

mod batch;
mod blocks_with_keys;
mod bucket_documents;
mod buckets;
mod credentials;
mod multipart;
mod objects;
pub(super) mod reopening_db;
mod versions;

use batch::{Batcher, Op};
use reopening_db::ReopeningDb;

use super::schema::{
    BLOCKS_WITH_KEYS, BUCKET_DOCUMENTS, BUCKET_VERSIONING, BUCKETS, BucketRecord, COUNTERS,
    CREDENTIALS, CURRENT_VERSIONS, DELETED_BLOCKS, FORMAT, FORMAT_ROW, KEYS, KeyRecord,
    NEXT_LOCAL_ID, OPEN_KEYS, OpenKeyRecord, PARTS, SECRET_KEYS, STORE_FORMAT, SecretKeyRecord,
    StoredBlock, UPLOADS, VERSIONS, bucket_end, decode, encode, object_key,
};
use super::{DbResult, blocking, now_ms};
use crate::backend::SmallBlockUsage;
use crate::metadata::ScanRange;
use crate::token::{self, AccessMode, KeyRing, SecretKey};
use crate::{
    BlockId, BlockLocation, BucketInfo, BytesWithKey, KeyInfo, Owner, Result, StorageError,
    WriteCondition,
};

/// Blocks per container directory, so no directory grows without bound.
const BLOCKS_PER_CONTAINER: u64 = 10_000;

/// A committed object as a lookup or a commit found it: its record, its
/// version id, and the bytes kept with its key (see `blocks_with_keys`).
struct Found {
    record: KeyRecord,
    version_id: Option<String>,
    kept: Option<BytesWithKey>,
}

/// The OM tunables that affect what it hands out.
#[derive(Clone, Debug)]
pub(super) struct OmSettings {
    pub(crate) block_size: u64,
    pub(crate) token_lifetime: Duration,
    pub(crate) key_rotation: Duration,
    /// redb's page cache for `om.redb`, in bytes.
    pub(crate) db_cache: usize,
    /// The checksum window of the blocks kept with their keys.
    pub(crate) bytes_per_checksum: u32,
}

pub(super) struct EmbeddedOm {
    inner: Arc<Inner>,
    /// Declared after `inner`: dropping it waits for the writer thread, the
    /// last other holder of the database.
    batcher: Batcher,
}

struct Inner {
    db: ReopeningDb,
    keys: Arc<KeyRing>,
    settings: OmSettings,
    /// Serialises key rotation so two signers never both create a key.
    rotation: Mutex<()>,
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn upload_gone() -> StorageError {
    StorageError::InvalidArgument("the upload was aborted or has expired".into())
}

/// Frees `blocks`: those kept with their keys at once, in this
/// transaction; the others go to the reclaimer, which removes them from
/// the DN.
fn queue_for_reclaim(
    txn: &WriteTransaction,
    blocks: impl IntoIterator<Item = BlockId>,
) -> Result<()> {
    let now = now_ms();
    for block in blocks {
        if !blocks_with_keys::free(txn, block)? {
            txn.open_table(DELETED_BLOCKS)
                .db()?
                .insert((block.container, block.local), now)
                .db()?;
        }
    }
    Ok(())
}

fn next_counter(txn: &WriteTransaction, name: &str) -> Result<u64> {
    let mut counters = txn.open_table(COUNTERS).db()?;
    let next = counters.get(name).db()?.map_or(1, |v| v.value());
    counters.insert(name, next + 1).db()?;
    Ok(next)
}

fn block_id(local: u64) -> BlockId {
    BlockId {
        container: local.saturating_sub(1) / BLOCKS_PER_CONTAINER + 1,
        local,
    }
}

fn new_block_id(txn: &WriteTransaction) -> Result<BlockId> {
    Ok(block_id(next_counter(txn, NEXT_LOCAL_ID)?))
}

/// The bucket if it exists and `owner` owns it.
fn owned_bucket(
    buckets: &impl ReadableTable<&'static str, &'static [u8]>,
    name: &str,
    owner: &Owner,
) -> Result<BucketRecord> {
    let record: BucketRecord = match buckets.get(name).db()? {
        Some(bytes) => decode(bytes.value())?,
        None => return Err(StorageError::NoSuchBucket),
    };
    if record.owner != owner.access_key {
        return Err(StorageError::AccessDenied);
    }
    Ok(record)
}

/// The rows of `scan` in a table keyed by [`object_key`], in byte order:
/// those of its bucket whose key starts with its prefix, from just past
/// `after` once it has reached the prefix. `entry` maps a whole row name
/// and value.
fn scan_bucket<T>(
    table: &impl ReadableTable<&'static [u8], &'static [u8]>,
    scan: &ScanRange,
    mut entry: impl FnMut(&[u8], &[u8]) -> Result<T>,
) -> Result<Vec<T>> {
    let (bucket, prefix, after, limit) = (
        scan.bucket.as_str(),
        scan.prefix.as_str(),
        scan.after.as_slice(),
        scan.limit,
    );
    let first = object_key(bucket, prefix.as_bytes());
    let after_row = object_key(bucket, after);
    let end = bucket_end(bucket);
    let start = if after >= prefix.as_bytes() {
        Bound::Excluded(after_row.as_slice())
    } else {
        Bound::Included(first.as_slice())
    };
    let mut out = Vec::with_capacity(limit.min(1024));
    for row in table
        .range::<&[u8]>((start, Bound::Excluded(end.as_slice())))
        .db()?
    {
        if out.len() == limit {
            break;
        }
        let (name, value) = row.db()?;
        let name = name.value();
        if !name.starts_with(&first) {
            break;
        }
        out.push(entry(name, value.value())?);
    }
    Ok(out)
}

fn bucket_info(name: &str, record: BucketRecord) -> BucketInfo {
    BucketInfo {
        name: name.to_owned(),
        owner: record.owner,
        created: record.created,
        region: record.region,
    }
}

fn check_condition(condition: &WriteCondition, existing: Option<&KeyRecord>) -> bool {
    match condition {
        WriteCondition::None => true,
        WriteCondition::IfAbsent => existing.is_none(),
        WriteCondition::IfEtag(etag) => {
            existing.is_some_and(|e| e.etag.trim_matches('"') == etag.trim_matches('"'))
        }
        WriteCondition::IfExists => existing.is_some(),
    }
}

/// Checks that `blocks` are this upload's, in object order, and returns them as stored.
fn validate_layout(
    blocks: &[BlockLocation],
    allocated: &[BlockId],
    block_size: u64,
) -> Result<Vec<StoredBlock>> {
    let mut offset = 0;
    let mut stored = Vec::with_capacity(blocks.len());
    for location in blocks {
        let valid = allocated.contains(&location.block)
            && location.offset == offset
            && location.length > 0
            && location.length <= block_size
            && !stored
                .iter()
                .any(|s: &StoredBlock| s.block == location.block);
        if !valid {
            return Err(StorageError::InvalidArgument(
                "the committed block list does not match the upload".into(),
            ));
        }
        stored.push(StoredBlock {
            block: location.block,
            offset,
            length: location.length,
        });
        offset += location.length;
    }
    Ok(stored)
}

impl Inner {
    /// Passes `result` on, first marking the database for a reopen if it
    /// failed an I/O.
    fn noting_io<T>(&self, result: Result<T>) -> Result<T> {
        if let Err(StorageError::Io(_)) = &result {
            self.db.failed_io();
        }
        result
    }

    fn write(&self) -> Result<WriteTransaction> {
        let mut txn = self.db.begin_write()?;
        txn.set_durability(Durability::Immediate);
        Ok(txn)
    }

    /// The key to sign with, rotating (and persisting) when the newest is due.
    fn signing_key(&self) -> Result<SecretKey> {
        let rotation = millis(self.settings.key_rotation);
        let fresh = |now: u64| {
            self.keys
                .newest()
                .filter(|k| now < k.created_ms().saturating_add(rotation))
        };
        if let Some(key) = fresh(now_ms()) {
            return Ok(key);
        }
        let _guard = self.rotation.lock().unwrap_or_else(|e| e.into_inner());
        let now = now_ms();
        if let Some(key) = fresh(now) {
            return Ok(key);
        }
        // Kept long enough to verify the last token it signs.
        let expires = now
            .saturating_add(rotation)
            .saturating_add(millis(self.settings.token_lifetime));
        let key = SecretKey::generate(now, expires);
        let txn = self.write()?;
        let mut live = Vec::new();
        {
            let mut table = txn.open_table(SECRET_KEYS).db()?;
            table
                .insert(
                    key.id().as_u128(),
                    encode(&SecretKeyRecord {
                        created_ms: key.created_ms(),
                        expires_ms: key.expires_ms(),
                        bytes: *key.bytes(),
                    })?
                    .as_slice(),
                )
                .db()?;
            for old in self.keys.all() {
                if old.expires_ms() <= now {
                    table.remove(old.id().as_u128()).db()?;
                } else {
                    live.push(old);
                }
            }
        }
        txn.commit().db()?;
        live.push(key.clone());
        self.keys.replace(live);
        Ok(key)
    }

    fn token(
        &self,
        key: &SecretKey,
        owner: &Owner,
        block: BlockId,
        modes: &[AccessMode],
        max_length: u64,
    ) -> crate::BlockToken {
        let expiry = now_ms()
            .saturating_add(millis(self.settings.token_lifetime))
            .min(key.expires_ms());
        token::issue(key, &owner.access_key, block, modes, max_length, expiry)
    }

    fn write_location(&self, key: &SecretKey, owner: &Owner, block: BlockId) -> BlockLocation {
        let size = self.settings.block_size;
        BlockLocation {
            block,
            offset: 0,
            length: size,
            datanodes: Vec::new(),
            token: Some(self.token(
                key,
                owner,
                block,
                &[AccessMode::Read, AccessMode::Write],
                size,
            )),
            commit_sequence_id: 0,
            replicas: Vec::new(),
            write_group: None,
            bytes_with_key: None,
        }
    }

    /// The object `found` answers with: a READ token on every block,
    /// except the one whose bytes come with it (no DN read needs a token).
    fn key_info(
        &self,
        signer: &SecretKey,
        owner: &Owner,
        bucket: &str,
        key: &str,
        found: Found,
    ) -> KeyInfo {
        let Found {
            record,
            version_id,
            kept,
        } = found;
        // Only a one-block object is kept with its key (`blocks_with_keys`).
        let mut kept = kept.filter(|_| record.blocks.len() == 1);
        let locations = record
            .blocks
            .iter()
            .map(|b| {
                let bytes_with_key = kept.take();
                BlockLocation {
                    block: b.block,
                    offset: b.offset,
                    length: b.length,
                    datanodes: Vec::new(),
                    token: bytes_with_key
                        .is_none()
                        .then(|| self.token(signer, owner, b.block, &[AccessMode::Read], b.length)),
                    commit_sequence_id: 0,
                    replicas: Vec::new(),
                    write_group: None,
                    bytes_with_key,
                }
            })
            .collect();
        KeyInfo {
            bucket: bucket.to_owned(),
            key: key.to_owned(),
            size: record.size,
            etag: record.etag,
            last_modified: record.last_modified,
            owner: record.owner,
            meta: record.meta,
            tags: record.tags,
            checksum: record.checksum,
            locations,
            parts: record.parts,
            version_id,
        }
    }

    fn expire_open_keys(&self, created_before_ms: u64) -> Result<usize> {
        let txn = self.write()?;
        let mut expired = Vec::new();
        {
            let mut table = txn.open_table(OPEN_KEYS).db()?;
            // Open keys are in-flight uploads only, so this table stays small.
            for row in table.iter().db()? {
                let (id, value) = row.db()?;
                let record: OpenKeyRecord = decode(value.value())?;
                if record.created_ms < created_before_ms {
                    expired.push((id.value(), record.blocks));
                }
            }
            for (id, _) in &expired {
                table.remove(*id).db()?;
            }
        }
        queue_for_reclaim(&txn, expired.iter().flat_map(|(_, b)| b.iter().copied()))?;
        txn.commit().db()?;
        Ok(expired.len())
    }

    fn deleted_blocks(&self, queued_before_ms: u64, limit: usize) -> Result<Vec<BlockId>> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(DELETED_BLOCKS).db()?;
        let mut out = Vec::new();
        for row in table.iter().db()? {
            if out.len() == limit {
                break;
            }
            let (id, queued) = row.db()?;
            if queued.value() < queued_before_ms {
                let (container, local) = id.value();
                out.push(BlockId { container, local });
            }
        }
        Ok(out)
    }

    fn forget_deleted(&self, blocks: &[BlockId]) -> Result<()> {
        let txn = self.write()?;
        {
            let mut table = txn.open_table(DELETED_BLOCKS).db()?;
            for block in blocks {
                table.remove((block.container, block.local)).db()?;
            }
        }
        txn.commit().db()
    }
}

/// Refuses a database of a later store format than this build's, which
/// it would misread; records this build's format in a new one and in one
/// of an earlier format (which its tables, created by `open`, upgrade).
fn check_format(txn: &redb::WriteTransaction, path: &Path) -> Result<()> {
    let mut table = txn.open_table(FORMAT).db()?;
    let found = table.get(FORMAT_ROW).db()?.map(|v| v.value());
    match found {
        Some(format) if format > STORE_FORMAT => Err(StorageError::InvalidArgument(format!(
            "{} is in store format {format}, written by a later s3-gateway; this build reads \
             formats up to {STORE_FORMAT}: run that release or a later one",
            path.display()
        ))),
        Some(STORE_FORMAT) => Ok(()),
        // Format 1 and none: only the tables `open` creates are new.
        Some(_) | None => table.insert(FORMAT_ROW, STORE_FORMAT).db().map(drop),
    }
}

impl EmbeddedOm {
    /// Opens or creates the database and loads the token secret keys into `keys`.
    pub(crate) fn open(path: &Path, keys: Arc<KeyRing>, settings: OmSettings) -> Result<Self> {
        let db = ReopeningDb::open(path, settings.db_cache)?;
        let mut txn = db.begin_write()?;
        txn.set_durability(Durability::Immediate);
        check_format(&txn, path)?;
        txn.open_table(BUCKETS).db()?;
        txn.open_table(KEYS).db()?;
        txn.open_table(CREDENTIALS).db()?;
        txn.open_table(OPEN_KEYS).db()?;
        txn.open_table(DELETED_BLOCKS).db()?;
        txn.open_table(COUNTERS).db()?;
        txn.open_table(UPLOADS).db()?;
        txn.open_table(PARTS).db()?;
        txn.open_table(BUCKET_DOCUMENTS).db()?;
        // Added with versioning: a database written before opens with them empty.
        txn.open_table(BUCKET_VERSIONING).db()?;
        txn.open_table(VERSIONS).db()?;
        txn.open_table(CURRENT_VERSIONS).db()?;
        // Added with store format 2.
        txn.open_table(BLOCKS_WITH_KEYS).db()?;
        let mut loaded = Vec::new();
        for row in txn.open_table(SECRET_KEYS).db()?.iter().db()? {
            let (id, value) = row.db()?;
            let record: SecretKeyRecord = decode(value.value())?;
            loaded.push(SecretKey::new(
                uuid::Uuid::from_u128(id.value()),
                record.created_ms,
                record.expires_ms,
                record.bytes,
            ));
        }
        txn.commit().db()?;
        keys.replace(loaded);
        let inner = Arc::new(Inner {
            db,
            keys,
            settings,
            rotation: Mutex::new(()),
        });
        Ok(Self {
            batcher: Batcher::start(Arc::clone(&inner))?,
            inner,
        })
    }

    /// The next block id to allocate. Called at start-up, before any
    /// allocation, no committed record names this block or a later one:
    /// files found for them were written by an upload whose (non-durable)
    /// allocation a crash erased, and nothing will ever reclaim them.
    pub(crate) async fn first_unallocated_block(&self) -> Result<BlockId> {
        self.run(|om| {
            let txn = om.db.begin_read()?;
            let counters = txn.open_table(COUNTERS).db()?;
            let local = counters.get(NEXT_LOCAL_ID).db()?.map_or(1, |v| v.value());
            Ok(block_id(local))
        })
        .await
    }

    /// Runs `op` in the next group commit (see [`batch`]).
    async fn batched<T: Send + 'static>(&self, durable: bool, op: Op<T>) -> Result<T> {
        self.batcher.submit(durable, op).await
    }

    async fn run<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Inner) -> Result<T> + Send + 'static,
    {
        let inner = Arc::clone(&self.inner);
        blocking(move || inner.noting_io(f(&inner))).await
    }

    /// Runs a point read on the calling thread: reading redb's cached pages
    /// takes a few µs, and the trip to the blocking pool and back cost a
    /// small GET more than that (BENCHMARKS.md, "GET without a hand-off").
    /// While the database waits to be reopened after an I/O error, reads go
    /// to the pool as before.
    async fn read_inline<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Inner) -> Result<T> + Send + 'static,
    {
        if self.inner.db.reopen_due() {
            return self.run(f).await;
        }
        self.inner.noting_io(f(&self.inner))
    }

    /// Moves open keys created before `created_before_ms` (all of them when
    /// called at start-up) to reclamation. Returns how many expired.
    pub(crate) async fn expire_open_keys(&self, created_before_ms: u64) -> Result<usize> {
        self.run(move |om| om.expire_open_keys(created_before_ms))
            .await
    }

    /// How many objects' blocks are kept with their keys, and their bytes.
    pub(crate) fn usage_with_keys(&self) -> Result<SmallBlockUsage> {
        let txn = self.inner.db.begin_read()?;
        blocks_with_keys::usage(&txn.open_table(COUNTERS).db()?)
    }

    /// Queued blocks that were queued before `queued_before_ms`.
    pub(crate) async fn deleted_blocks(
        &self,
        queued_before_ms: u64,
        limit: usize,
    ) -> Result<Vec<BlockId>> {
        self.run(move |om| om.deleted_blocks(queued_before_ms, limit))
            .await
    }

    pub(crate) async fn forget_deleted(&self, blocks: Vec<BlockId>) -> Result<()> {
        self.run(move |om| om.forget_deleted(&blocks)).await
    }

    /// Aborts multipart uploads started before `initiated_before_ms`.
    /// Returns how many expired.
    pub(crate) async fn expire_uploads(&self, initiated_before_ms: u64) -> Result<usize> {
        self.run(move |om| om.expire_uploads(initiated_before_ms))
            .await
    }
}
