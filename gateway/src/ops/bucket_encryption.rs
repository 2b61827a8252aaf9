//! Put/Get/DeleteBucketEncryption, and a bucket's default encryption as
//! the write paths read it: PutObject, CopyObject, PostObject and
//! CreateMultipartUpload encrypt with SSE-S3 what arrives without
//! encryption headers (fields).

use axum::response::Response;
use http::StatusCode;
use http::request::Parts;
use storage_client::{BucketDocument, Namespace, Owner};

use super::bucket_documents::{self, corrupt, load_parsed};
use super::empty_response;
use crate::auth::Payload;
use crate::error::{Code, S3Error, S3Result};
use crate::sse::bucket_default::BucketDefault;
use crate::state::AppState;

/// One rule in XML is a few hundred bytes.
const MAX_ENCRYPTION_BODY: usize = 16 * 1024;

pub async fn put_bucket_encryption(
    state: &AppState,
    owner: &Owner,
    parts: &Parts,
    bucket: &str,
    payload: &mut Payload,
) -> S3Result<Response> {
    let body = bucket_documents::read_body(parts, payload, MAX_ENCRYPTION_BODY).await?;
    let setting = BucketDefault::from_xml(&body)?;
    // A default no write could honour would refuse every PutObject.
    if state.sse_keyring.is_none() {
        return Err(super::sse::no_master_key());
    }
    let document = Some(setting.to_xml()?);
    bucket_documents::store(state, owner, bucket, BucketDocument::Encryption, document).await?;
    Ok(empty_response(StatusCode::OK))
}

pub async fn get_bucket_encryption(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
) -> S3Result<Response> {
    bucket_documents::get(state, owner, bucket, BucketDocument::Encryption, || {
        S3Error::new(
            Code::ServerSideEncryptionConfigurationNotFoundError,
            "The server side encryption configuration was not found",
        )
        .with("BucketName", bucket)
    })
    .await
}

pub async fn delete_bucket_encryption(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
) -> S3Result<Response> {
    bucket_documents::delete(state, owner, bucket, BucketDocument::Encryption).await
}

/// Whether writes to `bucket` without encryption headers are encrypted.
pub async fn has_default(state: &AppState, namespace: &Namespace, bucket: &str) -> S3Result<bool> {
    let parsed = load_parsed(
        state,
        namespace,
        bucket,
        BucketDocument::Encryption,
        |text| BucketDefault::from_xml(text.as_bytes()).map_err(corrupt),
    )
    .await?;
    Ok(parsed.is_some())
}
