//! S3 operations: one file per family, one `match` to reach them.
//!
//! Each request is first authenticated and authorised ([`authorise`]),
//! unless its operation carries its own proof; handlers take the
//! identity to act as (object operations, the capability on the version
//! the decision judged) and the verified payload and return
//! a response or an `S3Error`; the server renders errors and adds the
//! request id. Every operation in [`Endpoint`] that is not matched here is
//! answered 501 NotImplemented, naming the operation.

mod acl;
mod attributes;
mod authorise;
mod body;
mod bucket;
mod bucket_documents;
mod bucket_encryption;
mod bucket_tagging;
mod conditional;
mod copy;
mod copy_source;
pub mod cors;
mod delete;
mod expiration;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod get;
mod headers;
mod integrity;
mod lifecycle;
mod list;
mod multipart;
mod object_lock;
mod ownership_controls;
mod policy;
pub mod post_object;
mod put;
mod range;
mod sse;
mod tagging;
mod versioning;

use std::future::Future;
use std::pin::Pin;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use http::request::Parts;
use serde::Serialize;
use storage_client::{BucketRef, Namespace, PartNumber};

use authorise::Authorised;

use crate::access_control::anonymous;
use crate::auth::{Authenticated, Payload};
use crate::error::S3Error;
use crate::router::Endpoint;
use crate::state::AppState;
use crate::xml;

/// Who a request proved to be, for what runs after its operation.
#[derive(Debug, Default)]
pub struct Requester {
    /// Whether `access_key` is wanted (the access log): a request logged
    /// by none copies no key.
    pub wants_access_key: bool,
    /// The access key id a signature proved (not an anonymous request's).
    pub access_key: Option<String>,
    /// The namespace its bucket names are in (an Ozone tenant's, for a
    /// tenant's key), for the CORS rules of the bucket the request named.
    pub namespace: Namespace,
}

/// Authenticates and authorises the request for its operation, then runs
/// it. Two operations are not signed in the request's headers: a CORS
/// preflight (browsers sign none; it is answered from the bucket's CORS
/// rules alone) and a form upload (signed in its form, by its POST policy,
/// which the operation checks); both get the anonymous identity and the
/// body as sent. An operation's error drains the unread body (up to a
/// limit) so the client's keep-alive connection survives it; a request
/// refused access is answered at once, as a refused signature is, so a
/// client waiting on `Expect: 100-continue` never sends its body. Who the
/// request proved to be is left in `requester`, whatever the outcome after
/// it.
pub async fn dispatch(
    state: &AppState,
    endpoint: Endpoint,
    parts: &Parts,
    body: Body,
    requester: &mut Requester,
) -> Result<Response, S3Error> {
    let (mut authorised, mut payload) = match endpoint {
        Endpoint::PreflightRequest { .. } => {
            (Authorised::own(&anonymous()), Payload::unsigned(body, None))
        }
        Endpoint::PostObject { .. } => (
            Authorised::own(&anonymous()),
            state.verifier.form_payload(parts, body)?,
        ),
        _ => {
            let Authenticated {
                identity, payload, ..
            } = state.verifier.authenticate(parts, body).await?;
            requester.namespace.clone_from(&identity.namespace);
            if requester.wants_access_key && !crate::access_control::is_anonymous(&identity) {
                requester.access_key = Some(identity.access_key.clone());
            }
            let authorised =
                authorise::authorise_request(state, &endpoint, parts, &identity).await?;
            headers::refuse_anonymous_overrides(&endpoint, parts, &identity)?;
            (authorised, payload)
        }
    };
    sse::refuse(&endpoint, parts)?;
    let result = run(state, endpoint, parts, &mut authorised, &mut payload).await;
    if result.is_err() {
        body::drain(&mut payload).await;
    }
    result
}

/// Boxes the future `make` returns, built in this function's frame, not
/// the caller's. An unoptimised build reuses no stack slot, so each arm of
/// [`run`] that built its operation's future in place took a slot of that
/// future's size: `run`'s frame was 0.9 MB and overflowed tokio's 2 MiB
/// worker stacks. Built here, the future leaves `run` only a pointer (its
/// frame is now about 1.3 KB, its future under 1 KiB); an optimised build
/// pays one allocation per request.
fn boxed<F: Future>(make: impl FnOnce() -> F) -> Pin<Box<F>> {
    Box::pin(make())
}

async fn run(
    state: &AppState,
    endpoint: Endpoint,
    parts: &Parts,
    authorised: &mut Authorised,
    payload: &mut Payload,
) -> Result<Response, S3Error> {
    use Endpoint as E;
    let owner = authorised.owner();
    match endpoint {
        E::ListBuckets { query } => boxed(|| bucket::list_buckets(state, owner, query)).await,
        E::CreateBucket { bucket } => {
            boxed(|| bucket::create_bucket(state, owner, &parts.headers, &bucket, payload)).await
        }
        E::HeadBucket { bucket } => boxed(|| bucket::head_bucket(state, owner, &bucket)).await,
        E::DeleteBucket { bucket } => boxed(|| bucket::delete_bucket(state, owner, &bucket)).await,
        E::GetBucketLocation { bucket } => {
            boxed(|| bucket::get_bucket_location(state, owner, &bucket)).await
        }
        E::GetBucketVersioning { bucket } => {
            boxed(|| versioning::get_bucket_versioning(state, owner, &bucket)).await
        }
        E::PutBucketVersioning { bucket } => {
            boxed(|| versioning::put_bucket_versioning(state, owner, parts, &bucket, payload)).await
        }
        E::GetObjectLockConfiguration { bucket } => {
            boxed(|| object_lock::get_object_lock_configuration(state, owner, &bucket)).await
        }
        E::PutObjectLockConfiguration { bucket } => {
            use object_lock::put_object_lock_configuration as put;
            boxed(|| put(state, owner, parts, &bucket, payload)).await
        }
        E::PutObjectRetention {
            bucket,
            key,
            version_id,
        } => {
            let bypass = authorised.bypasses_governance();
            let object = authorised.object(&bucket, &key, version_id.as_deref());
            use object_lock::put_object_retention as put;
            boxed(|| put(state, object, parts, payload, bypass)).await
        }
        E::GetObjectRetention {
            bucket,
            key,
            version_id,
        } => {
            let object = authorised.object(&bucket, &key, version_id.as_deref());
            boxed(|| object_lock::get_object_retention(state, object)).await
        }
        E::PutObjectLegalHold {
            bucket,
            key,
            version_id,
        } => {
            let object = authorised.object(&bucket, &key, version_id.as_deref());
            use object_lock::put_object_legal_hold as put;
            boxed(|| put(state, object, parts, payload)).await
        }
        E::GetObjectLegalHold {
            bucket,
            key,
            version_id,
        } => {
            let object = authorised.object(&bucket, &key, version_id.as_deref());
            boxed(|| object_lock::get_object_legal_hold(state, object)).await
        }

        E::ListObjects { bucket, query } => {
            boxed(|| list::list_objects_v1(state, owner, &bucket, query)).await
        }
        E::ListObjectsV2 { bucket, query } => {
            boxed(|| list::list_objects_v2(state, owner, &bucket, query)).await
        }
        E::ListObjectVersions { bucket, query } => {
            boxed(|| versioning::list_object_versions(state, owner, &bucket, query)).await
        }

        E::PutObject { bucket, key } => {
            let context = authorised.bucket();
            boxed(|| put::put_object(state, owner, context, parts, &bucket, &key, payload)).await
        }
        E::GetObject {
            bucket,
            key,
            part_number,
            version_id,
        } => {
            let target = get::Target::new(&bucket, &key, part_number.map(PartNumber::get));
            let object = authorised.object(&bucket, &key, version_id.as_deref());
            boxed(|| get::get_object(state, object, parts, target, get::Mode::Body)).await
        }
        E::HeadObject {
            bucket,
            key,
            part_number,
            version_id,
        } => {
            let target = get::Target::new(&bucket, &key, part_number.map(PartNumber::get));
            let object = authorised.object(&bucket, &key, version_id.as_deref());
            boxed(|| get::get_object(state, object, parts, target, get::Mode::HeadersOnly)).await
        }
        E::DeleteObject {
            bucket,
            key,
            version_id,
        } => {
            let version_id = version_id.as_deref();
            let target = delete::Target {
                bucket: &bucket,
                key: &key,
                version_id,
                bypass_governance: authorised.bypasses_governance(),
            };
            boxed(|| delete::delete_object(state, owner, parts, target)).await
        }
        E::DeleteObjects { bucket } => {
            boxed(|| delete::delete_objects(state, authorised, parts, &bucket, payload)).await
        }
        E::CopyObject { bucket, key } => {
            let context = authorised.bucket();
            boxed(|| copy::copy_object(state, owner, context, parts, &bucket, &key)).await
        }
        E::GetObjectAttributes {
            bucket,
            key,
            version_id,
        } => {
            let object = authorised.object(&bucket, &key, version_id.as_deref());
            boxed(|| attributes::get_object_attributes(state, object, parts)).await
        }

        E::PutObjectTagging {
            bucket,
            key,
            version_id,
        } => {
            let object = tagging::Version::new(&bucket, &key, version_id.as_deref());
            boxed(|| tagging::put_object_tagging(state, owner, parts, object, payload)).await
        }
        E::GetObjectTagging {
            bucket,
            key,
            version_id,
        } => {
            let object = tagging::Version::new(&bucket, &key, version_id.as_deref());
            boxed(|| tagging::get_object_tagging(state, owner, object)).await
        }
        E::DeleteObjectTagging {
            bucket,
            key,
            version_id,
        } => {
            let object = tagging::Version::new(&bucket, &key, version_id.as_deref());
            boxed(|| tagging::delete_object_tagging(state, owner, object)).await
        }

        E::CreateMultipartUpload { bucket, key } => {
            let context = authorised.bucket();
            let create =
                || multipart::create_multipart_upload(state, owner, context, parts, &bucket, &key);
            boxed(create).await
        }
        E::UploadPart {
            bucket,
            key,
            part_number,
            upload_id,
        } => {
            let upload = BucketRef::new(owner, &bucket)
                .object(&key)
                .upload(&upload_id);
            boxed(|| multipart::upload_part(state, parts, upload, part_number, payload)).await
        }
        E::UploadPartCopy {
            bucket,
            key,
            part_number,
            upload_id,
        } => {
            let upload = BucketRef::new(owner, &bucket)
                .object(&key)
                .upload(&upload_id);
            boxed(|| multipart::upload_part_copy(state, parts, upload, part_number)).await
        }
        E::CompleteMultipartUpload {
            bucket,
            key,
            upload_id,
        } => {
            let upload = BucketRef::new(owner, &bucket)
                .object(&key)
                .upload(&upload_id);
            boxed(|| multipart::complete_multipart_upload(state, parts, upload, payload)).await
        }
        E::AbortMultipartUpload {
            bucket,
            key,
            upload_id,
        } => {
            let upload = BucketRef::new(owner, &bucket)
                .object(&key)
                .upload(&upload_id);
            boxed(|| multipart::abort_multipart_upload(state, upload)).await
        }
        E::ListParts {
            bucket,
            key,
            upload_id,
        } => {
            let upload = BucketRef::new(owner, &bucket)
                .object(&key)
                .upload(&upload_id);
            boxed(|| multipart::list_parts(state, parts, upload)).await
        }
        E::ListMultipartUploads { bucket } => {
            boxed(|| multipart::list_multipart_uploads(state, owner, parts, &bucket)).await
        }

        E::GetBucketLifecycleConfiguration { bucket } => {
            boxed(|| lifecycle::get_bucket_lifecycle(state, owner, &bucket)).await
        }
        E::PutBucketLifecycleConfiguration { bucket } => {
            boxed(|| lifecycle::put_bucket_lifecycle(state, owner, parts, &bucket, payload)).await
        }
        E::DeleteBucketLifecycle { bucket } => {
            boxed(|| lifecycle::delete_bucket_lifecycle(state, owner, &bucket)).await
        }
        E::GetBucketAcl { bucket } => boxed(|| acl::get_bucket_acl(state, owner, &bucket)).await,
        E::PutBucketAcl { bucket } => {
            let context = authorised.bucket();
            boxed(|| acl::put_bucket_acl(state, owner, context, parts, &bucket, payload)).await
        }
        E::GetObjectAcl {
            bucket,
            key,
            version_id,
        } => {
            let object = authorised.object(&bucket, &key, version_id.as_deref());
            boxed(|| acl::get_object_acl(state, object)).await
        }
        E::PutObjectAcl {
            bucket,
            key,
            version_id,
        } => {
            let object = authorised.object(&bucket, &key, version_id.as_deref());
            boxed(|| acl::put_object_acl(state, object, parts, payload)).await
        }
        E::GetBucketEncryption { bucket } => {
            boxed(|| bucket_encryption::get_bucket_encryption(state, owner, &bucket)).await
        }
        E::PutBucketEncryption { bucket } => {
            use bucket_encryption::put_bucket_encryption as put;
            boxed(|| put(state, owner, parts, &bucket, payload)).await
        }
        E::DeleteBucketEncryption { bucket } => {
            boxed(|| bucket_encryption::delete_bucket_encryption(state, owner, &bucket)).await
        }
        E::GetBucketOwnershipControls { bucket } => {
            boxed(|| ownership_controls::get_bucket_ownership_controls(state, owner, &bucket)).await
        }
        E::PutBucketOwnershipControls { bucket } => {
            use ownership_controls::put_bucket_ownership_controls as put;
            boxed(|| put(state, owner, parts, &bucket, payload)).await
        }
        E::DeleteBucketOwnershipControls { bucket } => {
            let delete =
                || ownership_controls::delete_bucket_ownership_controls(state, owner, &bucket);
            boxed(delete).await
        }
        E::GetBucketPolicy { bucket } => {
            boxed(|| policy::get_bucket_policy(state, owner, &bucket)).await
        }
        E::PutBucketPolicy { bucket } => {
            let context = authorised.bucket();
            boxed(|| policy::put_bucket_policy(state, owner, context, &bucket, payload)).await
        }
        E::DeleteBucketPolicy { bucket } => {
            boxed(|| policy::delete_bucket_policy(state, owner, &bucket)).await
        }
        E::GetBucketPolicyStatus { bucket } => {
            boxed(|| policy::get_bucket_policy_status(state, owner, authorised.bucket(), &bucket))
                .await
        }
        E::GetPublicAccessBlock { bucket } => {
            boxed(|| policy::get_public_access_block(state, owner, &bucket)).await
        }
        E::PutPublicAccessBlock { bucket } => {
            boxed(|| policy::put_public_access_block(state, owner, &bucket, payload)).await
        }
        E::DeletePublicAccessBlock { bucket } => {
            boxed(|| policy::delete_public_access_block(state, owner, &bucket)).await
        }
        E::PutBucketTagging { bucket } => {
            boxed(|| bucket_tagging::put_bucket_tagging(state, owner, parts, &bucket, payload))
                .await
        }
        E::GetBucketTagging { bucket } => {
            boxed(|| bucket_tagging::get_bucket_tagging(state, owner, &bucket)).await
        }
        E::DeleteBucketTagging { bucket } => {
            boxed(|| bucket_tagging::delete_bucket_tagging(state, owner, &bucket)).await
        }
        E::PutBucketCors { bucket } => {
            boxed(|| cors::put_bucket_cors(state, owner, parts, &bucket, payload)).await
        }
        E::GetBucketCors { bucket } => boxed(|| cors::get_bucket_cors(state, owner, &bucket)).await,
        E::DeleteBucketCors { bucket } => {
            boxed(|| cors::delete_bucket_cors(state, owner, &bucket)).await
        }
        E::PreflightRequest { bucket, .. } => {
            boxed(|| cors::preflight(state, parts, &bucket)).await
        }
        E::PostObject { bucket } => {
            boxed(|| post_object::post_object(state, parts, payload, &bucket)).await
        }

        other => Err(S3Error::not_implemented(other.name())),
    }
}

/// A 200 response carrying an S3 XML document.
fn xml_response<T: Serialize>(root: &str, document: &T) -> Result<Response, S3Error> {
    let body = xml::to_xml(root, document)?;
    let mut response = Response::new(Body::from(body));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/xml"),
    );
    Ok(response)
}

/// A response with a status and no body.
fn empty_response(status: StatusCode) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = status;
    response
}

/// A header map from name/value pairs (repeated names append), for unit tests.
#[cfg(test)]
pub(crate) fn test_headers(pairs: &[(&str, &str)]) -> http::HeaderMap {
    let mut map = http::HeaderMap::new();
    for (name, value) in pairs {
        map.append(
            http::HeaderName::from_bytes(name.as_bytes()).expect("header name"),
            http::HeaderValue::from_str(value).expect("header value"),
        );
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The size of the future `run` returns, without running it.
    fn run_future_size<'a, F: Future>(
        _: fn(&'a AppState, Endpoint, &'a Parts, &'a mut Authorised, &'a mut Payload) -> F,
    ) -> usize {
        std::mem::size_of::<F>()
    }

    /// `dispatch`'s shape: state, endpoint, parts, body, requester.
    type DispatchFn<'a, F> = fn(&'a AppState, Endpoint, &'a Parts, Body, &'a mut Requester) -> F;

    /// The size of the future `dispatch` returns, without running it.
    fn dispatch_future_size<'a, F: Future>(_: DispatchFn<'a, F>) -> usize {
        std::mem::size_of::<F>()
    }

    #[test]
    fn the_dispatch_futures_hold_no_operations_future() {
        let run = run_future_size(run);
        let dispatch = dispatch_future_size(dispatch);
        println!("ops::run's future: {run} bytes; ops::dispatch's: {dispatch} bytes");
        assert!(run <= 1024, "ops::run's future is {run} bytes");
        assert!(
            dispatch <= 32 * 1024,
            "ops::dispatch's future is {dispatch} bytes"
        );
    }
}
