//! NoncurrentVersionExpiration and ExpiredObjectDeleteMarker: which
//! versions a rule removes ([`Walk`], fed a listing of versions one by one),
//! found by paging `Storage::list_versions` (key by key, newest first) and
//! removed with `Storage::delete_version`. An unversioned bucket lists each
//! object once, as its current version, so nothing there is noncurrent.

use std::time::{Duration, SystemTime};

use storage_client::{Storage, StorageError, VersionEntry, VersionListQuery};

use super::Target;
use super::rules::{Expiration, Rule, after_days};
use crate::sse::size::client_size;

/// Applies the rule's version actions to the bucket, `page` versions per
/// listing call; returns how many versions and markers it removed.
pub async fn expire(
    storage: &Storage,
    target: Target<'_>,
    day: Duration,
    page: usize,
) -> Result<u64, StorageError> {
    let Target { bucket, rule, now } = target;
    let mut walk = Walk::new(rule, day, now);
    let mut removed = 0;
    let mut query = VersionListQuery {
        prefix: rule.filter.prefix.clone(),
        delimiter: None,
        key_marker: None,
        version_id_marker: None,
        max_keys: page,
    };
    loop {
        let listed = storage.list_versions(bucket, &query).await?;
        let mut due: Vec<(String, String)> = Vec::new();
        for version in &listed.entries {
            due.extend(walk.feed(version));
        }
        let next = listed.next_key_marker.filter(|_| listed.is_truncated);
        if next.is_none() {
            due.extend(walk.finish());
        }
        for (key, version_id) in &due {
            // Deleting a version that is gone already succeeds; one under
            // object lock stays (storage refuses it), for a later run.
            match storage.delete_version(bucket.object(key), version_id).await {
                Ok(_) => removed += 1,
                Err(StorageError::ObjectLocked) => {}
                Err(err) => return Err(err),
            }
        }
        match next {
            Some(key) => {
                query.key_marker = Some(key);
                query.version_id_marker = listed.next_version_id_marker;
            }
            None => return Ok(removed),
        }
    }
}

/// Decides, version by version in listing order, what a rule removes:
/// - a noncurrent version, `NoncurrentDays` after it stopped being current
///   (when the version after it was written), unless it is one of the
///   `NewerNoncurrentVersions` newest noncurrent ones;
/// - with `ExpiredObjectDeleteMarker`, a current delete marker with no
///   other version left.
///
/// It holds one key's state, never a key's versions, so a key with many
/// versions costs no memory. Tag filters select no versions here (a
/// version's tags would need a lookup each); such a rule still expires
/// current objects.
pub struct Walk<'a> {
    rule: &'a Rule,
    day: Duration,
    now: SystemTime,
    key: Option<KeyState>,
}

struct KeyState {
    key: String,
    /// Versions of the key seen so far, the current one included.
    seen: usize,
    /// When the last version seen was written: the moment the next (older)
    /// one stopped being current.
    successor_written: SystemTime,
    /// The current version, if it is a delete marker.
    current_marker: Option<String>,
}

impl<'a> Walk<'a> {
    pub fn new(rule: &'a Rule, day: Duration, now: SystemTime) -> Self {
        Self {
            rule,
            day,
            now,
            key: None,
        }
    }

    /// The next version in listing order; returns the (key, version id)
    /// pairs now known to go.
    pub fn feed(&mut self, version: &VersionEntry) -> Vec<(String, String)> {
        let mut due = Vec::new();
        if self
            .key
            .as_ref()
            .is_none_or(|state| state.key != version.key)
        {
            due.extend(self.finish());
            self.key = Some(KeyState {
                key: version.key.clone(),
                seen: 1,
                successor_written: version.last_modified,
                current_marker: version.delete_marker.then(|| version.version_id.clone()),
            });
            return due;
        }
        let (rule, day, now) = (self.rule, self.day, self.now);
        let Some(state) = self.key.as_mut() else {
            return due;
        };
        let newer_noncurrent = state.seen - 1;
        let became_noncurrent = state.successor_written;
        state.seen += 1;
        state.successor_written = version.last_modified;
        let Some(noncurrent) = rule.noncurrent_expiration else {
            return due;
        };
        let kept = noncurrent.newer_versions_kept.unwrap_or(0) as usize;
        let selected = rule.filter.tags.is_empty()
            && (version.delete_marker
                || rule.filter.matches_listing(
                    &version.key,
                    client_size(&version.meta, version.size, &version.part_sizes),
                ));
        if selected
            && newer_noncurrent >= kept
            && after_days(became_noncurrent, noncurrent.days, day) <= now
        {
            due.push((version.key.clone(), version.version_id.clone()));
        }
        due
    }

    /// The listing ended: what the last key's end decides.
    pub fn finish(&mut self) -> Option<(String, String)> {
        let state = self.key.take()?;
        let lone_marker = state.seen == 1 && state.current_marker.is_some();
        let asked = self.rule.expiration == Some(Expiration::ExpiredObjectDeleteMarker);
        if lone_marker && asked && state.key.starts_with(&self.rule.filter.prefix) {
            state.current_marker.map(|id| (state.key, id))
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lifecycle::rules::{Filter, NoncurrentExpiration};

    const DAY: Duration = Duration::from_secs(86_400);

    fn at(days: u32) -> SystemTime {
        SystemTime::UNIX_EPOCH + days * DAY
    }

    fn version(key: &str, id: &str, written_day: u32, delete_marker: bool) -> VersionEntry {
        VersionEntry {
            key: key.into(),
            version_id: id.into(),
            is_latest: false,
            delete_marker,
            size: 10,
            etag: String::new(),
            last_modified: at(written_day),
            owner: String::new(),
            meta: Default::default(),
            part_sizes: Vec::new(),
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

    fn noncurrent(days: u32, newer_versions_kept: Option<u32>) -> Rule {
        rule(
            Some(NoncurrentExpiration {
                days,
                newer_versions_kept,
            }),
            None,
        )
    }

    /// What a walk over `versions` removes, as "key/id".
    fn due(versions: &[VersionEntry], rule: &Rule, now_day: u32) -> Vec<String> {
        let mut walk = Walk::new(rule, DAY, at(now_day));
        let mut due: Vec<(String, String)> = Vec::new();
        for version in versions {
            due.extend(walk.feed(version));
        }
        due.extend(walk.finish());
        due.into_iter().map(|(k, id)| format!("{k}/{id}")).collect()
    }

    #[test]
    fn a_version_expires_days_after_its_successor_was_written() {
        let versions = [
            version("k", "v3", 10, false),
            version("k", "v2", 5, false),
            version("k", "v1", 1, false),
        ];
        let rule = noncurrent(3, None);
        // v1 became noncurrent on day 5, v2 on day 10.
        assert!(due(&versions, &rule, 7).is_empty());
        assert_eq!(due(&versions, &rule, 8), ["k/v1"]);
        assert_eq!(due(&versions, &rule, 13), ["k/v2", "k/v1"]);
    }

    #[test]
    fn the_newest_noncurrent_versions_are_kept() {
        let versions = [
            version("k", "v4", 30, false),
            version("k", "v3", 20, false),
            version("k", "v2", 10, false),
            version("k", "v1", 1, false),
        ];
        assert_eq!(due(&versions, &noncurrent(1, Some(2)), 100), ["k/v1"]);
    }

    #[test]
    fn keys_are_walked_one_after_another() {
        let versions = [
            version("a", "a2", 5, false),
            version("a", "a1", 1, false),
            version("b", "b1", 1, false),
            version("c", "c2", 9, true),
            version("c", "c1", 2, false),
        ];
        assert_eq!(due(&versions, &noncurrent(1, None), 100), ["a/a1", "c/c1"]);
    }

    #[test]
    fn a_lone_delete_marker_is_removed_only_when_asked() {
        let cleanup = rule(None, Some(Expiration::ExpiredObjectDeleteMarker));
        let marker_only = [version("k", "m", 3, true), version("l", "v", 1, false)];
        assert_eq!(due(&marker_only, &cleanup, 4), ["k/m"]);
        let marker_over_a_version = [version("k", "m", 3, true), version("k", "v1", 1, false)];
        assert!(due(&marker_over_a_version, &cleanup, 4).is_empty());
        let last_key_marker = [version("j", "v", 1, false), version("k", "m", 3, true)];
        assert_eq!(due(&last_key_marker, &cleanup, 4), ["k/m"]);
        let days_only = rule(None, Some(Expiration::Days(1)));
        assert!(due(&marker_only, &days_only, 4).is_empty());
    }

    #[test]
    fn size_and_tag_filters_hold() {
        let versions = [version("k", "v2", 5, false), version("k", "v1", 1, false)];
        let mut rule = noncurrent(1, None);
        rule.filter.size_greater_than = Some(10);
        assert!(due(&versions, &rule, 100).is_empty());
        rule.filter.size_greater_than = None;
        rule.filter.tags = vec![("k".into(), "v".into())];
        assert!(due(&versions, &rule, 100).is_empty());
    }
}
