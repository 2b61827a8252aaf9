//! Listing a FILE_SYSTEM_OPTIMIZED bucket (`ozone sh bucket create`'s
//! default layout, and what `ofs://` writes into). Its keys live in the
//! OM's directory and file tables, which ListKeys does not read, so the
//! listing walks the directory tree with ListStatus, one directory's
//! children at a time.
//!
//! S3 lists keys in byte order. A depth-first walk yields exactly that
//! order when each directory's children are sorted by their full path
//! with a directory's trailing `/`: a directory `a/` then sorts after a
//! sibling file `a-b`, as every key inside it does. The OM answers a
//! directory's children by name (`a` before `a-b`), so each directory on
//! the walk is read whole and sorted; a directory with more children than
//! [`MAX_CHILDREN`] is refused rather than held in memory.
//!
//! Directories are listed as keys of their own (`a/`, size 0, no ETag),
//! as Ozone's S3 gateway and `ozone sh key list` show them: they are the
//! folder objects an S3 client sees, and a delimiter listing folds them
//! into the common prefix like any other key below it.

use crate::{ListEntry, Result, StorageError};

use super::om_client::OmClient;

/// ListStatus page size: the OM's own default for a directory listing.
const PAGE: usize = 1000;

/// The most children one directory may have to be listed: one walk holds
/// a directory's children in memory (about 200 bytes each).
const MAX_CHILDREN: usize = 100_000;

/// One child of a directory: its listing entry (the key a directory has
/// its trailing `/`) and whether it is a directory.
struct Child {
    entry: ListEntry,
    is_directory: bool,
}

/// Up to `limit` keys of `bucket` that start with `prefix` and sort after
/// `after`, in byte order.
pub(super) async fn scan(
    om: &OmClient,
    access_id: &str,
    bucket: &str,
    prefix: &str,
    after: &[u8],
    limit: usize,
) -> Result<Vec<ListEntry>> {
    // Every key with the prefix is in the directory holding its last
    // component: for `a/b/` that is `a/`, which lists `a/b/` itself.
    let component = prefix.strip_suffix('/').unwrap_or(prefix);
    let root = &prefix[..component.rfind('/').map_or(0, |slash| slash + 1)];
    let mut out = Vec::new();
    let mut walk = vec![children(om, access_id, bucket, root).await?.into_iter()];
    while out.len() < limit {
        let Some(level) = walk.last_mut() else { break };
        let Some(child) = level.next() else {
            walk.pop();
            continue;
        };
        let key = child.entry.key.as_str();
        let matches = key.starts_with(prefix) && key.as_bytes() > after;
        if !child.is_directory {
            if matches {
                out.push(child.entry);
            }
            continue;
        }
        // Below the directory, every key starts with its path: none has
        // the prefix unless one path starts with the other, and all sort
        // at or before `after` if it sorts after the path without being in it.
        let overlaps = key.starts_with(prefix) || prefix.starts_with(key);
        let passed = after > key.as_bytes() && !after.starts_with(key.as_bytes());
        if !overlaps || passed {
            continue;
        }
        let below = children(om, access_id, bucket, key).await?;
        if matches {
            out.push(child.entry);
        }
        walk.push(below.into_iter());
    }
    Ok(out)
}

/// The children of the directory `dir` ("" or a path ending in `/`),
/// sorted as S3 lists them; none if there is no such directory.
async fn children(om: &OmClient, access_id: &str, bucket: &str, dir: &str) -> Result<Vec<Child>> {
    let mut found: Vec<Child> = Vec::new();
    let mut start = String::new();
    loop {
        let page = match om.list_status(access_id, bucket, dir, &start, PAGE).await {
            Ok(page) => page,
            Err(StorageError::NoSuchKey) if found.is_empty() => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let full = page.len() >= PAGE;
        let Some((last, _)) = page.last() else { break };
        let next = last.key.clone();
        for (mut entry, is_directory) in page {
            // The OM names children by full path; asked for a file's path
            // it answers the file itself, which is not below `dir`.
            if entry.key == start || !entry.key.starts_with(dir) || entry.key.len() == dir.len() {
                continue;
            }
            if is_directory {
                entry.key.truncate(entry.key.trim_end_matches('/').len());
                entry.key.push('/');
                entry.etag.clear();
                entry.size = 0;
            }
            found.push(Child {
                entry,
                is_directory,
            });
        }
        if found.len() > MAX_CHILDREN {
            return Err(StorageError::NotImplemented(format!(
                "listing the directory {dir:?} of a FILE_SYSTEM_OPTIMIZED bucket: it has more \
                 than {MAX_CHILDREN} entries"
            )));
        }
        if !full || next == start {
            break;
        }
        start = next;
    }
    found.sort_unstable_by(|a, b| a.entry.key.cmp(&b.entry.key));
    Ok(found)
}
