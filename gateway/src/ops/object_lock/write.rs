//! The lock a new version gets (PutObject, CopyObject, a multipart upload
//! at its Complete, PostObject): what its write names in
//! `x-amz-object-lock-mode` with `-retain-until-date`, and
//! `-legal-hold`, or else the bucket's default retention. A write naming
//! a lock to a bucket without lock is refused, never stored unlocked: a
//! client answered 200 would believe the version protected.

use std::time::SystemTime;

use http::HeaderMap;
use storage_client::{
    LEGAL_HOLD_ENTRY, LEGAL_HOLD_OFF, LEGAL_HOLD_ON, Namespace, ObjectMeta, RETENTION_ENTRY,
    Retention, RetentionMode,
};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::bucket::{configuration, refuse_without_versions};
use crate::error::{S3Error, S3Result};
use crate::ops::integrity::IntegrityPlan;
use crate::router::Query;
use crate::state::AppState;

const MODE: &str = "x-amz-object-lock-mode";
const RETAIN_UNTIL: &str = "x-amz-object-lock-retain-until-date";
const LEGAL_HOLD: &str = "x-amz-object-lock-legal-hold";

/// The headers that ask for a new version's lock.
pub const HEADERS: [&str; 3] = [MODE, RETAIN_UNTIL, LEGAL_HOLD];

/// Which write the lock is for: a PutObject must prove its body (S3
/// requires Content-MD5 or a checksum with a retention).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Write {
    Put,
    Other,
}

/// What a write's headers ask for.
#[derive(Debug, Default, PartialEq)]
struct Requested {
    retention: Option<Retention>,
    legal_hold: Option<bool>,
}

impl Requested {
    fn names_a_lock(&self) -> bool {
        self.retention.is_some() || self.legal_hold.is_some()
    }
}

/// Sets the new version's lock entries in `meta`, replacing any it
/// carried (a copy's source's lock is not the copy's).
pub async fn record(
    state: &AppState,
    namespace: &Namespace,
    bucket: &str,
    headers: &HeaderMap,
    query: Option<&str>,
    write: Write,
    meta: &mut ObjectMeta,
) -> S3Result<()> {
    meta.user.remove(RETENTION_ENTRY);
    meta.user.remove(LEGAL_HOLD_ENTRY);
    refuse_in_query(query)?;
    let now = SystemTime::now();
    let requested = requested(headers, now)?;
    if requested.names_a_lock() {
        refuse_without_versions(state, "object lock")?;
    }
    let Some(configuration) = configuration(state, namespace, bucket).await? else {
        return match requested.names_a_lock() {
            true => Err(S3Error::invalid_request(
                "Bucket is missing Object Lock Configuration",
            )),
            false => Ok(()),
        };
    };
    let retention = requested.retention.or_else(|| {
        configuration.default_retention.map(|default| Retention {
            mode: default.mode,
            until: default.until(now),
        })
    });
    if write == Write::Put
        && (retention.is_some() || requested.legal_hold.is_some())
        && !proves_its_body(headers)?
    {
        return Err(S3Error::invalid_request(
            "Content-MD5 OR x-amz-checksum- HTTP header is required for Put Object requests with Object Lock parameters",
        ));
    }
    if let Some(retention) = retention {
        meta.user
            .insert(RETENTION_ENTRY.to_owned(), retention.to_entry());
    }
    if let Some(on) = requested.legal_hold {
        let value = if on { LEGAL_HOLD_ON } else { LEGAL_HOLD_OFF };
        meta.user
            .insert(LEGAL_HOLD_ENTRY.to_owned(), value.to_owned());
    }
    Ok(())
}

fn proves_its_body(headers: &HeaderMap) -> S3Result<bool> {
    Ok(IntegrityPlan::from_headers(headers)?.has_expected_digest()
        || headers.contains_key("x-amz-sdk-checksum-algorithm"))
}

/// A presigned URL may carry `x-amz-*` headers as query parameters; a
/// lock asked for that way is refused rather than ignored.
fn refuse_in_query(query: Option<&str>) -> S3Result<()> {
    let is_lock = |name: &str| HEADERS.iter().any(|h| name.eq_ignore_ascii_case(h));
    let named = query.is_some_and(|raw| {
        Query::parse(Some(raw))
            .is_ok_and(|query| query.pairs().iter().any(|(name, _)| is_lock(name)))
    });
    match named {
        true => Err(S3Error::not_implemented(
            "object lock parameters in a presigned URL's query",
        )),
        false => Ok(()),
    }
}

fn requested(headers: &HeaderMap, now: SystemTime) -> S3Result<Requested> {
    let text = |name: &'static str| -> S3Result<Option<&str>> {
        headers
            .get(name)
            .map(|value| {
                value.to_str().map(str::trim).map_err(|_| {
                    S3Error::invalid_argument(format!("The {name} header is not valid."))
                        .with("ArgumentName", name)
                })
            })
            .transpose()
    };
    let retention = match (text(MODE)?, text(RETAIN_UNTIL)?) {
        (None, None) => None,
        (Some(mode), Some(until)) => Some(Retention {
            mode: parse_mode(mode)?,
            until: parse_until(until, now)?,
        }),
        _ => {
            return Err(S3Error::invalid_argument(
                "x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied",
            ));
        }
    };
    let legal_hold = text(LEGAL_HOLD)?.map(parse_legal_hold).transpose()?;
    Ok(Requested {
        retention,
        legal_hold,
    })
}

/// A retention mode as S3 spells it (`InvalidArgument` otherwise).
pub fn parse_mode(text: &str) -> S3Result<RetentionMode> {
    RetentionMode::parse(text)
        .ok_or_else(|| S3Error::invalid_argument("Unknown wormMode directive."))
}

/// A retain-until date: ISO 8601 (RFC 3339), in the future.
pub fn parse_until(text: &str, now: SystemTime) -> S3Result<SystemTime> {
    let until = OffsetDateTime::parse(text, &Rfc3339)
        .map(SystemTime::from)
        .map_err(|_| {
            S3Error::invalid_argument("The retain until date must be provided in ISO 8601 format")
        })?;
    if until <= now {
        return Err(S3Error::invalid_argument(
            "The retain until date must be in the future!",
        ));
    }
    Ok(until)
}

/// A legal hold status: `ON` or `OFF`.
pub fn parse_legal_hold(text: &str) -> S3Result<bool> {
    match text {
        LEGAL_HOLD_ON => Ok(true),
        LEGAL_HOLD_OFF => Ok(false),
        _ => Err(S3Error::invalid_argument(
            "Legal Hold must be either of 'ON' or 'OFF'",
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::ops::test_headers;

    const NOW: &str = "2030-01-01T00:00:00Z";

    fn now() -> SystemTime {
        OffsetDateTime::parse(NOW, &Rfc3339).unwrap().into()
    }

    fn asked(pairs: &[(&str, &str)]) -> S3Result<Requested> {
        requested(&test_headers(pairs), now())
    }

    #[test]
    fn a_write_names_a_retention_with_both_headers_or_none() {
        assert_eq!(asked(&[]).unwrap(), Requested::default());
        let both = asked(&[
            (MODE, "COMPLIANCE"),
            (RETAIN_UNTIL, "2030-01-02T00:00:00.000Z"),
        ]);
        assert_eq!(
            both.unwrap().retention,
            Some(Retention {
                mode: RetentionMode::Compliance,
                until: now() + Duration::from_secs(86_400),
            })
        );
        let code = |pairs: &[(&str, &str)]| asked(pairs).unwrap_err().code;
        assert_eq!(code(&[(MODE, "GOVERNANCE")]), "InvalidArgument");
        assert_eq!(
            code(&[(RETAIN_UNTIL, "2031-01-01T00:00:00Z")]),
            "InvalidArgument"
        );
        let past = [(MODE, "GOVERNANCE"), (RETAIN_UNTIL, "2029-01-01T00:00:00Z")];
        assert_eq!(code(&past), "InvalidArgument");
        let bad_mode = [(MODE, "governance"), (RETAIN_UNTIL, "2031-01-01T00:00:00Z")];
        assert_eq!(code(&bad_mode), "InvalidArgument");
        let bad_date = [(MODE, "GOVERNANCE"), (RETAIN_UNTIL, "tomorrow")];
        assert_eq!(code(&bad_date), "InvalidArgument");
        assert_eq!(code(&[(LEGAL_HOLD, "on")]), "InvalidArgument");
        assert_eq!(
            asked(&[(LEGAL_HOLD, "OFF")]).unwrap().legal_hold,
            Some(false)
        );
    }

    #[test]
    fn a_lock_in_a_presigned_query_is_refused() {
        assert!(refuse_in_query(Some("X-Amz-Object-Lock-Mode=GOVERNANCE")).is_err());
        assert!(refuse_in_query(Some("x-id=PutObject")).is_ok());
        assert!(refuse_in_query(None).is_ok());
    }
}
