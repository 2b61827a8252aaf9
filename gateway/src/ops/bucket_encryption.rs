//! Put/Get/DeleteBucketEncryption, and a bucket's default encryption as
//! the write paths read it: PutObject, CopyObject, PostObject and
//! CreateMultipartUpload encrypt with SSE-S3 or SSE-KMS what arrives
//! without encryption headers (fields).

use axum::response::Response;
use http::StatusCode;
use http::request::Parts;
use storage_client::{BucketDocument, Namespace, Owner};

use super::bucket_documents::{self, corrupt, load_parsed};
use super::empty_response;
use crate::auth::Payload;
use crate::error::{Code, S3Error, S3Result};
use crate::ops::sse::write::Encryption;
use crate::sse::bucket_default::{BucketDefault, DefaultAlgorithm};
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
    match &setting.algorithm {
        DefaultAlgorithm::SseS3 if state.sse_keyring.is_none() => {
            return Err(super::sse::no_master_key());
        }
        DefaultAlgorithm::Kms { key_id } => match state.sse_kms.as_deref() {
            None => return Err(super::sse::no_kms()),
            Some(kms) if key_id.is_none() && kms.default_key.is_none() => {
                return Err(S3Error::invalid_argument(
                    "aws:kms needs a KMSMasterKeyID: this gateway has no default KMS key \
                     (sse_kms_default_key)",
                ));
            }
            Some(_) => {}
        },
        DefaultAlgorithm::SseS3 => {}
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

/// How a write to `bucket` is encrypted: as it asked (`asked`), else as
/// the bucket's default says, else not at all.
pub async fn asked_or_default(
    state: &AppState,
    asked: Option<Encryption>,
    namespace: &Namespace,
    bucket: &str,
) -> S3Result<Option<Encryption>> {
    if asked.is_some() {
        return Ok(asked);
    }
    let parsed = load_parsed(
        state,
        namespace,
        bucket,
        BucketDocument::Encryption,
        |text| BucketDefault::from_xml(text.as_bytes()).map_err(corrupt),
    )
    .await?;
    let Some(default) = parsed else {
        return Ok(None);
    };
    match &default.algorithm {
        DefaultAlgorithm::SseS3 => super::sse::master_key(state).map(Some),
        DefaultAlgorithm::Kms { key_id } => super::sse::kms_data_key(state, key_id.as_deref())
            .await
            .map(Some),
    }
}
