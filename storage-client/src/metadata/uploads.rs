//! The multipart-uploads role.

use async_trait::async_trait;

use super::{ObjectName, OpenKey, ScanRange};
use crate::{
    BlockLocation, CompleteUpload, KeyInfo, NewUpload, Owner, PartCommit, PartInfo, PartSettings,
    Result, UploadInfo,
};

/// One multipart upload of one object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UploadName {
    pub object: ObjectName,
    pub upload_id: String,
}

impl From<crate::UploadRef<'_>> for UploadName {
    fn from(upload: crate::UploadRef<'_>) -> Self {
        Self {
            object: upload.object.into(),
            upload_id: upload.upload_id.to_owned(),
        }
    }
}

/// One part of a multipart upload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PartName {
    pub upload: UploadName,
    /// 1 to [`crate::MAX_PART_NUMBER`].
    pub number: u16,
}

#[async_trait]
pub(crate) trait UploadStore: Send + Sync {
    /// Starts an upload under a new random upload id.
    async fn create_multipart_upload(
        &self,
        owner: &Owner,
        object: ObjectName,
        upload: NewUpload,
    ) -> Result<UploadInfo>;
    /// The upload, `NoSuchUpload` unless it is in progress for its object.
    async fn multipart_upload(&self, owner: &Owner, upload: &UploadName) -> Result<UploadInfo>;
    /// The checksum algorithm of the upload's parts and the metadata it
    /// was started with: all UploadPart needs to know of it before
    /// writing. `NoSuchUpload` unless it is in progress, either here or
    /// from `create_part`: a back end whose `create_part` refuses such an
    /// upload need not look it up twice.
    async fn part_settings(&self, owner: &Owner, upload: &UploadName) -> Result<PartSettings>;
    /// Starts writing a part, to be committed with `commit_part`.
    /// `size_hint` as in [`crate::WriteIntent`].
    async fn create_part(
        &self,
        owner: &Owner,
        part: &PartName,
        size_hint: Option<u64>,
    ) -> Result<OpenKey>;
    /// Makes the blocks written under `open` (opened by `create_part` for
    /// `part`) that part of the upload, replacing any earlier part with
    /// its number. The open key is consumed whatever the outcome; blocks
    /// left unused or replaced are queued for reclamation.
    async fn commit_part(
        &self,
        owner: &Owner,
        open: OpenKey,
        part: PartName,
        blocks: Vec<BlockLocation>,
        commit: PartCommit,
    ) -> Result<PartInfo>;
    /// Up to `limit` parts numbered above `after`, in number order.
    async fn list_parts(
        &self,
        owner: &Owner,
        upload: &UploadName,
        after: u16,
        limit: usize,
    ) -> Result<Vec<PartInfo>>;
    /// In one transaction: checks the upload and that each chosen part
    /// still has the given ETag (`InvalidPart` otherwise) and the write
    /// condition, then makes the chosen parts' blocks the object's blocks
    /// (no data is copied), queues every other part's blocks and the
    /// replaced object's for reclamation, and ends the upload.
    async fn complete_multipart_upload(
        &self,
        owner: &Owner,
        upload: UploadName,
        complete: CompleteUpload,
    ) -> Result<KeyInfo>;
    /// Whether `object` is what completing an upload with `parts` (number,
    /// ETag without quotes, in object order) made: S3 answers a retried
    /// completion with that object.
    fn completed_by(&self, object: &KeyInfo, parts: &[(u16, String)]) -> bool;
    /// Ends the upload and queues all its parts' blocks for reclamation.
    async fn abort_multipart_upload(&self, owner: &Owner, upload: UploadName) -> Result<()>;
    /// One step of ListMultipartUploads: uploads whose key has the prefix,
    /// after the scan position (see [`crate::multipart`]), in key then id order.
    async fn scan_multipart_uploads(
        &self,
        owner: &Owner,
        scan: ScanRange,
    ) -> Result<Vec<UploadInfo>>;
}

/// `completed_by` for a back end that records each completed object's
/// parts: they must be exactly these.
pub(crate) fn recorded_parts_are(object: &KeyInfo, parts: &[(u16, String)]) -> bool {
    !object.parts.is_empty()
        && object.parts.len() == parts.len()
        && object
            .parts
            .iter()
            .zip(parts)
            .all(|(part, (number, etag))| part.number == *number && part.etag == *etag)
}
