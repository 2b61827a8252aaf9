//! Bucket documents on Ozone: sealed records in the system bucket
//! `s3gw-bucket-documents` ([`BucketDocuments`]).

use async_trait::async_trait;

use super::OzoneMetadata;
use crate::om::BucketDocumentStore;
use crate::{BucketDocument, BucketInfo, Owner, Result};

#[async_trait]
impl BucketDocumentStore for OzoneMetadata {
    async fn bucket_document(
        &self,
        bucket: &BucketInfo,
        kind: BucketDocument,
    ) -> Result<Option<String>> {
        self.documents.get(bucket, kind).await
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
