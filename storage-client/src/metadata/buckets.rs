//! The buckets role. Their configuration documents are a role of their
//! own ([`super::BucketDocumentStore`]).

use std::sync::Arc;

use async_trait::async_trait;

use crate::{BucketInfo, Owner, Result};

/// A bucket to create.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NewBucket {
    pub name: String,
    /// The LocationConstraint (empty for us-east-1).
    pub region: String,
}

#[async_trait]
pub(crate) trait BucketStore: Send + Sync {
    /// Creates the bucket owned by `owner`: `BucketAlreadyOwnedByYou` if
    /// `owner` owns it already, `BucketAlreadyExists` if someone else does.
    async fn create_bucket(&self, owner: &Owner, bucket: NewBucket) -> Result<()>;
    /// The bucket's facts, whoever asks: the same answer for every caller,
    /// so it is loaded (and cached) without an identity, for the gateway
    /// to decide on. `NoSuchBucket` if none. Their `name` is `name` (what
    /// the cache forgets them by), and they are shared: every request
    /// reads them, from the cache.
    async fn bucket(&self, name: &str) -> Result<Arc<BucketInfo>>;
    /// Buckets owned by `owner` (`None`: every bucket), sorted by name.
    async fn list_buckets(&self, owner: Option<&Owner>) -> Result<Vec<BucketInfo>>;
    /// Gives the bucket to `to`, if it still belongs to `from` (checked
    /// atomically where the back end has transactions):
    /// `PreconditionFailed` otherwise, `NoSuchBucket` if there is none.
    async fn set_bucket_owner(&self, name: &str, from: &Owner, to: &Owner) -> Result<()>;
    /// `BucketNotEmpty` unless the bucket holds no object; uploads in
    /// progress end with it, as in S3.
    async fn delete_bucket(&self, owner: &Owner, name: &str) -> Result<()>;
}
