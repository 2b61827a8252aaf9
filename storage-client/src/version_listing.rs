//! ListObjectVersions paging (prefix, delimiter, key and version-id
//! markers, max-keys) on one back-end primitive: "versions of keys with
//! this prefix after this version of this key, at most N". Common prefixes
//! are skipped in one step, as in [`crate::listing`].

use std::future::Future;

use crate::listing::{common_prefix, past_all_starting_with};
use crate::{Result, VersionEntry, VersionListPage, VersionListQuery};

/// The largest scan batch; small enough to bound memory per step.
const MAX_BATCH: usize = 1000;
/// Batch size after a common prefix made the rest of a batch useless.
const MIN_BATCH: usize = 16;

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
    let (mut after, mut after_version) = match common_prefix(key_marker, &query.prefix, delimiter) {
        Some(group) => (past_all_starting_with(group), None),
        None => (
            key_marker.as_bytes().to_vec(),
            query
                .version_id_marker
                .clone()
                .filter(|_| !key_marker.is_empty()),
        ),
    };
    let mut page = VersionListPage::default();
    let mut returned = 0usize;
    let mut batch_size = MIN_BATCH;
    loop {
        let limit = batch_size.min(query.max_keys.saturating_sub(returned) + 1);
        let batch = scan(after.clone(), after_version.clone(), limit).await?;
        let exhausted = batch.len() < limit;
        let mut jumped = false;
        for entry in batch {
            if returned == query.max_keys {
                page.is_truncated = true;
                return Ok(page);
            }
            returned += 1;
            if let Some(group) = common_prefix(&entry.key, &query.prefix, delimiter) {
                after = past_all_starting_with(group);
                after_version = None;
                page.next_key_marker = Some(group.to_owned());
                page.next_version_id_marker = None;
                page.common_prefixes.push(group.to_owned());
                jumped = true;
                break;
            }
            after = entry.key.as_bytes().to_vec();
            after_version = Some(entry.version_id.clone());
            page.next_key_marker = Some(entry.key.clone());
            page.next_version_id_marker = Some(entry.version_id.clone());
            page.entries.push(entry);
        }
        if jumped {
            batch_size = MIN_BATCH;
        } else if exhausted {
            return Ok(page);
        } else {
            batch_size = (batch_size * 2).min(MAX_BATCH);
        }
    }
}
