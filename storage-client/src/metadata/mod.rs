//! The metadata role (Ozone's OM), split the way its data splits: one role
//! trait for credentials, buckets, bucket documents, objects, multipart
//! uploads and versions each. Every back end implements all of them
//! ([`Metadata`]), and so does the cache's decorator
//! ([`CachedMetadata`]) that the facade holds around the back end's, as
//! one trait object. Each role is declared with [`role::metadata_role`],
//! which also makes the decorator's impl and the facade's method
//! ([`MetadataFacade`]) for each call the gateway makes as it is: a new
//! call is its declaration, its two back ends and its conformance case.
//!
//! Authorisation is not here. A bucket belongs to the access key that
//! created it; the gateway decides who may act on it and every
//! bucket-scoped call names the [`Owner`] the decision judged. That is a
//! precondition, not a decision: the embedded OM requires, inside the
//! call's transaction, that the bucket still has that owner (so a bucket
//! deleted and made again by another key since the decision is refused);
//! Ozone acts under the owner's name in the OM (the user its requests are
//! signed as) and has no transaction to check it in.
//!
//! A call the facade offers as it is takes the typed references the
//! gateway names ([`crate::BucketRef`], [`crate::ObjectRef`],
//! [`crate::UploadRef`]); the calls the facade composes take the names it
//! resolved, as small named structs ([`ObjectName`], [`UploadName`],
//! [`ScanRange`]). No role method has a default body, so a back end states
//! every behaviour it has.

mod bucket_documents;
mod buckets;
mod credentials;
mod facade;
mod objects;
pub(crate) mod role;
mod uploads;
mod versions;

pub(crate) use crate::refs::ObjectName;
pub(crate) use bucket_documents::BucketDocumentStore;
pub(crate) use buckets::{BucketStore, NewBucket};
pub(crate) use credentials::CredentialStore;
pub use facade::MetadataFacade;
pub(crate) use objects::{ObjectStore, OpenKey, ScanRange};
pub(crate) use uploads::{CompletedBy, PartName, UploadName, UploadStore, recorded_parts_are};
pub(crate) use versions::VersionStore;

use std::sync::Arc;

use crate::cache::MetadataCache;
use crate::{
    BucketDocument, BucketInfo, Credential, KeyInfo, Namespace, ObjectRef, Owner, Result,
    StorageError,
};

/// S3's limit on key length, in UTF-8 bytes.
pub const MAX_KEY_BYTES: usize = 1024;

/// Every metadata role of one back end.
pub(crate) trait Metadata:
    CredentialStore + BucketStore + BucketDocumentStore + ObjectStore + UploadStore + VersionStore
{
}

impl<T> Metadata for T where
    T: CredentialStore
        + BucketStore
        + BucketDocumentStore
        + ObjectStore
        + UploadStore
        + VersionStore
{
}

/// S3 object-key rules every back end applies: non-empty, at most
/// [`MAX_KEY_BYTES`] bytes.
pub(crate) fn validate_key(key: &str) -> Result<()> {
    if key.is_empty() {
        return Err(StorageError::InvalidArgument("the key is empty".into()));
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(StorageError::InvalidArgument(format!(
            "the key is {} bytes, longer than {MAX_KEY_BYTES}",
            key.len()
        )));
    }
    Ok(())
}

/// A back end's metadata roles with the cache in front: the cache as a
/// decorator, the way object stores are layered. Each role's declaration
/// ([`role`]) says what each call is to the cache, and makes the impls:
/// every write that changes what the cache holds tells it, after the back
/// end returns, whatever the outcome; every other call goes to the back
/// end unchanged; and the calls the cache answers are the methods below.
/// So the facade calls one `Metadata` and never the cache. (It is here,
/// above the roles, because it implements each and calls each.)
///
/// Loads are async blocks, not the back end's calls themselves: an
/// `async_trait` call boxes its future when it is made, and a hit must
/// not pay for a load it never runs.
pub(crate) struct CachedMetadata {
    inner: Arc<dyn Metadata>,
    cache: Arc<MetadataCache>,
}

impl CachedMetadata {
    pub(crate) fn new(inner: Arc<dyn Metadata>, cache: Arc<MetadataCache>) -> Self {
        Self { inner, cache }
    }

    /// The back end's roles, for the calls the cache has no part in.
    pub(crate) fn inner(&self) -> &dyn Metadata {
        &*self.inner
    }

    /// After a write to `object`: lookups from now on see it.
    pub(crate) fn wrote_object(&self, object: &ObjectName) {
        self.cache.wrote_object(object);
    }

    /// After a write to the bucket kept under `name`.
    pub(crate) fn wrote_bucket(&self, name: &str) {
        self.cache.wrote_bucket(name);
    }

    // ---- the calls the cache answers or must hear of in its own way ----

    pub(crate) async fn cached_credential(&self, access_key: &str) -> Result<Option<Credential>> {
        let load = async { self.inner.credential(access_key).await };
        self.cache
            .credential(access_key, load, || self.inner.access_keys())
            .await
    }

    pub(crate) async fn cached_put_credential(&self, cred: Credential) -> Result<()> {
        let access_key = cred.access_key.clone();
        let result = self.inner.put_credential(cred).await;
        // Even a failed write may have stored the key: never refuse it unasked.
        self.cache.wrote_credential(&access_key, true).await;
        result
    }

    pub(crate) async fn cached_vouch(
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

    pub(crate) async fn cached_delete_credential(&self, access_key: &str) -> Result<bool> {
        let result = self.inner.delete_credential(access_key).await;
        // A failed delete may have left the key: it is not refused unasked.
        self.cache
            .wrote_credential(access_key, result.is_err())
            .await;
        result
    }

    pub(crate) async fn cached_bucket(&self, name: &str) -> Result<Arc<BucketInfo>> {
        let load = async { self.inner.bucket(name).await };
        self.cache.bucket_facts(name, load).await
    }

    pub(crate) async fn cached_bucket_document(
        &self,
        bucket: &str,
        kind: BucketDocument,
        facts: &dyn BucketStore,
    ) -> Result<Option<Arc<str>>> {
        let load = async { self.inner.bucket_document(bucket, kind, facts).await };
        self.cache.bucket_document(bucket, kind, load).await
    }

    pub(crate) async fn cached_put_bucket_document(
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

    pub(crate) async fn cached_lookup(&self, object: ObjectRef<'_>) -> Result<KeyInfo> {
        let name = ObjectName::from(object);
        let load = async { self.inner.lookup(object).await };
        self.cache.lookup(object.owner(), &name, load).await
    }
}
