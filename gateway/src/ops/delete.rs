//! DeleteObject (idempotent, 204) and DeleteObjects (up to 1000 keys in one
//! POST, each answered with its own Deleted or Error entry).
//!
//! Conditional deletes (`If-Match`, `x-amz-if-match-last-modified-time`,
//! `x-amz-if-match-size`, and a DeleteObjects entry's `ETag`,
//! `LastModifiedTime` or `Size`) are not built: such a request, or entry,
//! is refused `501 NotImplemented` rather than deleting unconditionally.

use axum::response::Response;
use futures::StreamExt;
use http::StatusCode;
use http::request::Parts;
use storage_client::{Deleted, MAX_KEY_BYTES, Owner, StorageError};

use super::authorise::{Authorised, Entries};
use super::body::read_to_end;
use super::headers::version_headers;
use super::integrity::IntegrityPlan;
use super::{empty_response, xml_response};
use crate::auth::Payload;
use crate::error::{Code, S3Error};
use crate::state::AppState;
use crate::xml::{self, S3_NAMESPACE};

/// S3's limit on keys per DeleteObjects request.
const MAX_DELETE_KEYS: usize = 1000;

/// 1000 keys of 1024 bytes, XML-escaped, fit well within this.
const MAX_DELETE_BODY_BYTES: usize = 8 * 1024 * 1024;

/// Deletes issued at once for one DeleteObjects request.
const DELETE_CONCURRENCY: usize = 16;

/// The headers that make a DeleteObject conditional.
const CONDITIONS: [&str; 3] = [
    "if-match",
    "x-amz-if-match-last-modified-time",
    "x-amz-if-match-size",
];

pub async fn delete_object(
    state: &AppState,
    owner: &Owner,
    parts: &Parts,
    bucket: &str,
    key: &str,
    version_id: Option<&str>,
) -> Result<Response, S3Error> {
    if let Some(name) = CONDITIONS
        .iter()
        .find(|name| parts.headers.contains_key(**name))
    {
        return Err(conditional_delete_refused(name));
    }
    let deleted = delete(state, owner, bucket, key, version_id)
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, Some(key)))?;
    let mut response = empty_response(StatusCode::NO_CONTENT);
    version_headers(
        response.headers_mut(),
        deleted.version_id.as_deref(),
        deleted.delete_marker,
    );
    Ok(response)
}

/// Deletes the version named, or (without one) the object, which in a
/// versioned bucket adds a delete marker.
async fn delete(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
    key: &str,
    version_id: Option<&str>,
) -> Result<Deleted, StorageError> {
    match version_id {
        Some(version_id) => {
            state
                .storage
                .delete_version(owner, bucket, key, version_id)
                .await
        }
        None => state.storage.delete_object(owner, bucket, key).await,
    }
}

pub async fn delete_objects(
    state: &AppState,
    authorised: &Authorised,
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
    // Each entry is decided on its own key and version (s3:DeleteObject,
    // or s3:DeleteObjectVersion for a version's permanent delete) and
    // refused alone, as S3 answers a DeleteObjects.
    let (owner, entries) = (authorised.owner(), authorised.entries());
    let Some(entries) = &entries else {
        return Err(S3Error::access_denied());
    };
    // The decision loaded the bucket's facts (a missing bucket is one
    // error for the request, not a thousand per-key ones): no check here.
    let outcomes: Vec<(xml::ObjectIdentifier, Result<Deleted, S3Error>)> =
        futures::stream::iter(request.objects)
            .map(|object| async move {
                let outcome = delete_one(state, owner, entries, bucket, &object).await;
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
            Ok(_) if request.quiet => {}
            Ok(deleted) => result.deleted.push(deleted_entry(object, deleted)),
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
    owner: &Owner,
    entries: &Entries<'_>,
    bucket: &str,
    object: &xml::ObjectIdentifier,
) -> Result<Deleted, S3Error> {
    if object.key.is_empty() {
        return Err(S3Error::new(
            Code::UserKeyMustBeSpecified,
            "The request was missing a required key.",
        ));
    }
    if object.key.len() > MAX_KEY_BYTES {
        return Err(S3Error::key_too_long());
    }
    entries.decide(bucket, &object.key, object.version_id.as_deref())?;
    let condition = [
        ("ETag", &object.etag),
        ("LastModifiedTime", &object.last_modified_time),
        ("Size", &object.size),
    ];
    if let Some((name, _)) = condition.iter().find(|(_, given)| given.is_some()) {
        return Err(conditional_delete_refused(name));
    }
    Ok(delete(
        state,
        owner,
        bucket,
        &object.key,
        object.version_id.as_deref(),
    )
    .await?)
}

/// A conditional delete, whose condition would otherwise be ignored.
fn conditional_delete_refused(condition: &str) -> S3Error {
    S3Error::new(
        Code::NotImplemented,
        format!("A conditional delete ({condition}) is not implemented; nothing was deleted."),
    )
}

/// A `<Deleted>` entry as S3 writes it: the version asked for, and when a
/// delete marker was made or removed, `DeleteMarker` (with the marker's id
/// if it was made).
fn deleted_entry(object: xml::ObjectIdentifier, deleted: Deleted) -> xml::DeletedObject {
    let made_marker = deleted.delete_marker && object.version_id.is_none();
    xml::DeletedObject {
        key: object.key,
        delete_marker: deleted.delete_marker.then_some(true),
        delete_marker_version_id: deleted.version_id.filter(|_| made_marker),
        version_id: object.version_id,
    }
}
