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
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use redb::{Durability, ReadableTable, WriteTransaction};

mod batch;
mod bucket_documents;
mod multipart;
pub(super) mod reopening_db;
mod versions;

use batch::{Batcher, Op};
use reopening_db::ReopeningDb;

use super::schema::{
    BUCKET_DOCUMENTS, BUCKET_VERSIONING, BUCKETS, BucketRecord, COUNTERS, CREDENTIALS,
    CURRENT_VERSIONS, CredentialRecord, DELETED_BLOCKS, FORMAT, FORMAT_ROW, KEYS, KeyRecord,
    NEXT_LOCAL_ID, NEXT_OPEN_KEY_ID, OPEN_KEYS, OpenKeyRecord, PARTS, SECRET_KEYS, STORE_FORMAT,
    SecretKeyRecord, StoredBlock, UPLOADS, VERSIONS, bucket_end, decode, encode, object_key,
};
use super::{DbResult, blocking, now_ms};
use crate::multipart::{CompleteUpload, NewUpload, PartCommit, PartInfo, UploadInfo};
use crate::om::{
    BucketDocumentStore, BucketStore, CredentialStore, NewBucket, ObjectRef, ObjectStore, OpenKey,
    PartRef, ScanRange, UploadRef, UploadStore, VersionStore, recorded_parts_are, validate_key,
};
use crate::token::{self, AccessMode, KeyRing, SecretKey};
use crate::{
    BlockId, BlockLocation, BucketDocument, BucketInfo, ChecksumAlgorithm, Credential,
    DeleteCondition, Deleted, KeyInfo, ListEntry, MetaEntryChange, NewObject, Owner, Result,
    StorageError, VersionEntry, Versioning, WriteCondition, WriteIntent,
};

/// Blocks per container directory, so no directory grows without bound.
const BLOCKS_PER_CONTAINER: u64 = 10_000;

/// The OM tunables that affect what it hands out.
#[derive(Clone, Debug)]
pub(super) struct OmSettings {
    pub(crate) block_size: u64,
    pub(crate) token_lifetime: Duration,
    pub(crate) key_rotation: Duration,
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

fn queue_for_reclaim(
    txn: &WriteTransaction,
    blocks: impl IntoIterator<Item = BlockId>,
) -> Result<()> {
    let mut deleted = txn.open_table(DELETED_BLOCKS).db()?;
    let now = now_ms();
    for block in blocks {
        deleted.insert((block.container, block.local), now).db()?;
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
        }
    }

    fn key_info(
        &self,
        signer: &SecretKey,
        owner: &Owner,
        bucket: &str,
        key: &str,
        record: KeyRecord,
        version_id: Option<String>,
    ) -> KeyInfo {
        let locations = record
            .blocks
            .iter()
            .map(|b| BlockLocation {
                block: b.block,
                offset: b.offset,
                length: b.length,
                datanodes: Vec::new(),
                token: Some(self.token(signer, owner, b.block, &[AccessMode::Read], b.length)),
                commit_sequence_id: 0,
                replicas: Vec::new(),
                write_group: None,
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

    fn credential(&self, access_key: &str) -> Result<Option<Credential>> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(CREDENTIALS).db()?;
        table
            .get(access_key)
            .db()?
            .map(|v| decode::<CredentialRecord>(v.value()).map(|record| record.0))
            .transpose()
    }

    fn put_credential(&self, cred: &Credential) -> Result<()> {
        let txn = self.write()?;
        let record = encode(&CredentialRecord(cred.clone()))?;
        txn.open_table(CREDENTIALS)
            .db()?
            .insert(cred.access_key.as_str(), record.as_slice())
            .db()?;
        txn.commit().db()
    }

    fn list_credentials(&self) -> Result<Vec<Credential>> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(CREDENTIALS).db()?;
        let mut out = Vec::new();
        for row in table.iter().db()? {
            let (_, value) = row.db()?;
            out.push(decode::<CredentialRecord>(value.value())?.0);
        }
        Ok(out)
    }

    fn access_keys(&self) -> Result<Vec<String>> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(CREDENTIALS).db()?;
        let mut out = Vec::new();
        for row in table.iter().db()? {
            let (access_key, _) = row.db()?;
            out.push(access_key.value().to_owned());
        }
        Ok(out)
    }

    /// One read transaction on the credentials table, as every request's
    /// credential check makes.
    fn ready(&self) -> Result<()> {
        let txn = self.db.begin_read()?;
        txn.open_table(CREDENTIALS).db()?;
        Ok(())
    }

    fn delete_credential(&self, access_key: &str) -> Result<bool> {
        let txn = self.write()?;
        let existed = txn
            .open_table(CREDENTIALS)
            .db()?
            .remove(access_key)
            .db()?
            .is_some();
        txn.commit().db()?;
        Ok(existed)
    }

    fn create_bucket(&self, owner: &Owner, bucket: &NewBucket) -> Result<()> {
        let (name, region) = (bucket.name.as_str(), bucket.region.as_str());
        if name.is_empty() || name.contains('\0') {
            return Err(StorageError::InvalidArgument("invalid bucket name".into()));
        }
        let txn = self.write()?;
        {
            let mut buckets = txn.open_table(BUCKETS).db()?;
            if let Some(existing) = buckets.get(name).db()? {
                let record: BucketRecord = decode(existing.value())?;
                return Err(if record.owner == owner.access_key {
                    StorageError::BucketAlreadyOwnedByYou
                } else {
                    StorageError::BucketAlreadyExists
                });
            }
            let record = BucketRecord {
                owner: owner.access_key.clone(),
                created: SystemTime::now(),
                region: region.to_owned(),
            };
            buckets.insert(name, encode(&record)?.as_slice()).db()?;
        }
        txn.commit().db()
    }

    fn bucket(&self, name: &str) -> Result<BucketInfo> {
        let txn = self.db.begin_read()?;
        let buckets = txn.open_table(BUCKETS).db()?;
        match buckets.get(name).db()? {
            Some(bytes) => Ok(bucket_info(name, decode(bytes.value())?)),
            None => Err(StorageError::NoSuchBucket),
        }
    }

    fn list_buckets(&self, owner: Option<&Owner>) -> Result<Vec<BucketInfo>> {
        let txn = self.db.begin_read()?;
        let buckets = txn.open_table(BUCKETS).db()?;
        let mut out = Vec::new();
        // Bucket counts per deployment are small (S3 caps them per account);
        // the table is in name order, so the result is sorted.
        for row in buckets.iter().db()? {
            let (name, value) = row.db()?;
            let record: BucketRecord = decode(value.value())?;
            if owner.is_none_or(|owner| record.owner == owner.access_key) {
                out.push(bucket_info(name.value(), record));
            }
        }
        Ok(out)
    }

    fn set_bucket_owner(&self, name: &str, from: &Owner, to: &Owner) -> Result<()> {
        let txn = self.write()?;
        {
            let mut buckets = txn.open_table(BUCKETS).db()?;
            let mut record = match owned_bucket(&buckets, name, from) {
                Err(StorageError::AccessDenied) => return Err(StorageError::PreconditionFailed),
                found => found?,
            };
            record.owner = to.access_key.clone();
            buckets.insert(name, encode(&record)?.as_slice()).db()?;
        }
        txn.commit().db()
    }

    fn delete_bucket(&self, owner: &Owner, name: &str) -> Result<()> {
        let txn = self.write()?;
        {
            let mut buckets = txn.open_table(BUCKETS).db()?;
            owned_bucket(&buckets, name, owner)?;
            let keys = txn.open_table(KEYS).db()?;
            let start = object_key(name, b"");
            let end = bucket_end(name);
            if keys
                .range::<&[u8]>(start.as_slice()..end.as_slice())
                .db()?
                .next()
                .is_some()
            {
                return Err(StorageError::BucketNotEmpty);
            }
            if versions::holds_versions(&txn, name)? {
                return Err(StorageError::BucketNotEmpty);
            }
            buckets.remove(name).db()?;
        }
        versions::drop_bucket(&txn, name)?;
        // As in S3, uploads in progress do not keep a bucket alive.
        multipart::drop_bucket_uploads(&txn, name)?;
        bucket_documents::drop_bucket_documents(&txn, name)?;
        txn.commit().db()
    }

    fn lookup(&self, owner: &Owner, object: &ObjectRef) -> Result<KeyInfo> {
        let (bucket, key) = (object.bucket.as_str(), object.key.as_str());
        validate_key(key)?;
        let signer = self.signing_key()?;
        let txn = self.db.begin_read()?;
        owned_bucket(&txn.open_table(BUCKETS).db()?, bucket, owner)?;
        let (record, version_id) = Self::latest(&txn, object)?;
        Ok(self.key_info(&signer, owner, bucket, key, record, version_id))
    }

    /// Version `version_id` of the object, as `lookup` answers the latest.
    fn lookup_version(
        &self,
        owner: &Owner,
        object: &ObjectRef,
        version_id: &str,
    ) -> Result<KeyInfo> {
        let (bucket, key) = (object.bucket.as_str(), object.key.as_str());
        validate_key(key)?;
        let signer = self.signing_key()?;
        let txn = self.db.begin_read()?;
        owned_bucket(&txn.open_table(BUCKETS).db()?, bucket, owner)?;
        let (record, version_id) = Self::version(&txn, object, version_id)?;
        Ok(self.key_info(&signer, owner, bucket, key, record, version_id))
    }

    /// Allocates the open key and its first block. Not durable on its own
    /// (see `EmbeddedOm::create_object`).
    fn create_object(
        &self,
        signer: &SecretKey,
        txn: &WriteTransaction,
        owner: &Owner,
        object: ObjectRef,
        intent: WriteIntent,
    ) -> Result<Result<OpenKey>> {
        let checked = validate_key(&object.key)
            .and_then(|()| owned_bucket(&txn.open_table(BUCKETS).db()?, &object.bucket, owner));
        if let Err(e) = checked {
            return Ok(Err(e));
        }
        let id = next_counter(txn, NEXT_OPEN_KEY_ID)?;
        let block = new_block_id(txn)?;
        let record = OpenKeyRecord {
            bucket: object.bucket.clone(),
            key: object.key.clone(),
            owner: owner.access_key.clone(),
            created_ms: now_ms(),
            blocks: vec![block],
        };
        txn.open_table(OPEN_KEYS)
            .db()?
            .insert(id, encode(&record)?.as_slice())
            .db()?;
        Ok(Ok(OpenKey {
            id,
            object,
            first_blocks: vec![self.write_location(signer, owner, block)],
            intent,
        }))
    }

    /// The open key's record, if `owner` opened it for its bucket and key.
    fn read_open_key(
        txn: &WriteTransaction,
        owner: &Owner,
        open: &OpenKey,
    ) -> Result<OpenKeyRecord> {
        let table = txn.open_table(OPEN_KEYS).db()?;
        let record: OpenKeyRecord = match table.get(open.id).db()? {
            Some(bytes) => decode(bytes.value())?,
            None => return Err(upload_gone()),
        };
        if record.owner != owner.access_key
            || record.bucket != open.object.bucket
            || record.key != open.object.key
        {
            return Err(StorageError::AccessDenied);
        }
        Ok(record)
    }

    fn take_open_key(
        txn: &WriteTransaction,
        owner: &Owner,
        open: &OpenKey,
    ) -> Result<OpenKeyRecord> {
        let record = Self::read_open_key(txn, owner, open)?;
        txn.open_table(OPEN_KEYS).db()?.remove(open.id).db()?;
        Ok(record)
    }

    /// Adds a block to the open key. Not durable on its own, like `open_key`.
    fn allocate_block(
        &self,
        signer: &SecretKey,
        txn: &WriteTransaction,
        owner: &Owner,
        open: &OpenKey,
    ) -> Result<Result<BlockLocation>> {
        let mut record = match Self::read_open_key(txn, owner, open) {
            Ok(record) => record,
            Err(e) => return Ok(Err(e)),
        };
        let block = new_block_id(txn)?;
        record.blocks.push(block);
        txn.open_table(OPEN_KEYS)
            .db()?
            .insert(open.id, encode(&record)?.as_slice())
            .db()?;
        Ok(Ok(self.write_location(signer, owner, block)))
    }

    /// Checks everything first, then consumes the open key: the object
    /// replaces the key's old one if the bucket and the condition allow,
    /// and every block the commit leaves unused is queued for reclamation.
    fn commit_object(
        &self,
        signer: &SecretKey,
        txn: &WriteTransaction,
        owner: &Owner,
        open: &OpenKey,
        blocks: &[BlockLocation],
        obj: NewObject,
    ) -> Result<Result<KeyInfo>> {
        // A bad block list is a caller bug: refusing before any change keeps
        // the upload, so it can still be aborted.
        let checked = Self::read_open_key(txn, owner, open).and_then(|upload| {
            let stored = validate_layout(blocks, &upload.blocks, self.settings.block_size)?;
            Ok((upload, stored))
        });
        let (upload, stored) = match checked {
            Ok(checked) => checked,
            Err(e) => return Ok(Err(e)),
        };
        let existing = Self::check_replace(txn, owner, &upload, &open.intent.condition);
        // From here on the upload is consumed whatever the outcome.
        txn.open_table(OPEN_KEYS).db()?.remove(open.id).db()?;
        let outcome = match existing {
            Ok(existing) => Self::replace(txn, owner, open, existing, stored, obj)?,
            Err(e) => Err(e),
        };
        let used: Vec<BlockId> = match &outcome {
            Ok((record, _)) => record.blocks.iter().map(|b| b.block).collect(),
            Err(_) => Vec::new(),
        };
        queue_for_reclaim(
            txn,
            upload.blocks.iter().copied().filter(|b| !used.contains(b)),
        )?;
        Ok(outcome.map(|(record, version_id)| {
            self.key_info(
                signer,
                owner,
                &upload.bucket,
                &upload.key,
                record,
                version_id,
            )
        }))
    }

    /// Read only: checks the bucket and the write condition, and returns the
    /// object the commit would replace.
    fn check_replace(
        txn: &WriteTransaction,
        owner: &Owner,
        upload: &OpenKeyRecord,
        condition: &WriteCondition,
    ) -> Result<Option<KeyRecord>> {
        owned_bucket(&txn.open_table(BUCKETS).db()?, &upload.bucket, owner)?;
        let keys = txn.open_table(KEYS).db()?;
        let row = object_key(&upload.bucket, upload.key.as_bytes());
        let existing: Option<KeyRecord> = keys
            .get(row.as_slice())
            .db()?
            .map(|v| decode(v.value()))
            .transpose()?;
        if matches!(
            condition,
            WriteCondition::IfEtag(_) | WriteCondition::IfExists
        ) && existing.is_none()
        {
            // S3 answers If-Match on a missing object 404, not 412.
            return Err(StorageError::NoSuchKey);
        }
        if !check_condition(condition, existing.as_ref()) {
            return Err(StorageError::PreconditionFailed);
        }
        Ok(existing)
    }

    /// Writes the key's new record, replacing the old one as the bucket's
    /// versioning says (see [`versions::install`]); a refusal there (a key
    /// a versioned bucket cannot hold) is the inner error.
    fn replace(
        txn: &WriteTransaction,
        owner: &Owner,
        open: &OpenKey,
        existing: Option<KeyRecord>,
        blocks: Vec<StoredBlock>,
        obj: NewObject,
    ) -> Result<Result<(KeyRecord, Option<String>)>> {
        let record = KeyRecord {
            size: blocks.iter().map(|b| b.length).sum(),
            etag: obj.etag,
            last_modified: SystemTime::now(),
            owner: owner.access_key.clone(),
            meta: obj.meta,
            tags: open.intent.tags.clone(),
            checksum: obj.checksum,
            blocks,
            parts: Vec::new(),
        };
        let (bucket, key) = (&open.object.bucket, &open.object.key);
        match versions::install(txn, bucket, key, existing.as_ref(), &record) {
            Ok(version_id) => Ok(Ok((record, version_id))),
            Err(e @ StorageError::InvalidArgument(_)) => Ok(Err(e)),
            Err(e) => Err(e),
        }
    }

    /// Not durable on its own: a lost abort leaves an open key, which the
    /// next start-up expires.
    fn abort_object(txn: &WriteTransaction, owner: &Owner, open: &OpenKey) -> Result<Result<()>> {
        let upload = match Self::read_open_key(txn, owner, open) {
            Ok(upload) => upload,
            Err(e) => return Ok(Err(e)),
        };
        txn.open_table(OPEN_KEYS).db()?.remove(open.id).db()?;
        queue_for_reclaim(txn, upload.blocks)?;
        Ok(Ok(()))
    }

    /// In a versioned bucket, adds a delete marker instead.
    fn delete_object(
        txn: &WriteTransaction,
        owner: &Owner,
        object: &ObjectRef,
        condition: &DeleteCondition,
    ) -> Result<Result<Deleted>> {
        let (bucket, key) = (object.bucket.as_str(), object.key.as_str());
        let row = object_key(bucket, key.as_bytes());
        let checked = validate_key(key)
            .and_then(|()| owned_bucket(&txn.open_table(BUCKETS).db()?, bucket, owner))
            .and_then(|_| {
                txn.open_table(KEYS)
                    .db()?
                    .get(row.as_slice())
                    .db()?
                    .map(|v| decode::<KeyRecord>(v.value()))
                    .transpose()
            });
        // The condition is on the current object, read in this transaction.
        let checked = checked.and_then(|current| {
            let facts = current.as_ref();
            let facts = facts.map(|r| (r.etag.as_str(), r.size, r.last_modified));
            condition.check(facts).map(|()| current)
        });
        let state = versions::write_state(txn, bucket)?;
        if checked.is_ok() && state != Versioning::Unversioned {
            return Ok(versions::add_delete_marker(txn, owner, object, state));
        }
        let old = match checked {
            Ok(Some(old)) => old,
            // Deleting a missing key succeeds, as in S3.
            Ok(None) => return Ok(Ok(Deleted::default())),
            Err(e) => return Ok(Err(e)),
        };
        txn.open_table(KEYS).db()?.remove(row.as_slice()).db()?;
        queue_for_reclaim(txn, old.blocks.iter().map(|b| b.block))?;
        Ok(Ok(Deleted::default()))
    }

    /// Rewrites only the tags of the key's record.
    fn put_tags(
        &self,
        owner: &Owner,
        object: &ObjectRef,
        tags: Vec<(String, String)>,
    ) -> Result<()> {
        self.rewrite_record(owner, object, |record| {
            record.tags = tags;
            Ok(())
        })
    }

    /// Rewrites one user metadata entry of the key's record.
    fn put_meta_entry(
        &self,
        owner: &Owner,
        object: &ObjectRef,
        change: MetaEntryChange,
    ) -> Result<()> {
        self.rewrite_record(owner, object, |record| change.apply(&mut record.meta.user))
    }

    /// Changes the key's record in place, in one transaction, so a
    /// concurrent overwrite is either before (and gets the change) or
    /// after; a change that fails writes nothing. `NoSuchKey` if there is
    /// no object.
    fn rewrite_record(
        &self,
        owner: &Owner,
        object: &ObjectRef,
        change: impl FnOnce(&mut KeyRecord) -> Result<()>,
    ) -> Result<()> {
        let (bucket, key) = (object.bucket.as_str(), object.key.as_str());
        validate_key(key)?;
        let txn = self.write()?;
        owned_bucket(&txn.open_table(BUCKETS).db()?, bucket, owner)?;
        {
            let mut keys = txn.open_table(KEYS).db()?;
            let row = object_key(bucket, key.as_bytes());
            let mut record: KeyRecord = match keys.get(row.as_slice()).db()? {
                Some(bytes) => decode(bytes.value())?,
                None => return Err(StorageError::NoSuchKey),
            };
            change(&mut record)?;
            keys.insert(row.as_slice(), encode(&record)?.as_slice())
                .db()?;
        }
        txn.commit().db()
    }

    fn scan_objects(&self, owner: &Owner, scan: &ScanRange) -> Result<Vec<ListEntry>> {
        let bucket = scan.bucket.as_str();
        let txn = self.db.begin_read()?;
        owned_bucket(&txn.open_table(BUCKETS).db()?, bucket, owner)?;
        let keys = txn.open_table(KEYS).db()?;
        scan_bucket(&keys, scan, |name, value| {
            let key = std::str::from_utf8(&name[bucket.len() + 1..])
                .map_err(|_| StorageError::Corrupt("stored key is not UTF-8".into()))?;
            let record: KeyRecord = decode(value)?;
            Ok(ListEntry {
                key: key.to_owned(),
                size: record.size,
                etag: record.etag,
                last_modified: record.last_modified,
                owner: record.owner,
            })
        })
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
/// it would misread; records the format in a new one, and in one written
/// before formats were recorded (format 1, the same records).
fn check_format(txn: &redb::WriteTransaction, path: &Path) -> Result<()> {
    let mut table = txn.open_table(FORMAT).db()?;
    let found = table.get(FORMAT_ROW).db()?.map(|v| v.value());
    match found {
        Some(format) if format > STORE_FORMAT => Err(StorageError::InvalidArgument(format!(
            "{} is in store format {format}, written by a later s3-gateway; this build reads \
             formats up to {STORE_FORMAT}: run that release or a later one",
            path.display()
        ))),
        Some(_) => Ok(()),
        None => table.insert(FORMAT_ROW, STORE_FORMAT).db().map(drop),
    }
}

impl EmbeddedOm {
    /// Opens or creates the database and loads the token secret keys into `keys`.
    pub(crate) fn open(path: &Path, keys: Arc<KeyRing>, settings: OmSettings) -> Result<Self> {
        let db = ReopeningDb::open(path)?;
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

#[async_trait]
impl CredentialStore for EmbeddedOm {
    async fn credential(&self, access_key: &str) -> Result<Option<Credential>> {
        let access_key = access_key.to_owned();
        self.run(move |om| om.credential(&access_key)).await
    }

    async fn access_keys(&self) -> Result<Vec<String>> {
        self.run(Inner::access_keys).await
    }

    /// The embedded back end has no secret store of its own.
    async fn issue_secret(&self, _access_key: &str) -> Result<Option<String>> {
        Ok(None)
    }

    async fn put_credential(&self, cred: Credential) -> Result<()> {
        self.run(move |om| om.put_credential(&cred)).await
    }

    /// The embedded back end has no other secret store to agree with.
    async fn check_secret(&self, _access_key: &str, _secret: &str) -> Result<()> {
        Ok(())
    }

    async fn list_credentials(&self) -> Result<Vec<Credential>> {
        self.run(Inner::list_credentials).await
    }

    async fn delete_credential(&self, access_key: &str) -> Result<bool> {
        let access_key = access_key.to_owned();
        self.run(move |om| om.delete_credential(&access_key)).await
    }

    async fn ready(&self) -> Result<()> {
        self.run(Inner::ready).await
    }
}

#[async_trait]
impl BucketStore for EmbeddedOm {
    async fn create_bucket(&self, owner: &Owner, bucket: NewBucket) -> Result<()> {
        let owner = owner.clone();
        self.run(move |om| om.create_bucket(&owner, &bucket)).await
    }

    async fn bucket(&self, name: &str) -> Result<BucketInfo> {
        let name = name.to_owned();
        self.run(move |om| om.bucket(&name)).await
    }

    async fn list_buckets(&self, owner: Option<&Owner>) -> Result<Vec<BucketInfo>> {
        let owner = owner.cloned();
        self.run(move |om| om.list_buckets(owner.as_ref())).await
    }

    async fn set_bucket_owner(&self, name: &str, from: &Owner, to: &Owner) -> Result<()> {
        let (name, from, to) = (name.to_owned(), from.clone(), to.clone());
        self.run(move |om| om.set_bucket_owner(&name, &from, &to))
            .await
    }

    async fn delete_bucket(&self, owner: &Owner, name: &str) -> Result<()> {
        let (owner, name) = (owner.clone(), name.to_owned());
        self.run(move |om| om.delete_bucket(&owner, &name)).await
    }
}

#[async_trait]
impl BucketDocumentStore for EmbeddedOm {
    /// The transaction checks the bucket itself: the facts may be stale.
    async fn bucket_document(
        &self,
        bucket: &BucketInfo,
        kind: BucketDocument,
    ) -> Result<Option<String>> {
        let bucket = bucket.name.clone();
        self.run(move |om| om.bucket_document(&bucket, kind)).await
    }

    async fn put_bucket_document(
        &self,
        owner: &Owner,
        bucket: &BucketInfo,
        kind: BucketDocument,
        document: Option<String>,
    ) -> Result<()> {
        let (owner, bucket) = (owner.clone(), bucket.name.clone());
        self.run(move |om| om.put_bucket_document(&owner, &bucket, kind, document.as_deref()))
            .await
    }
}

#[async_trait]
impl ObjectStore for EmbeddedOm {
    /// On the calling thread (see `read_inline`); once per key rotation it
    /// also waits for a durable commit of the new signing key.
    async fn lookup(&self, owner: &Owner, object: &ObjectRef) -> Result<KeyInfo> {
        let (owner, object) = (owner.clone(), object.clone());
        self.read_inline(move |om| om.lookup(&owner, &object)).await
    }

    /// Not durable: a crash may erase the open key and its block ids. The
    /// ids are then handed out again (the counter is erased too), and the
    /// files the upload wrote are removed at start-up (see
    /// [`EmbeddedOm::first_unallocated_block`]); the commit that makes an
    /// object of them is durable and makes this allocation durable with it.
    async fn create_object(
        &self,
        owner: &Owner,
        object: ObjectRef,
        intent: WriteIntent,
    ) -> Result<OpenKey> {
        let owner = owner.clone();
        self.batched(
            false,
            Box::new(move |om, signer, txn| om.create_object(signer, txn, &owner, object, intent)),
        )
        .await
    }

    /// Not durable, as `create_object`.
    async fn allocate_block(&self, owner: &Owner, open: &OpenKey) -> Result<BlockLocation> {
        let (owner, open) = (owner.clone(), open.clone());
        self.batched(
            false,
            Box::new(move |om, signer, txn| om.allocate_block(signer, txn, &owner, &open)),
        )
        .await
    }

    async fn commit_object(
        &self,
        owner: &Owner,
        open: OpenKey,
        blocks: Vec<BlockLocation>,
        object: NewObject,
    ) -> Result<KeyInfo> {
        let owner = owner.clone();
        self.batched(
            true,
            Box::new(move |om, signer, txn| {
                om.commit_object(signer, txn, &owner, &open, &blocks, object)
            }),
        )
        .await
    }

    async fn abort_object(&self, owner: &Owner, open: &OpenKey) -> Result<()> {
        let (owner, open) = (owner.clone(), open.clone());
        self.batched(
            false,
            Box::new(move |_, _, txn| Inner::abort_object(txn, &owner, &open)),
        )
        .await
    }

    async fn delete_object(
        &self,
        owner: &Owner,
        object: ObjectRef,
        condition: DeleteCondition,
    ) -> Result<Deleted> {
        let owner = owner.clone();
        self.batched(
            true,
            Box::new(move |_, _, txn| Inner::delete_object(txn, &owner, &object, &condition)),
        )
        .await
    }

    async fn put_tags(
        &self,
        owner: &Owner,
        object: ObjectRef,
        tags: Vec<(String, String)>,
    ) -> Result<()> {
        let owner = owner.clone();
        self.run(move |om| om.put_tags(&owner, &object, tags)).await
    }

    async fn put_meta_entry(
        &self,
        owner: &Owner,
        object: ObjectRef,
        change: MetaEntryChange,
    ) -> Result<()> {
        let owner = owner.clone();
        self.run(move |om| om.put_meta_entry(&owner, &object, change))
            .await
    }

    async fn scan_objects(&self, owner: &Owner, scan: ScanRange) -> Result<Vec<ListEntry>> {
        let owner = owner.clone();
        self.run(move |om| om.scan_objects(&owner, &scan)).await
    }
}

#[async_trait]
impl VersionStore for EmbeddedOm {
    async fn versioning(&self, owner: &Owner, bucket: &str) -> Result<Versioning> {
        let (owner, bucket) = (owner.clone(), bucket.to_owned());
        self.run(move |om| om.versioning(&owner, &bucket)).await
    }

    async fn set_versioning(&self, owner: &Owner, bucket: &str, state: Versioning) -> Result<()> {
        let (owner, bucket) = (owner.clone(), bucket.to_owned());
        self.run(move |om| om.set_versioning(&owner, &bucket, state))
            .await
    }

    async fn lookup_version(
        &self,
        owner: &Owner,
        object: &ObjectRef,
        version_id: &str,
    ) -> Result<KeyInfo> {
        let (owner, object, id) = (owner.clone(), object.clone(), version_id.to_owned());
        self.run(move |om| om.lookup_version(&owner, &object, &id))
            .await
    }

    async fn delete_version(
        &self,
        owner: &Owner,
        object: ObjectRef,
        version_id: String,
    ) -> Result<Deleted> {
        let owner = owner.clone();
        self.batched(
            true,
            Box::new(move |_, _, txn| Inner::delete_version(txn, &owner, &object, &version_id)),
        )
        .await
    }

    async fn put_version_tags(
        &self,
        owner: &Owner,
        object: ObjectRef,
        version_id: String,
        tags: Vec<(String, String)>,
    ) -> Result<()> {
        let owner = owner.clone();
        self.run(move |om| om.put_version_tags(&owner, &object, &version_id, tags))
            .await
    }

    async fn put_version_meta_entry(
        &self,
        owner: &Owner,
        object: ObjectRef,
        version_id: String,
        change: MetaEntryChange,
    ) -> Result<()> {
        let owner = owner.clone();
        self.run(move |om| om.put_version_meta_entry(&owner, &object, &version_id, change))
            .await
    }

    async fn scan_versions(
        &self,
        owner: &Owner,
        scan: ScanRange,
        after_version: Option<String>,
    ) -> Result<Vec<VersionEntry>> {
        let owner = owner.clone();
        self.run(move |om| om.scan_versions(&owner, &scan, after_version.as_deref()))
            .await
    }
}

#[async_trait]
impl UploadStore for EmbeddedOm {
    async fn create_multipart_upload(
        &self,
        owner: &Owner,
        object: ObjectRef,
        upload: NewUpload,
    ) -> Result<UploadInfo> {
        let owner = owner.clone();
        self.run(move |om| om.create_multipart_upload(&owner, &object, upload))
            .await
    }

    async fn multipart_upload(&self, owner: &Owner, upload: &UploadRef) -> Result<UploadInfo> {
        let (owner, upload) = (owner.clone(), upload.clone());
        self.run(move |om| om.multipart_upload(&owner, &upload))
            .await
    }

    /// Looks the upload up: `create_part` does not.
    async fn part_checksum_algorithm(
        &self,
        owner: &Owner,
        upload: &UploadRef,
    ) -> Result<Option<ChecksumAlgorithm>> {
        Ok(self
            .multipart_upload(owner, upload)
            .await?
            .checksum_algorithm)
    }

    /// A part is written like any object: the upload is checked when it
    /// is committed.
    async fn create_part(
        &self,
        owner: &Owner,
        part: &PartRef,
        size_hint: Option<u64>,
    ) -> Result<OpenKey> {
        let intent = WriteIntent {
            size_hint,
            ..WriteIntent::default()
        };
        self.create_object(owner, part.upload.object.clone(), intent)
            .await
    }

    async fn commit_part(
        &self,
        owner: &Owner,
        open: OpenKey,
        part: PartRef,
        blocks: Vec<BlockLocation>,
        commit: PartCommit,
    ) -> Result<PartInfo> {
        let owner = owner.clone();
        self.run(move |om| om.commit_part(&owner, &open, &part, &blocks, commit))
            .await
    }

    async fn list_parts(
        &self,
        owner: &Owner,
        upload: &UploadRef,
        after: u16,
        limit: usize,
    ) -> Result<Vec<PartInfo>> {
        let (owner, upload) = (owner.clone(), upload.clone());
        self.run(move |om| om.list_parts(&owner, &upload, after, limit))
            .await
    }

    async fn complete_multipart_upload(
        &self,
        owner: &Owner,
        upload: UploadRef,
        complete: CompleteUpload,
    ) -> Result<KeyInfo> {
        let owner = owner.clone();
        self.run(move |om| om.complete_multipart_upload(&owner, &upload, complete))
            .await
    }

    fn completed_by(&self, object: &KeyInfo, parts: &[(u16, String)]) -> bool {
        recorded_parts_are(object, parts)
    }

    async fn abort_multipart_upload(&self, owner: &Owner, upload: UploadRef) -> Result<()> {
        let owner = owner.clone();
        self.run(move |om| om.abort_multipart_upload(&owner, &upload))
            .await
    }

    async fn scan_multipart_uploads(
        &self,
        owner: &Owner,
        scan: ScanRange,
    ) -> Result<Vec<UploadInfo>> {
        let owner = owner.clone();
        self.run(move |om| om.scan_multipart_uploads(&owner, &scan))
            .await
    }
}
