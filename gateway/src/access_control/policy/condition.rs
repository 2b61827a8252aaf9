//! A statement's `Condition` block, with IAM's semantics: every
//! operator's every key must hold (AND), any of a key's values may match
//! (OR). A key the request does not have makes a condition false, except
//! for the negated operators (`StringNotEquals`, `NotIpAddress`, ...),
//! which it makes true, and `...IfExists`, which it makes true; `Null`
//! tests just that presence. With a set prefix the request's values are
//! a set: `ForAnyValue:` holds if one of them matches (none: false),
//! `ForAllValues:` if all do (none: true).

use serde_json::Value;

use super::context::Lookup;
use super::key::Key;
use super::malformed;
use super::operator::{Comparison, Expected};
use crate::error::S3Error;

#[derive(Clone, Debug, PartialEq)]
pub struct Condition {
    comparison: Comparison,
    negated: bool,
    if_exists: bool,
    set: Set,
    key: Key,
    /// Any of which may match (for Null: the one boolean).
    values: Vec<Expected>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Set {
    /// No prefix: the key's one value (a multivalued key's any value).
    Single,
    ForAnyValue,
    ForAllValues,
}

/// The conditions of a `Condition` block. `variables`: whether the
/// policy's version gives `${...}` a meaning (2012-10-17; before it is
/// literal text).
pub fn parse(value: &Value, variables: bool) -> Result<Vec<Condition>, S3Error> {
    let Value::Object(operators) = value else {
        return Err(malformed("Condition must be a JSON object"));
    };
    let mut conditions = Vec::new();
    for (name, keys) in operators {
        let unknown = || malformed(format!("Unknown condition operator {name}"));
        let (set, rest) = match name.split_once(':') {
            Some(("ForAnyValue", rest)) => (Set::ForAnyValue, rest),
            Some(("ForAllValues", rest)) => (Set::ForAllValues, rest),
            Some(_) => return Err(unknown()),
            None => (Set::Single, name.as_str()),
        };
        let (rest, if_exists) = match rest.strip_suffix("IfExists") {
            Some(base) => (base, true),
            None => (rest, false),
        };
        let (comparison, negated) = Comparison::parse(rest).ok_or_else(unknown)?;
        if comparison == Comparison::Null && (if_exists || set != Set::Single) {
            return Err(unknown());
        }
        let Value::Object(keys) = keys else {
            return Err(malformed(format!(
                "Condition operator {name} must map keys to values"
            )));
        };
        if keys.is_empty() {
            return Err(malformed(format!("Condition operator {name} names no key")));
        }
        for (key_name, values) in keys {
            let key = Key::parse(key_name)
                .ok_or_else(|| malformed(format!("Unknown condition key {key_name}")))?;
            let values = texts(values, key_name)?
                .into_iter()
                .map(|text| {
                    if variables && text.contains("${") {
                        return Err(malformed(format!(
                            "Policy variables are not supported: {key_name} value {text}"
                        )));
                    }
                    comparison.expected(&text).ok_or_else(|| {
                        malformed(format!("Invalid value {text} for {name} on {key_name}"))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            if comparison == Comparison::Null && values.len() != 1 {
                return Err(malformed(format!("Null on {key_name} takes one value")));
            }
            conditions.push(Condition {
                comparison,
                negated,
                if_exists,
                set,
                key,
                values,
            });
        }
    }
    Ok(conditions)
}

/// A condition value as text: strings, numbers and booleans, alone or
/// in a list.
fn texts(value: &Value, key: &str) -> Result<Vec<String>, S3Error> {
    let one = |value: &Value| match value {
        Value::String(text) => Ok(text.clone()),
        Value::Number(number) => Ok(number.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        _ => Err(malformed(format!("Invalid value for condition key {key}"))),
    };
    match value {
        Value::Array(list) if list.is_empty() => {
            Err(malformed(format!("No value for condition key {key}")))
        }
        Value::Array(list) => list.iter().map(one).collect(),
        other => Ok(vec![one(other)?]),
    }
}

/// Whether all of `conditions` hold for the request `lookup` describes:
/// `None` when one depends on a value not known yet and none is false.
pub fn all_hold<'a>(conditions: &[Condition], lookup: impl Fn(&Key) -> Lookup<'a>) -> Option<bool> {
    let mut known = true;
    for condition in conditions {
        match condition.holds(lookup(&condition.key)) {
            Some(false) => return Some(false),
            Some(true) => {}
            None => known = false,
        }
    }
    known.then_some(true)
}

impl Condition {
    pub fn key(&self) -> &Key {
        &self.key
    }

    fn holds(&self, lookup: Lookup<'_>) -> Option<bool> {
        let values = match &lookup {
            Lookup::Unknown => return None,
            Lookup::Absent => &[][..],
            Lookup::Values(values) => &values[..],
        };
        if self.comparison == Comparison::Null {
            return Some(self.values.first() == Some(&Expected::Bool(values.is_empty())));
        }
        let test = |actual: &str| {
            let matched = self
                .values
                .iter()
                .any(|expected| self.comparison.matches(expected, actual));
            matched != self.negated
        };
        Some(match self.set {
            Set::ForAllValues => values.iter().all(|v| test(v)),
            _ if values.is_empty() => self.if_exists || (self.negated && self.set == Set::Single),
            Set::ForAnyValue => values.iter().any(|v| test(v)),
            // A negated operator holds when no value matches.
            Set::Single if self.negated => values.iter().all(|v| test(v)),
            Set::Single => values.iter().any(|v| test(v)),
        })
    }

    /// Whether this condition limits a statement to fixed values of a
    /// key that identifies who may ask (AWS's non-public conditions): a
    /// positive test, binding even without the key, of values with no
    /// wildcard (an address block that is not all addresses).
    pub fn narrows_public_access(&self) -> bool {
        let positive = !self.negated && !self.if_exists && self.set != Set::ForAllValues;
        let fixed = self.values.iter().all(|value| match value {
            // (The anonymous caller's userid is anyone's.)
            Expected::Text(text) => {
                !text.contains(['*', '?']) && !text.eq_ignore_ascii_case("anonymous")
            }
            Expected::Network(network) => !network.is_everything(),
            _ => false,
        });
        positive && fixed && self.key.narrows_public_access()
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;

    fn conditions(json: &str) -> Result<Vec<Condition>, S3Error> {
        parse(&serde_json::from_str(json).unwrap(), true)
    }

    /// Whether `json` holds for a request where `key` has `values`
    /// (`None`: absent) and no other key is present.
    fn holds(json: &str, values: Option<&[&str]>) -> bool {
        let conditions = conditions(json).unwrap();
        let lookup = |_: &Key| match values {
            None => Lookup::Absent,
            Some(values) => Lookup::Values(values.iter().map(|v| Cow::Borrowed(*v)).collect()),
        };
        all_hold(&conditions, lookup).unwrap()
    }

    #[test]
    fn a_keys_values_are_or_and_keys_and_operators_are_and() {
        let either = r#"{"StringEquals":{"s3:x-amz-acl":["private","bucket-owner-full-control"]}}"#;
        assert!(holds(either, Some(&["private"])));
        assert!(holds(either, Some(&["bucket-owner-full-control"])));
        assert!(!holds(either, Some(&["public-read"])));
        let both = r#"{"StringEquals":{"s3:prefix":"a","s3:delimiter":"a"},
            "StringLike":{"s3:x-amz-acl":"a*"}}"#;
        assert!(holds(both, Some(&["a"])));
        let parsed = conditions(both).unwrap();
        let lookup = |key: &Key| match key {
            Key::Query("prefix") => Lookup::Values(vec![Cow::Borrowed("a")]),
            _ => Lookup::Values(vec![Cow::Borrowed("b")]),
        };
        assert_eq!(all_hold(&parsed, lookup), Some(false));
    }

    #[test]
    fn an_absent_key_fails_positive_operators_and_passes_negated_ones() {
        assert!(!holds(r#"{"StringEquals":{"aws:Referer":"x"}}"#, None));
        assert!(holds(r#"{"StringNotEquals":{"aws:Referer":"x"}}"#, None));
        assert!(holds(
            r#"{"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}}"#,
            None
        ));
        assert!(!holds(r#"{"NumericLessThan":{"s3:max-keys":"10"}}"#, None));
        assert!(holds(
            r#"{"StringEqualsIfExists":{"aws:Referer":"x"}}"#,
            None
        ));
        assert!(holds(
            r#"{"StringNotEqualsIfExists":{"aws:Referer":"x"}}"#,
            None
        ));
        assert!(!holds(
            r#"{"StringEqualsIfExists":{"aws:Referer":"x"}}"#,
            Some(&["y"])
        ));
        assert!(holds(
            r#"{"StringEqualsIfExists":{"aws:Referer":"x"}}"#,
            Some(&["x"])
        ));
    }

    #[test]
    fn null_tests_presence() {
        let absent = r#"{"Null":{"s3:x-amz-server-side-encryption":"true"}}"#;
        assert!(holds(absent, None));
        assert!(!holds(absent, Some(&["AES256"])));
        let present = r#"{"Null":{"s3:x-amz-server-side-encryption":false}}"#;
        assert!(holds(present, Some(&["AES256"])));
        assert!(!holds(present, None));
    }

    #[test]
    fn set_prefixes_treat_the_values_as_a_set() {
        let all = r#"{"ForAllValues:StringEquals":{"s3:RequestObjectTagKeys":["a","b"]}}"#;
        assert!(holds(all, Some(&["a", "b"])));
        assert!(!holds(all, Some(&["a", "c"])));
        assert!(holds(all, None), "no values: all of none match");
        assert!(holds(all, Some(&[])));
        let any = r#"{"ForAnyValue:StringEquals":{"s3:RequestObjectTagKeys":["a","b"]}}"#;
        assert!(holds(any, Some(&["c", "b"])));
        assert!(!holds(any, Some(&["c"])));
        assert!(!holds(any, None));
        let any_not = r#"{"ForAnyValue:StringNotEquals":{"s3:RequestObjectTagKeys":"a"}}"#;
        assert!(holds(any_not, Some(&["a", "b"])));
        assert!(!holds(any_not, Some(&["a"])));
        assert!(!holds(any_not, None));
        let all_not = r#"{"ForAllValues:StringNotLike":{"s3:RequestObjectTagKeys":"secret*"}}"#;
        assert!(holds(all_not, Some(&["a", "b"])));
        assert!(!holds(all_not, Some(&["a", "secret-x"])));
        let plain_not = r#"{"StringNotEquals":{"s3:RequestObjectTagKeys":"a"}}"#;
        assert!(!holds(plain_not, Some(&["b", "a"])), "none may match");
    }

    #[test]
    fn values_may_be_numbers_and_booleans() {
        assert!(holds(
            r#"{"NumericLessThanEquals":{"s3:max-keys":10}}"#,
            Some(&["7"])
        ));
        assert!(holds(
            r#"{"Bool":{"aws:SecureTransport":false}}"#,
            Some(&["false"])
        ));
        assert!(holds(
            r#"{"StringEquals":{"s3:max-keys":[10, "20"]}}"#,
            Some(&["20"])
        ));
    }

    #[test]
    fn an_unknown_value_is_not_a_verdict_unless_another_is_false() {
        let parsed =
            conditions(r#"{"StringEquals":{"s3:RequestObjectTag/a":"x","aws:Referer":"r"}}"#)
                .unwrap();
        let referer = |value: &'static str| {
            move |key: &Key| match key {
                Key::Referer => Lookup::Values(vec![Cow::Borrowed(value)]),
                _ => Lookup::Unknown,
            }
        };
        assert_eq!(all_hold(&parsed, referer("r")), None);
        assert_eq!(all_hold(&parsed, referer("other")), Some(false));
    }

    #[test]
    fn what_is_not_understood_is_refused_naming_it() {
        for (bad, named) in [
            (r#"{"StringEquals":{"aws:SourceVpc":"v"}}"#, "aws:SourceVpc"),
            (r#"{"StringSortOf":{"aws:Referer":"v"}}"#, "StringSortOf"),
            (
                r#"{"ForSomeValues:StringEquals":{"aws:Referer":"v"}}"#,
                "ForSomeValues",
            ),
            (r#"{"NullIfExists":{"aws:Referer":true}}"#, "NullIfExists"),
            (r#"{"NumericEquals":{"s3:max-keys":"ten"}}"#, "ten"),
            (r#"{"DateLessThan":{"aws:CurrentTime":"soon"}}"#, "soon"),
            (
                r#"{"IpAddress":{"aws:SourceIp":"10.0.0.0/40"}}"#,
                "10.0.0.0/40",
            ),
            (r#"{"Bool":{"aws:SecureTransport":"yes"}}"#, "yes"),
            (r#"{"StringEquals":{"aws:Referer":[]}}"#, "aws:Referer"),
            (r#"{"StringEquals":{"aws:Referer":null}}"#, "aws:Referer"),
            (r#"{"StringEquals":{}}"#, "StringEquals"),
            (
                r#"{"StringEquals":{"aws:username":"${aws:username}"}}"#,
                "${aws:username}",
            ),
        ] {
            let err = conditions(bad).unwrap_err();
            assert_eq!(err.code, "MalformedPolicy", "{bad}");
            assert!(err.message.contains(named), "{bad}: {}", err.message);
        }
        let literal = serde_json::json!({"StringEquals": {"aws:username": "${x}"}});
        assert!(
            parse(&literal, false).is_ok(),
            "2008-10-17 has no variables"
        );
    }

    #[test]
    fn only_fixed_positive_tests_of_identifying_keys_narrow_public_access() {
        let narrows = |json: &str| conditions(json).unwrap()[0].narrows_public_access();
        assert!(narrows(
            r#"{"IpAddress":{"aws:SourceIp":["192.0.2.0/24","2001:db8::/32"]}}"#
        ));
        assert!(!narrows(r#"{"IpAddress":{"aws:SourceIp":"0.0.0.0/0"}}"#));
        assert!(!narrows(
            r#"{"NotIpAddress":{"aws:SourceIp":"192.0.2.0/24"}}"#
        ));
        assert!(!narrows(
            r#"{"IpAddressIfExists":{"aws:SourceIp":"192.0.2.0/24"}}"#
        ));
        assert!(narrows(r#"{"StringEquals":{"aws:userid":"ALTKEY"}}"#));
        assert!(!narrows(r#"{"StringLike":{"aws:userid":"ALT*"}}"#));
        assert!(!narrows(r#"{"StringEquals":{"aws:Referer":"https://x"}}"#));
        assert!(!narrows(r#"{"StringEquals":{"aws:userid":"anonymous"}}"#));
    }
}
