//! The authorisation decision for one request on one bucket, from the
//! bucket's owner, ACL, policy and public access block, as AWS documents
//! it: an explicit Deny in the policy wins; then the owner may; then an
//! Allow from the policy or a grant of the bucket ACL; else, for the
//! object operations an object ACL can grant, that ACL decides (see
//! [`Decision::NeedsObjectAcl`]); else the request is denied. Configuring
//! a bucket is its owner's alone, and the owner may always manage the
//! bucket's policy, whatever the policy says.

use std::sync::Arc;

use storage_client::Identity;

use super::acl::{Acl, Permission, Requester};
use super::policy::{Effect, Policy, Resource};
use super::public_access::PublicAccessBlock;
use super::{is_anonymous, owner};
use crate::router::Endpoint;

/// The actions on the policy itself, which no policy can deny the owner.
const POLICY_ACTIONS: [&str; 3] = ["GetBucketPolicy", "PutBucketPolicy", "DeleteBucketPolicy"];

/// What the gateway knows of a bucket's access rules: identity-free
/// facts, the same for every caller.
#[derive(Clone, Debug, Default)]
pub struct BucketAccess {
    /// The access key that owns the bucket.
    pub owner: String,
    /// `None`: the owner's `private` ACL.
    pub acl: Option<Arc<Acl>>,
    pub policy: Option<Arc<Policy>>,
    pub block: PublicAccessBlock,
}

/// What a request needs: an IAM action on a resource, and the ACL
/// permission that can grant it instead.
#[derive(Clone, Copy, Debug)]
pub struct Need<'a> {
    /// The S3 action without its `s3:` prefix (`GetObject`); for the
    /// owner's configuration calls, the operation's name.
    pub action: &'static str,
    pub resource: Resource<'a>,
    pub grant: Grant,
    /// The object version whose ACL can grant it (`None`: the latest):
    /// each version has its own ACL.
    pub version_id: Option<&'a str>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grant {
    /// Only the policy can grant it (or ownership).
    PolicyOnly,
    /// The bucket ACL can grant it.
    Bucket(Permission),
    /// The object's ACL can grant it.
    Object(Permission),
    /// Only the bucket owner may (configuring the bucket), and a Deny
    /// still binds it, except for managing the policy itself.
    OwnerOnly,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The caller owns the bucket.
    Owner,
    /// The policy or bucket ACL grants it to a caller that is not the owner.
    Granted,
    /// Only the object's ACL can still grant it, with this permission.
    NeedsObjectAcl(Permission),
    Denied,
}

impl BucketAccess {
    /// Whether the bucket policy is public (GetBucketPolicyStatus).
    pub fn policy_is_public(&self) -> bool {
        self.policy
            .as_ref()
            .is_some_and(|policy| policy.is_public())
    }

    pub fn decide(&self, who: &Identity, need: Need<'_>) -> Decision {
        let anonymous = is_anonymous(who);
        let is_owner = !anonymous && who.access_key == self.owner;
        if need.grant == Grant::OwnerOnly && !is_owner {
            return Decision::Denied;
        }
        // The owner can always remove a policy that locked it out.
        if is_owner && POLICY_ACTIONS.contains(&need.action) {
            return Decision::Owner;
        }
        let key = (!anonymous).then_some(who.access_key.as_str());
        // RestrictPublicBuckets: the public statements of a public policy
        // grant nothing; those naming keys still do, Deny ones still bind.
        let public = !(self.block.restrict_public_buckets && self.policy_is_public());
        let verdict = self
            .policy
            .as_ref()
            .and_then(|policy| policy.evaluate(key, need.action, need.resource, public));
        match verdict {
            Some(Effect::Deny) => return Decision::Denied,
            _ if is_owner => return Decision::Owner,
            Some(Effect::Allow) => return Decision::Granted,
            None => {}
        }
        let canonical = owner::of(who);
        let requester = Requester {
            canonical_id: canonical.as_deref(),
        };
        match need.grant {
            Grant::Bucket(permission) if self.bucket_acl_allows(requester, permission) => {
                Decision::Granted
            }
            Grant::Object(permission) => Decision::NeedsObjectAcl(permission),
            _ => Decision::Denied,
        }
    }

    /// Whether the bucket ACL grants `permission` (honouring
    /// IgnorePublicAcls).
    pub fn bucket_acl_allows(&self, who: Requester<'_>, permission: Permission) -> bool {
        let public = !self.block.ignore_public_acls;
        match &self.acl {
            Some(acl) => acl.allows(who, permission, public),
            None => false,
        }
    }

    /// Whether an object's ACL (`None`: never set, so `private` to the
    /// bucket owner, who was refused no earlier) grants `permission`.
    pub fn object_acl_allows(
        &self,
        acl: Option<&Acl>,
        who: Requester<'_>,
        permission: Permission,
    ) -> bool {
        acl.is_some_and(|acl| acl.allows(who, permission, !self.block.ignore_public_acls))
    }
}

fn on_bucket<'a>(action: &'static str, grant: Grant, bucket: &'a str) -> Option<Need<'a>> {
    Some(Need {
        action,
        resource: Resource::Bucket(bucket),
        grant,
        version_id: None,
    })
}

fn on_object<'a>(
    action: &'static str,
    grant: Grant,
    bucket: &'a str,
    key: &'a str,
) -> Option<Need<'a>> {
    Some(Need {
        action,
        resource: Resource::Object(bucket, key),
        grant,
        version_id: None,
    })
}

/// What `endpoint` needs, or `None` for requests not decided here
/// (ListBuckets and CreateBucket name no existing bucket; a CORS preflight
/// acts on nothing; a browser form upload is decided as a PutObject once
/// its handler knows the policy's signer and the key).
pub fn need(endpoint: &Endpoint) -> Option<Need<'_>> {
    use Endpoint as E;
    use Grant::{Bucket, Object, OwnerOnly, PolicyOnly};
    use Permission::{Read, ReadAcp, Write, WriteAcp};
    match endpoint {
        E::ListBuckets { .. }
        | E::CreateBucket { .. }
        | E::PostObject { .. }
        | E::PreflightRequest { .. } => None,
        E::HeadBucket { bucket }
        | E::ListObjects { bucket, .. }
        | E::ListObjectsV2 { bucket, .. } => on_bucket("ListBucket", Bucket(Read), bucket),
        E::ListObjectVersions { bucket, .. } => {
            on_bucket("ListBucketVersions", Bucket(Read), bucket)
        }
        E::ListMultipartUploads { bucket } => {
            on_bucket("ListBucketMultipartUploads", Bucket(Read), bucket)
        }
        E::GetBucketAcl { bucket } => on_bucket("GetBucketAcl", Bucket(ReadAcp), bucket),
        E::PutBucketAcl { bucket } => on_bucket("PutBucketAcl", Bucket(WriteAcp), bucket),
        E::GetBucketPolicy { bucket }
        | E::PutBucketPolicy { bucket }
        | E::DeleteBucketPolicy { bucket }
        | E::GetBucketPolicyStatus { bucket }
        | E::DeleteBucket { bucket } => on_bucket(endpoint.name(), OwnerOnly, bucket),
        E::GetPublicAccessBlock { bucket } => {
            on_bucket("GetBucketPublicAccessBlock", OwnerOnly, bucket)
        }
        E::PutPublicAccessBlock { bucket } | E::DeletePublicAccessBlock { bucket } => {
            on_bucket("PutBucketPublicAccessBlock", OwnerOnly, bucket)
        }
        E::DeleteObjects { bucket } => Some(Need {
            action: "DeleteObject",
            resource: Resource::AnyObjectIn(bucket),
            grant: Bucket(Write),
            version_id: None,
        }),
        // Reading a version by id is s3:GetObjectVersion, granted by that
        // version's own ACL (AWS: GetObject's versionId, "Configuring
        // versioned object permissions").
        E::GetObject {
            bucket,
            key,
            version_id,
            ..
        }
        | E::HeadObject {
            bucket,
            key,
            version_id,
            ..
        } => Some(Need {
            action: match version_id {
                Some(_) => "GetObjectVersion",
                None => "GetObject",
            },
            version_id: version_id.as_deref(),
            ..on_object("GetObject", Object(Read), bucket, key)?
        }),
        E::GetObjectAttributes {
            bucket,
            key,
            version_id,
        } => Some(Need {
            action: match version_id {
                Some(_) => "GetObjectVersionAttributes",
                None => "GetObjectAttributes",
            },
            version_id: version_id.as_deref(),
            ..on_object("GetObjectAttributes", Object(Read), bucket, key)?
        }),
        E::GetObjectAcl { bucket, key } => on_object("GetObjectAcl", Object(ReadAcp), bucket, key),
        E::PutObjectAcl { bucket, key } => on_object("PutObjectAcl", Object(WriteAcp), bucket, key),
        E::PutObject { bucket, key }
        | E::CopyObject { bucket, key }
        | E::CreateMultipartUpload { bucket, key }
        | E::UploadPart { bucket, key, .. }
        | E::UploadPartCopy { bucket, key, .. }
        | E::CompleteMultipartUpload { bucket, key, .. } => {
            on_object("PutObject", Bucket(Write), bucket, key)
        }
        E::AbortMultipartUpload { bucket, key, .. } => {
            on_object("AbortMultipartUpload", Bucket(Write), bucket, key)
        }
        E::ListParts { bucket, key, .. } => {
            on_object("ListMultipartUploadParts", Bucket(Write), bucket, key)
        }
        E::DeleteObject {
            bucket,
            key,
            version_id,
        } => {
            let action = match version_id {
                Some(_) => "DeleteObjectVersion",
                None => "DeleteObject",
            };
            on_object(action, Bucket(Write), bucket, key)
        }
        E::GetObjectTagging { bucket, key, .. } => {
            on_object("GetObjectTagging", PolicyOnly, bucket, key)
        }
        E::PutObjectTagging { bucket, key, .. } => {
            on_object("PutObjectTagging", PolicyOnly, bucket, key)
        }
        E::DeleteObjectTagging { bucket, key, .. } => {
            on_object("DeleteObjectTagging", PolicyOnly, bucket, key)
        }
        E::GetBucketLocation { bucket } => on_bucket("GetBucketLocation", PolicyOnly, bucket),
        // Every other operation (bucket configuration, object lock, ...)
        // is the owner's, so a grant meant for data never configures.
        other => other
            .bucket()
            .and_then(|bucket| on_bucket(other.name(), OwnerOnly, bucket)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access_control::acl::Acl;
    use crate::access_control::anonymous;

    const OWNER: &str = "OWNERKEY";
    const ALT: &str = "ALTKEY";

    fn bucket(acl: Option<&str>, policy: Option<&str>) -> BucketAccess {
        let id = owner::canonical_id(OWNER);
        BucketAccess {
            owner: OWNER.into(),
            acl: acl.map(|name| Arc::new(Acl::canned(name, &id, &id).unwrap())),
            policy: policy.map(|text| Arc::new(Policy::parse(text.as_bytes(), "b").unwrap())),
            block: PublicAccessBlock::default(),
        }
    }

    fn get(key: &str) -> Endpoint {
        Endpoint::GetObject {
            bucket: "b".into(),
            key: key.into(),
            part_number: None,
            version_id: None,
        }
    }

    fn list() -> Endpoint {
        Endpoint::ListObjectsV2 {
            bucket: "b".into(),
            query: Default::default(),
        }
    }

    fn decide(access: &BucketAccess, who: &Identity, endpoint: &Endpoint) -> Decision {
        access.decide(who, need(endpoint).unwrap())
    }

    #[test]
    fn without_grants_only_the_owner_may() {
        let private = bucket(None, None);
        let (owner, alt) = (Identity::new(OWNER), Identity::new(ALT));
        assert_eq!(decide(&private, &owner, &list()), Decision::Owner);
        assert_eq!(decide(&private, &alt, &list()), Decision::Denied);
        assert_eq!(decide(&private, &anonymous(), &list()), Decision::Denied);
        assert_eq!(
            decide(&private, &alt, &get("k")),
            Decision::NeedsObjectAcl(Permission::Read),
            "an object ACL may still grant a read"
        );
        let put = Endpoint::PutObject {
            bucket: "b".into(),
            key: "k".into(),
        };
        assert_eq!(decide(&private, &alt, &put), Decision::Denied);
    }

    #[test]
    fn a_public_read_bucket_grants_listing_not_reading() {
        let public = bucket(Some("public-read"), None);
        assert_eq!(decide(&public, &anonymous(), &list()), Decision::Granted);
        assert_eq!(
            decide(&public, &anonymous(), &get("k")),
            Decision::NeedsObjectAcl(Permission::Read)
        );
        let mut ignoring = public.clone();
        ignoring.block.ignore_public_acls = true;
        assert_eq!(decide(&ignoring, &anonymous(), &list()), Decision::Denied);
        let writable = bucket(Some("public-read-write"), None);
        let put = Endpoint::PutObject {
            bucket: "b".into(),
            key: "k".into(),
        };
        assert_eq!(decide(&writable, &anonymous(), &put), Decision::Granted);
    }

    #[test]
    fn a_deny_statement_beats_an_acl_grant_and_the_owner() {
        let policy = r#"{"Version":"2012-10-17","Statement":{"Effect":"Deny","Principal":"*",
            "Action":"s3:ListBucket","Resource":"arn:aws:s3:::b"}}"#;
        let access = bucket(Some("public-read"), Some(policy));
        assert_eq!(decide(&access, &anonymous(), &list()), Decision::Denied);
        assert_eq!(
            decide(&access, &Identity::new(OWNER), &list()),
            Decision::Denied
        );
        let pab = r#"{"Version":"2012-10-17","Statement":{"Effect":"Deny","Principal":"*",
            "Action":"s3:GetBucketPublicAccessBlock","Resource":"arn:aws:s3:::b"}}"#;
        let locked = bucket(None, Some(pab));
        let get_block = Endpoint::GetPublicAccessBlock { bucket: "b".into() };
        assert_eq!(
            decide(&locked, &Identity::new(OWNER), &get_block),
            Decision::Denied,
            "a Deny binds the owner's configuration calls too"
        );
        let manage = Endpoint::DeleteBucketPolicy { bucket: "b".into() };
        assert_eq!(
            decide(&access, &Identity::new(OWNER), &manage),
            Decision::Owner,
            "the owner can always remove a policy that locked it out"
        );
        assert_eq!(
            decide(&access, &Identity::new(ALT), &manage),
            Decision::Denied
        );
    }

    #[test]
    fn a_policy_shares_with_one_key_and_restrict_public_buckets_stops_public_ones() {
        let shared = r#"{"Version":"2012-10-17","Statement":{"Effect":"Allow",
            "Principal":{"AWS":"ALTKEY"},"Action":["s3:GetObject","s3:ListBucket"],
            "Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"]}}"#;
        let access = bucket(None, Some(shared));
        assert_eq!(
            decide(&access, &Identity::new(ALT), &get("k")),
            Decision::Granted
        );
        assert_eq!(
            decide(&access, &Identity::new("THIRD"), &list()),
            Decision::Denied
        );
        let public = r#"{"Version":"2012-10-17","Statement":{"Effect":"Allow",
            "Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}}"#;
        let mut access = bucket(None, Some(public));
        assert_eq!(decide(&access, &anonymous(), &get("k")), Decision::Granted);
        access.block.restrict_public_buckets = true;
        assert_eq!(
            decide(&access, &anonymous(), &get("k")),
            Decision::NeedsObjectAcl(Permission::Read)
        );
    }

    #[test]
    fn reading_or_deleting_a_version_by_id_is_its_own_action_and_acl() {
        let old = Endpoint::GetObject {
            bucket: "b".into(),
            key: "k".into(),
            part_number: None,
            version_id: Some("v1".into()),
        };
        let read = need(&old).unwrap();
        assert_eq!(
            (read.action, read.version_id),
            ("GetObjectVersion", Some("v1"))
        );
        let get_latest = get("k");
        let latest = need(&get_latest).unwrap();
        assert_eq!((latest.action, latest.version_id), ("GetObject", None));
        let shared = r#"{"Version":"2012-10-17","Statement":{"Effect":"Allow",
            "Principal":{"AWS":"ALTKEY"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}}"#;
        let access = bucket(None, Some(shared));
        assert_eq!(
            decide(&access, &Identity::new(ALT), &old),
            Decision::NeedsObjectAcl(Permission::Read),
            "s3:GetObject does not grant reading a version by id"
        );
        let delete = Endpoint::DeleteObject {
            bucket: "b".into(),
            key: "k".into(),
            version_id: Some("v1".into()),
        };
        assert_eq!(need(&delete).unwrap().action, "DeleteObjectVersion");
        let attributes = Endpoint::GetObjectAttributes {
            bucket: "b".into(),
            key: "k".into(),
            version_id: Some("v1".into()),
        };
        let read = need(&attributes).unwrap();
        assert_eq!(
            (read.action, read.version_id),
            ("GetObjectVersionAttributes", Some("v1"))
        );
    }

    #[test]
    fn configuration_belongs_to_the_owner() {
        let policy = r#"{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:*",
            "Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"]}}"#;
        let access = bucket(Some("public-read-write"), Some(policy));
        for endpoint in [
            Endpoint::PutBucketPolicy { bucket: "b".into() },
            Endpoint::PutBucketCors { bucket: "b".into() },
            Endpoint::DeleteBucket { bucket: "b".into() },
        ] {
            assert_eq!(
                decide(&access, &Identity::new(ALT), &endpoint),
                Decision::Denied
            );
        }
    }
}
