//! How one condition value is compared with one value of the request:
//! the comparison an IAM condition operator names, without its negation,
//! `IfExists` suffix or set prefix (those are [`super::condition`]'s).
//! A policy's values are parsed when the policy is, so a number, date,
//! boolean or address block that is not one is refused there.

use std::net::IpAddr;

use time::format_description::well_known::{Iso8601, Rfc3339};
use time::macros::format_description;
use time::{Date, OffsetDateTime};

use super::glob;
use crate::client_address::Network;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparison {
    StringEquals,
    StringEqualsIgnoreCase,
    StringLike,
    Numeric(Order),
    Date(Order),
    Bool,
    IpAddress,
    /// ArnEquals and ArnLike, which IAM evaluates alike: each of an ARN's
    /// six `:`-separated parts matched on its own, with wildcards.
    Arn,
    Null,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    Equals,
    LessThan,
    LessThanEquals,
    GreaterThan,
    GreaterThanEquals,
}

/// A policy's value, parsed for its comparison.
#[derive(Clone, Debug, PartialEq)]
pub enum Expected {
    Text(String),
    Number(f64),
    /// Unix time in nanoseconds.
    Date(i128),
    Bool(bool),
    Network(Network),
}

impl Comparison {
    /// The comparison an operator name (its `IfExists` suffix and set
    /// prefix removed) asks for, and whether it is negated.
    pub fn parse(name: &str) -> Option<(Self, bool)> {
        let order = |rest: &str| match rest {
            "Equals" => Some((Order::Equals, false)),
            "NotEquals" => Some((Order::Equals, true)),
            "LessThan" => Some((Order::LessThan, false)),
            "LessThanEquals" => Some((Order::LessThanEquals, false)),
            "GreaterThan" => Some((Order::GreaterThan, false)),
            "GreaterThanEquals" => Some((Order::GreaterThanEquals, false)),
            _ => None,
        };
        if let Some(rest) = name.strip_prefix("Numeric") {
            return order(rest).map(|(o, negated)| (Self::Numeric(o), negated));
        }
        if let Some(rest) = name.strip_prefix("Date") {
            return order(rest).map(|(o, negated)| (Self::Date(o), negated));
        }
        Some(match name {
            "StringEquals" => (Self::StringEquals, false),
            "StringNotEquals" => (Self::StringEquals, true),
            "StringEqualsIgnoreCase" => (Self::StringEqualsIgnoreCase, false),
            "StringNotEqualsIgnoreCase" => (Self::StringEqualsIgnoreCase, true),
            "StringLike" => (Self::StringLike, false),
            "StringNotLike" => (Self::StringLike, true),
            "Bool" => (Self::Bool, false),
            "IpAddress" => (Self::IpAddress, false),
            "NotIpAddress" => (Self::IpAddress, true),
            "ArnEquals" | "ArnLike" => (Self::Arn, false),
            "ArnNotEquals" | "ArnNotLike" => (Self::Arn, true),
            "Null" => (Self::Null, false),
            _ => return None,
        })
    }

    /// A policy value for this comparison, or `None` if it is not one.
    pub fn expected(self, text: &str) -> Option<Expected> {
        Some(match self {
            Self::StringEquals | Self::StringEqualsIgnoreCase | Self::StringLike | Self::Arn => {
                Expected::Text(text.to_owned())
            }
            Self::Numeric(_) => Expected::Number(number(text)?),
            Self::Date(_) => Expected::Date(date(text)?),
            Self::Bool | Self::Null => Expected::Bool(boolean(text)?),
            Self::IpAddress => Expected::Network(Network::parse(text).ok()?),
        })
    }

    /// Whether the request's value `actual` matches `expected` (a value
    /// of the wrong form, a number that is not one, matches nothing).
    /// Null is decided on the key's presence, not here.
    pub fn matches(self, expected: &Expected, actual: &str) -> bool {
        match (self, expected) {
            (Self::StringEquals, Expected::Text(text)) => actual == text,
            (Self::StringEqualsIgnoreCase, Expected::Text(text)) => {
                actual.to_lowercase() == text.to_lowercase()
            }
            (Self::StringLike, Expected::Text(pattern)) => glob(pattern, actual),
            (Self::Arn, Expected::Text(pattern)) => arn_like(pattern, actual),
            (Self::Numeric(order), Expected::Number(n)) => {
                number(actual).is_some_and(|a| order.holds(a.partial_cmp(n)))
            }
            (Self::Date(order), Expected::Date(d)) => {
                date(actual).is_some_and(|a| order.holds(Some(a.cmp(d))))
            }
            (Self::Bool, Expected::Bool(b)) => boolean(actual) == Some(*b),
            (Self::IpAddress, Expected::Network(network)) => actual
                .parse::<IpAddr>()
                .is_ok_and(|address| network.contains(address.to_canonical())),
            _ => false,
        }
    }
}

impl Order {
    fn holds(self, ordering: Option<std::cmp::Ordering>) -> bool {
        use std::cmp::Ordering::{Equal, Greater, Less};
        match (self, ordering) {
            (_, None) => false,
            (Self::Equals, Some(o)) => o == Equal,
            (Self::LessThan, Some(o)) => o == Less,
            (Self::LessThanEquals, Some(o)) => o != Greater,
            (Self::GreaterThan, Some(o)) => o == Greater,
            (Self::GreaterThanEquals, Some(o)) => o != Less,
        }
    }
}

fn number(text: &str) -> Option<f64> {
    // Rust also reads `inf` and `NaN`, which IAM does not.
    let plausible = text
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'));
    text.parse::<f64>()
        .ok()
        .filter(|n| plausible && n.is_finite())
}

/// IAM's dates: epoch seconds, or ISO 8601 (a date and time with a zone,
/// with or without fractions and separators, or a day alone, taken as
/// its midnight UTC).
fn date(text: &str) -> Option<i128> {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        let seconds: i64 = text.parse().ok()?;
        return Some(i128::from(seconds) * 1_000_000_000);
    }
    let at = OffsetDateTime::parse(text, &Rfc3339)
        .or_else(|_| OffsetDateTime::parse(text, &Iso8601::DEFAULT))
        .ok()
        .or_else(|| {
            let day = Date::parse(text, format_description!("[year]-[month]-[day]")).ok()?;
            Some(day.midnight().assume_utc())
        })?;
    Some(at.unix_timestamp_nanos())
}

fn boolean(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// ArnLike: the six parts of `arn` each match the pattern's part.
fn arn_like(pattern: &str, arn: &str) -> bool {
    let (pattern, arn): (Vec<&str>, Vec<&str>) = (
        pattern.splitn(6, ':').collect(),
        arn.splitn(6, ':').collect(),
    );
    pattern.len() == 6 && arn.len() == 6 && pattern.iter().zip(&arn).all(|(p, a)| glob(p, a))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(operator: &str, expected: &str, actual: &str) -> bool {
        let (comparison, negated) = Comparison::parse(operator).unwrap();
        let expected = comparison.expected(expected).unwrap();
        comparison.matches(&expected, actual) != negated
    }

    #[test]
    fn strings_are_case_sensitive_unless_asked_not_to_be() {
        assert!(check("StringEquals", "public-read", "public-read"));
        assert!(!check("StringEquals", "Public-Read", "public-read"));
        assert!(check(
            "StringEqualsIgnoreCase",
            "Public-Read",
            "public-read"
        ));
        assert!(check("StringNotEqualsIgnoreCase", "a", "B"));
        assert!(check("StringLike", "home/*/?x", "home/a/b/cx"));
        assert!(!check("StringLike", "home/?x", "home/x"));
        assert!(check("StringNotLike", "home/*", "other/x"));
    }

    #[test]
    fn numbers_compare_as_numbers() {
        assert!(check("NumericLessThanEquals", "10", "10"));
        assert!(check("NumericLessThanEquals", "10", "9.5"));
        assert!(!check("NumericLessThan", "10", "10"));
        assert!(check("NumericGreaterThan", "1.2", "1.3"));
        assert!(check("NumericGreaterThanEquals", "1.2", "1.2"));
        assert!(check("NumericEquals", "100", "0100"));
        assert!(check("NumericNotEquals", "100", "99"));
        assert!(!check("NumericLessThan", "10", "NaN"));
        assert!(!check("NumericLessThan", "10", "seven"));
        assert_eq!(
            Comparison::Numeric(Order::Equals).expected("inf"),
            None,
            "not a number IAM reads"
        );
    }

    #[test]
    fn dates_read_iso_8601_and_epoch_seconds() {
        let at = "2020-01-01T00:00:00Z";
        assert!(check("DateEquals", at, "1577836800"));
        assert!(check(
            "DateEquals",
            "1577836800",
            "2020-01-01T01:00:00+01:00"
        ));
        assert!(check("DateEquals", "2020-01-01", at));
        assert!(check("DateGreaterThan", at, "2020-01-01T00:00:00.001Z"));
        assert!(check("DateLessThanEquals", "20200101T000000Z", at));
        assert!(check("DateLessThan", at, "2019-12-31T23:59:59Z"));
        assert!(check("DateGreaterThanEquals", at, at));
        assert!(check("DateNotEquals", at, "2021-01-01T00:00:00Z"));
        assert!(!check("DateLessThan", at, "yesterday"));
        assert_eq!(Comparison::Date(Order::Equals).expected("soon"), None);
    }

    #[test]
    fn booleans_addresses_and_arns() {
        assert!(check("Bool", "true", "true"));
        assert!(check("Bool", "TRUE", "true"));
        assert!(!check("Bool", "true", "false"));
        assert_eq!(Comparison::Bool.expected("yes"), None);
        assert!(check("IpAddress", "192.0.2.0/24", "192.0.2.77"));
        assert!(!check("IpAddress", "192.0.2.0/24", "192.0.3.1"));
        assert!(check("IpAddress", "192.0.2.7", "192.0.2.7"));
        assert!(check("IpAddress", "2001:db8::/32", "2001:db8:1::9"));
        assert!(!check("IpAddress", "2001:db8::/32", "2001:db9::9"));
        assert!(!check("IpAddress", "192.0.2.0/24", "2001:db8::1"));
        assert!(check("IpAddress", "192.0.2.0/24", "::ffff:192.0.2.1"));
        assert!(check("NotIpAddress", "192.0.2.0/24", "198.51.100.1"));
        assert_eq!(Comparison::IpAddress.expected("192.0.2.0/33"), None);
        let arn = "arn:aws:iam::123456789012:user/ALTKEY";
        assert!(check("ArnEquals", arn, arn));
        assert!(check("ArnLike", "arn:aws:iam::*:user/ALT*", arn));
        assert!(
            !check("ArnLike", "arn:aws:*", arn),
            "a wildcard stays within its part"
        );
        assert!(check("ArnNotLike", "arn:aws:iam::*:user/OTHER", arn));
        assert!(!check("ArnLike", "*", arn));
    }

    #[test]
    fn unknown_operators_are_none() {
        for name in ["StringEqualsIfExists", "NumericNotLessThan", "Nope", "null"] {
            assert_eq!(Comparison::parse(name), None, "{name}");
        }
    }
}
