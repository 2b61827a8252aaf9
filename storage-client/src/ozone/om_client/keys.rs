//! OM commands on keys: look up, create, allocate, commit, list (ListKeys
//! and, for FILE_SYSTEM_OPTIMIZED buckets, ListStatus), delete, and tags.

use ozone::om_request::Command;
use ozone::om_response::Answer;
use ozone::{KeyArgs, Type};

use super::{
    OmClient, S3_VOLUME, key_args, list_keys_command, missing, open_key_args, status_error,
    volume_and_bucket,
};
use crate::ozone::model::{
    self, ETAG_METADATA_KEY, KeyExpectation, OpenPart, OzoneBlock, OzoneKey, OzoneOpenKey,
    Replication, block_to_proto, key_values,
};
use crate::ozone::object_mapping;
use crate::ozone::proto::hadoop::{hdds, ozone};
use crate::{ListEntry, Result, StorageError};

impl OmClient {
    /// The S3 read path in one round trip: the key with a READ token and
    /// freshly resolved datanodes on every block, or with `head` only its
    /// metadata (no tokens, no pipeline lookups).
    pub async fn get_key_info(
        &self,
        access_id: &str,
        bucket: &str,
        key: &str,
        head: bool,
    ) -> Result<OzoneKey> {
        let args = KeyArgs {
            head_op: Some(head),
            latest_version_location: Some(true),
            sort_datanodes: Some(false),
            ..key_args(bucket, key)
        };
        // With the S3 context the OM reads the key from s3v whatever
        // volume it is named in (OmMetadataReader.getKeyInfo).
        let in_s3_volume = volume_and_bucket(bucket).0 == S3_VOLUME;
        let command = Command::GetKeyInfo(ozone::GetKeyInfoRequest {
            key_args: args,
            assume_s3_context: Some(in_s3_volume),
        });
        let response = self.submit(access_id, Type::GetKeyInfo, command).await?;
        let info = answer!(response, GetKeyInfo)
            .and_then(|r| r.key_info)
            .ok_or_else(|| missing("GetKeyInfo", "keyInfo"))?;
        Ok(model::key_from_proto(info))
    }

    /// Opens a key for writing, with the replication the OM's defaults
    /// give and the object's `tags` (the OM takes tags here, not at
    /// commit), if the key is as `expect`ed (`PreconditionFailed`, or
    /// `NoSuchKey` when a key was expected and there is none); the OM
    /// checks `expect` again at commit. With `size_hint > 0` the OM
    /// allocates the blocks for that many bytes at once, saving
    /// `allocate_block` round trips.
    pub async fn create_key(
        &self,
        access_id: &str,
        bucket: &str,
        key: &str,
        size_hint: u64,
        tags: &[(String, String)],
        expect: &KeyExpectation,
    ) -> Result<OzoneOpenKey> {
        let mut args = KeyArgs {
            data_size: Some(size_hint),
            owner_name: Some(access_id.into()),
            tags: key_values(tags),
            latest_version_location: Some(true),
            ..key_args(bucket, key)
        };
        expect.apply(&mut args);
        self.open_key(access_id, args, None).await
    }

    /// Sends CreateKey with `args` (an object's or, with `part`, a part's)
    /// and returns the open key the OM made.
    pub(in crate::ozone) async fn open_key(
        &self,
        access_id: &str,
        args: KeyArgs,
        part: Option<OpenPart>,
    ) -> Result<OzoneOpenKey> {
        let bucket = if args.volume_name == S3_VOLUME {
            args.bucket_name.clone()
        } else {
            format!("{}/{}", args.volume_name, args.bucket_name)
        };
        let key = args.key_name.clone();
        let command = Command::CreateKey(ozone::CreateKeyRequest {
            key_args: args,
            client_id: None,
        });
        let response = self.submit(access_id, Type::CreateKey, command).await?;
        let created = answer!(response, CreateKey)
            .ok_or_else(|| missing("CreateKey", "createKeyResponse"))?;
        let id = created.id.ok_or_else(|| missing("CreateKey", "ID"))?;
        let info = created
            .key_info
            .ok_or_else(|| missing("CreateKey", "keyInfo"))?;
        let replication = Replication {
            kind: info.r#type,
            factor: info.factor.unwrap_or(hdds::ReplicationFactor::One as i32),
        };
        Ok(OzoneOpenKey {
            bucket,
            key,
            id,
            blocks: model::key_from_proto(info).blocks,
            replication,
            part,
        })
    }

    /// One more block (READ+WRITE token) for an open key.
    pub async fn allocate_block(&self, access_id: &str, open: &OzoneOpenKey) -> Result<OzoneBlock> {
        let command = Command::AllocateBlock(ozone::AllocateBlockRequest {
            key_args: open_key_args(open),
            client_id: open.id,
        });
        let response = self.submit(access_id, Type::AllocateBlock, command).await?;
        let location = answer!(response, AllocateBlock)
            .and_then(|r| r.key_location)
            .ok_or_else(|| missing("AllocateBlock", "keyLocation"))?;
        Ok(model::block_from_proto(location))
    }

    /// Makes the open key visible with `blocks` (in key order, with their
    /// written lengths and commit sequence ids), the ETag as metadata
    /// `ETag` and the other `metadata`.
    pub async fn commit_key(
        &self,
        access_id: &str,
        open: &OzoneOpenKey,
        blocks: &[OzoneBlock],
        etag: &str,
        metadata: &[(String, String)],
    ) -> Result<()> {
        let mut all_metadata = vec![(ETAG_METADATA_KEY.to_owned(), etag.to_owned())];
        all_metadata.extend(metadata.iter().cloned());
        let args = KeyArgs {
            data_size: Some(blocks.iter().map(|b| b.length).sum()),
            key_locations: blocks.iter().map(block_to_proto).collect(),
            metadata: key_values(&all_metadata),
            owner_name: Some(access_id.into()),
            ..open_key_args(open)
        };
        let command = Command::CommitKey(ozone::CommitKeyRequest {
            key_args: args,
            client_id: open.id,
        });
        self.submit(access_id, Type::CommitKey, command).await?;
        Ok(())
    }

    /// Up to `count` keys starting with `prefix` and sorting after
    /// `start_after`, in byte order, with their ETags (ListKeysLight: no
    /// block locations, no metadata), and whether more follow.
    pub async fn list_keys(
        &self,
        access_id: &str,
        bucket: &str,
        prefix: &str,
        start_after: &str,
        count: usize,
    ) -> Result<(Vec<ListEntry>, bool)> {
        let command = list_keys_command(bucket, prefix, start_after, count);
        let response = self.submit(access_id, Type::ListKeysLight, command).await?;
        let page = answer!(response, ListKeysLight).unwrap_or_default();
        let truncated = page.is_truncated();
        let entries = page
            .basic_key_info
            .into_iter()
            .map(model::listed_from_proto)
            .collect();
        Ok((entries, truncated))
    }

    /// Up to `count` children of the directory `dir` ("" or a path ending
    /// in `/`) of a FILE_SYSTEM_OPTIMIZED bucket, after the full path
    /// `start_after` in the OM's order (by name), each with whether it is
    /// a directory; a shorter page than asked ends the directory.
    pub async fn list_status(
        &self,
        access_id: &str,
        bucket: &str,
        dir: &str,
        start_after: &str,
        count: usize,
    ) -> Result<Vec<(ListEntry, bool)>> {
        let command = Command::ListStatus(ozone::ListStatusRequest {
            key_args: key_args(bucket, dir.trim_end_matches('/')),
            recursive: false,
            start_key: start_after.into(),
            num_entries: count as u64,
            allow_partial_prefix: None,
        });
        let response = self.submit(access_id, Type::ListStatus, command).await?;
        let page = answer!(response, ListStatus).unwrap_or_default();
        Ok(page
            .statuses
            .into_iter()
            .filter_map(|status| {
                let is_directory = status.is_directory();
                let key = model::key_from_proto(status.key_info?);
                Some((object_mapping::listed(key), is_directory))
            })
            .collect())
    }

    /// As [`Self::list_keys`], with each key's metadata (ListKeys: no
    /// block locations are looked up for an OBJECT_STORE listing).
    pub async fn list_keys_with_metadata(
        &self,
        access_id: &str,
        bucket: &str,
        prefix: &str,
        start_after: &str,
        count: usize,
    ) -> Result<(Vec<OzoneKey>, bool)> {
        let command = list_keys_command(bucket, prefix, start_after, count);
        let response = self.submit(access_id, Type::ListKeys, command).await?;
        let page = answer!(response, ListKeys).unwrap_or_default();
        let truncated = page.is_truncated();
        let keys = page
            .key_info
            .into_iter()
            .map(model::key_from_proto)
            .collect();
        Ok((keys, truncated))
    }

    /// `NoSuchKey` when there is no such key (S3's idempotent delete is the
    /// caller's choice).
    pub async fn delete_key(&self, access_id: &str, bucket: &str, key: &str) -> Result<()> {
        let command = Command::DeleteKey(ozone::DeleteKeyRequest {
            key_args: key_args(bucket, key),
        });
        self.submit(access_id, Type::DeleteKey, command).await?;
        Ok(())
    }

    /// Deletes many keys in one command; returns the keys that were not
    /// deleted, each with the OM's reason as an error. Missing keys count
    /// as deleted.
    pub async fn delete_keys(
        &self,
        access_id: &str,
        bucket: &str,
        keys: &[String],
    ) -> Result<Vec<(String, StorageError)>> {
        let (volume, bucket) = volume_and_bucket(bucket);
        let command = Command::DeleteKeys(ozone::DeleteKeysRequest {
            delete_keys: Some(ozone::DeleteKeyArgs {
                volume_name: volume.into(),
                bucket_name: bucket.into(),
                keys: keys.to_vec(),
            }),
        });
        // A partial failure arrives as success=false with status
        // PARTIAL_DELETE and the per-key errors in the body.
        let response = self.send(access_id, Type::DeleteKeys, command).await?;
        let (success, status, message) = (response.success(), response.status, response.message);
        let errors = match response.answer {
            Some(Answer::DeleteKeys(body)) => body.errors,
            _ if success => Vec::new(),
            _ => return Err(status_error(status, message.unwrap_or_default())),
        };
        Ok(errors
            .into_iter()
            .filter(|e| e.error_code.as_deref() != Some("KEY_NOT_FOUND"))
            .map(|e| {
                let (code, message) = (e.error_code.unwrap_or_default(), e.error_msg);
                let error = match ozone::Status::from_str_name(&code) {
                    Some(status) => status_error(status as i32, message.unwrap_or_default()),
                    None => {
                        StorageError::Internal(format!("{code}: {}", message.unwrap_or_default()))
                    }
                };
                (e.key.unwrap_or_default(), error)
            })
            .collect())
    }

    // ---- tags ----

    /// The key's tags as the OM keeps them (lookups read them with the key).
    #[cfg(feature = "test-support")]
    pub async fn get_tags(
        &self,
        access_id: &str,
        bucket: &str,
        key: &str,
    ) -> Result<Vec<(String, String)>> {
        let command = Command::GetObjectTagging(ozone::GetObjectTaggingRequest {
            key_args: key_args(bucket, key),
        });
        let response = self
            .submit(access_id, Type::GetObjectTagging, command)
            .await?;
        Ok(model::pairs(
            answer!(response, GetObjectTagging)
                .map(|r| r.tags)
                .unwrap_or_default(),
        ))
    }

    /// Replaces the key's tag set.
    pub async fn put_tags(
        &self,
        access_id: &str,
        bucket: &str,
        key: &str,
        tags: &[(String, String)],
    ) -> Result<()> {
        let command = Command::PutObjectTagging(ozone::PutObjectTaggingRequest {
            key_args: KeyArgs {
                tags: key_values(tags),
                ..key_args(bucket, key)
            },
        });
        self.submit(access_id, Type::PutObjectTagging, command)
            .await?;
        Ok(())
    }

    pub async fn delete_tags(&self, access_id: &str, bucket: &str, key: &str) -> Result<()> {
        let command = Command::DeleteObjectTagging(ozone::DeleteObjectTaggingRequest {
            key_args: key_args(bucket, key),
        });
        self.submit(access_id, Type::DeleteObjectTagging, command)
            .await?;
        Ok(())
    }
}
