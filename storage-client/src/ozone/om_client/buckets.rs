//! OM commands on volumes and buckets: create, look up, list, change the
//! owner, delete, and the ACLs the gateway sets on its own volume.

use ozone::om_request::Command;
use ozone::{Status, Type};

use super::{OmClient, failure, missing, non_empty, volume_and_bucket, wire_count};
use crate::ozone::model;
use crate::ozone::proto::hadoop::{hdds, ozone};
use crate::{BucketInfo, Result, StorageError};

impl OmClient {
    /// Creates the bucket `name` (a [`volume_and_bucket`] path) with the
    /// OBJECT_STORE layout, owned by `access_id`, remembering `region`
    /// (empty: the default).
    pub async fn create_bucket(&self, access_id: &str, name: &str, region: &str) -> Result<()> {
        let (volume, bucket) = volume_and_bucket(name);
        let info = ozone::BucketInfo {
            volume_name: volume.into(),
            bucket_name: bucket.into(),
            is_version_enabled: false,
            storage_type: hdds::StorageType::Disk as i32,
            metadata: model::region_metadata(region),
            bucket_layout: Some(ozone::BucketLayout::ObjectStore as i32),
            // The OM leaves the owner empty unless the client names one.
            owner: Some(access_id.into()),
            ..Default::default()
        };
        let command = Command::CreateBucket(ozone::CreateBucketRequest { bucket_info: info });
        self.submit(access_id, Type::CreateBucket, command).await?;
        Ok(())
    }

    pub async fn info_bucket(&self, access_id: &str, name: &str) -> Result<BucketInfo> {
        Ok(model::bucket_from_proto(
            self.info_bucket_proto(access_id, name).await?,
        ))
    }

    /// The bucket's owner and ACLs as the OM keeps them.
    pub async fn bucket_acls(
        &self,
        access_id: &str,
        name: &str,
    ) -> Result<(String, Vec<ozone::OzoneAclInfo>)> {
        let info = self.info_bucket_proto(access_id, name).await?;
        Ok((info.owner.unwrap_or_default(), info.acls))
    }

    async fn info_bucket_proto(&self, access_id: &str, name: &str) -> Result<ozone::BucketInfo> {
        let (volume, bucket) = volume_and_bucket(name);
        let command = Command::InfoBucket(ozone::InfoBucketRequest {
            volume_name: volume.into(),
            bucket_name: bucket.into(),
        });
        let response = self.submit(access_id, Type::InfoBucket, command).await?;
        answer!(response, InfoBucket)
            .and_then(|r| r.bucket_info)
            .ok_or_else(|| missing("InfoBucket", "bucketInfo"))
    }

    /// Makes `owner` the bucket's owner.
    pub async fn set_bucket_owner(&self, access_id: &str, name: &str, owner: &str) -> Result<()> {
        let (volume, bucket) = volume_and_bucket(name);
        let command = Command::SetBucketProperty(ozone::SetBucketPropertyRequest {
            bucket_args: Some(ozone::BucketArgs {
                volume_name: volume.into(),
                bucket_name: bucket.into(),
                owner_name: Some(owner.into()),
            }),
        });
        self.submit(access_id, Type::SetBucketProperty, command)
            .await?;
        Ok(())
    }

    /// `BucketNotEmpty` while the bucket holds keys.
    pub async fn delete_bucket(&self, access_id: &str, name: &str) -> Result<()> {
        let (volume, bucket) = volume_and_bucket(name);
        let command = Command::DeleteBucket(ozone::DeleteBucketRequest {
            volume_name: volume.into(),
            bucket_name: bucket.into(),
        });
        self.submit(access_id, Type::DeleteBucket, command).await?;
        Ok(())
    }

    /// Up to `count` buckets of `volume` named after `start_after` (all
    /// owners), in name order.
    pub async fn list_buckets(
        &self,
        access_id: &str,
        volume: &str,
        prefix: &str,
        start_after: &str,
        count: usize,
    ) -> Result<Vec<BucketInfo>> {
        let command = Command::ListBuckets(ozone::ListBucketsRequest {
            volume_name: volume.into(),
            start_key: non_empty(start_after),
            prefix: non_empty(prefix),
            count: Some(wire_count(count)),
        });
        let response = self.submit(access_id, Type::ListBuckets, command).await?;
        Ok(answer!(response, ListBuckets)
            .map(|r| r.bucket_info)
            .unwrap_or_default()
            .into_iter()
            .map(model::bucket_from_proto)
            .collect())
    }

    // ---- volumes and ACLs ----

    /// Creates `volume`, owned and administered by `owner`, with `acls`
    /// (the OM adds its defaults for the owner). `BucketAlreadyExists`
    /// if it exists.
    pub async fn create_volume(
        &self,
        access_id: &str,
        volume: &str,
        owner: &str,
        acls: Vec<ozone::OzoneAclInfo>,
    ) -> Result<()> {
        let command = Command::CreateVolume(ozone::CreateVolumeRequest {
            volume_info: ozone::VolumeInfo {
                admin_name: owner.into(),
                owner_name: owner.into(),
                volume: volume.into(),
                volume_acls: acls,
            },
        });
        let response = self.send(access_id, Type::CreateVolume, command).await?;
        match response.status() {
            _ if response.success() => Ok(()),
            Status::VolumeAlreadyExists => Err(StorageError::BucketAlreadyExists),
            _ => Err(failure(response)),
        }
    }

    /// The volume's owner and ACLs. `NoSuchBucket` if there is no such volume.
    pub async fn volume_acls(
        &self,
        access_id: &str,
        volume: &str,
    ) -> Result<(String, Vec<ozone::OzoneAclInfo>)> {
        let command = Command::InfoVolume(ozone::InfoVolumeRequest {
            volume_name: volume.into(),
        });
        let response = self.submit(access_id, Type::InfoVolume, command).await?;
        let info = answer!(response, InfoVolume)
            .and_then(|r| r.volume_info)
            .ok_or_else(|| missing("InfoVolume", "volumeInfo"))?;
        Ok((info.owner_name, info.volume_acls))
    }

    /// Replaces every ACL of the volume or bucket `path` (`/volume`,
    /// `/volume/bucket`) with `acls`. The OM answers `success=false` with
    /// status OK when they are what it has already (no change): done too.
    pub async fn set_acls(
        &self,
        access_id: &str,
        kind: ozone::ozone_obj::ObjectType,
        path: &str,
        acls: Vec<ozone::OzoneAclInfo>,
    ) -> Result<()> {
        let command = Command::SetAcl(ozone::SetAclRequest {
            obj: ozone::OzoneObj {
                res_type: kind as i32,
                store_type: ozone::ozone_obj::StoreType::Ozone as i32,
                path: path.into(),
            },
            acl: acls,
        });
        let response = self.send(access_id, Type::SetAcl, command).await?;
        if response.success() || response.status() == Status::Ok {
            Ok(())
        } else {
            Err(failure(response))
        }
    }

    // ---- keys ----

    /// Whether the bucket `name` names is FILE_SYSTEM_OPTIMIZED, or for a
    /// bucket link (`ozone sh bucket link`) its source, which the OM
    /// resolves for every key command.
    pub async fn is_file_system_optimized(&self, access_id: &str, name: &str) -> Result<bool> {
        let mut info = self.info_bucket_proto(access_id, name).await?;
        if let (Some(volume), Some(bucket)) = (&info.source_volume, &info.source_bucket) {
            info = self
                .info_bucket_proto(access_id, &format!("{volume}/{bucket}"))
                .await?;
        }
        Ok(info.bucket_layout() == ozone::BucketLayout::FileSystemOptimized)
    }
}
