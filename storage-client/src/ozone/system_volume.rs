//! The volume the gateway keeps its own records in (credentials, bucket
//! documents, checksum records): [`RECORDS_VOLUME`], not `s3v`, which
//! Ozone's own S3 gateway serves to every Ozone user with an S3 secret.
//!
//! The gateway's system identity creates the volume and its buckets and
//! sets their ACLs to exactly one entry, itself with every right; at every
//! start it checks that the volume and each bucket still belong to it and
//! grant nobody else anything, and refuses to start otherwise. The ACLs
//! bind where the cluster enforces them (`ozone.acl.enabled`, off by
//! default); the records' own seal ([`super::records`]) protects them
//! either way.

use crate::{Result, StorageError};

use super::om_client::{OmClient, volume_and_bucket};
use super::proto::hadoop::ozone::{
    OzoneAclInfo, ozone_acl_info::OzoneAclScope, ozone_acl_info::OzoneAclType,
    ozone_obj::ObjectType,
};
use super::records::RECORDS_VOLUME;

/// Ozone's ACLType bit of ALL, and of NONE (which grants nothing).
const ALL: u32 = 1 << 7;
const NONE: u32 = 1 << 8;

/// The one ACL a records volume or bucket has: `owner` may do anything.
fn owner_only(owner: &str) -> Vec<OzoneAclInfo> {
    vec![OzoneAclInfo {
        r#type: OzoneAclType::User as i32,
        name: owner.into(),
        rights: ALL.to_le_bytes()[..1].to_vec(),
        acl_scope: OzoneAclScope::Access as i32,
    }]
}

/// The rights of an ACL entry (a little-endian bit set).
fn rights(acl: &OzoneAclInfo) -> u32 {
    acl.rights
        .iter()
        .take(4)
        .enumerate()
        .fold(0, |mask, (i, byte)| mask | (u32::from(*byte) << (8 * i)))
}

/// The entries of `acls` that grant anyone but `owner` any right, as
/// Ozone writes them (`group:staff:...`).
fn grants_to_others(acls: &[OzoneAclInfo], owner: &str) -> Vec<String> {
    acls.iter()
        .filter(|acl| rights(acl) & !NONE != 0)
        .filter(|acl| !(acl.r#type == OzoneAclType::User as i32 && acl.name == owner))
        .map(|acl| {
            let kind = OzoneAclType::try_from(acl.r#type).map_or_else(
                |_| acl.r#type.to_string(),
                |t| t.as_str_name().to_lowercase(),
            );
            format!("{kind}:{}:{:#x}", acl.name, rights(acl))
        })
        .collect()
}

/// Makes the records volume and `buckets` (paths from [`records_bucket`])
/// if missing, owner-only, and checks that each belongs to `owner` and
/// grants nobody else anything.
pub(super) async fn prepare(om: &OmClient, owner: &str, buckets: &[String]) -> Result<()> {
    let volume_path = format!("/{RECORDS_VOLUME}");
    match om
        .create_volume(owner, RECORDS_VOLUME, owner, owner_only(owner))
        .await
    {
        Ok(()) => {
            om.set_acls(owner, ObjectType::Volume, &volume_path, owner_only(owner))
                .await?;
        }
        Err(StorageError::BucketAlreadyExists) => {}
        Err(StorageError::AccessDenied) => {
            return Err(StorageError::InvalidArgument(format!(
                "the Ozone Manager does not let the gateway ({owner:?}) create its records \
                 volume {RECORDS_VOLUME} (ozone.acl.enabled is on): as an Ozone administrator, \
                 run `ozone sh volume create --user {owner} /{RECORDS_VOLUME}` and \
                 `ozone sh volume setacl --acls user:{owner}:a /{RECORDS_VOLUME}`"
            )));
        }
        Err(e) => return Err(e),
    }
    let (volume_owner, acls) = om.volume_acls(owner, RECORDS_VOLUME).await?;
    check(
        &format!("volume {RECORDS_VOLUME}"),
        &volume_owner,
        &acls,
        owner,
        &format!("ozone sh volume setacl --acls user:{owner}:a {volume_path}"),
    )?;
    for bucket in buckets {
        let (_, name) = volume_and_bucket(bucket);
        let path = format!("/{bucket}");
        match om.create_bucket(owner, bucket, "").await {
            Ok(()) => {
                om.set_acls(owner, ObjectType::Bucket, &path, owner_only(owner))
                    .await?;
            }
            Err(StorageError::BucketAlreadyExists) => {}
            Err(e) => return Err(e),
        }
        let (bucket_owner, acls) = om.bucket_acls(owner, bucket).await?;
        check(
            &format!("bucket {RECORDS_VOLUME}/{name}"),
            &bucket_owner,
            &acls,
            owner,
            &format!("ozone sh bucket setacl --acls user:{owner}:a {path}"),
        )?;
    }
    Ok(())
}

fn check(
    what: &str,
    found_owner: &str,
    acls: &[OzoneAclInfo],
    owner: &str,
    fix: &str,
) -> Result<()> {
    if found_owner != owner {
        return Err(StorageError::InvalidArgument(format!(
            "the gateway's records {what} is owned by {found_owner:?}, not by the gateway \
             ({owner:?}): someone else made it; an Ozone administrator must remove it (or \
             choose another bucket prefix) before the gateway starts"
        )));
    }
    let others = grants_to_others(acls, owner);
    if !others.is_empty() {
        return Err(StorageError::InvalidArgument(format!(
            "the gateway's records {what} grants others access ({}): only the gateway \
             ({owner:?}) may have any; as an Ozone administrator, run `{fix}`",
            others.join(", ")
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acl(kind: OzoneAclType, name: &str, rights: &[u8]) -> OzoneAclInfo {
        OzoneAclInfo {
            r#type: kind as i32,
            name: name.into(),
            rights: rights.to_vec(),
            acl_scope: OzoneAclScope::Access as i32,
        }
    }

    #[test]
    fn the_owner_alone_is_no_grant_to_others() {
        assert_eq!(owner_only(".s3gw")[0].rights, vec![0x80]);
        assert!(grants_to_others(&owner_only(".s3gw"), ".s3gw").is_empty());
        // NONE (bit 8) grants nothing.
        let none = acl(OzoneAclType::World, "", &[0, 1]);
        assert!(grants_to_others(&[none], ".s3gw").is_empty());
    }

    #[test]
    fn any_right_for_anyone_else_is_named() {
        let acls = [
            acl(OzoneAclType::User, ".s3gw", &[0x80]),
            acl(OzoneAclType::Group, "staff", &[0b1001]),
            acl(OzoneAclType::World, "", &[0x01]),
            acl(OzoneAclType::User, "alice", &[0, 0b10]),
        ];
        assert_eq!(
            grants_to_others(&acls, ".s3gw"),
            ["group:staff:0x9", "world::0x1", "user:alice:0x200"]
        );
        let message = check("volume v", ".s3gw", &acls, ".s3gw", "fix it")
            .unwrap_err()
            .to_string();
        assert!(message.contains("group:staff") && message.contains("fix it"));
        assert!(!message.contains('\n'));
    }

    #[test]
    fn a_volume_someone_else_owns_is_refused() {
        let message = check("volume v", "alice", &owner_only("alice"), ".s3gw", "")
            .unwrap_err()
            .to_string();
        assert!(message.contains("\"alice\""), "{message}");
    }
}
