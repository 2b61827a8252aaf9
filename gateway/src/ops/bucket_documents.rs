//! A bucket's configuration documents (CORS, tagging...), as the S3
//! handlers read and write them: storage errors named after the bucket, and
//! the stored canonical XML answered as it is.

use std::sync::Arc;

use axum::body::Body;
use axum::response::Response;
use http::{HeaderValue, header};
use storage_client::{BucketDocument, Identity};

use crate::error::{S3Error, S3Result};
use crate::state::AppState;

/// The bucket's document of `kind`, loaded without an identity: the caller
/// decides who may see it. `NoSuchBucket` when the bucket does not exist.
pub async fn load(
    state: &AppState,
    bucket: &str,
    kind: BucketDocument,
) -> S3Result<Option<Arc<str>>> {
    state
        .storage
        .bucket_document(bucket, kind)
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, None))
}

/// Replaces (or with `None` removes) the document; refused unless `who`
/// may configure the bucket.
pub async fn store(
    state: &AppState,
    who: &Identity,
    bucket: &str,
    kind: BucketDocument,
    document: Option<String>,
) -> S3Result<()> {
    state
        .storage
        .put_bucket_document(who, bucket, kind, document)
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, None))
}

/// Checks that `who` may read the bucket's configuration: its owner only.
pub async fn authorise_read(state: &AppState, who: &Identity, bucket: &str) -> S3Result<()> {
    state
        .storage
        .bucket(who, bucket)
        .await
        .map(drop)
        .map_err(|err| S3Error::from(err).naming(bucket, None))
}

/// A 200 answering a stored document as it is.
pub fn document_response(document: &str) -> Response {
    let mut response = Response::new(Body::from(document.to_owned()));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/xml"),
    );
    response
}
