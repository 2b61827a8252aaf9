//! ListParts and ListMultipartUploads: one storage scan per page.

use axum::response::Response;
use http::request::Parts;
use storage_client::{BucketRef, Owner, UploadListQuery, UploadRef};

use super::upload_error;
use crate::access_control::object_acl;
use crate::error::S3Error;
use crate::ops::headers::quoted_etag;
use crate::ops::list::Encoder;
use crate::ops::put::STORAGE_CLASS;
use crate::ops::xml_response;
use crate::router::Query;
use crate::sse::record::Stored;
use crate::state::AppState;
use crate::xml::{self, ChecksumValues, CommonPrefix, S3_NAMESPACE};

/// AWS caps both listings at 1000 entries per page.
const MAX_PAGE: usize = 1000;

pub async fn list_parts(
    state: &AppState,
    parts: &Parts,
    upload: UploadRef<'_>,
) -> Result<Response, S3Error> {
    let query = Query::parse(parts.uri.query())?;
    let max_parts = query.page_size("max-parts", MAX_PAGE)?;
    // Markers past the last part number simply list nothing.
    let marker = query.integer("part-number-marker")?.unwrap_or(0);
    let after = u16::try_from(marker).unwrap_or(u16::MAX);
    let info = state
        .storage
        .multipart_upload(upload)
        .await
        .map_err(|err| upload_error(upload, err))?;
    let page = state
        .storage
        .list_parts(upload, after, max_parts)
        .await
        .map_err(|err| upload_error(upload, err))?;
    // The object's owner to be: the writer under ObjectWriter ownership
    // (its ACL, recorded when the upload began), else the bucket's owner.
    let object_owner = object_acl::stored(&info.meta)?.map(|acl| acl.owner);
    // An encrypted upload's parts are listed at the sizes the client sent.
    let encrypted = matches!(Stored::of(&info.meta), Ok(Some(Stored::Multipart(_))));
    let size = |stored: u64| match encrypted {
        true => crate::sse::multipart::plain_size(stored).unwrap_or(stored),
        false => stored,
    };
    let owner = || match &object_owner {
        Some(id) => xml::Owner::from_canonical_id(id.clone()),
        None => xml::Owner::from_access_key(&info.owner),
    };
    xml_response(
        "ListPartsResult",
        &xml::ListPartsResult {
            xmlns: S3_NAMESPACE,
            bucket: upload.object.bucket.name.to_owned(),
            key: upload.object.key.to_owned(),
            upload_id: upload.upload_id.to_owned(),
            part_number_marker: after,
            next_part_number_marker: page.next_marker,
            max_parts,
            is_truncated: page.is_truncated,
            parts: page
                .parts
                .iter()
                .map(|part| xml::ListedPart {
                    part_number: part.number,
                    last_modified: xml::iso8601(part.last_modified),
                    etag: quoted_etag(&part.etag),
                    size: size(part.size),
                    checksum: part
                        .checksum
                        .as_ref()
                        .and_then(ChecksumValues::from_stored_part),
                })
                .collect(),
            initiator: owner(),
            owner: owner(),
            storage_class: STORAGE_CLASS,
            checksum_algorithm: info
                .checksum_algorithm
                .map(|alg| alg.name().to_ascii_uppercase()),
            checksum_type: info.checksum_type.map(|kind| kind.name().to_owned()),
        },
    )
}

pub async fn list_multipart_uploads(
    state: &AppState,
    owner: &Owner,
    parts: &Parts,
    bucket: &str,
) -> Result<Response, S3Error> {
    let query = Query::parse(parts.uri.query())?;
    let encode = Encoder(query.url_encoding()?);
    let owned = |name| query.non_empty(name).map(str::to_owned);
    let request = UploadListQuery {
        prefix: owned("prefix").unwrap_or_default(),
        delimiter: owned("delimiter"),
        key_marker: owned("key-marker"),
        // AWS ignores the upload id marker without a key marker.
        upload_id_marker: owned("key-marker").and(owned("upload-id-marker")),
        max_uploads: query.page_size("max-uploads", MAX_PAGE)?,
    };
    let page = state
        .storage
        .list_multipart_uploads(BucketRef::new(owner, bucket), &request)
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, None))?;
    xml_response(
        "ListMultipartUploadsResult",
        &xml::ListMultipartUploadsResult {
            xmlns: S3_NAMESPACE,
            bucket: bucket.to_owned(),
            key_marker: encode.apply(request.key_marker.as_deref().unwrap_or_default()),
            upload_id_marker: request.upload_id_marker.clone().unwrap_or_default(),
            next_key_marker: page.next_key_marker.as_deref().map(|m| encode.apply(m)),
            next_upload_id_marker: page.next_upload_id_marker.clone(),
            prefix: encode.apply(&request.prefix),
            delimiter: request.delimiter.as_deref().map(|d| encode.apply(d)),
            max_uploads: request.max_uploads,
            encoding_type: encode.element(),
            is_truncated: page.is_truncated,
            uploads: page
                .uploads
                .iter()
                .map(|u| xml::MultipartUpload {
                    key: encode.apply(&u.key),
                    upload_id: u.upload_id.clone(),
                    initiator: xml::Owner::from_access_key(&u.owner),
                    owner: xml::Owner::from_access_key(&u.owner),
                    storage_class: STORAGE_CLASS,
                    initiated: xml::iso8601(u.initiated),
                    checksum_algorithm: u
                        .checksum_algorithm
                        .map(|alg| alg.name().to_ascii_uppercase()),
                    checksum_type: u.checksum_type.map(|kind| kind.name().to_owned()),
                })
                .collect(),
            common_prefixes: page
                .common_prefixes
                .iter()
                .map(|prefix| CommonPrefix {
                    prefix: encode.apply(prefix),
                })
                .collect(),
        },
    )
}
