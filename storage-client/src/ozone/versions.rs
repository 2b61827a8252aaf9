//! S3 versioning on Ozone: not kept. Ozone 2.2's OM has a per-bucket
//! `isVersionEnabled` flag, but with it on a key keeps older *block
//! location lists* inside one key record (`keyLocationVersions`), which
//! no OM request addresses by version, deletes one of, or lists
//! (`ListKeys` and `listStatus` return only the latest), and there are no
//! delete markers. So every bucket here stays unversioned: its objects are
//! their own `null` versions, which can be read, tagged, deleted and
//! listed as such, and enabling versioning answers `NotImplemented`.

use async_trait::async_trait;

use super::metadata_store::OzoneMetadata;
use crate::metadata::{ObjectName, ObjectStore, ScanRange, VersionStore};
use crate::{
    BucketRef, DeleteCondition, Deleted, KeyInfo, MetaEntryChange, NULL_VERSION_ID, Owner, Result,
    StorageError, Tags, VersionEntry, Versioning,
};

/// The only version an Ozone bucket has is `null`; any other id is not one
/// this back end gives out.
fn only_null(version_id: &str) -> Result<()> {
    if version_id == NULL_VERSION_ID {
        Ok(())
    } else {
        Err(StorageError::InvalidArgument(
            "Invalid version id specified".into(),
        ))
    }
}

#[async_trait]
impl VersionStore for OzoneMetadata {
    async fn bucket_versioning(&self, _bucket: BucketRef<'_>) -> Result<Versioning> {
        Ok(Versioning::Unversioned)
    }

    async fn put_bucket_versioning(
        &self,
        _bucket: BucketRef<'_>,
        _state: Versioning,
    ) -> Result<()> {
        Err(StorageError::NotImplemented(
            "the Ozone back end keeps no object versions (Ozone's OM cannot address, delete \
             or list a key's older versions)"
                .into(),
        ))
    }

    async fn lookup_version(
        &self,
        owner: &Owner,
        object: &ObjectName,
        version_id: &str,
    ) -> Result<KeyInfo> {
        only_null(version_id)?;
        self.lookup_named(owner, object).await
    }

    async fn delete_version(
        &self,
        owner: &Owner,
        object: ObjectName,
        version_id: String,
        // No key here carries a lock: object lock is refused on Ozone.
        _bypass_governance: bool,
    ) -> Result<Deleted> {
        only_null(&version_id)?;
        self.delete_named(owner, object, DeleteCondition::default())
            .await?;
        Ok(Deleted {
            version_id: Some(version_id),
            delete_marker: false,
        })
    }

    async fn put_version_tags(
        &self,
        owner: &Owner,
        object: ObjectName,
        version_id: String,
        tags: Tags,
    ) -> Result<()> {
        only_null(&version_id)?;
        self.put_tags_named(owner, object, tags).await
    }

    async fn put_version_meta_entry(
        &self,
        owner: &Owner,
        object: ObjectName,
        version_id: String,
        change: MetaEntryChange,
    ) -> Result<()> {
        only_null(&version_id)?;
        self.put_meta_entry_named(owner, object, change).await
    }

    /// Each object once, as its `null` version; the `null` version is the
    /// only one a key has, so "after it" is after the key.
    async fn scan_versions(
        &self,
        owner: &Owner,
        scan: ScanRange,
        _after_version: Option<String>,
    ) -> Result<Vec<VersionEntry>> {
        let entries = self.scan_objects(owner, scan).await?;
        Ok(entries
            .into_iter()
            .map(|entry| VersionEntry {
                key: entry.key,
                version_id: NULL_VERSION_ID.to_owned(),
                is_latest: true,
                delete_marker: false,
                size: entry.size,
                etag: entry.etag,
                last_modified: entry.last_modified,
                owner: entry.owner,
                meta: entry.meta,
                part_sizes: entry.part_sizes,
            })
            .collect())
    }
}
