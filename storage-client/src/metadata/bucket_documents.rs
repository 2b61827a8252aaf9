//! The bucket documents role: configuration a bucket holds (see
//! [`crate::BucketDocument`]).

use std::sync::Arc;

use super::BucketStore;
use super::role::metadata_role;
use crate::{BucketDocument, BucketInfo, Owner, Result};

metadata_role! {
    /// A back end that needs the bucket's facts (Ozone dates a document by the
    /// bucket's creation) gets them as the facade has them (cached), so it
    /// asks the OM for nothing more.
    pub(crate) trait BucketDocumentStore {
        /// The bucket's document of `kind`, whoever asks: loaded (and cached)
        /// without an identity like the bucket's facts, for the gateway to
        /// decide on. `NoSuchBucket` if there is no bucket. Named, not given
        /// its facts: it is read on every request, mostly from the cache, and
        /// a back end that needs the facts asks `facts` for them only when it
        /// loads the document.
        async fn bucket_document(&self, bucket: &str, kind: BucketDocument, facts: &dyn BucketStore)
            -> Result<Option<Arc<str>>>
            => internal, custom(cached_bucket_document);
        /// Stores the document (`Some`) or removes it (`None`, no error when
        /// there was none). A back end with transactions refuses it unless the
        /// bucket still belongs to `owner`. `bucket` is as
        /// [`BucketStore::bucket`] gave it: named as asked there, the name the
        /// cache forgets the bucket's documents by.
        async fn put_bucket_document(
            &self,
            owner: &Owner,
            bucket: &BucketInfo,
            kind: BucketDocument,
            document: Option<String>
        ) -> Result<()>
            => internal, custom(cached_put_bucket_document);
    }
}
