//! NoncurrentVersionExpiration and ExpiredObjectDeleteMarker: which
//! versions of a key a rule removes ([`due`]), and the storage they are
//! read from and deleted in ([`VersionStore`]).
//!
//! The seam: storage-client has no versions yet (they are being built on
//! the `versioning` branch). Until its "list versions" and "delete a
//! version" land, [`VersionStore`] for [`Storage`] says what is true of
//! every bucket today: each key has one version, the current one, and no
//! delete markers, so there is nothing noncurrent to expire. Wiring the two
//! methods to the real calls is all these rules then need.

use std::time::{Duration, SystemTime};

use storage_client::{Identity, Storage, StorageError};

use super::Target;
use super::rules::{Expiration, Rule, after_days};

/// Keys whose versions are read per call.
const PAGE: usize = 1000;

/// One version of a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version {
    pub version_id: String,
    pub last_modified: SystemTime,
    pub size: u64,
    pub is_delete_marker: bool,
}

/// Every version of one key, newest (the current one) first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyVersions {
    pub key: String,
    pub versions: Vec<Version>,
}

/// What the lifecycle worker needs of a versioned store.
pub trait VersionStore {
    /// Up to `max_keys` keys under `prefix` after `after`, in key order,
    /// each with all its versions.
    fn key_versions(
        &self,
        owner: &Identity,
        bucket: &str,
        prefix: &str,
        after: Option<&str>,
        max_keys: usize,
    ) -> impl Future<Output = Result<Vec<KeyVersions>, StorageError>> + Send;

    /// Removes one version (or delete marker) for good; a missing one is
    /// not an error.
    fn delete_version(
        &self,
        owner: &Identity,
        bucket: &str,
        key: &str,
        version_id: &str,
    ) -> impl Future<Output = Result<(), StorageError>> + Send;
}

impl VersionStore for Storage {
    async fn key_versions(
        &self,
        _owner: &Identity,
        _bucket: &str,
        _prefix: &str,
        _after: Option<&str>,
        _max_keys: usize,
    ) -> Result<Vec<KeyVersions>, StorageError> {
        // No bucket keeps versions yet: nothing is noncurrent, no marker.
        Ok(Vec::new())
    }

    async fn delete_version(
        &self,
        _owner: &Identity,
        _bucket: &str,
        _key: &str,
        _version_id: &str,
    ) -> Result<(), StorageError> {
        Err(StorageError::Internal(
            "this storage keeps no versions to delete".into(),
        ))
    }
}

/// Applies the rule's version actions to the bucket; returns how many
/// versions and markers it removed.
pub async fn expire(
    store: &impl VersionStore,
    target: Target<'_>,
    day: Duration,
) -> Result<u64, StorageError> {
    let Target {
        owner,
        bucket,
        rule,
        now,
    } = target;
    let mut removed = 0;
    let mut after: Option<String> = None;
    loop {
        let page = store
            .key_versions(owner, bucket, &rule.filter.prefix, after.as_deref(), PAGE)
            .await?;
        for key in &page {
            for version in due(key, rule, day, now) {
                store
                    .delete_version(owner, bucket, &key.key, &version.version_id)
                    .await?;
                removed += 1;
            }
        }
        if page.len() < PAGE {
            return Ok(removed);
        }
        after = page.last().map(|key| key.key.clone());
    }
}

/// The versions of `key` that `rule` removes at `now`:
/// - a noncurrent version, `NoncurrentDays` after it stopped being current
///   (when the version after it was written), unless it is one of the
///   `NewerNoncurrentVersions` newest noncurrent ones;
/// - with `ExpiredObjectDeleteMarker`, a current delete marker with no
///   other version left.
///
/// Tag filters do not select versions here (a version's tags would need a
/// lookup each); such a rule still expires current objects.
pub fn due<'a>(
    key: &'a KeyVersions,
    rule: &Rule,
    day: Duration,
    now: SystemTime,
) -> Vec<&'a Version> {
    let mut removed = Vec::new();
    if !rule.filter.tags.is_empty() || !key.key.starts_with(&rule.filter.prefix) {
        return removed;
    }
    let matches_size = |version: &Version| {
        version.is_delete_marker || rule.filter.matches_listing(&key.key, version.size)
    };
    if let Some(noncurrent) = rule.noncurrent_expiration {
        let kept = noncurrent.newer_versions_kept.unwrap_or(0) as usize;
        for (index, pair) in key.versions.windows(2).enumerate() {
            let (successor, version) = (&pair[0], &pair[1]);
            let became_noncurrent = successor.last_modified;
            if index >= kept
                && after_days(became_noncurrent, noncurrent.days, day) <= now
                && matches_size(version)
            {
                removed.push(version);
            }
        }
    }
    let lone_marker = match key.versions.as_slice() {
        [marker] => marker.is_delete_marker,
        _ => false,
    };
    if lone_marker && rule.expiration == Some(Expiration::ExpiredObjectDeleteMarker) {
        removed.extend(key.versions.first());
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lifecycle::rules::{Filter, NoncurrentExpiration};

    const DAY: Duration = Duration::from_secs(86_400);

    fn at(days: u32) -> SystemTime {
        SystemTime::UNIX_EPOCH + days * DAY
    }

    fn version(id: &str, written_day: u32, is_delete_marker: bool) -> Version {
        Version {
            version_id: id.into(),
            last_modified: at(written_day),
            size: 10,
            is_delete_marker,
        }
    }

    fn rule(noncurrent: Option<NoncurrentExpiration>, expiration: Option<Expiration>) -> Rule {
        Rule {
            id: "r".into(),
            enabled: true,
            filter: Filter::default(),
            expiration,
            abort_incomplete_after_days: None,
            noncurrent_expiration: noncurrent,
        }
    }

    fn ids(versions: Vec<&Version>) -> Vec<&str> {
        versions.iter().map(|v| v.version_id.as_str()).collect()
    }

    #[test]
    fn a_version_expires_days_after_its_successor_was_written() {
        let key = KeyVersions {
            key: "k".into(),
            versions: vec![
                version("v3", 10, false),
                version("v2", 5, false),
                version("v1", 1, false),
            ],
        };
        let rule = rule(
            Some(NoncurrentExpiration {
                days: 3,
                newer_versions_kept: None,
            }),
            None,
        );
        // v1 became noncurrent on day 5, v2 on day 10.
        assert!(due(&key, &rule, DAY, at(7)).is_empty());
        assert_eq!(ids(due(&key, &rule, DAY, at(8))), ["v1"]);
        assert_eq!(ids(due(&key, &rule, DAY, at(13))), ["v2", "v1"]);
    }

    #[test]
    fn the_newest_noncurrent_versions_are_kept() {
        let key = KeyVersions {
            key: "k".into(),
            versions: vec![
                version("v4", 30, false),
                version("v3", 20, false),
                version("v2", 10, false),
                version("v1", 1, false),
            ],
        };
        let rule = rule(
            Some(NoncurrentExpiration {
                days: 1,
                newer_versions_kept: Some(2),
            }),
            None,
        );
        assert_eq!(ids(due(&key, &rule, DAY, at(100))), ["v1"]);
    }

    #[test]
    fn a_lone_delete_marker_is_removed_only_when_asked() {
        let marker_only = KeyVersions {
            key: "k".into(),
            versions: vec![version("m", 3, true)],
        };
        let marker_over_a_version = KeyVersions {
            key: "k".into(),
            versions: vec![version("m", 3, true), version("v1", 1, false)],
        };
        let cleanup = rule(None, Some(Expiration::ExpiredObjectDeleteMarker));
        assert_eq!(ids(due(&marker_only, &cleanup, DAY, at(4))), ["m"]);
        assert!(due(&marker_over_a_version, &cleanup, DAY, at(4)).is_empty());
        let days_only = rule(None, Some(Expiration::Days(1)));
        assert!(due(&marker_only, &days_only, DAY, at(4)).is_empty());
    }

    #[test]
    fn the_prefix_and_tag_filters_hold() {
        let key = KeyVersions {
            key: "other/k".into(),
            versions: vec![version("v2", 5, false), version("v1", 1, false)],
        };
        let mut rule = rule(
            Some(NoncurrentExpiration {
                days: 1,
                newer_versions_kept: None,
            }),
            None,
        );
        rule.filter.prefix = "logs/".into();
        assert!(due(&key, &rule, DAY, at(100)).is_empty());
        rule.filter.prefix = String::new();
        rule.filter.tags = vec![("k".into(), "v".into())];
        assert!(due(&key, &rule, DAY, at(100)).is_empty());
    }
}
