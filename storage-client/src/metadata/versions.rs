//! The versions role: a bucket's versioning state and what S3 addresses
//! by version id. Writes without a version id (PUT, DELETE) stay in the
//! objects role, which applies the bucket's versioning state itself.

use super::role::metadata_role;
use super::{ObjectName, ScanRange};
use crate::{
    BucketRef, Deleted, KeyInfo, MetaEntryChange, Owner, Result, Tags, VersionEntry, Versioning,
};

metadata_role! {
    /// Whether a back end keeps versions at all (what object lock needs)
    /// is [`crate::backend::Backend::keeps_versions`]; one that does not
    /// refuses `put_bucket_versioning`.
    pub(crate) trait VersionStore {
        /// The bucket's versioning state.
        async fn bucket_versioning(&self, bucket: BucketRef<'_>) -> Result<Versioning>
            => facade, pass;
        /// Enables or suspends versioning (`Unversioned` is refused: S3 has no
        /// way back). A back end that keeps no versions answers `NotImplemented`.
        async fn put_bucket_versioning(&self, bucket: BucketRef<'_>, state: Versioning)
            -> Result<()>
            => facade, pass;
        /// Version `version_id` of the object: `NoSuchVersion` if there is no
        /// such version, `DeleteMarker` (addressed) if it is a delete marker,
        /// `InvalidArgument` for an id the back end never gives out. The
        /// lookup cache holds latest versions only: this one is read from
        /// the back end.
        async fn lookup_version(&self, owner: &Owner, object: &ObjectName, version_id: &str)
            -> Result<KeyInfo>
            => internal, pass;
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
            bypass_governance: bool
        ) -> Result<Deleted>
            => internal, forgets_object(object.clone());
        /// Replaces the tag set of one version; `DeleteMarker` for a marker.
        async fn put_version_tags(
            &self,
            owner: &Owner,
            object: ObjectName,
            version_id: String,
            tags: Tags
        ) -> Result<()>
            => internal, forgets_object(object.clone());
        /// Changes one user metadata entry of version `version_id` (the ACL
        /// of PutObjectAcl with a versionId; see [`MetaEntryChange`]);
        /// `NoSuchVersion` if there is none.
        async fn put_version_meta_entry(
            &self,
            owner: &Owner,
            object: ObjectName,
            version_id: String,
            change: MetaEntryChange
        ) -> Result<()>
            => internal, forgets_object(object.clone());
        /// One step of ListObjectVersions: up to `scan.limit` versions of keys
        /// with `scan.prefix`, by key and newest first within a key, strictly
        /// after version `after_version` of key `scan.after` (after all of its
        /// versions when `None`; `scan.after` may end in 0xFF to skip a prefix).
        async fn scan_versions(
            &self,
            owner: &Owner,
            scan: ScanRange,
            after_version: Option<String>
        ) -> Result<Vec<VersionEntry>>
            => internal, pass;
    }
}
