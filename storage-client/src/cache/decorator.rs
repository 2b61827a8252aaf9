//! The cache as a decorator: [`CachedMetadata`] implements every metadata
//! role around a back end's, the way object stores are layered. The reads
//! [`MetadataCache`] holds are answered through it; every write that
//! changes what it holds tells it, after the back end returns, whatever
//! the outcome; every other call goes to the back end unchanged. So the
//! facade calls one `Metadata` and never the cache.
//!
//! Loads are async blocks, not the back end's calls themselves: an
//! `async_trait` call boxes its future when it is made, and a hit must
//! not pay for a load it never runs.

use std::future::Future;
use std::sync::Arc;

use async_trait::async_trait;

use super::MetadataCache;
use crate::metadata::{
    BucketDocumentStore, BucketStore, CredentialStore, Metadata, NewBucket, ObjectName,
    ObjectStore, OpenKey, PartName, ScanRange, UploadName, UploadStore, VersionStore,
};
use crate::{
    BlockLocation, BucketDocument, BucketInfo, CompleteUpload, Credential, DeleteCondition,
    Deleted, KeyInfo, ListEntry, MetaEntryChange, Namespace, NewObject, NewUpload, Owner,
    PartCommit, PartInfo, PartSettings, Result, UploadInfo, VersionEntry, Versioning, WriteIntent,
};

/// A back end's metadata roles with the cache in front.
pub(crate) struct CachedMetadata {
    inner: Arc<dyn Metadata>,
    cache: Arc<MetadataCache>,
}

impl CachedMetadata {
    pub(crate) fn new(inner: Arc<dyn Metadata>, cache: Arc<MetadataCache>) -> Self {
        Self { inner, cache }
    }

    /// What `write` to `object` returns, once the lookup cache forgot
    /// `object`, whatever the outcome.
    async fn object_write<T>(
        &self,
        object: ObjectName,
        write: impl Future<Output = Result<T>>,
    ) -> Result<T> {
        let result = write.await;
        self.cache.wrote_object(&object);
        result
    }
}

#[async_trait]
impl CredentialStore for CachedMetadata {
    async fn credential(&self, access_key: &str) -> Result<Option<Credential>> {
        let load = async { self.inner.credential(access_key).await };
        self.cache
            .credential(access_key, load, || self.inner.access_keys())
            .await
    }

    async fn access_keys(&self) -> Result<Vec<String>> {
        self.inner.access_keys().await
    }

    async fn issue_secret(&self, access_key: &str) -> Result<Option<String>> {
        self.inner.issue_secret(access_key).await
    }

    async fn put_credential(&self, cred: Credential) -> Result<()> {
        let access_key = cred.access_key.clone();
        let result = self.inner.put_credential(cred).await;
        // Even a failed write may have stored the key: never refuse it unasked.
        self.cache.wrote_credential(&access_key, true).await;
        result
    }

    async fn check_secret(&self, access_key: &str, secret: &str) -> Result<()> {
        self.inner.check_secret(access_key, secret).await
    }

    async fn vouch(
        &self,
        access_key: &str,
        string_to_sign: &str,
        signature: &str,
    ) -> Result<Option<Namespace>> {
        let vouched = self
            .inner
            .vouch(access_key, string_to_sign, signature)
            .await?;
        if vouched.is_some() {
            self.cache.vouched(access_key).await;
        }
        Ok(vouched)
    }

    async fn list_credentials(&self) -> Result<Vec<Credential>> {
        self.inner.list_credentials().await
    }

    async fn delete_credential(&self, access_key: &str) -> Result<bool> {
        let result = self.inner.delete_credential(access_key).await;
        // A failed delete may have left the key: it is not refused unasked.
        self.cache
            .wrote_credential(access_key, result.is_err())
            .await;
        result
    }

    async fn ready(&self) -> Result<()> {
        self.inner.ready().await
    }
}

#[async_trait]
impl BucketStore for CachedMetadata {
    async fn create_bucket(&self, owner: &Owner, bucket: NewBucket) -> Result<()> {
        let name = bucket.name.clone();
        let result = self.inner.create_bucket(owner, bucket).await;
        self.cache.wrote_bucket(&name);
        result
    }

    async fn bucket(&self, name: &str) -> Result<Arc<BucketInfo>> {
        let load = async { self.inner.bucket(name).await };
        self.cache.bucket_facts(name, load).await
    }

    async fn list_buckets(&self, owner: Option<&Owner>) -> Result<Vec<BucketInfo>> {
        self.inner.list_buckets(owner).await
    }

    async fn set_bucket_owner(&self, name: &str, from: &Owner, to: &Owner) -> Result<()> {
        let result = self.inner.set_bucket_owner(name, from, to).await;
        self.cache.wrote_bucket(name);
        result
    }

    async fn delete_bucket(&self, owner: &Owner, name: &str) -> Result<()> {
        let result = self.inner.delete_bucket(owner, name).await;
        self.cache.wrote_bucket(name);
        result
    }
}

#[async_trait]
impl BucketDocumentStore for CachedMetadata {
    async fn bucket_document(
        &self,
        bucket: &str,
        kind: BucketDocument,
        facts: &dyn BucketStore,
    ) -> Result<Option<Arc<str>>> {
        let load = async { self.inner.bucket_document(bucket, kind, facts).await };
        self.cache.bucket_document(bucket, kind, load).await
    }

    async fn put_bucket_document(
        &self,
        owner: &Owner,
        bucket: &BucketInfo,
        kind: BucketDocument,
        document: Option<String>,
    ) -> Result<()> {
        let result = self
            .inner
            .put_bucket_document(owner, bucket, kind, document)
            .await;
        // Facts are named as `bucket` was asked for: the name documents are kept by.
        self.cache.wrote_bucket_document(&bucket.name);
        result
    }
}

#[async_trait]
impl ObjectStore for CachedMetadata {
    async fn lookup(&self, owner: &Owner, object: &ObjectName) -> Result<KeyInfo> {
        let load = async { self.inner.lookup(owner, object).await };
        self.cache.lookup(owner, object, load).await
    }

    async fn create_object(
        &self,
        owner: &Owner,
        object: ObjectName,
        intent: WriteIntent,
    ) -> Result<OpenKey> {
        self.inner.create_object(owner, object, intent).await
    }

    async fn allocate_block(&self, owner: &Owner, open: &OpenKey) -> Result<BlockLocation> {
        self.inner.allocate_block(owner, open).await
    }

    async fn commit_object(
        &self,
        owner: &Owner,
        open: OpenKey,
        blocks: Vec<BlockLocation>,
        object: NewObject,
    ) -> Result<KeyInfo> {
        // Lookups after the commit see the new object.
        self.object_write(
            open.object.clone(),
            self.inner.commit_object(owner, open, blocks, object),
        )
        .await
    }

    async fn abort_object(&self, owner: &Owner, open: &OpenKey) -> Result<()> {
        self.inner.abort_object(owner, open).await
    }

    async fn delete_object(
        &self,
        owner: &Owner,
        object: ObjectName,
        condition: DeleteCondition,
    ) -> Result<Deleted> {
        self.object_write(
            object.clone(),
            self.inner.delete_object(owner, object, condition),
        )
        .await
    }

    async fn put_tags(
        &self,
        owner: &Owner,
        object: ObjectName,
        tags: Vec<(String, String)>,
    ) -> Result<()> {
        self.object_write(object.clone(), self.inner.put_tags(owner, object, tags))
            .await
    }

    async fn put_meta_entry(
        &self,
        owner: &Owner,
        object: ObjectName,
        change: MetaEntryChange,
    ) -> Result<()> {
        self.object_write(
            object.clone(),
            self.inner.put_meta_entry(owner, object, change),
        )
        .await
    }

    async fn scan_objects(&self, owner: &Owner, scan: ScanRange) -> Result<Vec<ListEntry>> {
        self.inner.scan_objects(owner, scan).await
    }
}

/// Uploads are not cached; completing one writes its object.
#[async_trait]
impl UploadStore for CachedMetadata {
    async fn create_multipart_upload(
        &self,
        owner: &Owner,
        object: ObjectName,
        upload: NewUpload,
    ) -> Result<UploadInfo> {
        self.inner
            .create_multipart_upload(owner, object, upload)
            .await
    }

    async fn multipart_upload(&self, owner: &Owner, upload: &UploadName) -> Result<UploadInfo> {
        self.inner.multipart_upload(owner, upload).await
    }

    async fn part_settings(&self, owner: &Owner, upload: &UploadName) -> Result<PartSettings> {
        self.inner.part_settings(owner, upload).await
    }

    async fn create_part(
        &self,
        owner: &Owner,
        part: &PartName,
        size_hint: Option<u64>,
    ) -> Result<OpenKey> {
        self.inner.create_part(owner, part, size_hint).await
    }

    async fn commit_part(
        &self,
        owner: &Owner,
        open: OpenKey,
        part: PartName,
        blocks: Vec<BlockLocation>,
        commit: PartCommit,
    ) -> Result<PartInfo> {
        self.inner
            .commit_part(owner, open, part, blocks, commit)
            .await
    }

    async fn list_parts(
        &self,
        owner: &Owner,
        upload: &UploadName,
        after: u16,
        limit: usize,
    ) -> Result<Vec<PartInfo>> {
        self.inner.list_parts(owner, upload, after, limit).await
    }

    async fn complete_multipart_upload(
        &self,
        owner: &Owner,
        upload: UploadName,
        complete: CompleteUpload,
    ) -> Result<KeyInfo> {
        self.object_write(
            upload.object.clone(),
            self.inner
                .complete_multipart_upload(owner, upload, complete),
        )
        .await
    }

    fn completed_by(&self, object: &KeyInfo, parts: &[(u16, String)]) -> bool {
        self.inner.completed_by(object, parts)
    }

    async fn abort_multipart_upload(&self, owner: &Owner, upload: UploadName) -> Result<()> {
        self.inner.abort_multipart_upload(owner, upload).await
    }

    async fn scan_multipart_uploads(
        &self,
        owner: &Owner,
        scan: ScanRange,
    ) -> Result<Vec<UploadInfo>> {
        self.inner.scan_multipart_uploads(owner, scan).await
    }
}

/// The lookup cache holds latest versions: a named version is read from
/// the back end, and every write to one tells the cache of its key.
#[async_trait]
impl VersionStore for CachedMetadata {
    fn keeps_versions(&self) -> bool {
        self.inner.keeps_versions()
    }

    async fn versioning(&self, owner: &Owner, bucket: &str) -> Result<Versioning> {
        self.inner.versioning(owner, bucket).await
    }

    async fn set_versioning(&self, owner: &Owner, bucket: &str, state: Versioning) -> Result<()> {
        self.inner.set_versioning(owner, bucket, state).await
    }

    async fn lookup_version(
        &self,
        owner: &Owner,
        object: &ObjectName,
        version_id: &str,
    ) -> Result<KeyInfo> {
        self.inner.lookup_version(owner, object, version_id).await
    }

    async fn delete_version(
        &self,
        owner: &Owner,
        object: ObjectName,
        version_id: String,
        bypass_governance: bool,
    ) -> Result<Deleted> {
        self.object_write(
            object.clone(),
            self.inner
                .delete_version(owner, object, version_id, bypass_governance),
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
        self.object_write(
            object.clone(),
            self.inner.put_version_tags(owner, object, version_id, tags),
        )
        .await
    }

    async fn put_version_meta_entry(
        &self,
        owner: &Owner,
        object: ObjectName,
        version_id: String,
        change: MetaEntryChange,
    ) -> Result<()> {
        self.object_write(
            object.clone(),
            self.inner
                .put_version_meta_entry(owner, object, version_id, change),
        )
        .await
    }

    async fn scan_versions(
        &self,
        owner: &Owner,
        scan: ScanRange,
        after_version: Option<String>,
    ) -> Result<Vec<VersionEntry>> {
        self.inner.scan_versions(owner, scan, after_version).await
    }
}
