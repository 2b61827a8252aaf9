//! The version role's trait, `VersionStore`, for the embedded OM: each
//! call moves its arguments onto the blocking pool (or, for a delete, into
//! the group commit) and runs the `Inner` operation of the same name. Only
//! this glue lives here, so the operations read as plain transactions.

use async_trait::async_trait;

use crate::embedded::om::{EmbeddedOm, Inner};
use crate::metadata::{ObjectName, ScanRange, VersionStore};
use crate::{
    BucketRef, Deleted, KeyInfo, MetaEntryChange, Owner, Result, VersionEntry, Versioning,
};

#[async_trait]
impl VersionStore for EmbeddedOm {
    async fn bucket_versioning(&self, bucket: BucketRef<'_>) -> Result<Versioning> {
        let (owner, bucket) = (bucket.owner.clone(), bucket.path().into_owned());
        self.run(move |om| om.versioning(&owner, &bucket)).await
    }

    async fn put_bucket_versioning(&self, bucket: BucketRef<'_>, state: Versioning) -> Result<()> {
        let (owner, bucket) = (bucket.owner.clone(), bucket.path().into_owned());
        self.run(move |om| om.set_versioning(&owner, &bucket, state))
            .await
    }

    async fn lookup_version(
        &self,
        owner: &Owner,
        object: &ObjectName,
        version_id: &str,
    ) -> Result<KeyInfo> {
        let (owner, object, id) = (owner.clone(), object.clone(), version_id.to_owned());
        self.run(move |om| om.lookup_version(&owner, &object, &id))
            .await
    }

    async fn delete_version(
        &self,
        owner: &Owner,
        object: ObjectName,
        version_id: String,
        bypass_governance: bool,
    ) -> Result<Deleted> {
        let owner = owner.clone();
        self.batched(
            true,
            Box::new(move |_, _, txn| {
                Inner::delete_version(txn, &owner, &object, &version_id, bypass_governance)
            }),
        )
        .await
    }

    async fn put_version_tags(
        &self,
        owner: &Owner,
        object: ObjectName,
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
        object: ObjectName,
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
