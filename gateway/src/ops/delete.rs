//! DeleteObject (idempotent, 204) and DeleteObjects (up to 1000 keys in one
//! POST, each answered with its own Deleted or Error entry).

use axum::response::Response;
use futures::StreamExt;
use http::StatusCode;
use http::request::Parts;
use storage_client::{Identity, MAX_KEY_BYTES};

use super::body::read_to_end;
use super::integrity::IntegrityPlan;
use super::{check_version_id, empty_response, xml_response};
use crate::auth::Payload;
use crate::error::S3Error;
use crate::state::AppState;
use crate::xml::{self, S3_NAMESPACE};

/// S3's limit on keys per DeleteObjects request.
const MAX_DELETE_KEYS: usize = 1000;

/// 1000 keys of 1024 bytes, XML-escaped, fit well within this.
const MAX_DELETE_BODY_BYTES: usize = 8 * 1024 * 1024;

/// Deletes issued at once for one DeleteObjects request.
const DELETE_CONCURRENCY: usize = 16;

pub async fn delete_object(
    state: &AppState,
    who: &Identity,
    bucket: &str,
    key: &str,
    version_id: Option<&str>,
) -> Result<Response, S3Error> {
    check_version_id(version_id)?;
    state
        .storage
        .delete_object(who, bucket, key)
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, Some(key)))?;
    Ok(empty_response(StatusCode::NO_CONTENT))
}

pub async fn delete_objects(
    state: &AppState,
    who: &Identity,
    parts: &Parts,
    bucket: &str,
    payload: &mut Payload,
) -> Result<Response, S3Error> {
    let plan = IntegrityPlan::from_headers(&parts.headers)?;
    if !plan.has_expected_digest() {
        return Err(S3Error::invalid_request(
            "Missing required header for this request: Content-Md5",
        ));
    }
    let body = read_to_end(payload, MAX_DELETE_BODY_BYTES).await?;
    plan.verify_body(&body, payload.trailers())?;

    let request: xml::Delete = xml::from_xml(&body)?;
    if request.objects.is_empty() || request.objects.len() > MAX_DELETE_KEYS {
        return Err(S3Error::malformed_xml());
    }
    // One up-front check turns a missing or foreign bucket into one error
    // for the request instead of a thousand per-key errors.
    state
        .storage
        .bucket(who, bucket)
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, None))?;

    let outcomes: Vec<(xml::ObjectIdentifier, Result<(), S3Error>)> =
        futures::stream::iter(request.objects)
            .map(|object| async move {
                let outcome = delete_one(state, who, bucket, &object).await;
                (object, outcome)
            })
            .buffered(DELETE_CONCURRENCY)
            .collect()
            .await;

    let mut result = xml::DeleteResult {
        xmlns: S3_NAMESPACE,
        ..xml::DeleteResult::default()
    };
    for (object, outcome) in outcomes {
        match outcome {
            Ok(()) if request.quiet => {}
            Ok(()) => result.deleted.push(xml::DeletedObject {
                key: object.key,
                version_id: object.version_id,
            }),
            Err(err) => result.errors.push(xml::DeleteError {
                key: object.key,
                version_id: object.version_id,
                code: err.code,
                message: err.message,
            }),
        }
    }
    xml_response("DeleteResult", &result)
}

async fn delete_one(
    state: &AppState,
    who: &Identity,
    bucket: &str,
    object: &xml::ObjectIdentifier,
) -> Result<(), S3Error> {
    if object.key.is_empty() {
        return Err(S3Error::new(
            "UserKeyMustBeSpecified",
            StatusCode::BAD_REQUEST,
            "The request was missing a required key.",
        ));
    }
    if object.key.len() > MAX_KEY_BYTES {
        return Err(S3Error::key_too_long());
    }
    check_version_id(object.version_id.as_deref())?;
    state
        .storage
        .delete_object(who, bucket, &object.key)
        .await?;
    Ok(())
}
