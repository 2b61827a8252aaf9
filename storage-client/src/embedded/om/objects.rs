//! The embedded OM's objects: the current object of each key is one
//! `KEYS` row naming its blocks. A write opens a key (`OPEN_KEYS`), takes
//! blocks, and commits by swapping the row in one transaction that also
//! checks the write's condition and queues the replaced blocks for
//! reclamation.

use std::time::SystemTime;

use async_trait::async_trait;
use redb::{ReadableTable, WriteTransaction};

use super::{
    EmbeddedOm, Found, Inner, blocks_with_keys, check_condition, new_block_id, next_counter,
    owned_bucket, queue_for_reclaim, scan_bucket, upload_gone, validate_layout, versions,
};
use crate::embedded::schema::{
    BLOCKS_WITH_KEYS, BUCKETS, KEYS, KeyRecord, NEXT_OPEN_KEY_ID, OPEN_KEYS, OpenKeyRecord,
    StoredBlock, decode, encode, object_key,
};
use crate::embedded::{DbResult, now_ms};
use crate::metadata::{ObjectName, ObjectStore, OpenKey, ScanRange, validate_key};
use crate::token::SecretKey;
use crate::{
    BlockId, BlockLocation, BucketRef, BytesWithKey, DeleteCondition, Deleted, KeyInfo, ListEntry,
    MetaEntryChange, NewObject, ObjectRef, Owner, Result, StorageError, Tags, Versioning,
    WriteCondition, WriteIntent,
};

/// A commit's checked inputs: its upload, the object's block layout
/// (`stored`) and the written blocks it was checked from.
struct Checked<'a> {
    upload: OpenKeyRecord,
    stored: Vec<StoredBlock>,
    blocks: &'a [BlockLocation],
}

impl Inner {
    pub(super) fn lookup(&self, owner: &Owner, object: &ObjectName) -> Result<KeyInfo> {
        self.answer(owner, object, None)
    }

    /// Version `version_id` of the object, as `lookup` answers the latest.
    pub(super) fn lookup_version(
        &self,
        owner: &Owner,
        object: &ObjectName,
        version_id: &str,
    ) -> Result<KeyInfo> {
        self.answer(owner, object, Some(version_id))
    }

    /// The object's latest version, or `version_id`, with the bytes kept
    /// with its key, all from one read transaction.
    fn answer(
        &self,
        owner: &Owner,
        object: &ObjectName,
        version_id: Option<&str>,
    ) -> Result<KeyInfo> {
        let (bucket, key) = (object.bucket.as_str(), object.key.as_str());
        validate_key(key)?;
        let signer = self.signing_key()?;
        let txn = self.db.begin_read()?;
        owned_bucket(&txn.open_table(BUCKETS).db()?, bucket, owner)?;
        let (record, version_id) = match version_id {
            None => Self::latest(&txn, object)?,
            Some(id) => Self::version(&txn, object, id)?,
        };
        let kept = blocks_with_keys::read(&txn.open_table(BLOCKS_WITH_KEYS).db()?, &record)?;
        let found = Found {
            record,
            version_id,
            kept: kept.map(BytesWithKey),
        };
        Ok(self.key_info(&signer, owner, bucket, key, found))
    }

    /// Allocates the open key and its first block. Not durable on its own
    /// (see `EmbeddedOm::create_object`).
    pub(super) fn create_object(
        &self,
        signer: &SecretKey,
        txn: &WriteTransaction,
        owner: &Owner,
        object: ObjectName,
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
    pub(super) fn read_open_key(
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

    pub(super) fn take_open_key(
        txn: &WriteTransaction,
        owner: &Owner,
        open: &OpenKey,
    ) -> Result<OpenKeyRecord> {
        let record = Self::read_open_key(txn, owner, open)?;
        txn.open_table(OPEN_KEYS).db()?.remove(open.id).db()?;
        Ok(record)
    }

    /// Adds a block to the open key. Not durable on its own, like `open_key`.
    pub(super) fn allocate_block(
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
    pub(super) fn commit_object(
        &self,
        signer: &SecretKey,
        txn: &WriteTransaction,
        owner: &Owner,
        open: &OpenKey,
        blocks: &[BlockLocation],
        obj: NewObject,
    ) -> Result<Result<KeyInfo>> {
        if open.is_unopened() {
            return self.commit_unopened(signer, txn, owner, open, blocks, obj);
        }
        // A bad block list is a caller bug: refusing before any change keeps
        // the upload, so it can still be aborted.
        let checked = Self::read_open_key(txn, owner, open).and_then(|upload| {
            blocks_with_keys::check(blocks)?;
            let stored = validate_layout(blocks, &upload.blocks, self.settings.block_size)?;
            Ok((upload, stored))
        });
        let (upload, stored) = match checked {
            Ok(checked) => checked,
            Err(e) => return Ok(Err(e)),
        };
        // From here on the upload is consumed whatever the outcome.
        txn.open_table(OPEN_KEYS).db()?.remove(open.id).db()?;
        let checked = Checked {
            upload,
            stored,
            blocks,
        };
        self.install(signer, txn, owner, open, checked, obj)
    }

    /// The whole write of an object the OM did not open (see
    /// [`OpenKey::unopened`]): its only block, kept with its key, takes its
    /// id here. Nothing was allocated before, so a refusal leaves nothing.
    fn commit_unopened(
        &self,
        signer: &SecretKey,
        txn: &WriteTransaction,
        owner: &Owner,
        open: &OpenKey,
        blocks: &[BlockLocation],
        obj: NewObject,
    ) -> Result<Result<KeyInfo>> {
        let checked = validate_key(&open.object.key)
            .and_then(|()| blocks_with_keys::check(blocks))
            .and_then(|()| {
                if blocks.iter().all(|b| b.bytes_with_key.is_some()) {
                    Ok(())
                } else {
                    Err(StorageError::InvalidArgument(
                        "an object the OM did not open is kept with its key or empty".into(),
                    ))
                }
            });
        if let Err(e) = checked {
            return Ok(Err(e));
        }
        let mut assigned = blocks.to_vec();
        let mut stored = Vec::with_capacity(assigned.len());
        for location in &mut assigned {
            location.block = new_block_id(txn)?;
            location.offset = 0;
            stored.push(StoredBlock {
                block: location.block,
                offset: 0,
                length: location.length,
            });
        }
        let upload = OpenKeyRecord {
            bucket: open.object.bucket.clone(),
            key: open.object.key.clone(),
            owner: owner.access_key.clone(),
            created_ms: now_ms(),
            // Nothing to reclaim if the commit is refused.
            blocks: Vec::new(),
        };
        let checked = Checked {
            upload,
            stored,
            blocks: &assigned,
        };
        self.install(signer, txn, owner, open, checked, obj)
    }

    /// The commit after its checks: the object replaces the key's old one
    /// if the bucket and the condition allow; the upload's blocks it does
    /// not use are queued for reclamation.
    fn install(
        &self,
        signer: &SecretKey,
        txn: &WriteTransaction,
        owner: &Owner,
        open: &OpenKey,
        checked: Checked<'_>,
        obj: NewObject,
    ) -> Result<Result<KeyInfo>> {
        let Checked {
            upload,
            stored,
            blocks,
        } = checked;
        let existing = Self::check_replace(txn, owner, &upload, &open.intent.condition);
        let outcome = match existing {
            Ok(existing) => Self::replace(txn, owner, open, existing, stored, obj)?,
            Err(e) => Err(e),
        };
        let used: Vec<BlockId> = match &outcome {
            Ok((record, _)) => record.blocks.iter().map(|b| b.block).collect(),
            Err(_) => Vec::new(),
        };
        if outcome.is_ok() {
            blocks_with_keys::store(txn, blocks, self.settings.bytes_per_checksum)?;
        }
        queue_for_reclaim(
            txn,
            upload.blocks.iter().copied().filter(|b| !used.contains(b)),
        )?;
        Ok(outcome.map(|(record, version_id)| {
            let found = Found {
                record,
                version_id,
                kept: blocks.iter().find_map(|b| b.bytes_with_key.clone()),
            };
            self.key_info(signer, owner, &upload.bucket, &upload.key, found)
        }))
    }

    /// Read only: checks the bucket and the write condition, and returns the
    /// object the commit would replace.
    pub(super) fn check_replace(
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
    pub(super) fn replace(
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
    pub(super) fn abort_object(
        txn: &WriteTransaction,
        owner: &Owner,
        open: &OpenKey,
    ) -> Result<Result<()>> {
        let upload = match Self::read_open_key(txn, owner, open) {
            Ok(upload) => upload,
            Err(e) => return Ok(Err(e)),
        };
        txn.open_table(OPEN_KEYS).db()?.remove(open.id).db()?;
        queue_for_reclaim(txn, upload.blocks)?;
        Ok(Ok(()))
    }

    /// In a versioned bucket, adds a delete marker instead.
    pub(super) fn delete_object(
        txn: &WriteTransaction,
        owner: &Owner,
        object: &ObjectName,
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
    pub(super) fn put_tags(
        &self,
        owner: &Owner,
        object: &ObjectName,
        tags: Vec<(String, String)>,
    ) -> Result<()> {
        self.rewrite_record(owner, object, |record| {
            record.tags = tags;
            Ok(())
        })
    }

    /// Rewrites one user metadata entry of the key's record.
    pub(super) fn put_meta_entry(
        &self,
        owner: &Owner,
        object: &ObjectName,
        change: MetaEntryChange,
    ) -> Result<()> {
        self.rewrite_record(owner, object, |record| change.apply(&mut record.meta.user))
    }

    /// Changes the key's record in place, in one transaction, so a
    /// concurrent overwrite is either before (and gets the change) or
    /// after; a change that fails writes nothing. `NoSuchKey` if there is
    /// no object.
    pub(super) fn rewrite_record(
        &self,
        owner: &Owner,
        object: &ObjectName,
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

    pub(super) fn scan_objects(&self, owner: &Owner, scan: &ScanRange) -> Result<Vec<ListEntry>> {
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
                part_sizes: record.parts.iter().map(|part| part.size).collect(),
                etag: record.etag,
                last_modified: record.last_modified,
                owner: record.owner,
                meta: record.meta,
            })
        })
    }
}

#[async_trait]
impl ObjectStore for EmbeddedOm {
    /// On the calling thread (see `read_inline`); once per key rotation it
    /// also waits for a durable commit of the new signing key.
    async fn lookup(&self, object: ObjectRef<'_>) -> Result<KeyInfo> {
        let (owner, object) = (object.owner().clone(), ObjectName::from(object));
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
        object: ObjectName,
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

    async fn delete_object_if(
        &self,
        object: ObjectRef<'_>,
        condition: DeleteCondition,
    ) -> Result<Deleted> {
        let (owner, object) = (object.owner().clone(), ObjectName::from(object));
        self.batched(
            true,
            Box::new(move |_, _, txn| Inner::delete_object(txn, &owner, &object, &condition)),
        )
        .await
    }

    async fn delete_objects(
        &self,
        bucket: BucketRef<'_>,
        keys: Vec<String>,
    ) -> Result<Vec<Result<Deleted>>> {
        let (owner, bucket) = (bucket.owner.clone(), bucket.path().into_owned());
        self.batched(
            true,
            Box::new(move |_, _, txn| {
                if let Err(e) = owned_bucket(&txn.open_table(BUCKETS).db()?, &bucket, &owner) {
                    return Ok(Err(e));
                }
                let unconditional = DeleteCondition::default();
                let deleted = keys
                    .iter()
                    .map(|key| {
                        let object = ObjectName::new(&bucket, key);
                        Inner::delete_object(txn, &owner, &object, &unconditional)
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(Ok(deleted))
            }),
        )
        .await
    }

    async fn put_tags(&self, object: ObjectRef<'_>, tags: Tags) -> Result<()> {
        let (owner, object) = (object.owner().clone(), ObjectName::from(object));
        self.run(move |om| om.put_tags(&owner, &object, tags)).await
    }

    async fn put_meta_entry(&self, object: ObjectRef<'_>, change: MetaEntryChange) -> Result<()> {
        let (owner, object) = (object.owner().clone(), ObjectName::from(object));
        self.run(move |om| om.put_meta_entry(&owner, &object, change))
            .await
    }

    async fn scan_objects(&self, owner: &Owner, scan: ScanRange) -> Result<Vec<ListEntry>> {
        let owner = owner.clone();
        self.run(move |om| om.scan_objects(&owner, &scan)).await
    }
}
