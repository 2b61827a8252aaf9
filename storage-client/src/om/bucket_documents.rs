//! The bucket documents role: configuration a bucket holds (see
//! [`crate::BucketDocument`]).

use async_trait::async_trait;

use crate::{BucketDocument, BucketInfo, Owner, Result};

/// Each call is given the bucket's facts as the facade has them (cached),
/// so that a back end that needs them (Ozone dates a document by the
/// bucket's creation) asks the OM for nothing more.
#[async_trait]
pub(crate) trait BucketDocumentStore: Send + Sync {
    /// The bucket's document of `kind`, whoever asks: loaded (and cached)
    /// without an identity like the bucket's facts, for the gateway to
    /// decide on. `NoSuchBucket` if there is no bucket.
    async fn bucket_document(
        &self,
        bucket: &BucketInfo,
        kind: BucketDocument,
    ) -> Result<Option<String>>;
    /// Stores the document (`Some`) or removes it (`None`, no error when
    /// there was none). A back end with transactions refuses it unless the
    /// bucket still belongs to `owner`.
    async fn put_bucket_document(
        &self,
        owner: &Owner,
        bucket: &BucketInfo,
        kind: BucketDocument,
        document: Option<String>,
    ) -> Result<()>;
}
