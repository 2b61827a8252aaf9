//! `x-amz-expiration` on PutObject, GetObject and HeadObject: when the
//! bucket's lifecycle rules will expire the object and which rule will, as
//! AWS sends it (`expiry-date="Fri, 23 Dec 2012 00:00:00 GMT",
//! rule-id="picture-deletion-rule"`). Of several rules the earliest wins.
//!
//! The rules are the bucket's lifecycle configuration parsed once per
//! stored text ([`crate::parsed_documents`]); a bucket without one costs a
//! lookup in storage's document cache. Only a current object expires this
//! way, so a request naming a version gets no header.

use std::time::Duration;

use http::{HeaderMap, HeaderName};
use storage_client::{BucketDocument, KeyInfo, Namespace};

use super::bucket_documents::load_parsed;
use super::headers::{http_date, insert};
use crate::lifecycle::rules::{Configuration, Rule};
use crate::sse::size::client_size;
use crate::state::AppState;

const X_AMZ_EXPIRATION: HeaderName = HeaderName::from_static("x-amz-expiration");

/// Adds the header for the current object `info` of `bucket`, if a rule
/// of the bucket will expire it. The object was served or stored either
/// way: a configuration that cannot be read costs the header (logged),
/// never the request.
pub async fn insert_expiration(
    state: &AppState,
    out: &mut HeaderMap,
    namespace: &Namespace,
    bucket: &str,
    info: &KeyInfo,
) {
    let loaded = load_parsed(
        state,
        namespace,
        bucket,
        BucketDocument::Lifecycle,
        |text| Configuration::from_stored(text.as_bytes()),
    )
    .await;
    match loaded {
        Ok(Some(config)) => {
            if let Some(value) = expiration(&config.rules, info, state.lifecycle_day) {
                insert(out, X_AMZ_EXPIRATION, &value);
            }
        }
        Ok(None) => {}
        Err(error) => {
            tracing::warn!(bucket, %error, "no x-amz-expiration: the lifecycle configuration cannot be read");
        }
    }
}

/// The header's value: the earliest expiry among the enabled rules that
/// match the object (key, size and tags) and expire current objects.
fn expiration(rules: &[Rule], info: &KeyInfo, day: Duration) -> Option<String> {
    // The size a listing shows, which the lifecycle worker filters on.
    let part_sizes: Vec<u64> = info.parts.iter().map(|part| part.size).collect();
    let size = client_size(&info.meta, info.size, &part_sizes);
    rules
        .iter()
        .filter(|rule| {
            rule.enabled
                && rule.filter.matches_listing(&info.key, size)
                && rule.filter.matches_tags(&info.tags)
        })
        .filter_map(|rule| Some((rule.expiry_of(info.last_modified, day)?, rule)))
        .min_by_key(|(at, _)| *at)
        .map(|(at, rule)| {
            format!(
                "expiry-date=\"{}\", rule-id=\"{}\"",
                http_date(at),
                rule.id.replace('"', "\\\"")
            )
        })
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;

    const DAY: Duration = Duration::from_secs(86_400);

    fn rules(xml: &str) -> Vec<Rule> {
        Configuration::from_request(xml.as_bytes()).unwrap().rules
    }

    fn object(key: &str, tags: &[(&str, &str)]) -> KeyInfo {
        KeyInfo {
            bucket: "b".into(),
            key: key.into(),
            size: 10,
            etag: String::new(),
            // Mon, 05 Dec 2022 04:00:00 GMT
            last_modified: SystemTime::UNIX_EPOCH + Duration::from_secs(1_670_212_800),
            owner: String::new(),
            meta: Default::default(),
            tags: tags
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            checksum: None,
            locations: Vec::new(),
            parts: Vec::new(),
            version_id: None,
        }
    }

    #[test]
    fn days_round_up_to_the_next_midnight_and_the_earliest_rule_wins() {
        let rules = rules(
            r#"<LifecycleConfiguration>
            <Rule><ID>later</ID><Filter><Prefix>a/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>30</Days></Expiration></Rule>
            <Rule><ID>sooner</ID><Filter><Prefix>a/b</Prefix></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>
            <Rule><ID>off</ID><Filter><Prefix></Prefix></Filter><Status>Disabled</Status><Expiration><Days>1</Days></Expiration></Rule>
            </LifecycleConfiguration>"#,
        );
        assert_eq!(
            expiration(&rules, &object("a/b/c", &[]), DAY).as_deref(),
            Some(r#"expiry-date="Wed, 07 Dec 2022 00:00:00 GMT", rule-id="sooner""#)
        );
        assert_eq!(
            expiration(&rules, &object("a/x", &[]), DAY).as_deref(),
            Some(r#"expiry-date="Thu, 05 Jan 2023 00:00:00 GMT", rule-id="later""#)
        );
        assert_eq!(expiration(&rules, &object("z", &[]), DAY), None);
    }

    #[test]
    fn tag_filters_need_every_tag() {
        let rules = rules(
            r#"<LifecycleConfiguration><Rule><ID>tagged</ID><Filter><And><Prefix></Prefix>
            <Tag><Key>k</Key><Value>v</Value></Tag><Tag><Key>j</Key><Value>w</Value></Tag></And></Filter>
            <Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>"#,
        );
        assert_eq!(expiration(&rules, &object("o", &[("k", "v")]), DAY), None);
        assert!(expiration(&rules, &object("o", &[("j", "w"), ("k", "v")]), DAY).is_some());
    }

    #[test]
    fn size_filters_judge_an_encrypted_object_by_its_plaintext() {
        let rules = rules(
            r#"<LifecycleConfiguration><Rule><ID>small</ID><Filter><ObjectSizeLessThan>60</ObjectSizeLessThan></Filter>
            <Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>"#,
        );
        // 50 bytes of plaintext, stored as 66 (one segment's tag more).
        let mut sealed = object("o", &[]);
        sealed.size = crate::sse::segments::sealed_size(50);
        crate::sse::record::Record {
            plain_size: 50,
            wrapping: crate::sse::record::Wrapping::Master {
                key_id: "k1".into(),
            },
            sealed_key: "c2VhbGVk".into(),
        }
        .store(&mut sealed.meta);
        assert!(expiration(&rules, &sealed, DAY).is_some());
        let mut plain = object("o", &[]);
        plain.size = sealed.size;
        assert_eq!(expiration(&rules, &plain, DAY), None);
    }

    #[test]
    fn rules_that_expire_only_older_versions_or_markers_say_nothing() {
        let rules = rules(
            r#"<LifecycleConfiguration><Rule><ID>noncurrent</ID><Filter><Prefix></Prefix></Filter>
            <Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration></Rule>
            <Rule><ID>markers</ID><Filter><Prefix></Prefix></Filter><Status>Enabled</Status>
            <Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration></Rule></LifecycleConfiguration>"#,
        );
        assert_eq!(expiration(&rules, &object("o", &[]), DAY), None);
    }
}
