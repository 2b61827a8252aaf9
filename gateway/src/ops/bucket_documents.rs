//! A bucket's configuration documents (CORS, tagging...), as the S3
//! handlers read and write them: storage errors named after the bucket, and
//! the stored canonical XML answered as it is.

use std::any::Any;
use std::sync::Arc;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::request::Parts;
use http::{HeaderValue, StatusCode, header};
use storage_client::{BucketDocument, BucketRef, Namespace, Owner};

use super::body::read_to_end;
use super::empty_response;
use super::integrity::IntegrityPlan;
use crate::access_control::public_access::PublicAccessBlock;
use crate::auth::Payload;
use crate::error::{S3Error, S3Result};
use crate::state::AppState;

/// A Put request's document body, up to `limit` bytes, checked against any
/// Content-MD5 or `x-amz-checksum-*` it came with.
pub async fn read_body(parts: &Parts, payload: &mut Payload, limit: usize) -> S3Result<Bytes> {
    let plan = IntegrityPlan::from_headers(&parts.headers)?;
    let body = read_to_end(payload, limit).await?;
    plan.verify_body(&body, payload.trailers())?;
    Ok(body)
}

/// A Get request's answer: the stored document as it is; `missing` when
/// there is none. The caller was authorised as the bucket's owner before
/// (see [`super::authorise`]).
pub async fn get(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
    kind: BucketDocument,
    missing: impl FnOnce() -> S3Error,
) -> S3Result<Response> {
    match load(state, &owner.namespace, bucket, kind).await? {
        Some(document) => Ok(document_response(document.to_string(), "application/xml")),
        None => Err(missing()),
    }
}

/// The document of `kind` of the bucket `bucket` in `namespace` (the
/// asker's), loaded without an identity: the caller decides owner may see
/// it. `NoSuchBucket` when the bucket does not exist.
pub async fn load(
    state: &AppState,
    namespace: &Namespace,
    bucket: &str,
    kind: BucketDocument,
) -> S3Result<Option<Arc<str>>> {
    state
        .storage
        .bucket_document(namespace, bucket, kind)
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, None))
}

/// The bucket's document of `kind` as `parse` reads it, parsed once per
/// stored text (see [`crate::parsed_documents`]).
pub async fn load_parsed<T: Any + Send + Sync>(
    state: &AppState,
    namespace: &Namespace,
    bucket: &str,
    kind: BucketDocument,
    parse: impl FnOnce(&str) -> S3Result<T>,
) -> S3Result<Option<Arc<T>>> {
    match load(state, namespace, bucket, kind).await? {
        Some(text) => state
            .parsed_documents
            .get_or_parse((namespace, bucket), kind, text, parse)
            .map(Some),
        None => Ok(None),
    }
}

/// Replaces (or with `None` removes) the document; refused unless `owner`
/// may configure the bucket.
pub async fn store(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
    kind: BucketDocument,
    document: Option<String>,
) -> S3Result<()> {
    state
        .storage
        .put_bucket_document(BucketRef::new(owner, bucket), kind, document)
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, None))
}

/// A Delete request's answer: the document removed, 204 whether there was
/// one or not, as S3 answers.
pub async fn delete(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
    kind: BucketDocument,
) -> S3Result<Response> {
    store(state, owner, bucket, kind, None).await?;
    Ok(empty_response(StatusCode::NO_CONTENT))
}

/// A 200 carrying a document (stored or rendered).
pub fn document_response(body: String, content_type: &'static str) -> Response {
    let mut response = Response::new(Body::from(body));
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// The bucket's public access block (every switch off without one).
pub(super) async fn public_access_block(
    state: &AppState,
    namespace: &Namespace,
    bucket: &str,
) -> Result<PublicAccessBlock, S3Error> {
    let block = load_parsed(
        state,
        namespace,
        bucket,
        BucketDocument::PublicAccessBlock,
        |text| PublicAccessBlock::from_xml(text.as_bytes()).map_err(corrupt),
    )
    .await?;
    Ok(block.map(|block| *block).unwrap_or_default())
}

/// A stored document this gateway wrote no longer parses: a fault, not
/// the caller's mistake.
pub(super) fn corrupt(err: S3Error) -> S3Error {
    S3Error::internal(format!(
        "a stored bucket document does not parse: {}",
        err.message
    ))
}
