//! Bucket versioning: Get/PutBucketVersioning and ListObjectVersions (the
//! version headers every operation answers with are in `headers`).

use axum::response::Response;
use http::StatusCode;
use http::request::Parts;
use storage_client::{BucketRef, Owner, VersionListQuery, Versioning};

use super::bucket_documents;
use super::headers::quoted_etag;
use super::list::Encoder;
use super::put::STORAGE_CLASS;
use super::{empty_response, xml_response};
use crate::auth::Payload;
use crate::error::{Code, S3Error, S3Result};
use crate::router::ListParams;
use crate::sse::size::client_size;
use crate::state::AppState;
use crate::xml::{self, S3_NAMESPACE};

/// A versioning configuration is two short elements.
const MAX_VERSIONING_BODY: usize = 16 * 1024;

pub async fn get_bucket_versioning(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
) -> S3Result<Response> {
    let versioning = state
        .storage
        .bucket_versioning(BucketRef::new(owner, bucket))
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, None))?;
    let document = xml::VersioningConfiguration {
        xmlns: S3_NAMESPACE,
        status: match versioning {
            Versioning::Unversioned => None,
            Versioning::Enabled => Some("Enabled"),
            Versioning::Suspended => Some("Suspended"),
        },
    };
    xml_response("VersioningConfiguration", &document)
}

pub async fn put_bucket_versioning(
    state: &AppState,
    owner: &Owner,
    parts: &Parts,
    bucket: &str,
    payload: &mut Payload,
) -> S3Result<Response> {
    let body = bucket_documents::read_body(parts, payload, MAX_VERSIONING_BODY).await?;
    let versioning = requested_versioning(&xml::from_xml(&body)?)?;
    super::object_lock::refuse_suspending(state, &owner.namespace, bucket, versioning).await?;
    state
        .storage
        .put_bucket_versioning(BucketRef::new(owner, bucket), versioning)
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, None))?;
    Ok(empty_response(StatusCode::OK))
}

/// The state a PutBucketVersioning body asks for. MFA Delete needs an MFA
/// device S3 checks on every versioned delete, which this gateway has no
/// notion of: asking for it is refused, naming it.
pub(super) fn requested_versioning(request: &xml::VersioningRequest) -> S3Result<Versioning> {
    match request.mfa_delete.as_deref() {
        None | Some("Disabled") => {}
        Some("Enabled") => {
            return Err(S3Error::new(
                Code::NotImplemented,
                "MFA Delete is not supported",
            ));
        }
        Some(_) => return Err(illegal_versioning_configuration()),
    }
    match request.status.as_deref() {
        Some("Enabled") => Ok(Versioning::Enabled),
        Some("Suspended") => Ok(Versioning::Suspended),
        _ => Err(illegal_versioning_configuration()),
    }
}

fn illegal_versioning_configuration() -> S3Error {
    S3Error::new(
        Code::IllegalVersioningConfigurationException,
        "The versioning configuration specified in the request is invalid: Status must be Enabled or Suspended.",
    )
}

/// Every version and delete marker, by key and newest first within a key.
pub async fn list_object_versions(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
    params: ListParams,
) -> S3Result<Response> {
    if params.version_id_marker.is_some() && params.start_after.is_none() {
        return Err(S3Error::invalid_argument(
            "A version-id marker cannot be specified without a key marker.",
        ));
    }
    let query = VersionListQuery {
        prefix: params.prefix.clone(),
        delimiter: params.delimiter.clone(),
        key_marker: params.start_after.clone(),
        version_id_marker: params.version_id_marker.clone(),
        max_keys: params.max_keys,
    };
    let mut page = state
        .storage
        .list_versions(BucketRef::new(owner, bucket), &query)
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, None))?;
    // `max-keys=0` asks for nothing; S3 then reports no truncation.
    if params.max_keys == 0 {
        page = Default::default();
    }
    let encode = Encoder(params.url_encoding);
    let truncated = page.is_truncated;
    let document = xml::ListVersionsResult {
        xmlns: S3_NAMESPACE,
        name: bucket.to_owned(),
        prefix: encode.apply(&params.prefix),
        key_marker: encode.apply(params.start_after.as_deref().unwrap_or("")),
        version_id_marker: params.version_id_marker.clone().unwrap_or_default(),
        next_key_marker: page
            .next_key_marker
            .filter(|_| truncated)
            .map(|m| encode.apply(&m)),
        next_version_id_marker: page.next_version_id_marker.filter(|_| truncated),
        max_keys: params.max_keys,
        delimiter: params.delimiter.as_deref().map(|d| encode.apply(d)),
        encoding_type: encode.element(),
        is_truncated: truncated,
        entries: page
            .entries
            .into_iter()
            .map(|entry| {
                let owner = xml::Owner::from_access_key(&entry.owner);
                let last_modified = xml::iso8601(entry.last_modified);
                if entry.delete_marker {
                    xml::VersionElement::DeleteMarker(xml::DeleteMarkerEntry {
                        key: encode.apply(&entry.key),
                        version_id: entry.version_id,
                        is_latest: entry.is_latest,
                        last_modified,
                        owner,
                    })
                } else {
                    xml::VersionElement::Version(xml::ObjectVersion {
                        key: encode.apply(&entry.key),
                        version_id: entry.version_id,
                        is_latest: entry.is_latest,
                        last_modified,
                        etag: quoted_etag(&entry.etag),
                        size: client_size(&entry.meta, entry.size, &entry.part_sizes),
                        owner,
                        storage_class: STORAGE_CLASS,
                    })
                }
            })
            .collect(),
        common_prefixes: page
            .common_prefixes
            .iter()
            .map(|prefix| xml::CommonPrefix {
                prefix: encode.apply(prefix),
            })
            .collect(),
    };
    xml_response("ListVersionsResult", &document)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(status: Option<&str>, mfa: Option<&str>) -> xml::VersioningRequest {
        xml::VersioningRequest {
            status: status.map(str::to_owned),
            mfa_delete: mfa.map(str::to_owned),
        }
    }

    #[test]
    fn versioning_can_be_enabled_or_suspended_but_not_with_mfa_delete() {
        assert_eq!(
            requested_versioning(&request(Some("Enabled"), None)).unwrap(),
            Versioning::Enabled
        );
        assert_eq!(
            requested_versioning(&request(Some("Suspended"), Some("Disabled"))).unwrap(),
            Versioning::Suspended
        );
        let code = |r| requested_versioning(&r).unwrap_err().code;
        assert_eq!(
            code(request(Some("Enabled"), Some("Enabled"))),
            "NotImplemented"
        );
        assert_eq!(
            code(request(Some("On"), None)),
            "IllegalVersioningConfigurationException"
        );
        assert_eq!(
            code(request(None, None)),
            "IllegalVersioningConfigurationException"
        );
    }

    #[test]
    fn versions_and_delete_markers_interleave_in_listing_order() {
        let owner = || xml::Owner::from_access_key("AK");
        let version = |key: &str, id: &str| {
            xml::VersionElement::Version(xml::ObjectVersion {
                key: key.into(),
                version_id: id.into(),
                is_latest: false,
                last_modified: "t".into(),
                etag: "\"e\"".into(),
                size: 1,
                owner: owner(),
                storage_class: STORAGE_CLASS,
            })
        };
        let document = xml::ListVersionsResult {
            xmlns: S3_NAMESPACE,
            name: "b".into(),
            prefix: String::new(),
            key_marker: String::new(),
            version_id_marker: String::new(),
            next_key_marker: None,
            next_version_id_marker: None,
            max_keys: 1000,
            delimiter: None,
            encoding_type: None,
            is_truncated: false,
            entries: vec![
                version("a", "2"),
                xml::VersionElement::DeleteMarker(xml::DeleteMarkerEntry {
                    key: "b".into(),
                    version_id: "3".into(),
                    is_latest: true,
                    last_modified: "t".into(),
                    owner: owner(),
                }),
                version("b", "1"),
            ],
            common_prefixes: vec![],
        };
        let text = xml::to_xml("ListVersionsResult", &document).unwrap();
        let a = text.find("<Version><Key>a</Key>").unwrap();
        let marker = text
            .find("<DeleteMarker><Key>b</Key><VersionId>3</VersionId><IsLatest>true</IsLatest>")
            .unwrap();
        let b = text.find("<Version><Key>b</Key>").unwrap();
        assert!(a < marker && marker < b, "{text}");
    }
}
