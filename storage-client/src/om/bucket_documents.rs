//! The bucket documents role: configuration a bucket holds (see
//! [`crate::BucketDocument`]).

use async_trait::async_trait;

use crate::{BucketDocument, BucketInfo, Identity, Result};

/// Each call is given the bucket's facts as the facade has them (cached),
/// so that a back end that needs them (Ozone dates a document by the
/// bucket's creation) asks the OM for nothing more.
#[async_trait]
pub(crate) trait BucketDocumentStore: Send + Sync {
    /// The bucket's document of `kind`, whoever asks: loaded (and cached)
    /// without an identity like the bucket's facts, the caller authorised
    /// after. `NoSuchBucket` if there is no bucket.
    async fn bucket_document(
        &self,
        bucket: &BucketInfo,
        kind: BucketDocument,
    ) -> Result<Option<String>>;
    /// Stores the document (`Some`) or removes it (`None`, no error when
    /// there was none). A back end that authorises itself refuses `who`
    /// unless it owns the bucket.
    async fn put_bucket_document(
        &self,
        who: &Identity,
        bucket: &BucketInfo,
        kind: BucketDocument,
        document: Option<String>,
    ) -> Result<()>;
}
