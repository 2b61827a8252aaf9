//! Multipart uploads: the data that crosses the facade, and the
//! ListMultipartUploads page built on one back-end primitive ("uploads
//! after this position, at most N").
//!
//! Uploads are ordered by key, then upload id. A scan position is the key
//! bytes, a 0x00, then the upload id; 0x00 sorts before every byte a key
//! continues with, so all uploads of one key come before any longer key.

use std::time::SystemTime;

use std::future::Future;

use crate::listing::{common_prefix, past_all_starting_with};
use crate::{
    ChecksumAlgorithm, ChecksumType, ObjectChecksum, ObjectMeta, Result, Tags, WriteCondition,
};

/// What CreateMultipartUpload records for the object to be.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NewUpload {
    pub meta: ObjectMeta,
    pub tags: Tags,
    /// The algorithm every part is checksummed with, if any.
    pub checksum_algorithm: Option<ChecksumAlgorithm>,
    /// Set when an algorithm is.
    pub checksum_type: Option<ChecksumType>,
}

/// An upload in progress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UploadInfo {
    pub bucket: String,
    pub key: String,
    /// Random and unguessable: knowing it is the capability to add parts.
    pub upload_id: String,
    /// Access key id of the key that started the upload.
    pub owner: String,
    pub initiated: SystemTime,
    pub meta: ObjectMeta,
    pub tags: Tags,
    pub checksum_algorithm: Option<ChecksumAlgorithm>,
    pub checksum_type: Option<ChecksumType>,
}

/// What UploadPart needs of its upload before the part's first byte.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PartSettings {
    /// The algorithm every part is checksummed with, if any.
    pub checksum_algorithm: Option<ChecksumAlgorithm>,
    /// The metadata the upload was started with ([`NewUpload::meta`]).
    pub meta: ObjectMeta,
}

/// What `ObjectWriter::commit_part` records with the bytes of a part.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PartCommit {
    /// Hex MD5 of the part, without quotes.
    pub etag: String,
    pub checksum: Option<ObjectChecksum>,
}

/// A stored part of an upload in progress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartInfo {
    pub number: u16,
    pub size: u64,
    pub etag: String,
    pub checksum: Option<ObjectChecksum>,
    pub last_modified: SystemTime,
}

/// CompleteMultipartUpload as the storage layer applies it. The caller
/// has validated the list against the stored parts and computed the final
/// ETag and checksum; storage re-checks that every chosen part still has
/// the given ETag inside the swap, so a part replaced meanwhile fails it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompleteUpload {
    /// (part number, ETag) in object order, ascending part numbers.
    pub parts: Vec<(u16, String)>,
    pub etag: String,
    pub checksum: Option<ObjectChecksum>,
    pub condition: WriteCondition,
}

/// One page of ListParts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PartListPage {
    pub parts: Vec<PartInfo>,
    pub is_truncated: bool,
    /// The last part number returned, when truncated: continue after it.
    pub next_marker: Option<u16>,
}

/// A ListMultipartUploads request.
#[derive(Clone, Debug, Default)]
pub struct UploadListQuery {
    pub prefix: String,
    pub delimiter: Option<String>,
    /// List uploads of keys after this one, or, with `upload_id_marker`,
    /// of this key with a greater upload id too.
    pub key_marker: Option<String>,
    pub upload_id_marker: Option<String>,
    pub max_uploads: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UploadListPage {
    pub uploads: Vec<UploadInfo>,
    pub common_prefixes: Vec<String>,
    pub is_truncated: bool,
    pub next_key_marker: Option<String>,
    pub next_upload_id_marker: Option<String>,
}

/// The scan position of one upload.
pub(crate) fn position(key: &str, upload_id: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(key.len() + 1 + upload_id.len());
    out.extend_from_slice(key.as_bytes());
    out.push(0);
    out.extend_from_slice(upload_id.as_bytes());
    out
}

/// Position just past every upload of `key` (and before any longer key).
fn past_key(key: &str) -> Vec<u8> {
    let mut out = key.as_bytes().to_vec();
    out.push(1);
    out
}

/// The largest scan batch; bounds memory per step.
const MAX_BATCH: usize = 1000;

/// One page of `query`; `scan(after, limit)` is the primitive, bound to one
/// bucket, the query's prefix and the caller: up to `limit` uploads whose
/// key has the prefix and whose position sorts strictly after `after`.
pub(crate) async fn list_uploads<F>(
    scan: impl Fn(Vec<u8>, usize) -> F,
    query: &UploadListQuery,
) -> Result<UploadListPage>
where
    F: Future<Output = Result<Vec<UploadInfo>>>,
{
    let delimiter = query.delimiter.as_deref();
    let mut after = match (&query.key_marker, &query.upload_id_marker) {
        (Some(key), Some(id)) if !id.is_empty() => position(key, id),
        (Some(key), _) => match common_prefix(key, &query.prefix, delimiter) {
            // A marker that is a previous page's common prefix: its group is done.
            Some(group) => past_all_starting_with(group),
            None => past_key(key),
        },
        (None, _) => Vec::new(),
    };
    let mut page = UploadListPage::default();
    let mut returned = 0usize;
    'scan: loop {
        let limit = (query.max_uploads - returned + 1).min(MAX_BATCH);
        let batch = scan(after.clone(), limit).await?;
        let exhausted = batch.len() < limit;
        for upload in batch {
            if returned == query.max_uploads {
                page.is_truncated = true;
                break 'scan;
            }
            returned += 1;
            if let Some(group) = common_prefix(&upload.key, &query.prefix, delimiter) {
                let group = group.to_owned();
                after = past_all_starting_with(&group);
                page.next_key_marker = Some(group.clone());
                page.next_upload_id_marker = None;
                page.common_prefixes.push(group);
                // The rest of this batch may be in the group: scan past it.
                continue 'scan;
            }
            after = position(&upload.key, &upload.upload_id);
            page.next_key_marker = Some(upload.key.clone());
            page.next_upload_id_marker = Some(upload.upload_id.clone());
            page.uploads.push(upload);
        }
        if exhausted {
            break;
        }
    }
    if !page.is_truncated {
        page.next_key_marker = None;
        page.next_upload_id_marker = None;
    }
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An in-memory scan over keys with one upload id each.
    struct Fake {
        prefix: String,
        rows: Vec<(String, String)>,
    }

    impl Fake {
        fn scan(
            &self,
            after: Vec<u8>,
            limit: usize,
        ) -> std::future::Ready<Result<Vec<UploadInfo>>> {
            std::future::ready(Ok(self
                .rows
                .iter()
                .filter(|(k, id)| k.starts_with(&self.prefix) && position(k, id) > after)
                .take(limit)
                .map(|(k, id)| UploadInfo {
                    bucket: "b".into(),
                    key: k.clone(),
                    upload_id: id.clone(),
                    owner: "o".into(),
                    initiated: SystemTime::UNIX_EPOCH,
                    meta: ObjectMeta::default(),
                    tags: Vec::new(),
                    checksum_algorithm: None,
                    checksum_type: None,
                })
                .collect()))
        }
    }

    fn fake(prefix: &str, rows: &[(&str, &str)]) -> Fake {
        let mut rows: Vec<(String, String)> = rows
            .iter()
            .map(|(k, id)| ((*k).to_owned(), (*id).to_owned()))
            .collect();
        rows.sort_by_key(|(k, id)| position(k, id));
        Fake {
            prefix: prefix.to_owned(),
            rows,
        }
    }

    fn ids(page: &UploadListPage) -> Vec<String> {
        page.uploads
            .iter()
            .map(|u| format!("{}/{}", u.key, u.upload_id))
            .collect()
    }

    #[tokio::test]
    async fn pages_by_key_and_upload_id_markers() {
        let scan = fake("", &[("a", "1"), ("a", "2"), ("ab", "1"), ("b", "1")]);
        let mut query = UploadListQuery {
            max_uploads: 2,
            ..Default::default()
        };
        let first = list_uploads(|a, l| scan.scan(a, l), &query).await.unwrap();
        assert_eq!(ids(&first), ["a/1", "a/2"]);
        assert!(first.is_truncated);
        query.key_marker = first.next_key_marker;
        query.upload_id_marker = first.next_upload_id_marker;
        let second = list_uploads(|a, l| scan.scan(a, l), &query).await.unwrap();
        assert_eq!(ids(&second), ["ab/1", "b/1"]);
        assert!(!second.is_truncated);
        assert_eq!(second.next_key_marker, None);

        // A key marker alone skips every upload of that key.
        query.key_marker = Some("a".into());
        query.upload_id_marker = None;
        query.max_uploads = 10;
        let rest = list_uploads(|a, l| scan.scan(a, l), &query).await.unwrap();
        assert_eq!(ids(&rest), ["ab/1", "b/1"]);
    }

    #[tokio::test]
    async fn delimiter_rolls_keys_into_common_prefixes() {
        let rows = [
            ("logs/1", "x"),
            ("logs/2", "x"),
            ("logs/3", "x"),
            ("p/a/1", "x"),
            ("top", "x"),
        ];
        let scan = fake("", &rows);
        let mut query = UploadListQuery {
            delimiter: Some("/".into()),
            max_uploads: 1,
            ..Default::default()
        };
        let mut seen = Vec::new();
        loop {
            let page = list_uploads(|a, l| scan.scan(a, l), &query).await.unwrap();
            seen.extend(page.common_prefixes.iter().cloned());
            seen.extend(ids(&page));
            if !page.is_truncated {
                break;
            }
            query.key_marker = page.next_key_marker;
            query.upload_id_marker = page.next_upload_id_marker;
        }
        assert_eq!(seen, ["logs/", "p/", "top/x"]);

        let scan = fake("p/", &rows);
        let query = UploadListQuery {
            prefix: "p/".into(),
            delimiter: Some("/".into()),
            max_uploads: 1000,
            ..Default::default()
        };
        let page = list_uploads(|a, l| scan.scan(a, l), &query).await.unwrap();
        assert_eq!(page.common_prefixes, ["p/a/"]);
        assert!(page.uploads.is_empty());
    }
}
