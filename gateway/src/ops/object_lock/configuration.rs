//! A bucket's object lock configuration: whether lock is enabled and the
//! default retention new versions get, as PutObjectLockConfiguration
//! sends it and GetObjectLockConfiguration answers it. Stored (bucket
//! document `object-lock`) as the canonical XML [`Configuration::to_xml`]
//! renders, so a bucket's lock is on exactly when the document exists.

use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use storage_client::RetentionMode;
use time::OffsetDateTime;

use crate::error::{S3Error, S3Result};
use crate::xml::{self, S3_NAMESPACE};

/// S3's longest default retention: 100 years (in days, 36 500).
const MAX_YEARS: u32 = 100;
const MAX_DAYS: u32 = MAX_YEARS * 365;

const DAY: Duration = Duration::from_secs(24 * 60 * 60);

/// How long a default retention lasts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Period {
    Days(u32),
    Years(u32),
}

/// The retention a new version gets when its write names none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DefaultRetention {
    pub mode: RetentionMode,
    pub period: Period,
}

impl DefaultRetention {
    /// The retain-until date of a version written at `now`: whole days
    /// later, or the same day of the year whole years later (29 February
    /// becoming 1 March in a year without one).
    pub fn until(&self, now: SystemTime) -> SystemTime {
        match self.period {
            Period::Days(days) => now + DAY * days,
            Period::Years(years) => {
                let at = OffsetDateTime::from(now);
                let year = at.year() + years as i32;
                let later = at
                    .replace_year(year)
                    .or_else(|_| (at + time::Duration::DAY).replace_year(year));
                later.map_or(now + DAY * (365 * years), SystemTime::from)
            }
        }
    }
}

/// An enabled configuration (a bucket without lock has none at all).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Configuration {
    pub default_retention: Option<DefaultRetention>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Document {
    #[serde(rename = "@xmlns", default, skip_deserializing)]
    xmlns: &'static str,
    #[serde(rename = "ObjectLockEnabled", skip_serializing_if = "Option::is_none")]
    enabled: Option<String>,
    #[serde(rename = "Rule", skip_serializing_if = "Option::is_none")]
    rule: Option<RuleDocument>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct RuleDocument {
    #[serde(rename = "DefaultRetention")]
    default_retention: Option<RetentionDocument>,
}

/// Days and Years are read as text, so that a number out of range is the
/// `InvalidArgument` S3 answers rather than unparseable XML.
#[derive(Debug, Default, Serialize, Deserialize)]
struct RetentionDocument {
    #[serde(rename = "Mode", skip_serializing_if = "Option::is_none")]
    mode: Option<String>,
    #[serde(rename = "Days", skip_serializing_if = "Option::is_none")]
    days: Option<String>,
    #[serde(rename = "Years", skip_serializing_if = "Option::is_none")]
    years: Option<String>,
}

impl Configuration {
    /// A PutObjectLockConfiguration body: `ObjectLockEnabled` must be
    /// `Enabled`; a rule names a mode and exactly one of Days and Years
    /// (`MalformedXML` otherwise, as S3), a positive number of them
    /// (`InvalidArgument`).
    pub fn from_xml(body: &[u8]) -> S3Result<Self> {
        let document: Document = xml::from_xml(body)?;
        if document.enabled.as_deref() != Some("Enabled") {
            return Err(S3Error::malformed_xml());
        }
        let Some(rule) = document.rule else {
            return Ok(Self::default());
        };
        let Some(retention) = rule.default_retention else {
            return Err(S3Error::malformed_xml());
        };
        let mode = retention
            .mode
            .as_deref()
            .and_then(RetentionMode::parse)
            .ok_or_else(S3Error::malformed_xml)?;
        let period = match (retention.days.as_deref(), retention.years.as_deref()) {
            (Some(days), None) => Period::Days(count(days, MAX_DAYS, "Days")?),
            (None, Some(years)) => Period::Years(count(years, MAX_YEARS, "Years")?),
            _ => return Err(S3Error::malformed_xml()),
        };
        Ok(Self {
            default_retention: Some(DefaultRetention { mode, period }),
        })
    }

    /// The canonical document, stored and answered.
    pub fn to_xml(self) -> S3Result<String> {
        let rule = self.default_retention.map(|retention| {
            let (days, years) = match retention.period {
                Period::Days(days) => (Some(days.to_string()), None),
                Period::Years(years) => (None, Some(years.to_string())),
            };
            RuleDocument {
                default_retention: Some(RetentionDocument {
                    mode: Some(retention.mode.name().to_owned()),
                    days,
                    years,
                }),
            }
        });
        let document = Document {
            xmlns: S3_NAMESPACE,
            enabled: Some("Enabled".to_owned()),
            rule,
        };
        xml::to_xml("ObjectLockConfiguration", &document)
    }
}

/// A default retention's Days or Years (`element`): a whole number from
/// 1 to `max`. Out of range is AWS's `InvalidArgument` (RGW, and so
/// ceph/s3-tests, say `InvalidRetentionPeriod`).
fn count(text: &str, max: u32, element: &'static str) -> S3Result<u32> {
    match text.trim().parse::<i64>() {
        Ok(n) if (1..=i64::from(max)).contains(&n) => Ok(n as u32),
        Ok(n) if n > 0 => Err(S3Error::invalid_argument(format!(
            "Default retention period cannot exceed {max} {element}."
        ))
        .with("ArgumentName", element)),
        Ok(_) => Err(S3Error::invalid_argument(
            "Default retention period must be a positive integer value.",
        )
        .with("ArgumentName", element)),
        Err(_) => Err(S3Error::malformed_xml()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(inner: &str) -> S3Result<Configuration> {
        Configuration::from_xml(
            format!("<ObjectLockConfiguration>{inner}</ObjectLockConfiguration>").as_bytes(),
        )
    }

    fn rule(retention: &str) -> String {
        format!(
            "<ObjectLockEnabled>Enabled</ObjectLockEnabled>\
             <Rule><DefaultRetention>{retention}</DefaultRetention></Rule>"
        )
    }

    #[test]
    fn a_configuration_reads_back_from_its_canonical_form() {
        for inner in [
            "<ObjectLockEnabled>Enabled</ObjectLockEnabled>".to_owned(),
            rule("<Mode>GOVERNANCE</Mode><Days>1</Days>"),
            rule("<Mode>COMPLIANCE</Mode><Years>100</Years>"),
        ] {
            let configuration = parse(&inner).unwrap();
            let again = Configuration::from_xml(configuration.to_xml().unwrap().as_bytes());
            assert_eq!(again.unwrap(), configuration, "{inner}");
        }
        let parsed = parse(&rule("<Mode>COMPLIANCE</Mode><Days>30</Days>")).unwrap();
        assert_eq!(
            parsed.default_retention,
            Some(DefaultRetention {
                mode: RetentionMode::Compliance,
                period: Period::Days(30)
            })
        );
    }

    #[test]
    fn errors_are_the_ones_s3_answers() {
        let code = |inner: &str| parse(inner).unwrap_err().code;
        assert_eq!(code(""), "MalformedXML");
        assert_eq!(
            code("<ObjectLockEnabled>Disabled</ObjectLockEnabled>"),
            "MalformedXML"
        );
        let bad = [
            ("<Mode>governance</Mode><Days>1</Days>", "MalformedXML"),
            ("<Mode>abc</Mode><Days>1</Days>", "MalformedXML"),
            ("<Days>1</Days>", "MalformedXML"),
            ("<Mode>GOVERNANCE</Mode>", "MalformedXML"),
            (
                "<Mode>GOVERNANCE</Mode><Days>1</Days><Years>1</Years>",
                "MalformedXML",
            ),
            ("<Mode>GOVERNANCE</Mode><Days>x</Days>", "MalformedXML"),
            ("<Mode>GOVERNANCE</Mode><Days>0</Days>", "InvalidArgument"),
            (
                "<Mode>GOVERNANCE</Mode><Years>-1</Years>",
                "InvalidArgument",
            ),
            (
                "<Mode>GOVERNANCE</Mode><Years>101</Years>",
                "InvalidArgument",
            ),
        ];
        for (retention, expected) in bad {
            assert_eq!(code(&rule(retention)), expected, "{retention}");
        }
    }

    #[test]
    fn years_are_calendar_years() {
        let at = |text: &str| {
            SystemTime::from(
                OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
                    .unwrap(),
            )
        };
        let years = |n| DefaultRetention {
            mode: RetentionMode::Governance,
            period: Period::Years(n),
        };
        let days = DefaultRetention {
            mode: RetentionMode::Governance,
            period: Period::Days(2),
        };
        let now = at("2024-02-29T10:00:00Z");
        assert_eq!(years(1).until(now), at("2025-03-01T10:00:00Z"));
        assert_eq!(years(4).until(now), at("2028-02-29T10:00:00Z"));
        assert_eq!(days.until(now), at("2024-03-02T10:00:00Z"));
    }
}
