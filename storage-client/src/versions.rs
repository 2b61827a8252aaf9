//! What S3 versioning looks like from outside the back end: a bucket's
//! versioning state, what a delete did, and a page of ListObjectVersions.

use std::time::SystemTime;

use crate::ObjectMeta;

/// The version id S3 gives an object written while versioning was never
/// enabled or is suspended.
pub const NULL_VERSION_ID: &str = "null";

/// A bucket's versioning state. A bucket that was once versioned never
/// goes back to `Unversioned`, as in S3.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Versioning {
    #[default]
    Unversioned,
    Enabled,
    Suspended,
}

/// What a DeleteObject did, for its `x-amz-version-id` and
/// `x-amz-delete-marker` answers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Deleted {
    /// The version removed, or the delete marker made; `None` in an
    /// unversioned bucket.
    pub version_id: Option<String>,
    /// Whether the version removed, or the one made, is a delete marker.
    pub delete_marker: bool,
}

/// ListObjectVersions' parameters. Versions of a key are listed newest
/// first; `version_id_marker` only counts with a `key_marker`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VersionListQuery {
    pub prefix: String,
    pub delimiter: Option<String>,
    pub key_marker: Option<String>,
    pub version_id_marker: Option<String>,
    pub max_keys: usize,
}

/// One version of a key, or a delete marker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionEntry {
    pub key: String,
    pub version_id: String,
    pub is_latest: bool,
    pub delete_marker: bool,
    /// Zero, and the ETag empty, for a delete marker.
    pub size: u64,
    pub etag: String,
    pub last_modified: SystemTime,
    pub owner: String,
    /// The version's metadata and its parts' stored sizes, as in
    /// [`crate::ListEntry`]; empty for a delete marker.
    pub meta: ObjectMeta,
    pub part_sizes: Vec<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VersionListPage {
    pub entries: Vec<VersionEntry>,
    pub common_prefixes: Vec<String>,
    pub is_truncated: bool,
    /// Where the next page starts, when truncated: after this key and (when
    /// the page ended inside a key's versions) this version.
    pub next_key_marker: Option<String>,
    pub next_version_id_marker: Option<String>,
}
