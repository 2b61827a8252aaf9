//! A bucket's lifecycle configuration: the `LifecycleConfiguration` XML,
//! checked as AWS checks it, and the rules it makes, which say what an
//! object or upload matches and when it is due.
//!
//! What is stored is the document re-rendered from what was parsed (IDs
//! filled in where the client left them out), so GetBucketLifecycle
//! answers in one canonical form and the worker reads exactly what was
//! accepted.

use std::collections::HashSet;
use std::time::{Duration, SystemTime};

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use time::format_description::well_known::Rfc3339;
use time::{Date, OffsetDateTime, Time};

use crate::error::{S3Error, S3Result};
use crate::xml::{self, S3_NAMESPACE, Tag};

/// AWS's limit on rules per bucket.
pub const MAX_RULES: usize = 1000;
const MAX_ID_CHARS: usize = 255;
/// AWS's bound on `NewerNoncurrentVersions`.
const MAX_NEWER_NONCURRENT_VERSIONS: i64 = 100;

/// One rule, as the worker applies it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub id: String,
    pub enabled: bool,
    pub filter: Filter,
    pub expiration: Option<Expiration>,
    /// Abort multipart uploads this many days after they started.
    pub abort_incomplete_after_days: Option<u32>,
    pub noncurrent_expiration: Option<NoncurrentExpiration>,
}

/// Which objects a rule applies to: every condition must hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    pub prefix: String,
    pub tags: Vec<(String, String)>,
    pub size_greater_than: Option<u64>,
    pub size_less_than: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expiration {
    /// Days after the object was written, rounded up to the next midnight.
    Days(u32),
    /// From this midnight (UTC) on.
    Date(SystemTime),
    /// Remove a delete marker that has no versions left behind it.
    ExpiredObjectDeleteMarker,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoncurrentExpiration {
    /// Days after a version stopped being the current one.
    pub days: u32,
    /// How many of the newest noncurrent versions are kept whatever their age.
    pub newer_versions_kept: Option<u32>,
}

/// An accepted configuration: its rules and its canonical document.
#[derive(Debug)]
pub struct Configuration {
    pub rules: Vec<Rule>,
    pub document: String,
}

impl Filter {
    /// Whether an object with this key and size matches everything but the
    /// tags (which a listing does not show).
    pub fn matches_listing(&self, key: &str, size: u64) -> bool {
        key.starts_with(&self.prefix)
            && self.size_greater_than.is_none_or(|min| size > min)
            && self.size_less_than.is_none_or(|max| size < max)
    }

    /// Whether an object's tag set holds every tag of the filter.
    pub fn matches_tags(&self, tags: &[(String, String)]) -> bool {
        self.tags.iter().all(|wanted| tags.contains(wanted))
    }
}

impl Rule {
    /// When an object written at `written` is due to expire under this
    /// rule, if the rule expires current objects at all. `day` is the
    /// length of a lifecycle day (a real day except in tests).
    pub fn expiry_of(&self, written: SystemTime, day: Duration) -> Option<SystemTime> {
        match self.expiration? {
            Expiration::Days(days) => Some(after_days(written, days, day)),
            Expiration::Date(date) => Some(date),
            Expiration::ExpiredObjectDeleteMarker => None,
        }
    }
}

/// `days` lifecycle days after `start`, rounded up to the next day
/// boundary (midnight UTC for real days), as AWS counts Days.
pub fn after_days(start: SystemTime, days: u32, day: Duration) -> SystemTime {
    let day_nanos = day.as_nanos().max(1);
    let since_epoch = start
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let due = since_epoch + u128::from(days) * day_nanos;
    let rounded = due.div_ceil(day_nanos) * day_nanos;
    let secs = u64::try_from(rounded / 1_000_000_000).unwrap_or(u64::MAX);
    let nanos = u32::try_from(rounded % 1_000_000_000).unwrap_or(0);
    SystemTime::UNIX_EPOCH + Duration::new(secs, nanos)
}

impl Configuration {
    /// A PutBucketLifecycleConfiguration body, checked.
    pub fn from_request(body: &[u8]) -> S3Result<Self> {
        let mut document: LifecycleConfiguration = xml::from_xml(body)?;
        if document.rules.is_empty() {
            return Err(S3Error::malformed_xml());
        }
        if document.rules.len() > MAX_RULES {
            return Err(S3Error::invalid_request(format!(
                "A lifecycle configuration can have at most {MAX_RULES} rules"
            )));
        }
        let mut ids = HashSet::new();
        let mut rules = Vec::with_capacity(document.rules.len());
        for rule in &mut document.rules {
            let id = rule
                .id
                .get_or_insert_with(|| uuid::Uuid::new_v4().to_string());
            if id.chars().count() > MAX_ID_CHARS {
                return Err(S3Error::invalid_argument(
                    "ID length should not exceed allowed limit of 255",
                ));
            }
            if !ids.insert(id.clone()) {
                return Err(S3Error::invalid_argument(
                    "Rule ID must be unique. Found same ID for more than one rule",
                ));
            }
            rules.push(rule.checked()?);
            // Rendered as accepted: a Date in one format, the rest as sent.
            if let Some(Expiration::Date(date)) = rules.last().and_then(|r| r.expiration)
                && let Some(expiration) = rule.expiration.as_mut()
            {
                expiration.date = Some(xml::iso8601(date));
            }
        }
        document.xmlns = S3_NAMESPACE;
        let document = xml::to_xml("LifecycleConfiguration", &document)?;
        Ok(Self { rules, document })
    }

    /// A stored document (one [`Configuration::from_request`] accepted).
    pub fn from_stored(document: &[u8]) -> S3Result<Self> {
        Self::from_request(document)
    }
}

// ---- The XML, element for element ----

#[derive(Debug, Serialize, Deserialize)]
struct LifecycleConfiguration {
    #[serde(rename = "@xmlns", skip_deserializing)]
    xmlns: &'static str,
    #[serde(rename = "Rule", default)]
    rules: Vec<RuleXml>,
}

#[derive(Debug, Serialize, Deserialize)]
struct RuleXml {
    #[serde(rename = "ID", skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    #[serde(rename = "Filter", skip_serializing_if = "Option::is_none")]
    filter: Option<FilterXml>,
    /// The filter of the first API version, before `Filter`.
    #[serde(rename = "Prefix", skip_serializing_if = "Option::is_none")]
    prefix: Option<String>,
    #[serde(rename = "Status")]
    status: String,
    /// Read only to be checked, then refused: there is one storage class.
    #[serde(rename = "Transition", default, skip_serializing)]
    transitions: Vec<TransitionXml>,
    #[serde(rename = "NoncurrentVersionTransition", default, skip_serializing)]
    noncurrent_transitions: Vec<IgnoredAny>,
    #[serde(rename = "Expiration", skip_serializing_if = "Option::is_none")]
    expiration: Option<ExpirationXml>,
    #[serde(
        rename = "NoncurrentVersionExpiration",
        skip_serializing_if = "Option::is_none"
    )]
    noncurrent_expiration: Option<NoncurrentExpirationXml>,
    #[serde(
        rename = "AbortIncompleteMultipartUpload",
        skip_serializing_if = "Option::is_none"
    )]
    abort_incomplete: Option<AbortIncompleteXml>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct FilterXml {
    #[serde(rename = "Prefix", skip_serializing_if = "Option::is_none")]
    prefix: Option<String>,
    #[serde(rename = "Tag", skip_serializing_if = "Option::is_none")]
    tag: Option<Tag>,
    #[serde(rename = "And", skip_serializing_if = "Option::is_none")]
    and: Option<AndXml>,
    #[serde(
        rename = "ObjectSizeGreaterThan",
        skip_serializing_if = "Option::is_none"
    )]
    size_greater_than: Option<i64>,
    #[serde(rename = "ObjectSizeLessThan", skip_serializing_if = "Option::is_none")]
    size_less_than: Option<i64>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct AndXml {
    #[serde(rename = "Prefix", skip_serializing_if = "Option::is_none")]
    prefix: Option<String>,
    #[serde(rename = "Tag", default)]
    tags: Vec<Tag>,
    #[serde(
        rename = "ObjectSizeGreaterThan",
        skip_serializing_if = "Option::is_none"
    )]
    size_greater_than: Option<i64>,
    #[serde(rename = "ObjectSizeLessThan", skip_serializing_if = "Option::is_none")]
    size_less_than: Option<i64>,
}

#[derive(Debug, Serialize, Deserialize)]
struct ExpirationXml {
    #[serde(rename = "Date", skip_serializing_if = "Option::is_none")]
    date: Option<String>,
    #[serde(rename = "Days", skip_serializing_if = "Option::is_none")]
    days: Option<i64>,
    #[serde(
        rename = "ExpiredObjectDeleteMarker",
        skip_serializing_if = "Option::is_none"
    )]
    expired_object_delete_marker: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct TransitionXml {
    #[serde(rename = "Date")]
    date: Option<String>,
    #[serde(rename = "Days")]
    days: Option<i64>,
}

#[derive(Debug, Serialize, Deserialize)]
struct NoncurrentExpirationXml {
    #[serde(rename = "NoncurrentDays")]
    noncurrent_days: i64,
    #[serde(
        rename = "NewerNoncurrentVersions",
        skip_serializing_if = "Option::is_none"
    )]
    newer_noncurrent_versions: Option<i64>,
}

#[derive(Debug, Serialize, Deserialize)]
struct AbortIncompleteXml {
    #[serde(rename = "DaysAfterInitiation")]
    days_after_initiation: i64,
}

impl RuleXml {
    fn checked(&self) -> S3Result<Rule> {
        let enabled = match self.status.as_str() {
            "Enabled" => true,
            "Disabled" => false,
            _ => return Err(S3Error::malformed_xml()),
        };
        // A malformed transition is the client's mistake before it is our gap.
        for transition in &self.transitions {
            if let Some(date) = &transition.date {
                midnight(date)?;
            }
            if transition.days.is_some_and(|days| days < 0) {
                return Err(S3Error::invalid_argument(
                    "'Days' for Transition action must be a nonnegative integer",
                ));
            }
        }
        if !self.transitions.is_empty() || !self.noncurrent_transitions.is_empty() {
            return Err(S3Error::not_implemented(
                "A lifecycle rule with a transition (this gateway has one storage class)",
            ));
        }
        let filter = match (&self.filter, &self.prefix) {
            (Some(filter), None) => filter.checked()?,
            (None, Some(prefix)) => Filter {
                prefix: prefix.clone(),
                ..Filter::default()
            },
            _ => return Err(S3Error::malformed_xml()),
        };
        let expiration = self.expiration.as_ref().map(|e| e.checked()).transpose()?;
        let abort_incomplete_after_days = self
            .abort_incomplete
            .as_ref()
            .map(|a| {
                positive_days(
                    a.days_after_initiation,
                    "'DaysAfterInitiation' for AbortIncompleteMultipartUpload action",
                )
            })
            .transpose()?;
        let noncurrent_expiration = self
            .noncurrent_expiration
            .as_ref()
            .map(NoncurrentExpirationXml::checked)
            .transpose()?;
        if expiration.is_none()
            && abort_incomplete_after_days.is_none()
            && noncurrent_expiration.is_none()
        {
            return Err(S3Error::invalid_request(
                "At least one action needs to be specified in a rule",
            ));
        }
        let narrows_beyond_prefix = !filter.tags.is_empty()
            || filter.size_greater_than.is_some()
            || filter.size_less_than.is_some();
        if abort_incomplete_after_days.is_some() && narrows_beyond_prefix {
            return Err(S3Error::invalid_request(
                "AbortIncompleteMultipartUpload cannot be specified with Tags or object size filters",
            ));
        }
        if expiration == Some(Expiration::ExpiredObjectDeleteMarker) && !filter.tags.is_empty() {
            return Err(S3Error::invalid_request(
                "ExpiredObjectDeleteMarker cannot be specified with Tags",
            ));
        }
        Ok(Rule {
            id: self.id.clone().unwrap_or_default(),
            enabled,
            filter,
            expiration,
            abort_incomplete_after_days,
            noncurrent_expiration,
        })
    }
}

impl FilterXml {
    /// A filter holds at most one predicate; several are combined in `And`.
    fn checked(&self) -> S3Result<Filter> {
        let predicates = [
            self.prefix.is_some(),
            self.tag.is_some(),
            self.and.is_some(),
            self.size_greater_than.is_some(),
            self.size_less_than.is_some(),
        ];
        if predicates.iter().filter(|given| **given).count() > 1 {
            return Err(S3Error::malformed_xml());
        }
        let (prefix, tags, greater, less) = match &self.and {
            Some(and) => (
                and.prefix.clone(),
                and.tags.iter().collect::<Vec<_>>(),
                and.size_greater_than,
                and.size_less_than,
            ),
            None => (
                self.prefix.clone(),
                self.tag.iter().collect(),
                self.size_greater_than,
                self.size_less_than,
            ),
        };
        let mut keys = HashSet::new();
        for tag in &tags {
            if tag.key.is_empty() {
                return Err(S3Error::invalid_tag(
                    "The TagKey you have provided is invalid",
                ));
            }
            if !keys.insert(tag.key.as_str()) {
                return Err(S3Error::invalid_request(
                    "Duplicate Tag Keys are not allowed.",
                ));
            }
        }
        let size_greater_than = greater.map(size_bound).transpose()?;
        let size_less_than = less.map(size_bound).transpose()?;
        if let (Some(min), Some(max)) = (size_greater_than, size_less_than)
            && min >= max
        {
            return Err(S3Error::invalid_request(
                "ObjectSizeLessThan must be greater than ObjectSizeGreaterThan",
            ));
        }
        Ok(Filter {
            prefix: prefix.unwrap_or_default(),
            tags: tags
                .into_iter()
                .map(|tag| (tag.key.clone(), tag.value.clone()))
                .collect(),
            size_greater_than,
            size_less_than,
        })
    }
}

fn size_bound(bytes: i64) -> S3Result<u64> {
    u64::try_from(bytes)
        .map_err(|_| S3Error::invalid_argument("Object size filters must not be negative"))
}

impl ExpirationXml {
    fn checked(&self) -> S3Result<Expiration> {
        match (&self.date, self.days, self.expired_object_delete_marker) {
            (Some(date), None, None) => Ok(Expiration::Date(midnight(date)?)),
            (None, Some(days), None) => Ok(Expiration::Days(positive_days(
                days,
                "'Days' for Expiration action",
            )?)),
            (None, None, Some(true)) => Ok(Expiration::ExpiredObjectDeleteMarker),
            (None, None, Some(false)) => Err(S3Error::invalid_request(
                "ExpiredObjectDeleteMarker false is no action: leave the Expiration out",
            )),
            (None, None, None) => Err(S3Error::malformed_xml()),
            _ if self.expired_object_delete_marker.is_some() => Err(S3Error::invalid_request(
                "ExpiredObjectDeleteMarker cannot be specified with Days or Date in a Lifecycle Expiration Policy",
            )),
            _ => Err(S3Error::malformed_xml()),
        }
    }
}

impl NoncurrentExpirationXml {
    fn checked(&self) -> S3Result<NoncurrentExpiration> {
        let days = positive_days(
            self.noncurrent_days,
            "'NoncurrentDays' for NoncurrentVersionExpiration action",
        )?;
        let newer_versions_kept = match self.newer_noncurrent_versions {
            None => None,
            Some(n @ 1..=MAX_NEWER_NONCURRENT_VERSIONS) => u32::try_from(n).ok(),
            Some(_) => {
                return Err(S3Error::invalid_argument(format!(
                    "'NewerNoncurrentVersions' must be between 1 and {MAX_NEWER_NONCURRENT_VERSIONS}"
                )));
            }
        };
        Ok(NoncurrentExpiration {
            days,
            newer_versions_kept,
        })
    }
}

fn positive_days(days: i64, what: &str) -> S3Result<u32> {
    u32::try_from(days)
        .ok()
        .filter(|days| *days > 0)
        .ok_or_else(|| S3Error::invalid_argument(format!("{what} must be a positive integer")))
}

/// An ISO 8601 date (`2030-01-01`) or date-time that must be midnight UTC.
fn midnight(text: &str) -> S3Result<SystemTime> {
    let invalid = || S3Error::invalid_argument("Invalid date: expected ISO 8601, at midnight UTC");
    let at = match OffsetDateTime::parse(text, &Rfc3339) {
        Ok(at) => at,
        Err(_) => {
            let format = time::macros::format_description!("[year]-[month]-[day]");
            Date::parse(text, format)
                .map_err(|_| invalid())?
                .with_time(Time::MIDNIGHT)
                .assume_utc()
        }
    };
    let at = at.to_offset(time::UtcOffset::UTC);
    if at.time() != Time::MIDNIGHT {
        return Err(S3Error::invalid_argument("'Date' must be at midnight GMT"));
    }
    Ok(at.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(rules: &str) -> S3Result<Configuration> {
        let body = format!(
            r#"<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">{rules}</LifecycleConfiguration>"#
        );
        Configuration::from_request(body.as_bytes())
    }

    fn code(rules: &str) -> &'static str {
        parse(rules).expect_err("refused").code
    }

    const DAY: Duration = Duration::from_secs(86_400);

    #[test]
    fn a_prefix_filter_with_days_and_abort() {
        let config = parse(
            "<Rule><ID>logs</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status>\
             <Expiration><Days>30</Days></Expiration>\
             <AbortIncompleteMultipartUpload><DaysAfterInitiation>7</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>",
        )
        .expect("accepted");
        assert_eq!(
            config.rules,
            vec![Rule {
                id: "logs".into(),
                enabled: true,
                filter: Filter {
                    prefix: "logs/".into(),
                    ..Filter::default()
                },
                expiration: Some(Expiration::Days(30)),
                abort_incomplete_after_days: Some(7),
                noncurrent_expiration: None,
            }]
        );
        let again = Configuration::from_stored(config.document.as_bytes()).expect("stored");
        assert_eq!(again.rules, config.rules);
        assert_eq!(again.document, config.document);
    }

    #[test]
    fn the_legacy_prefix_and_an_empty_filter_match_everything() {
        for rule in [
            "<Rule><Prefix></Prefix><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>",
            "<Rule><Prefix/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>",
            "<Rule><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>",
            "<Rule><Filter></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>",
        ] {
            let config = parse(rule).unwrap_or_else(|e| panic!("{rule}: {e:?}"));
            assert_eq!(config.rules[0].filter, Filter::default(), "{rule}");
            assert!(!config.rules[0].id.is_empty(), "an ID is made up");
            let again = Configuration::from_stored(config.document.as_bytes()).expect("stored");
            assert_eq!(again.rules, config.rules, "{}", config.document);
        }
    }

    #[test]
    fn an_and_filter_combines_prefix_tags_and_sizes() {
        let config = parse(
            "<Rule><ID>r</ID><Filter><And><Prefix>a/</Prefix><Tag><Key>k</Key><Value>v</Value></Tag>\
             <Tag><Key>x</Key><Value></Value></Tag><ObjectSizeGreaterThan>10</ObjectSizeGreaterThan>\
             <ObjectSizeLessThan>100</ObjectSizeLessThan></And></Filter><Status>Disabled</Status>\
             <Expiration><Days>2</Days></Expiration></Rule>",
        )
        .expect("accepted");
        let rule = &config.rules[0];
        assert!(!rule.enabled);
        let filter = &rule.filter;
        assert!(filter.matches_listing("a/b", 50));
        assert!(!filter.matches_listing("b/a", 50));
        assert!(!filter.matches_listing("a/b", 10));
        assert!(!filter.matches_listing("a/b", 100));
        let tags = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        assert!(filter.matches_tags(&tags(&[("x", ""), ("k", "v"), ("other", "1")])));
        assert!(!filter.matches_tags(&tags(&[("k", "v")])));
        assert!(!filter.matches_tags(&tags(&[("k", "w"), ("x", "")])));
        let again = Configuration::from_stored(config.document.as_bytes()).expect("stored");
        assert_eq!(again.rules, config.rules, "{}", config.document);
    }

    #[test]
    fn a_single_tag_filter() {
        let config = parse(
            "<Rule><ID>t</ID><Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter>\
             <Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>",
        )
        .expect("accepted");
        assert_eq!(
            config.rules[0].filter.tags,
            vec![("k".to_owned(), "v".to_owned())]
        );
    }

    #[test]
    fn dates_must_be_midnight_utc_and_are_rendered_in_one_format() {
        let config = parse(
            "<Rule><ID>d</ID><Prefix></Prefix><Status>Enabled</Status>\
             <Expiration><Date>2030-01-01T00:00:00Z</Date></Expiration></Rule>",
        )
        .expect("accepted");
        let expected = SystemTime::UNIX_EPOCH + Duration::from_secs(1_893_456_000);
        assert_eq!(config.rules[0].expiration, Some(Expiration::Date(expected)));
        assert!(
            config
                .document
                .contains("<Date>2030-01-01T00:00:00.000Z</Date>"),
            "{}",
            config.document
        );
        assert!(parse("<Rule><ID>d</ID><Prefix/><Status>Enabled</Status><Expiration><Date>2030-01-01</Date></Expiration></Rule>").is_ok());
        assert!(parse("<Rule><ID>d</ID><Prefix/><Status>Enabled</Status><Expiration><Date>2030-01-01T01:00:00+01:00</Date></Expiration></Rule>").is_ok());
        for date in ["20200101", "2030-01-01T12:00:00Z", "soon"] {
            let rule = format!(
                "<Rule><ID>d</ID><Prefix/><Status>Enabled</Status><Expiration><Date>{date}</Date></Expiration></Rule>"
            );
            assert_eq!(code(&rule), "InvalidArgument", "{date}");
        }
    }

    #[test]
    fn refusals_name_what_aws_names() {
        let cases = [
            // Status is Enabled or Disabled.
            (
                "<Rule><ID>a</ID><Prefix/><Status>On</Status><Expiration><Days>1</Days></Expiration></Rule>",
                "MalformedXML",
            ),
            (
                "<Rule><ID>a</ID><Prefix/><Expiration><Days>1</Days></Expiration></Rule>",
                "MalformedXML",
            ),
            // Days are positive.
            (
                "<Rule><ID>a</ID><Prefix/><Status>Enabled</Status><Expiration><Days>0</Days></Expiration></Rule>",
                "InvalidArgument",
            ),
            (
                "<Rule><ID>a</ID><Prefix/><Status>Enabled</Status><Expiration><Days>-3</Days></Expiration></Rule>",
                "InvalidArgument",
            ),
            (
                "<Rule><ID>a</ID><Prefix/><Status>Enabled</Status><Expiration><Days>x</Days></Expiration></Rule>",
                "MalformedXML",
            ),
            (
                "<Rule><ID>a</ID><Prefix/><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>0</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>",
                "InvalidArgument",
            ),
            (
                "<Rule><ID>a</ID><Prefix/><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>0</NoncurrentDays></NoncurrentVersionExpiration></Rule>",
                "InvalidArgument",
            ),
            (
                "<Rule><ID>a</ID><Prefix/><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays><NewerNoncurrentVersions>101</NewerNoncurrentVersions></NoncurrentVersionExpiration></Rule>",
                "InvalidArgument",
            ),
            // One of Days, Date, ExpiredObjectDeleteMarker.
            (
                "<Rule><ID>a</ID><Prefix/><Status>Enabled</Status><Expiration><Days>1</Days><Date>2030-01-01T00:00:00Z</Date></Expiration></Rule>",
                "MalformedXML",
            ),
            (
                "<Rule><ID>a</ID><Prefix/><Status>Enabled</Status><Expiration><Days>1</Days><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration></Rule>",
                "InvalidRequest",
            ),
            (
                "<Rule><ID>a</ID><Prefix/><Status>Enabled</Status><Expiration></Expiration></Rule>",
                "MalformedXML",
            ),
            // An action is needed.
            (
                "<Rule><ID>a</ID><Prefix/><Status>Enabled</Status></Rule>",
                "InvalidRequest",
            ),
            // Filter or Prefix, not both, not neither; one predicate per Filter.
            (
                "<Rule><ID>a</ID><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>",
                "MalformedXML",
            ),
            (
                "<Rule><ID>a</ID><Prefix/><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>",
                "MalformedXML",
            ),
            (
                "<Rule><ID>a</ID><Filter><Prefix>a</Prefix><Tag><Key>k</Key><Value>v</Value></Tag></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>",
                "MalformedXML",
            ),
            (
                "<Rule><ID>a</ID><Filter><And><Tag><Key>k</Key><Value>v</Value></Tag><Tag><Key>k</Key><Value>w</Value></Tag></And></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>",
                "InvalidRequest",
            ),
            (
                "<Rule><ID>a</ID><Filter><And><ObjectSizeGreaterThan>5</ObjectSizeGreaterThan><ObjectSizeLessThan>5</ObjectSizeLessThan></And></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>",
                "InvalidRequest",
            ),
            // Tags cannot select uploads or delete markers.
            (
                "<Rule><ID>a</ID><Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>",
                "InvalidRequest",
            ),
            (
                "<Rule><ID>a</ID><Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration></Rule>",
                "InvalidRequest",
            ),
            // One storage class: no transitions.
            (
                "<Rule><ID>a</ID><Prefix/><Status>Enabled</Status><Transition><Days>1</Days><StorageClass>GLACIER</StorageClass></Transition></Rule>",
                "NotImplemented",
            ),
            (
                "<Rule><ID>a</ID><Prefix/><Status>Enabled</Status><Transition><Date>20220927</Date><StorageClass>GLACIER</StorageClass></Transition></Rule>",
                "InvalidArgument",
            ),
            (
                "<Rule><ID>a</ID><Prefix/><Status>Enabled</Status><Expiration><Days>9</Days></Expiration><NoncurrentVersionTransition><NoncurrentDays>1</NoncurrentDays><StorageClass>GLACIER</StorageClass></NoncurrentVersionTransition></Rule>",
                "NotImplemented",
            ),
            // No rule at all.
            ("", "MalformedXML"),
        ];
        for (rules, expected) in cases {
            assert_eq!(code(rules), expected, "{rules}");
        }
    }

    #[test]
    fn ids_are_unique_and_at_most_255_characters() {
        let rule = |id: &str| {
            format!(
                "<Rule><ID>{id}</ID><Prefix/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>"
            )
        };
        assert_eq!(
            code(&format!("{}{}", rule("a"), rule("a"))),
            "InvalidArgument"
        );
        assert_eq!(code(&rule(&"i".repeat(256))), "InvalidArgument");
        assert!(parse(&rule(&"i".repeat(255))).is_ok());
    }

    #[test]
    fn at_most_1000_rules() {
        let rules = |n: usize| -> String {
            (0..n)
                .map(|i| format!("<Rule><ID>r{i}</ID><Prefix>p{i}/</Prefix><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>"))
                .collect()
        };
        assert_eq!(
            parse(&rules(MAX_RULES)).expect("1000 rules").rules.len(),
            MAX_RULES
        );
        assert_eq!(code(&rules(MAX_RULES + 1)), "InvalidRequest");
    }

    #[test]
    fn days_count_to_the_next_day_boundary() {
        let midnight = SystemTime::UNIX_EPOCH + Duration::from_secs(20_000 * 86_400);
        // Written at 10:00: one day later is 10:00 the next day, rounded up
        // to the midnight after it.
        let written = midnight + Duration::from_secs(10 * 3600);
        assert_eq!(after_days(written, 1, DAY), midnight + 2 * DAY);
        // Written exactly at midnight: due exactly N days later.
        assert_eq!(after_days(midnight, 3, DAY), midnight + 3 * DAY);
        // A test day of one second rounds to whole seconds.
        let second = Duration::from_secs(1);
        let at = SystemTime::UNIX_EPOCH + Duration::from_millis(5_300);
        assert_eq!(
            after_days(at, 2, second),
            SystemTime::UNIX_EPOCH + Duration::from_secs(8)
        );
    }

    #[test]
    fn expiry_follows_the_rule() {
        let rule = |expiration| Rule {
            id: "r".into(),
            enabled: true,
            filter: Filter::default(),
            expiration,
            abort_incomplete_after_days: None,
            noncurrent_expiration: None,
        };
        let written = SystemTime::UNIX_EPOCH;
        let date = SystemTime::UNIX_EPOCH + 5 * DAY;
        assert_eq!(
            rule(Some(Expiration::Days(2))).expiry_of(written, DAY),
            Some(written + 2 * DAY)
        );
        assert_eq!(
            rule(Some(Expiration::Date(date))).expiry_of(written, DAY),
            Some(date)
        );
        assert_eq!(
            rule(Some(Expiration::ExpiredObjectDeleteMarker)).expiry_of(written, DAY),
            None
        );
        assert_eq!(rule(None).expiry_of(written, DAY), None);
    }
}
