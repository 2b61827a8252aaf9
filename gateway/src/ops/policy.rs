//! Get/Put/DeleteBucketPolicy, GetBucketPolicyStatus and
//! Get/Put/DeletePublicAccessBlock: the bucket owner's access rules,
//! checked when written and stored as bucket documents (a policy as the
//! owner sent it, so GetBucketPolicy gives it back unchanged).

use axum::response::Response;
use http::StatusCode;
use serde::Serialize;
use storage_client::{BucketDocument, BucketRef, Owner};

use super::authorise::BucketContext;
use super::body::read_to_end;
use super::bucket_documents::{
    self, corrupt, document_response, load, load_parsed, public_access_block, store,
};
use super::{empty_response, xml_response};
use crate::access_control::policy::{MAX_POLICY_BYTES, Policy};
use crate::access_control::public_access::PublicAccessBlock;
use crate::auth::Payload;
use crate::error::{Code, S3Error};
use crate::state::AppState;
use crate::xml::S3_NAMESPACE;

/// A PublicAccessBlockConfiguration is four booleans.
const MAX_BLOCK_BYTES: usize = 4 * 1024;

pub async fn get_bucket_policy(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
) -> Result<Response, S3Error> {
    let text = load(state, &owner.namespace, bucket, BucketDocument::Policy)
        .await?
        .ok_or_else(|| no_such_policy(bucket))?;
    Ok(document_response(text.to_string(), "application/json"))
}

pub async fn put_bucket_policy(
    state: &AppState,
    owner: &Owner,
    context: Option<&BucketContext>,
    bucket: &str,
    payload: &mut Payload,
) -> Result<Response, S3Error> {
    let body = read_to_end(payload, MAX_POLICY_BYTES).await?;
    let policy = Policy::parse(&body, bucket)?;
    if policy.is_public() {
        let block = match context {
            Some(context) => {
                let target = BucketRef::new(owner, bucket);
                context.public_access_block(state, target).await?
            }
            None => public_access_block(state, &owner.namespace, bucket).await?,
        };
        if block.block_public_policy {
            return Err(S3Error::access_denied());
        }
    }
    let text = String::from_utf8(body.to_vec())
        .map_err(|_| S3Error::new(Code::MalformedPolicy, "Policies must be UTF-8"))?;
    store(state, owner, bucket, BucketDocument::Policy, Some(text)).await?;
    Ok(empty_response(StatusCode::NO_CONTENT))
}

pub async fn delete_bucket_policy(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
) -> Result<Response, S3Error> {
    bucket_documents::delete(state, owner, bucket, BucketDocument::Policy).await
}

#[derive(Serialize)]
struct PolicyStatus {
    #[serde(rename = "@xmlns")]
    xmlns: &'static str,
    #[serde(rename = "IsPublic")]
    is_public: bool,
}

/// From the policy the request's decision loaded (`context`), when there
/// is one.
pub async fn get_bucket_policy_status(
    state: &AppState,
    owner: &Owner,
    context: Option<&BucketContext>,
    bucket: &str,
) -> Result<Response, S3Error> {
    let is_public = match context {
        Some(context) => context.policy().map(Policy::is_public),
        None => load_parsed(
            state,
            &owner.namespace,
            bucket,
            BucketDocument::Policy,
            |text| Policy::parse(text.as_bytes(), bucket).map_err(corrupt),
        )
        .await?
        .map(|policy| policy.is_public()),
    };
    let is_public = is_public.ok_or_else(|| no_such_policy(bucket))?;
    xml_response(
        "PolicyStatus",
        &PolicyStatus {
            xmlns: S3_NAMESPACE,
            is_public,
        },
    )
}

pub async fn get_public_access_block(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
) -> Result<Response, S3Error> {
    let text = load(
        state,
        &owner.namespace,
        bucket,
        BucketDocument::PublicAccessBlock,
    )
    .await?
    .ok_or_else(|| {
        S3Error::new(
            Code::NoSuchPublicAccessBlockConfiguration,
            "The public access block configuration was not found",
        )
        .with("BucketName", bucket)
    })?;
    // Stored as its canonical XML (see put_public_access_block).
    Ok(document_response(text.to_string(), "application/xml"))
}

pub async fn put_public_access_block(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
    payload: &mut Payload,
) -> Result<Response, S3Error> {
    let body = read_to_end(payload, MAX_BLOCK_BYTES).await?;
    let block = PublicAccessBlock::from_xml(&body)?;
    let document = Some(block.to_xml()?);
    store(
        state,
        owner,
        bucket,
        BucketDocument::PublicAccessBlock,
        document,
    )
    .await?;
    Ok(empty_response(StatusCode::OK))
}

pub async fn delete_public_access_block(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
) -> Result<Response, S3Error> {
    bucket_documents::delete(state, owner, bucket, BucketDocument::PublicAccessBlock).await
}

fn no_such_policy(bucket: &str) -> S3Error {
    S3Error::new(Code::NoSuchBucketPolicy, "The bucket policy does not exist")
        .with("BucketName", bucket)
}
