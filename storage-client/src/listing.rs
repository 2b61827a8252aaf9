//! S3 listing (prefix, delimiter, start-after, max-keys) on top of one
//! primitive every back end has: "keys with this prefix after this key, at
//! most N". With a delimiter, once a common prefix P is found the scan jumps
//! straight past every key starting with P (to P + 0xFF, a byte UTF-8 never
//! contains), so a bucket with millions of keys under `logs/` costs one
//! step, never a full scan.

use std::future::Future;

use crate::{ListEntry, ListPage, ListQuery, Result};

/// The largest scan batch; small enough to bound memory per step.
const MAX_BATCH: usize = 1000;
/// Batch size after a common prefix made the rest of a batch useless.
const MIN_BATCH: usize = 16;

/// The common prefix `key` belongs to, if any; none unless it has `prefix`.
pub(crate) fn common_prefix<'k>(
    key: &'k str,
    prefix: &str,
    delimiter: Option<&str>,
) -> Option<&'k str> {
    let delimiter = delimiter.filter(|d| !d.is_empty())?;
    let rest = key.strip_prefix(prefix)?;
    let at = rest.find(delimiter)?;
    Some(&key[..prefix.len() + at + delimiter.len()])
}

/// Scan position just past every key that starts with `prefix`.
pub(crate) fn past_all_starting_with(prefix: &str) -> Vec<u8> {
    let mut after = prefix.as_bytes().to_vec();
    after.push(0xff);
    after
}

/// What a listing covers: keys with `prefix`, grouped at `delimiter`, at
/// most `max_keys` entries and common prefixes together.
pub(crate) struct Scope<'a> {
    pub prefix: &'a str,
    pub delimiter: Option<&'a str>,
    pub max_keys: usize,
}

/// One page of a walk: what was listed, in order of its kind.
pub(crate) struct Walk<T> {
    pub entries: Vec<T>,
    pub common_prefixes: Vec<String>,
    pub is_truncated: bool,
    /// Whether the last thing listed was a common prefix (else the last entry).
    pub ended_on_prefix: bool,
}

/// One page of any listing, paging on `scan(position, limit)`: up to
/// `limit` entries after `position`, in listing order. `key` names an
/// entry, `after` is the position just past it and `past_group` the one
/// past every key of a common prefix.
pub(crate) async fn walk<T, P: Clone, F>(
    scope: Scope<'_>,
    start: P,
    scan: impl Fn(P, usize) -> F,
    key: impl Fn(&T) -> &str,
    after: impl Fn(&T) -> P,
    past_group: impl Fn(&str) -> P,
) -> Result<Walk<T>>
where
    F: Future<Output = Result<Vec<T>>>,
{
    let mut position = start;
    let mut page = Walk {
        entries: Vec::new(),
        common_prefixes: Vec::new(),
        is_truncated: false,
        ended_on_prefix: false,
    };
    let mut returned = 0usize;
    let mut batch_size = MIN_BATCH;
    loop {
        let limit = batch_size.min(scope.max_keys.saturating_sub(returned) + 1);
        let batch = scan(position.clone(), limit).await?;
        let exhausted = batch.len() < limit;
        let mut jumped = false;
        for entry in batch {
            if returned == scope.max_keys {
                page.is_truncated = true;
                return Ok(page);
            }
            returned += 1;
            if let Some(group) = common_prefix(key(&entry), scope.prefix, scope.delimiter) {
                position = past_group(group);
                page.common_prefixes.push(group.to_owned());
                page.ended_on_prefix = true;
                jumped = true;
                break;
            }
            position = after(&entry);
            page.ended_on_prefix = false;
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

/// One page of `query`; `scan(after, limit)` is the primitive, bound to one
/// bucket and the query's prefix: up to `limit` keys with the prefix that
/// sort strictly after `after`.
pub(crate) async fn list_page<F>(
    scan: impl Fn(Vec<u8>, usize) -> F,
    query: &ListQuery,
) -> Result<ListPage>
where
    F: Future<Output = Result<Vec<ListEntry>>>,
{
    let delimiter = query.delimiter.as_deref();
    let start_after = query.start_after.as_deref().unwrap_or("");
    // A common prefix sorts at its own position: if it is at or before the
    // marker (as when the marker is a previous page's last common prefix),
    // its whole group has been listed already.
    let start = match common_prefix(start_after, &query.prefix, delimiter) {
        Some(group) => past_all_starting_with(group),
        None => start_after.as_bytes().to_vec(),
    };
    let scope = Scope {
        prefix: &query.prefix,
        delimiter,
        max_keys: query.max_keys,
    };
    let walked = walk(
        scope,
        start,
        scan,
        |entry: &ListEntry| entry.key.as_str(),
        |entry| entry.key.as_bytes().to_vec(),
        past_all_starting_with,
    )
    .await?;
    let next_marker = if walked.ended_on_prefix {
        walked.common_prefixes.last().cloned()
    } else {
        walked.entries.last().map(|entry| entry.key.clone())
    };
    Ok(ListPage {
        entries: walked.entries,
        common_prefixes: walked.common_prefixes,
        is_truncated: walked.is_truncated,
        next_marker,
    })
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use super::*;

    fn run(keys: &[&str], query: ListQuery) -> ListPage {
        let mut sorted: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        sorted.sort();
        let scan = |after: Vec<u8>, limit: usize| {
            let found: Vec<ListEntry> = sorted
                .iter()
                .filter(|k| k.starts_with(&query.prefix) && k.as_bytes() > after.as_slice())
                .take(limit)
                .map(|k| ListEntry {
                    key: k.clone(),
                    size: 0,
                    etag: String::new(),
                    last_modified: SystemTime::UNIX_EPOCH,
                    owner: String::new(),
                    meta: Default::default(),
                    part_sizes: Vec::new(),
                })
                .collect();
            async move { Ok(found) }
        };
        futures::executor::block_on(list_page(scan, &query)).unwrap()
    }

    fn names(page: &ListPage) -> Vec<&str> {
        page.entries.iter().map(|e| e.key.as_str()).collect()
    }

    #[test]
    fn groups_by_delimiter_after_prefix() {
        let page = run(
            &["a/1", "a/2", "b", "c/x/y", "c/z"],
            ListQuery {
                delimiter: Some("/".into()),
                max_keys: 100,
                ..Default::default()
            },
        );
        assert_eq!(names(&page), ["b"]);
        assert_eq!(page.common_prefixes, ["a/", "c/"]);
        assert!(!page.is_truncated);
    }

    #[test]
    fn marker_equal_to_a_common_prefix_skips_its_group() {
        let page = run(
            &["a/1", "a/2", "b"],
            ListQuery {
                delimiter: Some("/".into()),
                start_after: Some("a/".into()),
                max_keys: 100,
                ..Default::default()
            },
        );
        assert_eq!(names(&page), ["b"]);
        assert!(page.common_prefixes.is_empty());
    }

    #[test]
    fn truncates_exactly_at_max_keys() {
        let query = ListQuery {
            max_keys: 2,
            ..Default::default()
        };
        let page = run(&["a", "b", "c"], query.clone());
        assert_eq!(names(&page), ["a", "b"]);
        assert!(page.is_truncated);
        assert_eq!(page.next_marker.as_deref(), Some("b"));
        let page = run(&["a", "b"], query);
        assert!(!page.is_truncated);
    }
}
