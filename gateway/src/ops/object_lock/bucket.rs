//! Object lock on a bucket: turned on at CreateBucket
//! (`x-amz-bucket-object-lock-enabled: true`) or, on a bucket whose
//! versioning is Enabled, by PutObjectLockConfiguration; never turned
//! off, and versioning can no longer be suspended once it is on (a
//! suspended bucket overwrites its `null` version, which a lock could
//! not then protect).

use axum::response::Response;
use http::request::Parts;
use http::{HeaderMap, StatusCode};
use storage_client::{BucketDocument, BucketRef, Namespace, Owner, Versioning};

use super::configuration::Configuration;
use crate::auth::Payload;
use crate::error::{Code, S3Error, S3Result};
use crate::ops::bucket_documents::{self, corrupt, load_parsed};
use crate::ops::empty_response;
use crate::ops::integrity::IntegrityPlan;
use crate::state::AppState;

/// A configuration is a few short elements.
const MAX_CONFIGURATION_BODY: usize = 16 * 1024;

/// CreateBucket's header asking for a bucket with object lock.
const ENABLED_AT_CREATION: &str = "x-amz-bucket-object-lock-enabled";

/// The bucket's configuration; `None` when its lock is off.
pub async fn configuration(
    state: &AppState,
    namespace: &Namespace,
    bucket: &str,
) -> S3Result<Option<Configuration>> {
    let parsed = load_parsed(
        state,
        namespace,
        bucket,
        BucketDocument::ObjectLock,
        |text| Configuration::from_xml(text.as_bytes()).map_err(corrupt),
    )
    .await?;
    Ok(parsed.map(|configuration| *configuration))
}

/// The bucket's configuration, or the refusal S3 gives an object lock
/// operation on a bucket without lock (on Ozone, which keeps no
/// versions, `NotImplemented`).
pub async fn required(
    state: &AppState,
    namespace: &Namespace,
    bucket: &str,
) -> S3Result<Configuration> {
    refuse_without_versions(state, "object lock")?;
    configuration(state, namespace, bucket)
        .await?
        .ok_or_else(|| S3Error::invalid_request("Bucket is missing Object Lock Configuration"))
}

/// Object lock protects versions: a back end without them refuses it.
pub fn refuse_without_versions(state: &AppState, what: &str) -> S3Result<()> {
    match state.storage.keeps_versions() {
        true => Ok(()),
        false => Err(S3Error::new(
            Code::NotImplemented,
            format!("{what} is not supported on this back end, which keeps no object versions"),
        )),
    }
}

/// Whether a CreateBucket asks for object lock (`InvalidArgument` for a
/// value other than true or false); refused before the bucket is made
/// where the back end cannot keep it.
pub fn requested_at_creation(state: &AppState, headers: &HeaderMap) -> S3Result<bool> {
    let Some(value) = headers.get(ENABLED_AT_CREATION) else {
        return Ok(false);
    };
    let asked = match value.to_str().map(str::trim) {
        Ok(text) if text.eq_ignore_ascii_case("true") => true,
        Ok(text) if text.eq_ignore_ascii_case("false") => false,
        _ => {
            return Err(S3Error::invalid_argument(
                "Invalid x-amz-bucket-object-lock-enabled header",
            )
            .with("ArgumentName", ENABLED_AT_CREATION));
        }
    };
    if asked {
        refuse_without_versions(state, "CreateBucket with object lock")?;
    }
    Ok(asked)
}

/// Turns a new bucket's lock on: versioning first, so no version is ever
/// written to a locked bucket unversioned.
pub async fn enable_at_creation(state: &AppState, owner: &Owner, bucket: &str) -> S3Result<()> {
    state
        .storage
        .put_bucket_versioning(BucketRef::new(owner, bucket), Versioning::Enabled)
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, None))?;
    store(state, owner, bucket, &Configuration::default()).await
}

pub async fn put_object_lock_configuration(
    state: &AppState,
    owner: &Owner,
    parts: &Parts,
    bucket: &str,
    payload: &mut Payload,
) -> S3Result<Response> {
    refuse_without_versions(state, "PutObjectLockConfiguration")?;
    require_digest(parts)?;
    let body = bucket_documents::read_body(parts, payload, MAX_CONFIGURATION_BODY).await?;
    let wanted = Configuration::from_xml(&body)?;
    if configuration(state, &owner.namespace, bucket)
        .await?
        .is_none()
    {
        require_enabled_versioning(state, owner, bucket).await?;
    }
    store(state, owner, bucket, &wanted).await?;
    Ok(empty_response(StatusCode::OK))
}

pub async fn get_object_lock_configuration(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
) -> S3Result<Response> {
    bucket_documents::get(state, owner, bucket, BucketDocument::ObjectLock, || {
        S3Error::object_lock_configuration_not_found(bucket)
    })
    .await
}

/// PutBucketVersioning's check: a bucket with lock stays Enabled.
pub async fn refuse_suspending(
    state: &AppState,
    namespace: &Namespace,
    bucket: &str,
    versioning: Versioning,
) -> S3Result<()> {
    if versioning != Versioning::Enabled && configuration(state, namespace, bucket).await?.is_some()
    {
        return Err(S3Error::new(
            Code::InvalidBucketState,
            "An Object Lock configuration is present on this bucket, so the versioning state cannot be changed.",
        ));
    }
    Ok(())
}

async fn require_enabled_versioning(state: &AppState, owner: &Owner, bucket: &str) -> S3Result<()> {
    let versioning = state
        .storage
        .bucket_versioning(BucketRef::new(owner, bucket))
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, None))?;
    match versioning {
        Versioning::Enabled => Ok(()),
        _ => Err(S3Error::new(
            Code::InvalidBucketState,
            "Versioning must be 'Enabled' on the bucket to apply a Object Lock configuration",
        )),
    }
}

async fn store(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
    configuration: &Configuration,
) -> S3Result<()> {
    let document = Some(configuration.to_xml()?);
    bucket_documents::store(state, owner, bucket, BucketDocument::ObjectLock, document).await
}

/// S3 requires Content-MD5 or a checksum on the object lock Put requests
/// (configuration, retention, legal hold).
pub fn require_digest(parts: &Parts) -> S3Result<()> {
    match IntegrityPlan::from_headers(&parts.headers)?.has_expected_digest() {
        true => Ok(()),
        false => Err(S3Error::invalid_request(
            "Missing required header for this request: Content-Md5",
        )),
    }
}
