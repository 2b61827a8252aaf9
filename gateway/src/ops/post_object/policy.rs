//! The POST policy of a browser form upload: a base64 JSON document, signed
//! by the uploader's key, saying until when the form is good and what every
//! field may hold. What the policy does not allow is refused; a field the
//! policy does not mention is refused too, so that what is stored is
//! exactly what was signed.

use std::ops::RangeInclusive;
use std::time::SystemTime;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::error::{Code, S3Error, S3Result};

/// Form fields that need no condition: the signature and what carries it,
/// and the file itself (AWS's list).
const UNCONDITIONED: [&str; 5] = [
    "policy",
    "x-amz-signature",
    "signature",
    "awsaccesskeyid",
    "file",
];

#[derive(Debug, PartialEq, Eq)]
pub struct PostPolicy {
    expiration: SystemTime,
    conditions: Vec<Condition>,
}

#[derive(Debug, PartialEq, Eq)]
enum Condition {
    /// `{"field": "value"}` or `["eq", "$field", "value"]`.
    Equals { field: String, value: String },
    /// `["starts-with", "$field", "prefix"]`; an empty prefix allows anything.
    StartsWith { field: String, prefix: String },
    /// `["content-length-range", min, max]`: the file's size in bytes.
    LengthRange(RangeInclusive<u64>),
}

impl PostPolicy {
    /// Decodes the `policy` form field.
    pub fn parse(encoded: &str) -> S3Result<Self> {
        let json = STANDARD
            .decode(encoded.trim())
            .map_err(|_| invalid_policy("Invalid Policy: Invalid Base64 encoding."))?;
        let document: Value = serde_json::from_slice(&json)
            .map_err(|_| invalid_policy("Invalid Policy: Invalid JSON."))?;
        let expiration = document
            .get("expiration")
            .ok_or_else(|| invalid_policy("Invalid Policy: Policy missing expiration."))?
            .as_str()
            // ISO 8601 with its `T`, as S3 requires (RFC 3339 would take a space).
            .filter(|text| text.as_bytes().get(10) == Some(&b'T'))
            .and_then(|text| OffsetDateTime::parse(text, &Rfc3339).ok())
            .ok_or_else(|| invalid_policy("Invalid Policy: Invalid 'expiration' value."))?;
        let conditions = document
            .get("conditions")
            .ok_or_else(|| invalid_policy("Invalid Policy: Policy missing conditions."))?
            .as_array()
            .ok_or_else(|| invalid_policy("Invalid Policy: Invalid 'conditions' value."))?
            .iter()
            .map(Condition::parse)
            .collect::<S3Result<Vec<_>>>()?;
        Ok(Self {
            expiration: expiration.into(),
            conditions: conditions.into_iter().flatten().collect(),
        })
    }

    /// Checks the form's fields (names lower-cased, `bucket` among them)
    /// against the policy at `now`.
    pub fn check(&self, fields: &[(String, String)], now: SystemTime) -> S3Result<()> {
        if now > self.expiration {
            return Err(refused("Policy expired."));
        }
        let value = |name: &str| {
            fields
                .iter()
                .find(|(field, _)| field == name)
                .map(|(_, value)| value.as_str())
        };
        for condition in &self.conditions {
            let holds = match condition {
                Condition::Equals { field, value: want } => value(field) == Some(want.as_str()),
                // An absent field is the empty value, so `starts-with ""`
                // ("any content") also allows the form to leave it out, as
                // S3 does (a policy can allow an optional encryption field).
                Condition::StartsWith { field, prefix } => {
                    value(field).unwrap_or("").starts_with(prefix.as_str())
                }
                Condition::LengthRange(_) => true,
            };
            if !holds {
                return Err(refused(&format!(
                    "Policy Condition failed: {}",
                    condition.describe()
                )));
            }
        }
        for (name, _) in fields {
            let exempt = UNCONDITIONED.contains(&name.as_str())
                || name.starts_with("x-ignore-")
                || name.starts_with(super::CHECKSUM_FIELD_PREFIX);
            if !exempt && !self.conditions.iter().any(|c| c.field() == Some(name)) {
                return Err(refused(&format!("Extra input fields: {name}")));
            }
        }
        Ok(())
    }

    /// The file sizes the policy allows, if it limits them: every
    /// `content-length-range` must hold, so the sizes all of them allow (an
    /// empty range when they share none, which no file satisfies).
    pub fn length_range(&self) -> Option<RangeInclusive<u64>> {
        self.conditions
            .iter()
            .filter_map(|condition| match condition {
                Condition::LengthRange(range) => Some(range.clone()),
                _ => None,
            })
            .reduce(|all, range| *all.start().max(range.start())..=*all.end().min(range.end()))
    }
}

impl Condition {
    /// One entry of `conditions`; an object may hold several exact matches.
    fn parse(entry: &Value) -> S3Result<Vec<Self>> {
        let invalid = || invalid_policy(format!("Invalid Policy: Invalid Condition: {entry}"));
        match entry {
            Value::Object(pairs) if pairs.is_empty() => Err(invalid()),
            Value::Object(pairs) => pairs
                .iter()
                .map(|(field, value)| {
                    Ok(Self::Equals {
                        field: field.to_ascii_lowercase(),
                        value: value.as_str().ok_or_else(invalid)?.to_owned(),
                    })
                })
                .collect(),
            Value::Array(items) => {
                let [operator, first, second] = items.as_slice() else {
                    return Err(invalid());
                };
                let operator = operator.as_str().ok_or_else(invalid)?.to_ascii_lowercase();
                if operator == "content-length-range" {
                    let bound = |v: &Value| {
                        v.as_u64()
                            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
                            .ok_or_else(invalid)
                    };
                    let (min, max) = (bound(first)?, bound(second)?);
                    return if min <= max {
                        Ok(vec![Self::LengthRange(min..=max)])
                    } else {
                        Err(invalid())
                    };
                }
                let field = first
                    .as_str()
                    .and_then(|f| f.strip_prefix('$'))
                    .ok_or_else(invalid)?
                    .to_ascii_lowercase();
                let value = second.as_str().ok_or_else(invalid)?.to_owned();
                match operator.as_str() {
                    "eq" => Ok(vec![Self::Equals { field, value }]),
                    "starts-with" => Ok(vec![Self::StartsWith {
                        field,
                        prefix: value,
                    }]),
                    _ => Err(invalid()),
                }
            }
            _ => Err(invalid()),
        }
    }

    fn field(&self) -> Option<&str> {
        match self {
            Self::Equals { field, .. } | Self::StartsWith { field, .. } => Some(field),
            Self::LengthRange(_) => None,
        }
    }

    fn describe(&self) -> String {
        match self {
            Self::Equals { field, value } => format!("[\"eq\", \"${field}\", \"{value}\"]"),
            Self::StartsWith { field, prefix } => {
                format!("[\"starts-with\", \"${field}\", \"{prefix}\"]")
            }
            Self::LengthRange(range) => format!(
                "[\"content-length-range\", {}, {}]",
                range.start(),
                range.end()
            ),
        }
    }
}

fn invalid_policy(message: impl Into<String>) -> S3Error {
    S3Error::new(Code::InvalidPolicyDocument, message)
}

fn refused(reason: &str) -> S3Error {
    S3Error::new(
        Code::AccessDenied,
        format!("Invalid according to Policy: {reason}"),
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn encode(json: &str) -> String {
        STANDARD.encode(json)
    }

    fn fields(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect()
    }

    const POLICY: &str = r#"{"expiration": "2030-01-01T12:00:00.000Z",
        "conditions": [
            {"bucket": "photos"},
            ["starts-with", "$Key", "user/"],
            {"acl": "private", "success_action_status": "201"},
            ["eq", "$Content-Type", "image/png"],
            ["starts-with", "$x-amz-meta-tag", ""],
            ["content-length-range", 1, "1048576"]
        ]}"#;

    fn before_expiry() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000)
    }

    fn good_form() -> Vec<(String, String)> {
        fields(&[
            ("bucket", "photos"),
            ("key", "user/cat.png"),
            ("acl", "private"),
            ("success_action_status", "201"),
            ("content-type", "image/png"),
            ("x-amz-meta-tag", "anything"),
            ("policy", "..."),
            ("x-ignore-me", "1"),
        ])
    }

    #[test]
    fn a_form_within_the_policy_passes() {
        let policy = PostPolicy::parse(&encode(POLICY)).unwrap();
        assert_eq!(policy.length_range(), Some(1..=1_048_576));
        policy.check(&good_form(), before_expiry()).unwrap();
    }

    #[test]
    fn a_form_outside_the_policy_is_refused() {
        let policy = PostPolicy::parse(&encode(POLICY)).unwrap();
        let mut wrong_key = good_form();
        wrong_key[1].1 = "admin/cat.png".into();
        let mut extra = good_form();
        extra.push(("x-amz-meta-other".into(), "x".into()));
        let mut missing = good_form();
        missing.retain(|(name, _)| name != "content-type");
        for (form, reason) in [
            (
                wrong_key,
                "Policy Condition failed: [\"starts-with\", \"$key\", \"user/\"]",
            ),
            (extra, "Extra input fields: x-amz-meta-other"),
            (
                missing,
                "Policy Condition failed: [\"eq\", \"$content-type\", \"image/png\"]",
            ),
        ] {
            let err = policy.check(&form, before_expiry()).unwrap_err();
            assert_eq!((err.code, err.status.as_u16()), ("AccessDenied", 403));
            assert_eq!(
                err.message,
                format!("Invalid according to Policy: {reason}")
            );
        }
        let late = SystemTime::UNIX_EPOCH + Duration::from_secs(1_900_000_000);
        assert_eq!(
            policy.check(&good_form(), late).unwrap_err().message,
            "Invalid according to Policy: Policy expired."
        );
    }

    #[test]
    fn every_content_length_range_limits_the_file() {
        let policy = |ranges: &str| {
            PostPolicy::parse(&encode(&format!(
                r#"{{"expiration": "2030-01-01T12:00:00.000Z", "conditions": [{ranges}]}}"#
            )))
            .unwrap()
        };
        assert_eq!(policy(r#"{"key": "k"}"#).length_range(), None);
        assert_eq!(
            policy(r#"["content-length-range", 0, 1000], ["content-length-range", 10, 100]"#)
                .length_range(),
            Some(10..=100)
        );
        assert_eq!(
            policy(r#"["content-length-range", 50, 1000], ["content-length-range", 0, 100]"#)
                .length_range(),
            Some(50..=100)
        );
        let disjoint =
            policy(r#"["content-length-range", 0, 10], ["content-length-range", 20, 30]"#)
                .length_range()
                .unwrap();
        assert!(
            (0..=40).all(|size| !disjoint.contains(&size)),
            "{disjoint:?}"
        );
    }

    #[test]
    fn malformed_policies_are_invalid_policy_document() {
        for bad in [
            "not base64!".to_owned(),
            encode("not json"),
            encode(r#"{"conditions": []}"#),
            encode(r#"{"expiration": "soon", "conditions": []}"#),
            encode(r#"{"expiration": "2030-01-01T00:00:00Z"}"#),
            encode(
                r#"{"expiration": "2030-01-01T00:00:00Z", "conditions": [["like", "$key", "a"]]}"#,
            ),
            encode(r#"{"expiration": "2030-01-01T00:00:00Z", "conditions": [["eq", "key", "a"]]}"#),
            encode(
                r#"{"expiration": "2030-01-01T00:00:00Z", "conditions": [["content-length-range", 5, 1]]}"#,
            ),
            encode(
                r#"{"expiration": "2030-01-01T00:00:00Z", "conditions": [["content-length-range", -1, 1]]}"#,
            ),
            encode(r#"{"expiration": "2030-01-01T00:00:00Z", "conditions": [{"key": 5}]}"#),
            encode(r#"{"expiration": "2030-01-01T00:00:00Z", "conditions": [{}]}"#),
            encode(r#"{"expiration": "2030-01-01 00:00:00Z", "conditions": []}"#),
        ] {
            let err = PostPolicy::parse(&bad).unwrap_err();
            assert_eq!(
                (err.code, err.status.as_u16()),
                ("InvalidPolicyDocument", 400),
                "{bad}"
            );
        }
    }
}
