//! The buckets role. Their configuration documents are a role of their
//! own ([`super::BucketDocumentStore`]).

use std::sync::Arc;

use super::role::metadata_role;
use crate::{BucketInfo, BucketRef, BucketUsage, Owner, Result};

/// A bucket to create, as a back end keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NewBucket {
    /// The name it is kept under ([`BucketRef::path`]).
    pub name: String,
    /// The LocationConstraint (empty for us-east-1).
    pub region: String,
}

impl NewBucket {
    pub(crate) fn new(bucket: BucketRef<'_>, region: &str) -> Self {
        Self {
            name: bucket.path().into_owned(),
            region: region.to_owned(),
        }
    }
}

metadata_role! {
    pub(crate) trait BucketStore {
        /// Creates the bucket, owned by `bucket.owner`, in `region` (the
        /// LocationConstraint, empty for us-east-1): `BucketAlreadyOwnedByYou`
        /// if that owner owns it already, `BucketAlreadyExists` if someone
        /// else does.
        async fn create_bucket(&self, bucket: BucketRef<'_>, region: &str) -> Result<()>
            => facade, forgets_bucket(bucket.path());
        /// The bucket's facts, whoever asks: the same answer for every caller,
        /// so it is loaded (and cached) without an identity, for the gateway
        /// to decide on. `NoSuchBucket` if none. Their `name` is `name` (what
        /// the cache forgets them by), and they are shared: every request
        /// reads them, from the cache.
        async fn bucket(&self, name: &str) -> Result<Arc<BucketInfo>>
            => internal, custom(cached_bucket);
        /// Buckets owned by `owner` (`None`: every bucket), sorted by name.
        async fn list_buckets(&self, owner: Option<&Owner>) -> Result<Vec<BucketInfo>>
            => internal, pass;
        /// Gives the bucket to `to` if it still belongs to the owner judged
        /// (`bucket.owner`; checked atomically where the back end has
        /// transactions): `PreconditionFailed` if it no longer does,
        /// `NoSuchBucket` if there is none. The bucket's documents are left
        /// as they are; the caller changes what names the owner.
        async fn set_bucket_owner(&self, bucket: BucketRef<'_>, to: &Owner) -> Result<()>
            => facade, forgets_bucket(bucket.path());
        /// What the bucket holds now, counted by the back end in one pass
        /// (one read transaction where it has them) rather than by paging
        /// a listing through the facade. `NoSuchBucket` if none.
        async fn bucket_usage(&self, bucket: BucketRef<'_>) -> Result<BucketUsage>
            => facade, pass;
        /// `BucketNotEmpty` unless the bucket holds no object; uploads in
        /// progress end with it, as in S3.
        async fn delete_bucket(&self, bucket: BucketRef<'_>) -> Result<()>
            => facade, forgets_bucket(bucket.path());
    }
}
