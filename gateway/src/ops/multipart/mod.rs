//! Multipart uploads: CreateMultipartUpload and AbortMultipartUpload here,
//! the part uploads in [`upload`], completion in [`complete`], the two
//! listings in [`list`]. Storage keeps each part in its own blocks, and
//! completing makes those blocks the object's: no byte is copied.

mod checksum;
mod complete;
mod crc_combine;
mod list;
mod upload;

pub use complete::complete_multipart_upload;
pub use list::{list_multipart_uploads, list_parts};
pub use upload::{upload_part, upload_part_copy};

use axum::response::Response;
use http::request::Parts;
use http::{HeaderMap, HeaderName, StatusCode};
use storage_client::{BucketRef, NewUpload, Owner, StorageError, UploadRef};

use super::authorise::BucketContext;
use super::headers::{insert, object_meta_from_request};
use super::integrity::requested_algorithm;
use super::put::check_storage_class;
use super::tagging::tags_from_header;
use super::{empty_response, xml_response};
use crate::checksum::ChecksumAlgorithm;
use crate::error::S3Error;
use crate::state::AppState;
use crate::xml::{self, S3_NAMESPACE};
use checksum::{default_type, supports};
use storage_client::ChecksumType;

const CHECKSUM_ALGORITHM: &str = "x-amz-checksum-algorithm";
const CHECKSUM_TYPE: &str = "x-amz-checksum-type";

/// The S3 error for a storage failure on `upload`.
fn upload_error(upload: UploadRef<'_>, err: StorageError) -> S3Error {
    match err {
        StorageError::NoSuchUpload | StorageError::InvalidPart(_) => {
            S3Error::from(err).with("UploadId", upload.upload_id)
        }
        other => S3Error::from(other).naming(upload.object.bucket.name, Some(upload.object.key)),
    }
}

pub async fn create_multipart_upload(
    state: &AppState,
    owner: &Owner,
    context: Option<&BucketContext>,
    parts: &Parts,
    bucket: &str,
    key: &str,
) -> Result<Response, S3Error> {
    let headers = &parts.headers;
    check_storage_class(headers)?;
    let (algorithm, kind) = requested_checksum(headers)?;
    let mut meta = object_meta_from_request(headers)?;
    crate::ops::acl::record_object_acl(state, owner, context, headers, bucket, &mut meta).await?;
    // Decided now, as S3 decides it; the version gets it at Complete.
    let (query, write) = (parts.uri.query(), crate::ops::object_lock::Write::Other);
    crate::ops::object_lock::record(
        state,
        &owner.namespace,
        bucket,
        headers,
        query,
        write,
        &mut meta,
    )
    .await?;
    // Encrypted as asked, or by the bucket's default: the upload key is
    // recorded in the upload's metadata, which the object inherits.
    let asked = super::sse::for_write(state, &parts.headers).await?;
    let encryption =
        super::bucket_encryption::asked_or_default(state, asked, &owner.namespace, bucket).await?;
    meta.user.remove(crate::sse::record::ENTRY);
    if let Some(encryption) = &encryption {
        encryption.begin_upload(&mut meta)?;
    }
    let upload = NewUpload {
        meta,
        tags: tags_from_header(headers)?,
        checksum_algorithm: algorithm,
        checksum_type: kind,
    };
    let created = state
        .storage
        .create_multipart_upload(BucketRef::new(owner, bucket).object(key), upload)
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, Some(key)))?;
    let mut response = xml_response(
        "InitiateMultipartUploadResult",
        &xml::InitiateMultipartUploadResult {
            xmlns: S3_NAMESPACE,
            bucket: bucket.to_owned(),
            key: key.to_owned(),
            upload_id: created.upload_id,
        },
    )?;
    if let (Some(alg), Some(kind)) = (algorithm, kind) {
        let out = response.headers_mut();
        insert(
            out,
            HeaderName::from_static(CHECKSUM_ALGORITHM),
            &alg.name().to_ascii_uppercase(),
        );
        insert(out, HeaderName::from_static(CHECKSUM_TYPE), kind.name());
    }
    if let Some(encryption) = &encryption {
        encryption.echo(response.headers_mut());
    }
    Ok(response)
}

/// `x-amz-checksum-algorithm` and `x-amz-checksum-type`, with AWS's
/// defaults and its rules on which combinations exist.
fn requested_checksum(
    headers: &HeaderMap,
) -> Result<(Option<ChecksumAlgorithm>, Option<ChecksumType>), S3Error> {
    let algorithm = requested_algorithm(headers, CHECKSUM_ALGORITHM)?;
    let kind = match headers.get(CHECKSUM_TYPE) {
        None => None,
        Some(value) => Some(
            ChecksumType::from_name(value.to_str().unwrap_or_default()).ok_or_else(|| {
                S3Error::invalid_request("Value for x-amz-checksum-type header is invalid.")
            })?,
        ),
    };
    match (algorithm, kind) {
        (None, None) => Ok((None, None)),
        (None, Some(_)) => Err(S3Error::invalid_request(
            "The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.",
        )),
        (Some(alg), None) => Ok((Some(alg), Some(default_type(alg)))),
        (Some(alg), Some(kind)) if supports(kind, alg) => Ok((Some(alg), Some(kind))),
        (Some(alg), Some(kind)) => Err(S3Error::invalid_request(format!(
            "The {} checksum type cannot be used with the {} checksum algorithm.",
            kind.name(),
            alg.name().to_ascii_uppercase()
        ))),
    }
}

pub async fn abort_multipart_upload(
    state: &AppState,
    upload: UploadRef<'_>,
) -> Result<Response, S3Error> {
    state
        .storage
        .abort_multipart_upload(upload)
        .await
        .map_err(|err| upload_error(upload, err))?;
    Ok(empty_response(StatusCode::NO_CONTENT))
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::ops::test_headers as headers;

    #[test]
    fn checksum_type_defaults_follow_the_algorithm() {
        assert_eq!(requested_checksum(&headers(&[])).unwrap(), (None, None));
        assert_eq!(
            requested_checksum(&headers(&[(CHECKSUM_ALGORITHM, "CRC32")])).unwrap(),
            (
                Some(ChecksumAlgorithm::Crc32),
                Some(ChecksumType::Composite)
            )
        );
        assert_eq!(
            requested_checksum(&headers(&[(CHECKSUM_ALGORITHM, "CRC64NVME")])).unwrap(),
            (
                Some(ChecksumAlgorithm::Crc64Nvme),
                Some(ChecksumType::FullObject)
            )
        );
        assert_eq!(
            requested_checksum(&headers(&[
                (CHECKSUM_ALGORITHM, "crc32c"),
                (CHECKSUM_TYPE, "FULL_OBJECT")
            ]))
            .unwrap(),
            (
                Some(ChecksumAlgorithm::Crc32c),
                Some(ChecksumType::FullObject)
            )
        );
    }

    #[test]
    fn impossible_checksum_combinations_are_invalid_requests() {
        for bad in [
            &[(CHECKSUM_ALGORITHM, "MD5")][..],
            &[(CHECKSUM_TYPE, "COMPOSITE")],
            &[
                (CHECKSUM_ALGORITHM, "CRC64NVME"),
                (CHECKSUM_TYPE, "COMPOSITE"),
            ],
            &[
                (CHECKSUM_ALGORITHM, "SHA256"),
                (CHECKSUM_TYPE, "FULL_OBJECT"),
            ],
            &[(CHECKSUM_ALGORITHM, "CRC32"), (CHECKSUM_TYPE, "PARTIAL")],
        ] {
            let err = requested_checksum(&headers(bad)).unwrap_err();
            assert_eq!((err.code, err.status.as_u16()), ("InvalidRequest", 400));
        }
    }
}
