//! The multipart-uploads role.

use super::role::metadata_role;
use super::{ObjectName, OpenKey, ScanRange};
use crate::{
    BlockLocation, CompleteUpload, KeyInfo, NewUpload, ObjectRef, Owner, PartCommit, PartInfo,
    PartSettings, Result, UploadInfo, UploadRef,
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

metadata_role! {
    pub(crate) trait UploadStore {
        /// Starts a multipart upload under a new random upload id; parts are
        /// written with [`crate::Storage::create_part`] and
        /// [`crate::ObjectWriter::commit_part`].
        async fn create_multipart_upload(&self, object: ObjectRef<'_>, upload: NewUpload)
            -> Result<UploadInfo>
            => facade, pass;
        /// The upload, `NoSuchUpload` unless it is in progress for its object.
        async fn multipart_upload(&self, upload: UploadRef<'_>) -> Result<UploadInfo>
            => facade, pass;
        /// What UploadPart needs of the upload: its parts' checksum algorithm
        /// and the metadata it was started with. `NoSuchUpload` unless it is
        /// in progress, either here or, on a back end whose `create_part`
        /// refuses such an upload (Ozone), from [`crate::Storage::create_part`]:
        /// such a back end need not look it up twice.
        async fn part_settings(&self, upload: UploadRef<'_>) -> Result<PartSettings>
            => facade, pass;
        /// Starts writing a part, to be committed with `commit_part`.
        /// `size_hint` as in [`crate::WriteIntent`].
        async fn create_part(&self, owner: &Owner, part: &PartName, size_hint: Option<u64>)
            -> Result<OpenKey>
            => internal, pass;
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
            commit: PartCommit
        ) -> Result<PartInfo>
            => internal, pass;
        /// Up to `limit` parts numbered above `after`, in number order.
        async fn list_parts(&self, owner: &Owner, upload: &UploadName, after: u16, limit: usize)
            -> Result<Vec<PartInfo>>
            => internal, pass;
        /// Makes the chosen parts the object, atomically and without copying
        /// data. In one transaction: checks the upload and that each chosen
        /// part still has the given ETag (`InvalidPart` otherwise) and the
        /// write condition, then makes the chosen parts' blocks the object's
        /// blocks, queues every other part's blocks and the replaced
        /// object's for reclamation, and ends the upload.
        async fn complete_multipart_upload(&self, upload: UploadRef<'_>, complete: CompleteUpload)
            -> Result<KeyInfo>
            => facade, forgets_object(upload.object.into());
        /// Ends the upload and queues all its parts' blocks for reclamation.
        async fn abort_multipart_upload(&self, upload: UploadRef<'_>) -> Result<()>
            => facade, pass;
        /// One step of ListMultipartUploads: uploads whose key has the prefix,
        /// after the scan position (see [`crate::multipart`]), in key then id order.
        async fn scan_multipart_uploads(&self, owner: &Owner, scan: ScanRange)
            -> Result<Vec<UploadInfo>>
            => internal, pass;
    }
}

/// Whether `object` is what completing an upload with `parts` (number,
/// ETag without quotes, in object order) made, as a back end tells it
/// ([`crate::backend::Backend::completed_by`]): S3 answers a retried
/// completion with that object.
pub(crate) type CompletedBy = fn(&KeyInfo, &[(u16, String)]) -> bool;

/// [`CompletedBy`] for a back end that records each completed object's
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
