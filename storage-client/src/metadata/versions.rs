//! The versions role: a bucket's versioning state and what S3 addresses
//! by version id. Writes without a version id (PUT, DELETE) stay in the
//! objects role, which applies the bucket's versioning state itself.

use async_trait::async_trait;

use super::{ObjectName, ScanRange};
use crate::{Deleted, KeyInfo, MetaEntryChange, Owner, Result, VersionEntry, Versioning};

#[async_trait]
pub(crate) trait VersionStore: Send + Sync {
    /// Whether the back end keeps versions at all (what object lock
    /// needs); one that does not refuses `set_versioning`.
    fn keeps_versions(&self) -> bool {
        true
    }
    /// The bucket's versioning state, for its owner.
    async fn versioning(&self, owner: &Owner, bucket: &str) -> Result<Versioning>;
    /// Enables or suspends versioning (`Unversioned` is refused: S3 has no
    /// way back). A back end that keeps no versions answers `NotImplemented`.
    async fn set_versioning(&self, owner: &Owner, bucket: &str, state: Versioning) -> Result<()>;
    /// Version `version_id` of the object: `NoSuchVersion` if there is no
    /// such version, `DeleteMarker` (addressed) if it is a delete marker,
    /// `InvalidArgument` for an id the back end never gives out.
    async fn lookup_version(
        &self,
        owner: &Owner,
        object: &ObjectName,
        version_id: &str,
    ) -> Result<KeyInfo>;
    /// Deletes one version (succeeding if it does not exist, as S3 does);
    /// if it was the latest, the newest one left becomes the latest.
    /// `ObjectLocked`, deleting nothing, if its lock (see `VersionLock`)
    /// forbids it, checked atomically with the delete; GOVERNANCE
    /// retention gives way when `bypass_governance`.
    async fn delete_version(
        &self,
        owner: &Owner,
        object: ObjectName,
        version_id: String,
        bypass_governance: bool,
    ) -> Result<Deleted>;
    /// Replaces the tag set of one version; `DeleteMarker` for a marker.
    async fn put_version_tags(
        &self,
        owner: &Owner,
        object: ObjectName,
        version_id: String,
        tags: Vec<(String, String)>,
    ) -> Result<()>;
    /// Changes one user metadata entry of version `version_id` (the ACL
    /// of PutObjectAcl with a versionId; see [`MetaEntryChange`]);
    /// `NoSuchVersion` if there is none.
    async fn put_version_meta_entry(
        &self,
        owner: &Owner,
        object: ObjectName,
        version_id: String,
        change: MetaEntryChange,
    ) -> Result<()>;
    /// One step of ListObjectVersions: up to `scan.limit` versions of keys
    /// with `scan.prefix`, by key and newest first within a key, strictly
    /// after version `after_version` of key `scan.after` (after all of its
    /// versions when `None`; `scan.after` may end in 0xFF to skip a prefix).
    async fn scan_versions(
        &self,
        owner: &Owner,
        scan: ScanRange,
        after_version: Option<String>,
    ) -> Result<Vec<VersionEntry>>;
}
