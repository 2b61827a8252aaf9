//! Where a bucket's lifecycle configuration is kept: storage's bucket
//! documents, as the canonical XML that [`super::rules::Configuration`]
//! renders.

use std::sync::Arc;

use storage_client::{BucketDocument, Identity, Storage, StorageError};

/// The stored configuration of `bucket`, if it has one (`NoSuchBucket` if
/// there is no bucket); the caller decides who may see it.
pub async fn load(storage: &Storage, bucket: &str) -> Result<Option<Arc<str>>, StorageError> {
    storage
        .bucket_document(bucket, BucketDocument::Lifecycle)
        .await
}

/// Stores (or with `None` deletes) the configuration; `AccessDenied`
/// unless `who` owns the bucket.
pub async fn store(
    storage: &Storage,
    who: &Identity,
    bucket: &str,
    document: Option<String>,
) -> Result<(), StorageError> {
    storage
        .put_bucket_document(who, bucket, BucketDocument::Lifecycle, document)
        .await
}
