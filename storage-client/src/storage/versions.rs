//! The facade's versioning calls: the bucket's state and everything
//! addressed by version id.

use super::{Storage, scan_range};
use crate::{
    BucketRef, Deleted, KeyInfo, MetaEntryChange, ObjectRef, Result, Tags, VersionListPage,
    VersionListQuery, version_listing,
};

impl Storage {
    /// Whether the back end keeps object versions (Ozone does not), and
    /// so can keep object lock, which protects versions.
    pub fn keeps_versions(&self) -> bool {
        self.keeps_versions
    }

    /// Version `version_id` of the object, or the latest when `None`.
    pub async fn lookup_version(
        &self,
        object: ObjectRef<'_>,
        version_id: Option<&str>,
    ) -> Result<KeyInfo> {
        let Some(version_id) = version_id else {
            return self.lookup(object).await;
        };
        self.om()
            .lookup_version(object.owner(), &object.into(), version_id)
            .await
    }

    /// Deletes one version for good (its blocks are reclaimed); deleting
    /// one that does not exist succeeds. A version under legal hold or
    /// retention (see [`crate::VersionLock`]) is not deleted:
    /// `ObjectLocked`, decided in the delete's own transaction.
    pub async fn delete_version(&self, object: ObjectRef<'_>, version_id: &str) -> Result<Deleted> {
        self.delete_version_bypassing_governance(object, version_id, false)
            .await
    }

    /// [`Storage::delete_version`], where GOVERNANCE retention gives way
    /// if `bypass` (the caller asked to and may: the gateway decides).
    pub async fn delete_version_bypassing_governance(
        &self,
        object: ObjectRef<'_>,
        version_id: &str,
        bypass: bool,
    ) -> Result<Deleted> {
        self.om()
            .delete_version(object.owner(), object.into(), version_id.to_owned(), bypass)
            .await
    }

    /// Replaces the tag set of version `version_id`, or of the latest.
    pub async fn put_version_tags(
        &self,
        object: ObjectRef<'_>,
        version_id: Option<&str>,
        tags: Tags,
    ) -> Result<()> {
        let Some(version_id) = version_id else {
            return self.put_tags(object, tags).await;
        };
        self.om()
            .put_version_tags(object.owner(), object.into(), version_id.to_owned(), tags)
            .await
    }

    /// Changes one user metadata entry of version `version_id`, or of the
    /// latest (see [`MetaEntryChange`]), leaving its data, ETag and
    /// Last-Modified. `NoSuchKey` / `NoSuchVersion` if there is none.
    pub async fn put_version_meta_entry(
        &self,
        object: ObjectRef<'_>,
        version_id: Option<&str>,
        change: MetaEntryChange,
    ) -> Result<()> {
        let Some(version_id) = version_id else {
            return self.put_meta_entry(object, change).await;
        };
        self.om()
            .put_version_meta_entry(object.owner(), object.into(), version_id.to_owned(), change)
            .await
    }

    /// ListObjectVersions: every version and delete marker, by key and
    /// newest first within a key. Also what lifecycle rules use to find
    /// noncurrent versions (`is_latest` false) to expire with
    /// [`Storage::delete_version`].
    pub async fn list_versions(
        &self,
        bucket: BucketRef<'_>,
        query: &VersionListQuery,
    ) -> Result<VersionListPage> {
        let scan = |after: Vec<u8>, after_version: Option<String>, limit| {
            self.om().scan_versions(
                bucket.owner,
                scan_range(&bucket.path(), &query.prefix, after, limit),
                after_version,
            )
        };
        version_listing::list_page(scan, query).await
    }
}
