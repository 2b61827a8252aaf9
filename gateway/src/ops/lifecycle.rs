//! Get/Put/DeleteBucketLifecycleConfiguration: the rules are checked and
//! stored here; `crate::lifecycle::worker` applies them.

use axum::response::Response;
use http::StatusCode;
use http::request::Parts;
use storage_client::{BucketDocument, MAX_BUCKET_DOCUMENT_BYTES, Namespace, Owner};

use super::body::read_to_end;
use super::bucket_documents;
use super::empty_response;
use super::integrity::IntegrityPlan;
use crate::auth::Payload;
use crate::error::{Code, S3Error, S3Result};
use crate::lifecycle::rules::Configuration;
use crate::state::AppState;

/// Storage keeps documents up to `MAX_BUCKET_DOCUMENT_BYTES` of canonical
/// XML; twice that leaves room for the whitespace a client may send.
const MAX_LIFECYCLE_BODY: usize = 2 * MAX_BUCKET_DOCUMENT_BYTES;

pub async fn get_bucket_lifecycle(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
) -> S3Result<Response> {
    bucket_documents::get(state, owner, bucket, BucketDocument::Lifecycle, || {
        S3Error::no_such_lifecycle_configuration(bucket)
    })
    .await
}

pub async fn put_bucket_lifecycle(
    state: &AppState,
    owner: &Owner,
    parts: &Parts,
    bucket: &str,
    payload: &mut Payload,
) -> S3Result<Response> {
    // The bucket first: a stranger learns nothing from how the body is judged.
    state
        .storage
        .bucket_facts(&owner.namespace, bucket)
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, None))?;
    // The lifecycle worker walks the shared namespace only: rules it would
    // never run are refused, not stored.
    if let Namespace::Tenant(volume) = &owner.namespace {
        return Err(S3Error::new(
            Code::NotImplemented,
            format!(
                "lifecycle rules of an Ozone tenant's buckets (volume {volume}) are not run \
                 by this gateway yet"
            ),
        ));
    }
    let plan = IntegrityPlan::from_headers(&parts.headers)?;
    if !plan.has_expected_digest() {
        return Err(S3Error::invalid_request(
            "Missing required header for this request: Content-Md5",
        ));
    }
    let body = read_to_end(payload, MAX_LIFECYCLE_BODY).await?;
    plan.verify_body(&body, payload.trailers())?;
    let config = Configuration::from_request(&body)?;
    let document = Some(config.document);
    bucket_documents::store(state, owner, bucket, BucketDocument::Lifecycle, document).await?;
    Ok(empty_response(StatusCode::OK))
}

pub async fn delete_bucket_lifecycle(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
) -> S3Result<Response> {
    bucket_documents::delete(state, owner, bucket, BucketDocument::Lifecycle).await
}
