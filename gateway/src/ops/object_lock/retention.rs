//! PutObjectRetention and GetObjectRetention (`?retention`, optionally
//! with a `versionId`). A retention in force can always be extended in
//! its mode; COMPLIANCE can be changed in no other way by anyone,
//! GOVERNANCE only by a caller that asks to bypass it
//! (`x-amz-bypass-governance-retention: true`) and is allowed
//! `s3:BypassGovernanceRetention`. The change is written only if the
//! version still holds the retention it was decided on, so two changes
//! decided at once never let one shorten what the other extended.

use std::time::SystemTime;

use axum::response::Response;
use http::StatusCode;
use http::request::Parts;
use serde::{Deserialize, Serialize};
use storage_client::{MetaEntryChange, RETENTION_ENTRY, Retention, RetentionMode, StorageError};

use super::bucket::{require_digest, required};
use super::write::parse_until;
use crate::auth::Payload;
use crate::error::{Code, S3Error, S3Result};
use crate::ops::authorise::ObjectVersion;
use crate::ops::bucket_documents::read_body;
use crate::ops::{empty_response, xml_response};
use crate::state::AppState;
use crate::xml::{self, S3_NAMESPACE};

/// A retention document is two short elements.
const MAX_RETENTION_BODY: usize = 16 * 1024;

#[derive(Debug, Default, Serialize, Deserialize)]
struct RetentionDocument {
    #[serde(rename = "@xmlns", default, skip_deserializing)]
    xmlns: &'static str,
    #[serde(rename = "Mode", skip_serializing_if = "Option::is_none")]
    mode: Option<String>,
    #[serde(rename = "RetainUntilDate", skip_serializing_if = "Option::is_none")]
    retain_until_date: Option<String>,
}

/// The retention a PutObjectRetention body asks for at `now`; `None`
/// (both elements left out) asks to remove it.
pub fn requested_retention(body: &[u8], now: SystemTime) -> S3Result<Option<Retention>> {
    RetentionDocument::requested(body, now)
}

impl RetentionDocument {
    fn requested(body: &[u8], now: SystemTime) -> S3Result<Option<Retention>> {
        let document: Self = xml::from_xml(body)?;
        match (
            document.mode.as_deref(),
            document.retain_until_date.as_deref(),
        ) {
            (None, None) => Ok(None),
            (Some(mode), Some(until)) => Ok(Some(Retention {
                mode: RetentionMode::parse(mode).ok_or_else(S3Error::malformed_xml)?,
                until: parse_until(until.trim(), now)?,
            })),
            _ => Err(S3Error::malformed_xml()),
        }
    }

    fn of(retention: &Retention) -> Self {
        Self {
            xmlns: S3_NAMESPACE,
            mode: Some(retention.mode.name().to_owned()),
            retain_until_date: Some(xml::iso8601(retention.until)),
        }
    }
}

pub async fn put_object_retention(
    state: &AppState,
    object: ObjectVersion<'_>,
    parts: &Parts,
    payload: &mut Payload,
    bypass_governance: bool,
) -> S3Result<Response> {
    let (target, bucket, key) = (object.object_ref(), object.bucket(), object.key());
    required(state, &target.owner().namespace, bucket).await?;
    require_digest(parts)?;
    let body = read_body(parts, payload, MAX_RETENTION_BODY).await?;
    let now = SystemTime::now();
    let wanted = requested_retention(&body, now)?;
    let info = object.resolve(state).await?;
    let held = info.meta.user.get(RETENTION_ENTRY).cloned();
    let current =
        match held.as_deref() {
            Some(text) => Some(Retention::from_entry(text).ok_or_else(|| {
                S3Error::internal(format!("unreadable stored retention {text:?}"))
            })?),
            None => None,
        };
    check_change(current, wanted, now, bypass_governance)?;
    let change = MetaEntryChange {
        expected: Some(held),
        ..MetaEntryChange::new(RETENTION_ENTRY, wanted.map(|r| r.to_entry()))
    };
    state
        .storage
        .put_version_meta_entry(target, info.version_id.as_deref(), change)
        .await
        .map_err(|err| match err {
            StorageError::PreconditionFailed => S3Error::new(
                Code::OperationAborted,
                "the object's retention changed while this request was decided; try again",
            ),
            err => S3Error::from(err),
        })
        .map_err(|err| err.naming(bucket, Some(key)))?;
    Ok(empty_response(StatusCode::OK))
}

pub async fn get_object_retention(
    state: &AppState,
    object: ObjectVersion<'_>,
) -> S3Result<Response> {
    required(state, &object.owner().namespace, object.bucket()).await?;
    let info = object.resolve(state).await?;
    let retention = info
        .meta
        .user
        .get(RETENTION_ENTRY)
        .map(|text| {
            Retention::from_entry(text)
                .ok_or_else(|| S3Error::internal(format!("unreadable stored retention {text:?}")))
        })
        .transpose()?
        .ok_or_else(no_configuration)?;
    xml_response("Retention", &RetentionDocument::of(&retention))
}

/// What S3 answers for a version without the lock asked about.
pub(super) fn no_configuration() -> S3Error {
    S3Error::new(
        Code::NoSuchObjectLockConfiguration,
        "The specified object does not have a ObjectLock configuration",
    )
}

/// Whether `current` may become `wanted` at `now`.
fn check_change(
    current: Option<Retention>,
    wanted: Option<Retention>,
    now: SystemTime,
    bypass_governance: bool,
) -> S3Result<()> {
    let Some(current) = current.filter(|r| r.in_force(now)) else {
        return Ok(());
    };
    let extends = wanted.is_some_and(|w| w.mode == current.mode && w.until >= current.until);
    let allowed = extends || (current.mode == RetentionMode::Governance && bypass_governance);
    match allowed {
        true => Ok(()),
        false => Err(S3Error::from(StorageError::ObjectLocked)),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn only_extending_needs_no_bypass_and_compliance_allows_nothing_else() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let at = |secs| now + Duration::from_secs(secs);
        let governance = |until| Retention {
            mode: RetentionMode::Governance,
            until,
        };
        let compliance = |until| Retention {
            mode: RetentionMode::Compliance,
            until,
        };
        let ok = |current, wanted, bypass| check_change(current, wanted, now, bypass).is_ok();
        assert!(ok(None, Some(compliance(at(10))), false));
        assert!(ok(
            Some(governance(at(10))),
            Some(governance(at(20))),
            false
        ));
        assert!(!ok(
            Some(governance(at(10))),
            Some(governance(at(5))),
            false
        ));
        assert!(ok(Some(governance(at(10))), Some(governance(at(5))), true));
        assert!(!ok(Some(governance(at(10))), None, false));
        assert!(ok(Some(governance(at(10))), None, true));
        assert!(!ok(
            Some(governance(at(10))),
            Some(compliance(at(20))),
            false
        ));
        assert!(ok(Some(governance(at(10))), Some(compliance(at(20))), true));
        assert!(ok(
            Some(compliance(at(10))),
            Some(compliance(at(20))),
            false
        ));
        for wanted in [None, Some(compliance(at(5))), Some(governance(at(20)))] {
            assert!(!ok(Some(compliance(at(10))), wanted, true), "{wanted:?}");
        }
        // A retention that has passed holds nothing back.
        assert!(ok(Some(compliance(now)), None, false));
    }

    #[test]
    fn a_retention_document_reads_as_s3_sends_it() {
        let now = SystemTime::UNIX_EPOCH;
        let parse = |inner: &str| {
            RetentionDocument::requested(format!("<Retention>{inner}</Retention>").as_bytes(), now)
        };
        let read = parse(
            "<Mode>GOVERNANCE</Mode><RetainUntilDate>2030-01-01T00:00:00.000Z</RetainUntilDate>",
        );
        let retention = read.unwrap().unwrap();
        assert_eq!(retention.mode, RetentionMode::Governance);
        let rendered = xml::to_xml("Retention", &RetentionDocument::of(&retention)).unwrap();
        assert!(rendered.contains("<RetainUntilDate>2030-01-01T00:00:00.000Z</RetainUntilDate>"));
        assert_eq!(parse("").unwrap(), None);
        let code = |inner| parse(inner).unwrap_err().code;
        assert_eq!(
            code("<Mode>governance</Mode><RetainUntilDate>2030-01-01T00:00:00Z</RetainUntilDate>"),
            "MalformedXML"
        );
        assert_eq!(code("<Mode>GOVERNANCE</Mode>"), "MalformedXML");
    }
}
