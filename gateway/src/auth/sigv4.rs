//! SigV4 as pure functions: timestamps, the credential scope, the canonical
//! request, the string to sign, and the chunk and trailer signatures of
//! aws-chunked bodies. No I/O and no policy (clock skew, region) here; the
//! verifier decides what to accept.

use std::time::{SystemTime, UNIX_EPOCH};

use hmac::{Hmac, Mac};
use http::HeaderMap;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use time::format_description::BorrowedFormatItem;
use time::format_description::well_known::Rfc2822;
use time::macros::format_description;
use time::{OffsetDateTime, PrimitiveDateTime};

use super::encoding::{canonical_path, canonical_query};

pub(crate) const ALGORITHM: &str = "AWS4-HMAC-SHA256";
pub(crate) const SCOPE_TERMINAL: &str = "aws4_request";
pub(crate) const SERVICE: &str = "s3";
/// SHA-256 of the empty string, which chunk signatures use as a fixed line.
pub(crate) const EMPTY_SHA256: &str =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

const AMZ_DATE: &[BorrowedFormatItem<'static>] =
    format_description!("[year][month][day]T[hour][minute][second]Z");

/// Parses an ISO 8601 basic timestamp (`20130524T000000Z`).
pub(crate) fn parse_amz_date(text: &str) -> Option<SystemTime> {
    let parsed = PrimitiveDateTime::parse(text, AMZ_DATE).ok()?;
    Some(parsed.assume_utc().into())
}

/// Parses an HTTP `Date`: the IMF-fixdate form (`... GMT`) and its
/// obsolete variants, or RFC 2822 with a numeric zone (`... +0000`), which
/// SigV2 clients and the AWS examples use.
pub(crate) fn parse_http_time(text: &str) -> Option<SystemTime> {
    httpdate::parse_http_date(text).ok().or_else(|| {
        OffsetDateTime::parse(text, &Rfc2822)
            .ok()
            .map(SystemTime::from)
    })
}

/// Formats a time as ISO 8601 basic; empty for a time before 1970 or
/// after 9999 (never panics, unlike converting the `SystemTime` directly).
pub(crate) fn format_amz_date(at: SystemTime) -> String {
    at.duration_since(UNIX_EPOCH)
        .ok()
        .and_then(|since| i64::try_from(since.as_secs()).ok())
        .and_then(|seconds| OffsetDateTime::from_unix_timestamp(seconds).ok())
        .and_then(|time| time.format(AMZ_DATE).ok())
        .unwrap_or_default()
}

/// The `YYYYMMDD` day of a timestamp already in ISO 8601 basic form.
pub(crate) fn day_of(stamp: &str) -> &str {
    stamp.get(..8).unwrap_or(stamp)
}

/// `AKID/YYYYMMDD/region/service/aws4_request`, split. The access key is
/// everything before the last four parts so that no key id is mis-split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Credential<'a> {
    pub access_key: &'a str,
    pub date: &'a str,
    pub region: &'a str,
    pub service: &'a str,
    pub terminal: &'a str,
}

impl<'a> Credential<'a> {
    pub(crate) fn parse(text: &'a str) -> Option<Self> {
        let mut parts = text.rsplitn(5, '/');
        let terminal = parts.next()?;
        let service = parts.next()?;
        let region = parts.next()?;
        let date = parts.next()?;
        let access_key = parts.next()?;
        let well_formed = !access_key.is_empty()
            && date.len() == 8
            && date.bytes().all(|b| b.is_ascii_digit())
            && !region.is_empty();
        well_formed.then_some(Self {
            access_key,
            date,
            region,
            service,
            terminal,
        })
    }

    /// The scope line of the string to sign: `date/region/service/aws4_request`.
    pub(crate) fn scope(&self) -> String {
        format!(
            "{}/{}/{}/{}",
            self.date, self.region, self.service, self.terminal
        )
    }

    /// Why this credential cannot be used here, in AWS's words, if it cannot.
    pub(crate) fn problem(&self, expected_region: &str, stamp: &str) -> Option<ScopeProblem> {
        if self.date != day_of(stamp) {
            Some(ScopeProblem::Date)
        } else if self.region != expected_region {
            Some(ScopeProblem::Region {
                got: self.region.to_owned(),
                expected: expected_region.to_owned(),
            })
        } else if self.service != SERVICE {
            Some(ScopeProblem::Service(self.service.to_owned()))
        } else if self.terminal != SCOPE_TERMINAL {
            Some(ScopeProblem::Terminal(self.terminal.to_owned()))
        } else {
            None
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ScopeProblem {
    Date,
    Region { got: String, expected: String },
    Service(String),
    Terminal(String),
}

impl ScopeProblem {
    pub(crate) fn reason(&self) -> String {
        match self {
            Self::Date => "Invalid credential date. Date is not the same as X-Amz-Date.".to_owned(),
            Self::Region { got, expected } => {
                format!("the region '{got}' is wrong; expecting '{expected}'")
            }
            Self::Service(got) => {
                format!("incorrect service \"{got}\". This endpoint belongs to \"{SERVICE}\".")
            }
            Self::Terminal(got) => {
                format!("incorrect terminal \"{got}\". This endpoint uses \"{SCOPE_TERMINAL}\".")
            }
        }
    }
}

/// What the canonical request is built from: the request as received.
pub(crate) struct CanonicalInput<'a> {
    pub method: &'a str,
    pub raw_path: &'a str,
    pub raw_query: &'a str,
    /// A query parameter left out (the presigned `X-Amz-Signature`).
    pub skip_param: Option<&'a str>,
    pub headers: &'a HeaderMap,
    /// The request target's authority, used for `host` when an HTTP/2
    /// request carries it as `:authority` instead of a `Host` header.
    pub authority: Option<&'a str>,
    pub signed_headers: &'a [&'a str],
    pub payload_hash: &'a str,
}

pub(crate) fn canonical_request(input: &CanonicalInput<'_>) -> String {
    let mut out = String::with_capacity(256);
    out.push_str(input.method);
    out.push('\n');
    out.push_str(&canonical_path(input.raw_path));
    out.push('\n');
    out.push_str(&canonical_query(input.raw_query, input.skip_param));
    out.push('\n');
    for name in input.signed_headers {
        out.push_str(name);
        out.push(':');
        push_header_value(&mut out, input, name);
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&input.signed_headers.join(";"));
    out.push('\n');
    out.push_str(input.payload_hash);
    out
}

/// All values of one header, each trimmed with inner whitespace runs
/// collapsed to one space, joined with `,` (the order they were sent in).
fn push_header_value(out: &mut String, input: &CanonicalInput<'_>, name: &str) {
    let mut values = input.headers.get_all(name).iter().peekable();
    if values.peek().is_none() && name == "host" {
        if let Some(authority) = input.authority {
            out.push_str(authority);
        }
        return;
    }
    for (i, value) in values.enumerate() {
        if i > 0 {
            out.push(',');
        }
        let text = String::from_utf8_lossy(value.as_bytes());
        for (j, word) in text.split_ascii_whitespace().enumerate() {
            if j > 0 {
                out.push(' ');
            }
            out.push_str(word);
        }
    }
}

pub(crate) fn sha256_hex(data: &[u8]) -> String {
    hex::encode(Sha256::digest(data))
}

pub(crate) fn string_to_sign(stamp: &str, scope: &str, canonical_request: &str) -> String {
    format!(
        "{ALGORITHM}\n{stamp}\n{scope}\n{}",
        sha256_hex(canonical_request.as_bytes())
    )
}

pub(crate) fn hmac_sha256(key: &[u8], data: &[u8]) -> [u8; 32] {
    // HMAC accepts keys of every length, so this cannot fail.
    let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap_or_else(|_| unreachable!());
    mac.update(data);
    mac.finalize().into_bytes().into()
}

pub(crate) fn sign(signing_key: &[u8; 32], string_to_sign: &str) -> String {
    hex::encode(hmac_sha256(signing_key, string_to_sign.as_bytes()))
}

/// Compares a computed signature with the one provided without leaking,
/// through timing, how many leading characters matched.
pub(crate) fn signatures_match(computed: &str, provided: &str) -> bool {
    computed.len() == provided.len() && bool::from(computed.as_bytes().ct_eq(provided.as_bytes()))
}

/// What every chunk and trailer signature of one request is computed with.
#[derive(Clone)]
pub(crate) struct SigningContext {
    pub key: [u8; 32],
    pub stamp: String,
    pub scope: String,
}

impl SigningContext {
    /// The signature of one aws-chunked chunk, chained from `previous`.
    pub(crate) fn chunk_signature(&self, previous: &str, data: &[u8]) -> String {
        sign(&self.key, &self.chunk_string_to_sign(previous, data))
    }

    /// What [`Self::chunk_signature`] signs.
    pub(crate) fn chunk_string_to_sign(&self, previous: &str, data: &[u8]) -> String {
        format!(
            "AWS4-HMAC-SHA256-PAYLOAD\n{}\n{}\n{previous}\n{EMPTY_SHA256}\n{}",
            self.stamp,
            self.scope,
            sha256_hex(data)
        )
    }

    /// The signature of the trailer block (`name:value\n` per trailer,
    /// sorted), chained from the final chunk's signature.
    pub(crate) fn trailer_signature(&self, previous: &str, canonical_trailers: &str) -> String {
        sign(
            &self.key,
            &self.trailer_string_to_sign(previous, canonical_trailers),
        )
    }

    /// What [`Self::trailer_signature`] signs.
    pub(crate) fn trailer_string_to_sign(
        &self,
        previous: &str,
        canonical_trailers: &str,
    ) -> String {
        format!(
            "AWS4-HMAC-SHA256-TRAILER\n{}\n{}\n{previous}\n{}",
            self.stamp,
            self.scope,
            sha256_hex(canonical_trailers.as_bytes())
        )
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn amz_dates_round_trip() {
        let at = parse_amz_date("20130524T000000Z");
        assert_eq!(at, Some(UNIX_EPOCH + Duration::from_secs(1_369_353_600)));
        assert_eq!(
            format_amz_date(UNIX_EPOCH + Duration::from_secs(1_369_353_600)),
            "20130524T000000Z"
        );
        assert_eq!(parse_amz_date("2013-05-24T00:00:00Z"), None);
        assert_eq!(
            format_amz_date(UNIX_EPOCH + Duration::from_secs(1 << 40)),
            ""
        );
        assert_eq!(parse_amz_date("20131324T000000Z"), None);
        let may_24 = parse_amz_date("20130524T000000Z");
        assert_eq!(parse_http_time("Fri, 24 May 2013 00:00:00 GMT"), may_24);
        assert_eq!(parse_http_time("Fri, 24 May 2013 02:00:00 +0200"), may_24);
        assert_eq!(parse_http_time("24 May 2013"), None);
    }

    #[test]
    fn credential_parses_from_the_right() {
        let credential = Credential::parse("AK/ID/20130524/us-east-1/s3/aws4_request");
        assert_eq!(
            credential,
            Some(Credential {
                access_key: "AK/ID",
                date: "20130524",
                region: "us-east-1",
                service: "s3",
                terminal: "aws4_request",
            })
        );
        assert_eq!(
            Credential::parse("20130524/us-east-1/s3/aws4_request"),
            None
        );
        assert_eq!(
            Credential::parse("AK/2013052/us-east-1/s3/aws4_request"),
            None
        );
        assert_eq!(Credential::parse("AK//us-east-1/s3/aws4_request"), None);
    }

    #[test]
    fn scope_problems_are_reported_in_aws_words() {
        let credential = Credential::parse("AK/20130524/us-west-2/s3/aws4_request").unwrap();
        assert_eq!(credential.problem("us-west-2", "20130524T235959Z"), None);
        assert_eq!(
            credential.problem("us-west-2", "20130525T000000Z"),
            Some(ScopeProblem::Date)
        );
        assert_eq!(
            credential
                .problem("us-east-1", "20130524T000000Z")
                .unwrap()
                .reason(),
            "the region 'us-west-2' is wrong; expecting 'us-east-1'"
        );
        let credential = Credential::parse("AK/20130524/us-east-1/ec2/aws4_request").unwrap();
        assert_eq!(
            credential.problem("us-east-1", "20130524T000000Z"),
            Some(ScopeProblem::Service("ec2".to_owned()))
        );
        let credential = Credential::parse("AK/20130524/us-east-1/s3/aws5_request").unwrap();
        assert_eq!(
            credential.problem("us-east-1", "20130524T000000Z"),
            Some(ScopeProblem::Terminal("aws5_request".to_owned()))
        );
    }

    #[test]
    fn header_values_are_trimmed_collapsed_and_joined() {
        let mut headers = HeaderMap::new();
        headers.append("x-amz-meta-a", "  one   two ".parse().unwrap());
        headers.append("x-amz-meta-a", "three".parse().unwrap());
        let signed = ["host", "x-amz-meta-a"];
        let input = CanonicalInput {
            method: "GET",
            raw_path: "/b/k",
            raw_query: "",
            skip_param: None,
            headers: &headers,
            authority: Some("example.com:9878"),
            signed_headers: &signed,
            payload_hash: "UNSIGNED-PAYLOAD",
        };
        assert_eq!(
            canonical_request(&input),
            "GET\n/b/k\n\nhost:example.com:9878\nx-amz-meta-a:one two,three\n\nhost;x-amz-meta-a\nUNSIGNED-PAYLOAD"
        );
    }

    #[test]
    fn signature_comparison_needs_equal_length_and_bytes() {
        assert!(signatures_match("abcd", "abcd"));
        assert!(!signatures_match("abcd", "abce"));
        assert!(!signatures_match("abcd", "abc"));
        assert!(!signatures_match("abcd", "ABCD"));
    }
}
