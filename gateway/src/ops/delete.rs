//! DeleteObject (idempotent, 204) and DeleteObjects (up to 1000 keys in one
//! POST, each answered with its own Deleted or Error entry). A
//! DeleteObjects' entries that delete a key's latest without a condition
//! are one storage call (`delete_objects`, as few back-end calls as the
//! back end has); the others are deleted one by one.
//!
//! Conditional deletes: `If-Match`, `x-amz-if-match-size` and
//! `x-amz-if-match-last-modified-time` on DeleteObject, and a DeleteObjects
//! entry's `ETag`, `Size` and `LastModifiedTime`, are conditions on the
//! current object, checked by storage atomically with the delete: `412
//! PreconditionFailed` when one does not hold, `404 NoSuchKey` when there
//! is no object. A back end that cannot check them (Ozone) answers `501`;
//! a condition is never ignored. With a `versionId` they are refused
//! (`501`): a version's permanent delete takes no condition here.
//!
//! A version under object lock is not deleted by its id (`403
//! AccessDenied`), unless only GOVERNANCE retention holds it and the
//! caller sent `x-amz-bypass-governance-retention: true` and is allowed
//! `s3:BypassGovernanceRetention` (for DeleteObjects, entry by entry).

use axum::response::Response;
use futures::StreamExt;
use http::StatusCode;
use http::request::Parts;
use std::time::SystemTime;

use storage_client::{BucketRef, DeleteCondition, Deleted, MAX_KEY_BYTES, Owner, StorageError};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::authorise::{Authorised, Entries, asks_to_bypass_governance};
use super::body::read_to_end;
use super::headers::{bare_etag, version_headers};
use super::integrity::IntegrityPlan;
use super::{empty_response, xml_response};
use crate::access_control::policy::context::RequestContext;
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

/// What a DeleteObject deletes: the key's latest (adding a delete marker
/// where the bucket keeps versions) or, by its id, one version; and
/// whether GOVERNANCE retention gives way (the caller asked to and may).
pub struct Target<'a> {
    pub bucket: &'a str,
    pub key: &'a str,
    pub version_id: Option<&'a str>,
    pub bypass_governance: bool,
}

pub async fn delete_object(
    state: &AppState,
    owner: &Owner,
    parts: &Parts,
    target: Target<'_>,
) -> Result<Response, S3Error> {
    let (bucket, key) = (target.bucket, target.key);
    let condition = header_condition(parts)?;
    let deleted = delete(state, owner, &target, condition)
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
/// versioned bucket adds a delete marker. A locked version is refused by
/// storage, atomically with the delete (see `storage_client::VersionLock`).
async fn delete(
    state: &AppState,
    owner: &Owner,
    target: &Target<'_>,
    condition: DeleteCondition,
) -> Result<Deleted, StorageError> {
    let (bucket, key) = (target.bucket, target.key);
    match target.version_id {
        Some(_) if !condition.is_none() => Err(StorageError::NotImplemented(
            "a conditional delete of a version".into(),
        )),
        Some(version_id) => {
            state
                .storage
                .delete_version_bypassing_governance(
                    BucketRef::new(owner, bucket).object(key),
                    version_id,
                    target.bypass_governance,
                )
                .await
        }
        None => {
            state
                .storage
                .delete_object_if(BucketRef::new(owner, bucket).object(key), condition)
                .await
        }
    }
}

/// DeleteObject's conditions, from its headers.
fn header_condition(parts: &Parts) -> Result<DeleteCondition, S3Error> {
    let text = |name: &str| -> Result<Option<&str>, S3Error> {
        parts
            .headers
            .get(name)
            .map(|value| value.to_str().map_err(|_| bad_condition(name)))
            .transpose()
    };
    Ok(DeleteCondition {
        etag: text("if-match")?.map(bare_etag),
        size: text("x-amz-if-match-size")?
            .map(|size| {
                size.trim()
                    .parse()
                    .map_err(|_| bad_condition("x-amz-if-match-size"))
            })
            .transpose()?,
        last_modified: text("x-amz-if-match-last-modified-time")?
            .map(|at| {
                httpdate::parse_http_date(at.trim())
                    .map_err(|_| bad_condition("x-amz-if-match-last-modified-time"))
            })
            .transpose()?,
    })
}

/// A DeleteObjects entry's conditions.
fn entry_condition(object: &xml::ObjectIdentifier) -> Result<DeleteCondition, S3Error> {
    Ok(DeleteCondition {
        etag: object.etag.as_deref().map(bare_etag),
        size: object
            .size
            .as_deref()
            .map(|size| size.trim().parse().map_err(|_| bad_condition("Size")))
            .transpose()?,
        last_modified: object
            .last_modified_time
            .as_deref()
            .map(|at| {
                OffsetDateTime::parse(at.trim(), &Rfc3339)
                    .map(SystemTime::from)
                    .map_err(|_| bad_condition("LastModifiedTime"))
            })
            .transpose()?,
    })
}

fn bad_condition(name: &str) -> S3Error {
    S3Error::invalid_argument(format!("The {name} condition is not valid."))
        .with("ArgumentName", name)
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
    let context = RequestContext::new(parts, &state.trusted_proxies);
    let (owner, entries) = (authorised.owner(), authorised.entries(&context));
    let Some(entries) = &entries else {
        return Err(S3Error::access_denied());
    };
    // Asked once for the request, allowed or not per entry.
    let bypass = asks_to_bypass_governance(parts);
    // The decision loaded the bucket's facts (a missing bucket is one
    // error for the request, not a thousand per-key ones): no check here.
    // Each entry is admitted first; those that delete a key's latest with
    // no condition go to storage together, the others one by one.
    let mut outcomes: Vec<Option<Result<Deleted, S3Error>>> = Vec::new();
    let (mut together, mut together_at, mut alone) = (Vec::new(), Vec::new(), Vec::new());
    for (at, object) in request.objects.iter().enumerate() {
        outcomes.push(None);
        match admit(entries, bucket, object) {
            Err(err) => outcomes[at] = Some(Err(err)),
            Ok(condition) if object.version_id.is_none() && condition.is_none() => {
                together.push(object.key.clone());
                together_at.push(at);
            }
            Ok(condition) => alone.push((at, condition)),
        }
    }
    if !together.is_empty() {
        match state
            .storage
            .delete_objects(BucketRef::new(owner, bucket), together)
            .await
        {
            Ok(deleted) => {
                for (at, outcome) in together_at.into_iter().zip(deleted) {
                    outcomes[at] = Some(outcome.map_err(S3Error::from));
                }
            }
            Err(err) => {
                let err = S3Error::from(err).naming(bucket, None);
                for at in together_at {
                    outcomes[at] = Some(Err(err.clone()));
                }
            }
        }
    }
    let objects = &request.objects;
    let one_by_one: Vec<(usize, Result<Deleted, S3Error>)> = futures::stream::iter(alone)
        .map(|(at, condition)| async move {
            let object = &objects[at];
            let target = Target {
                bucket,
                key: &object.key,
                version_id: object.version_id.as_deref(),
                bypass_governance: bypass && entries.may_bypass_governance(bucket, &object.key),
            };
            let outcome = delete(state, owner, &target, condition).await;
            (at, outcome.map_err(S3Error::from))
        })
        .buffered(DELETE_CONCURRENCY)
        .collect()
        .await;
    for (at, outcome) in one_by_one {
        outcomes[at] = Some(outcome);
    }

    let mut result = xml::DeleteResult {
        xmlns: S3_NAMESPACE,
        ..xml::DeleteResult::default()
    };
    for (object, outcome) in request.objects.into_iter().zip(outcomes) {
        // Every entry was given its outcome above.
        let Some(outcome) = outcome else { continue };
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

/// Whether the entry may be deleted, and on what condition: its key is
/// one S3 takes and the decision allows it (see [`Entries::decide`]).
fn admit(
    entries: &Entries<'_>,
    bucket: &str,
    object: &xml::ObjectIdentifier,
) -> Result<DeleteCondition, S3Error> {
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
    entry_condition(object)
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
