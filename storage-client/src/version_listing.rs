//! ListObjectVersions paging (prefix, delimiter, key and version-id
//! markers, max-keys) on one back-end primitive: "versions of keys with
//! this prefix after this version of this key, at most N", walked by
//! [`crate::listing::walk`] as every listing is.

use std::future::Future;

use crate::listing::{Scope, common_prefix, past_all_starting_with, walk};
use crate::{Result, VersionEntry, VersionListPage, VersionListQuery};

/// One page of `query`; `scan(after_key, after_version, limit)` is the
/// primitive bound to one bucket and the query's prefix.
pub(crate) async fn list_page<F>(
    scan: impl Fn(Vec<u8>, Option<String>, usize) -> F,
    query: &VersionListQuery,
) -> Result<VersionListPage>
where
    F: Future<Output = Result<Vec<VersionEntry>>>,
{
    let delimiter = query.delimiter.as_deref();
    let key_marker = query.key_marker.as_deref().unwrap_or("");
    // A marker inside a common prefix: its whole group was listed already.
    let start = match common_prefix(key_marker, &query.prefix, delimiter) {
        Some(group) => (past_all_starting_with(group), None),
        None => (
            key_marker.as_bytes().to_vec(),
            query
                .version_id_marker
                .clone()
                .filter(|_| !key_marker.is_empty()),
        ),
    };
    let scope = Scope {
        prefix: &query.prefix,
        delimiter,
        max_keys: query.max_keys,
    };
    let walked = walk(
        scope,
        start,
        |(after, version), limit| scan(after, version, limit),
        |entry: &VersionEntry| entry.key.as_str(),
        |entry| {
            (
                entry.key.as_bytes().to_vec(),
                Some(entry.version_id.clone()),
            )
        },
        |group| (past_all_starting_with(group), None),
    )
    .await?;
    let (next_key_marker, next_version_id_marker) = if walked.ended_on_prefix {
        (walked.common_prefixes.last().cloned(), None)
    } else {
        match walked.entries.last() {
            Some(entry) => (Some(entry.key.clone()), Some(entry.version_id.clone())),
            None => (None, None),
        }
    };
    Ok(VersionListPage {
        entries: walked.entries,
        common_prefixes: walked.common_prefixes,
        is_truncated: walked.is_truncated,
        next_key_marker,
        next_version_id_marker,
    })
}
