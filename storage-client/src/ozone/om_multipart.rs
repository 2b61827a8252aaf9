//! The OM's multipart-upload commands. A part is written like a key:
//! `create_part` opens it (blocks, tokens), the bytes go to the datanodes,
//! and `commit_part` turns the open key into part N of the upload.
//! `complete_multipart` then stitches the chosen parts into the object
//! without copying data.

use crate::Result;

use super::model::{
    self, KeyExpectation, OpenPart, OzoneBlock, OzoneOpenKey, OzonePart, OzoneUpload,
};
use super::om_client::{
    OmClient, answer, key_args, missing, non_empty, open_key_args, volume_and_bucket, wire_count,
};
use super::proto::hadoop::ozone;
use ozone::om_request::Command;
use ozone::{KeyArgs, Type};

/// A page of parts and where the next page starts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PartsPage {
    pub parts: Vec<OzonePart>,
    /// The part number to continue after.
    pub next_marker: u32,
    pub is_truncated: bool,
}

/// A page of uploads and where the next page starts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UploadsPage {
    pub uploads: Vec<OzoneUpload>,
    pub next_key_marker: Option<String>,
    pub next_upload_id_marker: Option<String>,
    pub is_truncated: bool,
}

impl OmClient {
    /// Starts an upload for `key`; `metadata` and `tags` become the
    /// object's on completion. Returns the upload id.
    pub async fn initiate_multipart(
        &self,
        access_id: &str,
        bucket: &str,
        key: &str,
        metadata: &[(String, String)],
        tags: &[(String, String)],
    ) -> Result<String> {
        let args = KeyArgs {
            metadata: model::key_values(metadata),
            tags: model::key_values(tags),
            owner_name: Some(access_id.into()),
            ..key_args(bucket, key)
        };
        let command =
            Command::InitiateMultipart(ozone::InitiateMultipartRequest { key_args: args });
        let response = self
            .submit(access_id, Type::InitiateMultipartUpload, command)
            .await?;
        answer!(response, InitiateMultipart)
            .map(|r| r.multipart_upload_id)
            .ok_or_else(|| missing("InitiateMultiPartUpload", "multipartUploadID"))
    }

    /// Opens part `number` of an upload for writing; `size_hint` as for
    /// `create_key`. `NoSuchUpload` if the upload is not in progress.
    pub async fn create_part(
        &self,
        access_id: &str,
        bucket: &str,
        key: &str,
        upload_id: &str,
        number: u32,
        size_hint: u64,
    ) -> Result<OzoneOpenKey> {
        let part = OpenPart {
            upload_id: upload_id.into(),
            number,
        };
        let args = KeyArgs {
            data_size: Some(size_hint),
            is_multipart_key: Some(true),
            multipart_upload_id: Some(part.upload_id.clone()),
            multipart_number: Some(number),
            owner_name: Some(access_id.into()),
            ..key_args(bucket, key)
        };
        self.open_key(access_id, args, Some(part)).await
    }

    /// Makes the written `blocks` of an open part key that part, with
    /// `etag` (hex MD5 of the part) as its ETag; replaces an earlier part
    /// with the same number. Returns the part's name for completion.
    pub async fn commit_part(
        &self,
        access_id: &str,
        open: &OzoneOpenKey,
        blocks: &[OzoneBlock],
        etag: &str,
    ) -> Result<String> {
        let etag_pair = [(model::ETAG_METADATA_KEY.to_owned(), etag.to_owned())];
        let args = KeyArgs {
            data_size: Some(blocks.iter().map(|b| b.length).sum()),
            key_locations: blocks.iter().map(model::block_to_proto).collect(),
            metadata: model::key_values(&etag_pair),
            ..open_key_args(open)
        };
        let command = Command::CommitPart(ozone::CommitPartRequest {
            key_args: args,
            client_id: open.id,
        });
        let response = self
            .submit(access_id, Type::CommitMultipartUpload, command)
            .await?;
        answer!(response, CommitPart)
            .and_then(|r| r.part_name)
            .ok_or_else(|| missing("CommitMultiPartUpload", "partName"))
    }

    /// Completes the upload from `parts` (number, ETag) in ascending
    /// order, as an S3 client lists them. Returns the OM's ETag of the
    /// object (`<hex>-N`). `InvalidPart` if a part is missing or its ETag
    /// differs; `PreconditionFailed` (or `NoSuchKey`) unless the key is as
    /// `expect`ed, checked atomically with the completion.
    pub async fn complete_multipart(
        &self,
        access_id: &str,
        bucket: &str,
        key: &str,
        upload_id: &str,
        parts: &[(u32, String)],
        expect: &KeyExpectation,
    ) -> Result<String> {
        let mut args = KeyArgs {
            multipart_upload_id: Some(upload_id.into()),
            owner_name: Some(access_id.into()),
            ..key_args(bucket, key)
        };
        expect.apply(&mut args);
        let parts = parts
            .iter()
            .map(|(number, etag)| ozone::CompletePart {
                part_number: *number,
                // The OM matches parts by name or, when given, by ETag;
                // Ozone's S3 gateway sends the ETag as both.
                part_name: etag.clone(),
                etag: Some(etag.clone()),
            })
            .collect();
        let command = Command::CompleteMultipart(ozone::CompleteMultipartRequest {
            key_args: args,
            parts,
        });
        let response = self
            .submit(access_id, Type::CompleteMultipartUpload, command)
            .await?;
        answer!(response, CompleteMultipart)
            .and_then(|r| r.hash)
            .ok_or_else(|| missing("CompleteMultiPartUpload", "hash"))
    }

    /// Ends the upload and drops its parts.
    pub async fn abort_multipart(
        &self,
        access_id: &str,
        bucket: &str,
        key: &str,
        upload_id: &str,
    ) -> Result<()> {
        let args = KeyArgs {
            multipart_upload_id: Some(upload_id.into()),
            ..key_args(bucket, key)
        };
        let command = Command::AbortMultipart(ozone::AbortMultipartRequest { key_args: args });
        self.submit(access_id, Type::AbortMultipartUpload, command)
            .await?;
        Ok(())
    }

    /// Up to `max` parts numbered above `after`, in number order.
    pub async fn list_parts(
        &self,
        access_id: &str,
        bucket: &str,
        key: &str,
        upload_id: &str,
        after: u32,
        max: u32,
    ) -> Result<PartsPage> {
        let (volume, bucket) = volume_and_bucket(bucket);
        let command = Command::ListParts(ozone::ListPartsRequest {
            volume: volume.into(),
            bucket: bucket.into(),
            key: key.into(),
            upload_id: upload_id.into(),
            part_number_marker: Some(after),
            max_parts: Some(max),
        });
        let response = self
            .submit(access_id, Type::ListMultipartUploadParts, command)
            .await?;
        let page = answer!(response, ListParts).unwrap_or_default();
        Ok(PartsPage {
            next_marker: page.next_part_number_marker(),
            is_truncated: page.is_truncated(),
            parts: page
                .parts
                .into_iter()
                .map(|p| OzonePart {
                    number: p.part_number,
                    name: p.part_name,
                    size: p.size,
                    modified: model::millis(p.modification_time),
                    etag: p.etag,
                })
                .collect(),
        })
    }

    /// Up to `max` uploads whose key starts with `prefix`, after the
    /// (key, upload id) markers, in key then upload-id order.
    pub async fn list_uploads(
        &self,
        access_id: &str,
        bucket: &str,
        prefix: &str,
        key_marker: &str,
        upload_id_marker: &str,
        max: usize,
    ) -> Result<UploadsPage> {
        let (volume, bucket) = volume_and_bucket(bucket);
        let command = Command::ListUploads(ozone::ListUploadsRequest {
            volume: volume.into(),
            bucket: bucket.into(),
            prefix: prefix.into(),
            key_marker: non_empty(key_marker),
            upload_id_marker: non_empty(upload_id_marker),
            max_uploads: Some(wire_count(max)),
            with_pagination: Some(true),
        });
        let response = self
            .submit(access_id, Type::ListMultipartUploads, command)
            .await?;
        let page = answer!(response, ListUploads).unwrap_or_default();
        Ok(UploadsPage {
            is_truncated: page.is_truncated(),
            next_key_marker: page.next_key_marker,
            next_upload_id_marker: page.next_upload_id_marker,
            uploads: page
                .uploads
                .into_iter()
                .map(|u| OzoneUpload {
                    key: u.key_name,
                    upload_id: u.upload_id,
                    created: model::millis(u.creation_time),
                })
                .collect(),
        })
    }
}
