//! PutObjectLegalHold and GetObjectLegalHold (`?legal-hold`, optionally
//! with a `versionId`). A hold put ON keeps the version from every
//! delete, whatever its retention, until a hold put OFF lifts it; it
//! needs no bypass, only `s3:PutObjectLegalHold`.

use axum::response::Response;
use http::StatusCode;
use http::request::Parts;
use serde::{Deserialize, Serialize};
use storage_client::{LEGAL_HOLD_ENTRY, LEGAL_HOLD_OFF, LEGAL_HOLD_ON, MetaEntryChange};

use super::bucket::{require_digest, required};
use super::retention::no_configuration;
use crate::auth::Payload;
use crate::error::{S3Error, S3Result};
use crate::ops::authorise::ObjectVersion;
use crate::ops::bucket_documents::read_body;
use crate::ops::{empty_response, xml_response};
use crate::state::AppState;
use crate::xml::{self, S3_NAMESPACE};

/// A legal hold document is one short element.
const MAX_LEGAL_HOLD_BODY: usize = 16 * 1024;

#[derive(Debug, Default, Serialize, Deserialize)]
struct LegalHoldDocument {
    #[serde(rename = "@xmlns", default, skip_deserializing)]
    xmlns: &'static str,
    #[serde(rename = "Status")]
    status: Option<String>,
}

/// The status a PutObjectLegalHold body asks for, as stored: `ON` or
/// `OFF` (anything else is `MalformedXML`, as S3 answers).
pub fn requested_status(body: &[u8]) -> S3Result<&'static str> {
    let document: LegalHoldDocument = xml::from_xml(body)?;
    match document.status.as_deref() {
        Some(LEGAL_HOLD_ON) => Ok(LEGAL_HOLD_ON),
        Some(LEGAL_HOLD_OFF) => Ok(LEGAL_HOLD_OFF),
        _ => Err(S3Error::malformed_xml()),
    }
}

pub async fn put_object_legal_hold(
    state: &AppState,
    object: ObjectVersion<'_>,
    parts: &Parts,
    payload: &mut Payload,
) -> S3Result<Response> {
    let (target, bucket, key) = (object.object_ref(), object.bucket(), object.key());
    required(state, &target.owner().namespace, bucket).await?;
    require_digest(parts)?;
    let body = read_body(parts, payload, MAX_LEGAL_HOLD_BODY).await?;
    let status = requested_status(&body)?;
    // The version the request names, resolved once: a hold lands on it
    // even if a newer version is written meanwhile.
    let info = object.resolve(state).await?;
    let change = MetaEntryChange::new(LEGAL_HOLD_ENTRY, Some(status.to_owned()));
    state
        .storage
        .put_version_meta_entry(target, info.version_id.as_deref(), change)
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, Some(key)))?;
    Ok(empty_response(StatusCode::OK))
}

pub async fn get_object_legal_hold(
    state: &AppState,
    object: ObjectVersion<'_>,
) -> S3Result<Response> {
    required(state, &object.owner().namespace, object.bucket()).await?;
    let info = object.resolve(state).await?;
    let status = info
        .meta
        .user
        .get(LEGAL_HOLD_ENTRY)
        .ok_or_else(no_configuration)?;
    let document = LegalHoldDocument {
        xmlns: S3_NAMESPACE,
        status: Some(status.clone()),
    };
    xml_response("LegalHold", &document)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_is_on_or_off_exactly() {
        let parse = |status: &str| {
            requested_status(format!("<LegalHold><Status>{status}</Status></LegalHold>").as_bytes())
        };
        assert_eq!(parse("ON").unwrap(), LEGAL_HOLD_ON);
        assert_eq!(parse("OFF").unwrap(), LEGAL_HOLD_OFF);
        for bad in ["on", "abc", ""] {
            assert_eq!(parse(bad).unwrap_err().code, "MalformedXML", "{bad}");
        }
    }
}
