//! Bucket documents on Ozone: sealed records in the system bucket
//! `s3gw-bucket-documents` ([`BucketDocuments`]).

use std::sync::Arc;

use async_trait::async_trait;

use super::OzoneMetadata;
use crate::metadata::{BucketDocumentStore, BucketStore};
use crate::{BucketDocument, BucketInfo, Owner, Result};

#[async_trait]
impl BucketDocumentStore for OzoneMetadata {
    async fn bucket_document(
        &self,
        bucket: &str,
        kind: BucketDocument,
        facts: &dyn BucketStore,
    ) -> Result<Option<Arc<str>>> {
        let facts = facts.bucket(bucket).await?;
        let document = self.documents.get(&facts, kind).await?;
        Ok(document.map(Arc::from))
    }

    async fn put_bucket_document(
        &self,
        _owner: &Owner,
        bucket: &BucketInfo,
        kind: BucketDocument,
        document: Option<String>,
    ) -> Result<()> {
        self.documents.put(bucket, kind, document).await
    }
}
