//! Parsing the `X-Amz-*` query parameters of a presigned URL and the checks
//! that belong to them alone (algorithm, expiry bounds).

use std::time::{Duration, SystemTime};

use super::encoding::query_pairs;
use super::errors::{access_denied, query_malformed};
use super::header::parse_signed_headers;
use super::sigv4::{ALGORITHM, format_amz_date, parse_amz_date};
use crate::error::S3Error;
use http::StatusCode;

/// The longest validity AWS allows a presigned URL: seven days.
pub(crate) const MAX_EXPIRES_SECS: u64 = 604_800;

pub(crate) const SIGNATURE_PARAM: &str = "X-Amz-Signature";

#[derive(Debug, PartialEq, Eq)]
pub(crate) struct PresignedQuery {
    pub credential: String,
    /// `X-Amz-Date` exactly as sent (ISO 8601 basic).
    pub stamp: String,
    pub signed_at: SystemTime,
    pub expires: Duration,
    pub signed_headers: String,
    pub signature: String,
}

impl PresignedQuery {
    pub(crate) fn signed_header_names(&self) -> Result<Vec<&str>, S3Error> {
        parse_signed_headers(&self.signed_headers).ok_or_else(|| {
            query_malformed(
                "X-Amz-SignedHeaders must be a ;-separated list of lower-case header names.",
            )
        })
    }

    /// Refuses a URL used after its expiry, or dated too far in the future
    /// (which would stretch its life past seven days).
    pub(crate) fn check_validity(
        &self,
        now: SystemTime,
        max_skew: Duration,
    ) -> Result<(), S3Error> {
        if self.signed_at > now + max_skew {
            return Err(access_denied("Request is not valid yet"));
        }
        let expires_at = self.signed_at + self.expires;
        if now > expires_at {
            return Err(access_denied("Request has expired")
                .with("X-Amz-Expires", self.expires.as_secs().to_string())
                .with("Expires", format_amz_date(expires_at))
                .with("ServerTime", format_amz_date(now)));
        }
        Ok(())
    }
}

/// Whether the query carries SigV4 presigned parameters at all.
pub(crate) fn is_presigned(raw_query: &str) -> bool {
    raw_query
        .split('&')
        .any(|part| part.split('=').next() == Some("X-Amz-Algorithm"))
}

pub(crate) fn parse(raw_query: &str) -> Result<PresignedQuery, S3Error> {
    let (mut algorithm, mut credential, mut date, mut expires, mut signed_headers, mut signature) =
        (None, None, None, None, None, None);
    for (name, value) in query_pairs(raw_query) {
        let slot = match name.as_str() {
            "X-Amz-Algorithm" => &mut algorithm,
            "X-Amz-Credential" => &mut credential,
            "X-Amz-Date" => &mut date,
            "X-Amz-Expires" => &mut expires,
            "X-Amz-SignedHeaders" => &mut signed_headers,
            SIGNATURE_PARAM => &mut signature,
            _ => continue,
        };
        if slot.replace(value).is_some() {
            return Err(query_malformed(format!(
                "The {name} parameter appears more than once."
            )));
        }
    }
    let (
        Some(algorithm),
        Some(credential),
        Some(stamp),
        Some(expires),
        Some(signed_headers),
        Some(signature),
    ) = (
        algorithm,
        credential,
        date,
        expires,
        signed_headers,
        signature,
    )
    else {
        return Err(query_malformed(
            "Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, \
             X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.",
        ));
    };
    if algorithm != ALGORITHM {
        return Err(query_malformed(
            "X-Amz-Algorithm only supports \"AWS4-HMAC-SHA256\"",
        ));
    }
    let signed_at = parse_amz_date(&stamp).ok_or_else(|| {
        query_malformed("X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"")
    })?;
    let expires = parse_expires(&expires)?;
    Ok(PresignedQuery {
        credential,
        stamp,
        signed_at,
        expires,
        signed_headers,
        signature,
    })
}

fn parse_expires(text: &str) -> Result<Duration, S3Error> {
    if let Some(digits) = text.strip_prefix('-')
        && !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(lifetime_out_of_range("X-Amz-Expires must be non-negative"));
    }
    let seconds: u64 = text
        .parse()
        .map_err(|_| query_malformed("X-Amz-Expires should be a number"))?;
    if seconds > MAX_EXPIRES_SECS {
        return Err(lifetime_out_of_range(
            "X-Amz-Expires must be less than a week (in seconds) that is 604800",
        ));
    }
    Ok(Duration::from_secs(seconds))
}

/// A well-formed lifetime S3 will not honour: refused with 403 like an
/// expired URL (S3 and its conformance suites agree), unlike the 400 of a
/// malformed query.
pub(crate) fn lifetime_out_of_range(message: &str) -> S3Error {
    let mut error = query_malformed(message);
    error.status = StatusCode::FORBIDDEN;
    error
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404";

    #[test]
    fn parses_the_documented_url() {
        assert!(is_presigned(EXAMPLE));
        assert!(!is_presigned("X-Amz-Algorithmx=1&prefix=X-Amz-Algorithm"));
        let parsed = parse(EXAMPLE).unwrap();
        assert_eq!(
            parsed.credential,
            "AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request"
        );
        assert_eq!(parsed.stamp, "20130524T000000Z");
        assert_eq!(parsed.expires, Duration::from_secs(86_400));
        assert_eq!(parsed.signed_header_names().unwrap(), ["host"]);
    }

    fn with(name: &str, value: &str) -> String {
        EXAMPLE
            .split('&')
            .map(|part| {
                if part.starts_with(&format!("{name}=")) {
                    format!("{name}={value}")
                } else {
                    part.to_owned()
                }
            })
            .collect::<Vec<_>>()
            .join("&")
    }

    #[test]
    fn refuses_bad_parameters() {
        for (query, message) in [
            (with("X-Amz-Expires", "604801"), "less than a week"),
            (with("X-Amz-Expires", "-1"), "non-negative"),
            (with("X-Amz-Expires", "soon"), "should be a number"),
            (with("X-Amz-Algorithm", "AWS4-HMAC-SHA1"), "only supports"),
            (with("X-Amz-Date", "2013-05-24"), "ISO8601"),
            (EXAMPLE.replace("&X-Amz-SignedHeaders=host", ""), "requires"),
            (
                format!("{EXAMPLE}&X-Amz-Date=20130524T000000Z"),
                "more than once",
            ),
        ] {
            let error = parse(&query).unwrap_err();
            assert_eq!(error.code, "AuthorizationQueryParametersError", "{query}");
            assert!(
                error.message.contains(message),
                "{query}: {}",
                error.message
            );
        }
        assert!(parse(&with("X-Amz-Expires", "604800")).is_ok());
        for lifetime in ["604801", "-1"] {
            let error = parse(&with("X-Amz-Expires", lifetime)).unwrap_err();
            assert_eq!(error.status, StatusCode::FORBIDDEN, "{lifetime}");
        }
        let error = parse(&with("X-Amz-Expires", "soon")).unwrap_err();
        assert_eq!(error.status, StatusCode::BAD_REQUEST);
    }

    #[test]
    fn validity_window() {
        let parsed = parse(EXAMPLE).unwrap();
        let skew = Duration::from_secs(900);
        let signed = parsed.signed_at;
        assert!(parsed.check_validity(signed, skew).is_ok());
        assert!(
            parsed
                .check_validity(signed + Duration::from_secs(86_400), skew)
                .is_ok()
        );
        let expired = parsed
            .check_validity(signed + Duration::from_secs(86_401), skew)
            .unwrap_err();
        assert_eq!(
            (expired.code, expired.message.as_str()),
            ("AccessDenied", "Request has expired")
        );
        assert!(
            parsed
                .check_validity(signed - Duration::from_secs(900), skew)
                .is_ok()
        );
        let early = parsed
            .check_validity(signed - Duration::from_secs(901), skew)
            .unwrap_err();
        assert_eq!(early.code, "AccessDenied");
    }
}
