//! The bucket role on Ozone: S3 buckets are Ozone buckets in `s3v`, owned
//! by the access key that created them.

use std::sync::Arc;

use async_trait::async_trait;

use super::{LIST_BATCH, OzoneMetadata};
use crate::metadata::{BucketStore, NewBucket, ObjectStore, ScanRange};
use crate::ozone::keyring::SYSTEM_OWNER;
use crate::ozone::om_client::S3_VOLUME;
use crate::{BucketInfo, BucketRef, BucketUsage, Namespace, Owner, Result, StorageError};

#[async_trait]
impl BucketStore for OzoneMetadata {
    async fn create_bucket(&self, bucket: BucketRef<'_>, region: &str) -> Result<()> {
        let (owner, bucket) = (bucket.owner, NewBucket::new(bucket, region));
        match self
            .om
            .create_bucket(
                &owner.access_key,
                &self.ozone_name(&bucket.name),
                &bucket.region,
            )
            .await
        {
            Err(StorageError::BucketAlreadyExists) => match self.info_bucket(&bucket.name).await {
                Ok(info) if info.owner == owner.access_key => {
                    Err(StorageError::BucketAlreadyOwnedByYou)
                }
                _ => Err(StorageError::BucketAlreadyExists),
            },
            other => other,
        }
    }

    async fn bucket(&self, name: &str) -> Result<Arc<BucketInfo>> {
        self.info_bucket(name).await.map(Arc::new)
    }

    async fn list_buckets(&self, owner: Option<&Owner>) -> Result<Vec<BucketInfo>> {
        let mut owned = Vec::new();
        let mut start = String::new();
        // Every bucket is listed as the gateway's system identity.
        let signer = owner.map_or(SYSTEM_OWNER, |owner| &owner.access_key);
        let volume = match owner.map(|owner| &owner.namespace) {
            Some(Namespace::Tenant(volume)) => volume,
            Some(Namespace::Shared) | None => S3_VOLUME,
        };
        loop {
            let page = self
                .om
                .list_buckets(signer, volume, &self.bucket_prefix, &start, LIST_BATCH)
                .await?;
            let Some(last) = page.last() else { break };
            start = last.name.clone();
            let full = page.len() >= LIST_BATCH;
            owned.extend(
                page.into_iter()
                    .filter(|b| owner.is_none_or(|owner| b.owner == owner.access_key))
                    .map(|b| self.facade_bucket(b)),
            );
            if !full {
                break;
            }
        }
        Ok(owned)
    }

    /// The OM has no conditional set-owner: the owner is checked first,
    /// then changed (a change by another replica in between is not seen).
    /// Signed as the system identity: `from` may be a deleted key, whose
    /// secret is gone.
    async fn set_bucket_owner(&self, bucket: BucketRef<'_>, to: &Owner) -> Result<()> {
        let (name, from) = (&*bucket.path(), bucket.owner);
        if self.info_bucket(name).await?.owner != from.access_key {
            return Err(StorageError::PreconditionFailed);
        }
        self.om
            .set_bucket_owner(SYSTEM_OWNER, &self.ozone_name(name), &to.access_key)
            .await
    }

    /// Ozone keeps one version of a key, so what a bucket holds is its
    /// listing, summed a page at a time in either layout. The OM's own
    /// counters (`usedBytes`, `usedNamespace`) count replicas and
    /// directories, not what S3 shows.
    async fn bucket_usage(&self, bucket: BucketRef<'_>) -> Result<BucketUsage> {
        let (owner, name) = (bucket.owner, bucket.path().into_owned());
        let mut usage = BucketUsage::default();
        let mut after = Vec::new();
        loop {
            let scan = ScanRange {
                bucket: name.clone(),
                prefix: String::new(),
                after,
                limit: LIST_BATCH,
            };
            let page = self.scan_objects(owner, scan).await?;
            let Some(last) = page.last() else {
                return Ok(usage);
            };
            after = last.key.clone().into_bytes();
            usage.objects += page.len() as u64;
            usage.bytes += page.iter().map(|entry| entry.size).sum::<u64>();
        }
    }

    async fn delete_bucket(&self, bucket: BucketRef<'_>) -> Result<()> {
        let (owner, name) = (bucket.owner, &*bucket.path());
        self.delete_own_bucket(owner, name).await?;
        // A bucket made again under the name never sees these (see
        // `BucketDocuments`): the sweep only reclaims their space.
        if let Err(e) = self.documents.sweep(name).await {
            tracing::warn!(bucket = name, error = %e, "bucket documents left behind");
        }
        Ok(())
    }
}
