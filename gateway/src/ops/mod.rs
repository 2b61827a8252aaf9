//! S3 operations: one file per family, one `match` to reach them.
//!
//! Handlers take the caller's identity and the verified payload and return
//! a response or an `S3Error`; the server renders errors and adds the
//! request id. Every operation in [`Endpoint`] that is not matched here is
//! answered 501 NotImplemented, naming the operation.

mod attributes;
mod body;
mod bucket;
mod bucket_documents;
mod bucket_tagging;
mod conditional;
mod copy;
mod copy_source;
pub mod cors;
mod delete;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod get;
mod headers;
mod integrity;
mod list;
mod multipart;
pub mod post_object;
mod put;
mod range;
mod tagging;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use http::request::Parts;
use serde::Serialize;
use storage_client::Identity;

use crate::auth::{Authenticated, Payload};
use crate::error::S3Error;
use crate::router::Endpoint;
use crate::state::AppState;
use crate::xml;

/// Runs the operation. A refused request's unread body is drained (up to a
/// limit) so the client's keep-alive connection survives the error.
pub async fn dispatch(
    state: &AppState,
    endpoint: Endpoint,
    parts: &Parts,
    auth: Authenticated,
) -> Result<Response, S3Error> {
    let Authenticated {
        identity,
        mut payload,
        ..
    } = auth;
    let result = run(state, endpoint, parts, &identity, &mut payload).await;
    if result.is_err() {
        body::drain(&mut payload).await;
    }
    result
}

async fn run(
    state: &AppState,
    endpoint: Endpoint,
    parts: &Parts,
    who: &Identity,
    payload: &mut Payload,
) -> Result<Response, S3Error> {
    use Endpoint as E;
    match endpoint {
        E::ListBuckets { query } => bucket::list_buckets(state, who, query).await,
        E::CreateBucket { bucket } => {
            bucket::create_bucket(state, who, &parts.headers, &bucket, payload).await
        }
        E::HeadBucket { bucket } => bucket::head_bucket(state, who, &bucket).await,
        E::DeleteBucket { bucket } => bucket::delete_bucket(state, who, &bucket).await,
        E::GetBucketLocation { bucket } => bucket::get_bucket_location(state, who, &bucket).await,
        E::GetBucketVersioning { bucket } => {
            bucket::get_bucket_versioning(state, who, &bucket).await
        }
        E::GetObjectLockConfiguration { bucket } => {
            bucket::get_object_lock_configuration(state, who, &bucket).await
        }

        E::ListObjects { bucket, query } => list::list_objects_v1(state, who, &bucket, query).await,
        E::ListObjectsV2 { bucket, query } => {
            list::list_objects_v2(state, who, &bucket, query).await
        }
        E::ListObjectVersions { bucket, query } => {
            list::list_object_versions(state, who, &bucket, query).await
        }

        E::PutObject { bucket, key } => {
            put::put_object(state, who, parts, &bucket, &key, payload).await
        }
        E::GetObject {
            bucket,
            key,
            part_number,
            version_id,
        } => {
            let target = get::Target::new(&bucket, &key, part_number, version_id.as_deref())?;
            get::get_object(state, who, parts, target, get::Mode::Body).await
        }
        E::HeadObject {
            bucket,
            key,
            part_number,
            version_id,
        } => {
            let target = get::Target::new(&bucket, &key, part_number, version_id.as_deref())?;
            get::get_object(state, who, parts, target, get::Mode::HeadersOnly).await
        }
        E::DeleteObject {
            bucket,
            key,
            version_id,
        } => delete::delete_object(state, who, &bucket, &key, version_id.as_deref()).await,
        E::DeleteObjects { bucket } => {
            delete::delete_objects(state, who, parts, &bucket, payload).await
        }
        E::CopyObject { bucket, key } => copy::copy_object(state, who, parts, &bucket, &key).await,
        E::GetObjectAttributes { bucket, key } => {
            attributes::get_object_attributes(state, who, parts, &bucket, &key).await
        }

        E::PutObjectTagging { bucket, key } => {
            tagging::put_object_tagging(state, who, parts, &bucket, &key, payload).await
        }
        E::GetObjectTagging { bucket, key } => {
            tagging::get_object_tagging(state, who, &bucket, &key).await
        }
        E::DeleteObjectTagging { bucket, key } => {
            tagging::delete_object_tagging(state, who, &bucket, &key).await
        }

        E::CreateMultipartUpload { bucket, key } => {
            multipart::create_multipart_upload(state, who, parts, &bucket, &key).await
        }
        E::UploadPart {
            bucket,
            key,
            part_number,
            upload_id,
        } => {
            let upload = multipart::UploadRef::new(&bucket, &key, &upload_id);
            multipart::upload_part(state, who, parts, upload, part_number, payload).await
        }
        E::UploadPartCopy {
            bucket,
            key,
            part_number,
            upload_id,
        } => {
            let upload = multipart::UploadRef::new(&bucket, &key, &upload_id);
            multipart::upload_part_copy(state, who, parts, upload, part_number).await
        }
        E::CompleteMultipartUpload {
            bucket,
            key,
            upload_id,
        } => {
            let upload = multipart::UploadRef::new(&bucket, &key, &upload_id);
            multipart::complete_multipart_upload(state, who, parts, upload, payload).await
        }
        E::AbortMultipartUpload {
            bucket,
            key,
            upload_id,
        } => {
            let upload = multipart::UploadRef::new(&bucket, &key, &upload_id);
            multipart::abort_multipart_upload(state, who, upload).await
        }
        E::ListParts {
            bucket,
            key,
            upload_id,
        } => {
            let upload = multipart::UploadRef::new(&bucket, &key, &upload_id);
            multipart::list_parts(state, who, parts, upload).await
        }
        E::ListMultipartUploads { bucket } => {
            multipart::list_multipart_uploads(state, who, parts, &bucket).await
        }

        E::PutBucketTagging { bucket } => {
            bucket_tagging::put_bucket_tagging(state, who, parts, &bucket, payload).await
        }
        E::GetBucketTagging { bucket } => {
            bucket_tagging::get_bucket_tagging(state, who, &bucket).await
        }
        E::DeleteBucketTagging { bucket } => {
            bucket_tagging::delete_bucket_tagging(state, who, &bucket).await
        }
        E::PutBucketCors { bucket } => {
            cors::put_bucket_cors(state, who, parts, &bucket, payload).await
        }
        E::GetBucketCors { bucket } => cors::get_bucket_cors(state, who, &bucket).await,
        E::DeleteBucketCors { bucket } => cors::delete_bucket_cors(state, who, &bucket).await,

        other => Err(S3Error::not_implemented(other.name())),
    }
}

/// We keep no versions: the only version id that exists is `null`.
fn check_version_id(version_id: Option<&str>) -> Result<(), S3Error> {
    match version_id {
        None | Some("null") => Ok(()),
        Some(_) => Err(S3Error::invalid_version_id()),
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

    #[test]
    fn only_the_null_version_exists() {
        assert!(check_version_id(None).is_ok());
        assert!(check_version_id(Some("null")).is_ok());
        assert_eq!(
            check_version_id(Some("3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY"))
                .unwrap_err()
                .code,
            "InvalidArgument"
        );
    }
}
