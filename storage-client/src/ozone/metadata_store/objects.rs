//! The object role on Ozone: keys written, read, tagged, deleted and
//! listed through the OM, write conditions checked by the OM at CreateKey
//! and again with CommitKey.

use async_trait::async_trait;
use futures::StreamExt;

use super::{OzoneMetadata, is_blank, start_key, storable_key, with_checksums};
use crate::metadata::{ObjectName, ObjectStore, OpenKey, ScanRange};
use crate::ozone::checksum_records::ObjectChecksums;
use crate::ozone::fso_listing;
use crate::ozone::object_mapping::{
    block_from_location, committed_info, key_info, location_from_block, object_metadata,
};
use crate::{
    BlockLocation, BucketRef, DeleteCondition, Deleted, KeyInfo, ListEntry, MetaEntryChange,
    NewObject, ObjectRef, Owner, Result, StorageError, Tags, WriteIntent,
};

/// Deletes of one `delete_objects` call in flight at once: as many as
/// the gateway's DeleteObjects issued before it had the call.
const DELETES_IN_FLIGHT: usize = 16;

#[async_trait]
impl ObjectStore for OzoneMetadata {
    async fn lookup(&self, object: ObjectRef<'_>) -> Result<KeyInfo> {
        self.lookup_named(object.owner(), &object.into()).await
    }

    async fn create_object(
        &self,
        owner: &Owner,
        object: ObjectName,
        intent: WriteIntent,
    ) -> Result<OpenKey> {
        storable_key(&object.key)?;
        let name = self.ozone_name(&object.bucket);
        let key = object.key.as_str();
        let expect = self
            .expectation(owner, &name, key, &intent.condition)
            .await?;
        let size_hint = intent.size_hint.unwrap_or(0);
        let created = self
            .om
            .create_key(
                &owner.access_key,
                &name,
                key,
                size_hint,
                &intent.tags,
                &expect,
            )
            .await;
        match created {
            Ok(open) => Ok(self.remember(object, open, intent).await),
            Err(err) => Err(self.refusal(owner, &name, key, &expect, err).await),
        }
    }

    async fn allocate_block(&self, owner: &Owner, open: &OpenKey) -> Result<BlockLocation> {
        let ozone_open = self.open_key_of(open).await?;
        let block = self
            .om
            .allocate_block(&owner.access_key, &ozone_open)
            .await?;
        Ok(location_from_block(block))
    }

    async fn commit_object(
        &self,
        owner: &Owner,
        open: OpenKey,
        blocks: Vec<BlockLocation>,
        object: NewObject,
    ) -> Result<KeyInfo> {
        let ozone_open = self.take_open_key(&open).await?;
        if ozone_open.part.is_some() {
            return Err(StorageError::InvalidArgument(
                "an upload opened as a part must be committed as a part".into(),
            ));
        }
        let ozone_blocks: Vec<_> = blocks
            .iter()
            .map(|b| block_from_location(b, None))
            .collect();
        let metadata = object_metadata(&object.meta, object.checksum.as_ref());
        self.om
            .commit_key(
                &owner.access_key,
                &ozone_open,
                &ozone_blocks,
                &object.etag,
                &metadata,
            )
            .await?;
        Ok(committed_info(&open, &owner.access_key, blocks, object))
    }

    async fn abort_object(&self, _owner: &Owner, open: &OpenKey) -> Result<()> {
        // Ozone has no client command to drop an open key: the OM expires
        // it (and reclaims its blocks) on its own; it is never visible.
        self.open_keys.invalidate(&open.id).await;
        Ok(())
    }

    async fn delete_object_if(
        &self,
        object: ObjectRef<'_>,
        condition: DeleteCondition,
    ) -> Result<Deleted> {
        self.delete_named(object.owner(), object.into(), condition)
            .await
    }

    async fn put_tags(&self, object: ObjectRef<'_>, tags: Tags) -> Result<()> {
        self.put_tags_named(object.owner(), object.into(), tags)
            .await
    }

    async fn put_meta_entry(&self, object: ObjectRef<'_>, change: MetaEntryChange) -> Result<()> {
        self.put_meta_entry_named(object.owner(), object.into(), change)
            .await
    }

    /// Key by key, [`DELETES_IN_FLIGHT`] at a time, each as `delete_named`.
    /// Not one DeleteKeys, though it was 24x faster (BENCHMARKS.md,
    /// "DeleteObjects in one storage call"): the OM's ListKeys can show
    /// keys deleted a moment before (see the README's Ozone table), and
    /// after one DeleteKeys every key of it is in that moment at once; a
    /// CI run listed 16 of 40 deleted keys right after. And in a
    /// FILE_SYSTEM_OPTIMIZED bucket DeleteKeys deletes a directory with
    /// everything below it, where DeleteKey refuses one with keys below.
    async fn delete_objects(
        &self,
        bucket: BucketRef<'_>,
        keys: Vec<String>,
    ) -> Result<Vec<Result<Deleted>>> {
        let path = bucket.path();
        let objects: Vec<ObjectName> = keys.iter().map(|key| ObjectName::new(&path, key)).collect();
        let outcomes: Vec<Result<Deleted>> = futures::stream::iter(objects)
            .map(|object| self.delete_named(bucket.owner, object, DeleteCondition::default()))
            .buffered(DELETES_IN_FLIGHT)
            .collect()
            .await;
        // No bucket is the call's refusal, not each key's.
        if outcomes
            .iter()
            .any(|outcome| matches!(outcome, Err(StorageError::NoSuchBucket)))
        {
            return Err(StorageError::NoSuchBucket);
        }
        Ok(outcomes)
    }

    async fn scan_objects(&self, owner: &Owner, scan: ScanRange) -> Result<Vec<ListEntry>> {
        let (prefix, after, limit) = (scan.prefix.as_str(), scan.after.as_slice(), scan.limit);
        let name = self.ozone_name(&scan.bucket);
        let mut start = start_key(after);
        // Ozone seeks to `startKey` only within the prefix.
        if start.as_str() < prefix {
            start.clear();
        }
        let mut out = Vec::new();
        let mut seen_any = false;
        'scan: while out.len() < limit {
            let (page, truncated) = self
                .list_ozone_objects(&owner.access_key, &name, prefix, &start, limit - out.len())
                .await?;
            let Some(last) = page.last() else { break };
            seen_any = true;
            start = last.key.clone();
            for entry in page {
                // The OM ignores a blank prefix and widens `/` to the whole
                // bucket: keys outside the prefix are dropped, and once one
                // sorts after it no later key can be inside it.
                if !entry.key.starts_with(prefix) {
                    if entry.key.as_str() > prefix {
                        break 'scan;
                    }
                    continue;
                }
                if entry.key.as_bytes() > after {
                    out.push(entry);
                }
            }
            if !truncated {
                break;
            }
        }
        // ListKeys reads no FILE_SYSTEM_OPTIMIZED bucket (its keys are in
        // the directory tables): it answers nothing, then, and only then
        // the bucket's layout is asked.
        if !seen_any
            && self
                .om
                .is_file_system_optimized(&owner.access_key, &name)
                .await?
        {
            return fso_listing::scan(&self.om, &owner.access_key, &name, prefix, after, limit)
                .await;
        }
        out.truncate(limit);
        Ok(out)
    }
}

/// The object calls by the names the facade resolved, which the version
/// calls (an object's `null` version) reach too.
impl OzoneMetadata {
    pub(crate) async fn lookup_named(&self, owner: &Owner, object: &ObjectName) -> Result<KeyInfo> {
        let (bucket, key) = (object.bucket.as_str(), object.key.as_str());
        if is_blank(key) {
            return Err(StorageError::NoSuchKey);
        }
        let name = self.ozone_name(bucket);
        let found = self
            .om
            .get_key_info(&owner.access_key, &name, key, false)
            .await?;
        let recorded = if found.is_multipart {
            self.checksums.object(&name, &found).await?
        } else {
            ObjectChecksums::default()
        };
        let changes = self.entries.changes(&name, &found).await?;
        let mut info = key_info(found);
        info.bucket = bucket.to_owned();
        changes.apply(&mut info.meta.user);
        Ok(with_checksums(info, recorded))
    }

    /// The OM deletes unconditionally: a condition is refused, never
    /// ignored.
    pub(crate) async fn delete_named(
        &self,
        owner: &Owner,
        object: ObjectName,
        condition: DeleteCondition,
    ) -> Result<Deleted> {
        if !condition.is_none() {
            return Err(StorageError::NotImplemented(
                "a conditional delete on the Ozone back end (its OM deletes unconditionally)"
                    .into(),
            ));
        }
        if is_blank(&object.key) {
            // No such key can exist here; the OM would look at the bucket.
            return Ok(Deleted::default());
        }
        let name = self.ozone_name(&object.bucket);
        let (_, deleted) = tokio::join!(
            self.forget_records(&name, &object.key),
            self.om.delete_key(&owner.access_key, &name, &object.key),
        );
        match deleted {
            Ok(()) | Err(StorageError::NoSuchKey) => Ok(Deleted::default()),
            Err(e) => Err(e),
        }
    }

    pub(crate) async fn put_tags_named(
        &self,
        owner: &Owner,
        object: ObjectName,
        tags: Tags,
    ) -> Result<()> {
        if is_blank(&object.key) {
            return Err(StorageError::NoSuchKey);
        }
        let name = self.ozone_name(&object.bucket);
        if tags.is_empty() {
            self.om
                .delete_tags(&owner.access_key, &name, &object.key)
                .await
        } else {
            self.om
                .put_tags(&owner.access_key, &name, &object.key, &tags)
                .await
        }
    }

    /// Ozone's OM has no call that changes a committed key's metadata
    /// alone (only its tags): the change is kept as a record of the key as
    /// it is now ([`EntryRecords`](crate::ozone::entry_records)).
    pub(crate) async fn put_meta_entry_named(
        &self,
        owner: &Owner,
        object: ObjectName,
        change: MetaEntryChange,
    ) -> Result<()> {
        if is_blank(&object.key) {
            return Err(StorageError::NoSuchKey);
        }
        let name = self.ozone_name(&object.bucket);
        // With its blocks, as `lookup` reads it: the record names them.
        let found = self
            .om
            .get_key_info(&owner.access_key, &name, &object.key, false)
            .await?;
        self.entries.change(&name, &found, change).await
    }
}
