//! The authorisation decision for one request on one bucket, from the
//! bucket's owner, ACL, policy and public access block, as AWS documents
//! it: an explicit Deny in the policy wins; then the owner may; then an
//! Allow from the policy or a grant of the bucket ACL; else, for the
//! object operations an object ACL can grant, that ACL decides (see
//! [`Decision::NeedsObjectAcl`]); else the request is denied. A policy
//! condition on the object's tags makes the decision wait for them
//! ([`Decision::NeedsObjectTags`]). Configuring
//! a bucket is its owner's alone, and the owner may always manage the
//! bucket's policy, whatever the policy says.

use std::sync::Arc;

use crate::access_control::Identity;

use super::acl::{Acl, Permission, Requester};
pub use super::actions::Grant;
use super::actions::{self, On, Row};
use super::policy::context::Context;
use super::policy::{Effect, NeedsObjectTags, Policy, Resource};
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
    /// Object ownership BucketOwnerEnforced: no ACL, the bucket's or an
    /// object's, grants anything.
    pub acls_disabled: bool,
    pub policy: Option<Arc<Policy>>,
    pub block: PublicAccessBlock,
}

/// What a request needs: IAM actions on a resource (see
/// [`super::actions`]), and the ACL permission that can grant them instead.
#[derive(Clone, Copy, Debug)]
pub struct Need<'a> {
    /// The S3 actions without their `s3:` prefix (`GetObject`), all of
    /// which the request needs.
    pub actions: &'static [&'static str],
    pub resource: Resource<'a>,
    pub grant: Grant,
    /// The object version whose ACL can grant it (`None`: the latest):
    /// each version has its own ACL.
    pub version_id: Option<&'a str>,
}

impl<'a> Need<'a> {
    /// What `row` needs on `resource`, for the version `version_id` names.
    pub fn of(row: &Row, resource: Resource<'a>, version_id: Option<&'a str>) -> Self {
        Self {
            actions: row.actions(version_id.is_some()),
            resource,
            grant: row.grant,
            version_id,
        }
    }

    /// What `row` needs when the request also sets the new object's ACL
    /// ([`Row::setting_acl`]); unchanged where the row asks no more.
    pub fn setting_acl(self, row: &Row) -> Self {
        match row.setting_acl {
            [] => self,
            actions => Self { actions, ..self },
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The caller owns the bucket.
    Owner,
    /// The policy or bucket ACL grants it to a caller that is not the owner.
    Granted,
    /// Only the object's ACL can still grant it, with this permission.
    NeedsObjectAcl(Permission),
    /// The policy tests the object's current tags: decide again with
    /// them in the context (loaded only then, so only such a policy costs
    /// the lookup).
    NeedsObjectTags,
    Denied,
}

impl BucketAccess {
    /// Whether the bucket policy is public (GetBucketPolicyStatus).
    pub fn policy_is_public(&self) -> bool {
        self.policy
            .as_ref()
            .is_some_and(|policy| policy.is_public())
    }

    /// The decision for `who` needing `need` in the request `context`
    /// (which the policy's conditions read, and nothing else does).
    pub fn decide(&self, who: &Identity, need: Need<'_>, context: &dyn Context) -> Decision {
        let anonymous = is_anonymous(who);
        let is_owner = !anonymous && who.access_key == self.owner;
        if need.grant == Grant::OwnerOnly && !is_owner {
            return Decision::Denied;
        }
        // The owner can always remove a policy that locked it out.
        if is_owner && need.actions.iter().all(|a| POLICY_ACTIONS.contains(a)) {
            return Decision::Owner;
        }
        let key = (!anonymous).then_some(who.access_key.as_str());
        // RestrictPublicBuckets: the public statements of a public policy
        // grant nothing; those naming keys still do, Deny ones still bind.
        let public = !(self.block.restrict_public_buckets && self.policy_is_public());
        // A Deny of any of the actions refuses; an Allow must cover all.
        let mut allowed = !need.actions.is_empty();
        let mut needs_tags = false;
        for action in need.actions {
            let verdict = match &self.policy {
                Some(policy) => policy.evaluate(key, action, need.resource, public, context),
                None => Ok(None),
            };
            match verdict {
                Ok(Some(Effect::Deny)) => return Decision::Denied,
                Ok(Some(Effect::Allow)) => {}
                Ok(None) => allowed = false,
                Err(NeedsObjectTags) => needs_tags = true,
            }
        }
        if needs_tags {
            return Decision::NeedsObjectTags;
        }
        if is_owner {
            return Decision::Owner;
        }
        if allowed {
            return Decision::Granted;
        }
        let canonical = owner::of(who);
        let requester = Requester {
            canonical_id: canonical.as_deref(),
        };
        match need.grant {
            Grant::Bucket(permission) if self.bucket_acl_allows(requester, permission) => {
                Decision::Granted
            }
            Grant::Object(permission) if !self.acls_disabled => {
                Decision::NeedsObjectAcl(permission)
            }
            _ => Decision::Denied,
        }
    }

    /// Whether the bucket ACL grants `permission` (honouring
    /// IgnorePublicAcls; none does where ACLs are disabled).
    pub fn bucket_acl_allows(&self, who: Requester<'_>, permission: Permission) -> bool {
        let public = !self.block.ignore_public_acls;
        match &self.acl {
            Some(acl) if !self.acls_disabled => acl.allows(who, permission, public),
            _ => false,
        }
    }

    /// Whether an object's ACL (`None`: never set, so `private` to the
    /// bucket owner, who was refused no earlier) grants `permission`
    /// (none does where ACLs are disabled).
    pub fn object_acl_allows(
        &self,
        acl: Option<&Acl>,
        who: Requester<'_>,
        permission: Permission,
    ) -> bool {
        !self.acls_disabled
            && acl.is_some_and(|acl| acl.allows(who, permission, !self.block.ignore_public_acls))
    }
}

/// What `endpoint` needs, from its row of the action table, or `None`
/// for requests decided elsewhere: those that act on nothing existing
/// ([`On::Nothing`]) and DeleteObjects, whose entries are each decided
/// on their own ([`On::Entries`], [`entry_need`]).
pub fn need(endpoint: &Endpoint) -> Option<Need<'_>> {
    let row = actions::row_of(endpoint.index());
    let bucket = endpoint.bucket()?;
    let resource = match row.on {
        On::Bucket => Resource::Bucket(bucket),
        On::Object => Resource::Object(bucket, endpoint.key()?),
        On::Entries | On::Nothing => return None,
    };
    Some(Need::of(row, resource, endpoint.version_id()))
}

/// What one entry of a DeleteObjects needs: its own key, and
/// s3:DeleteObjectVersion when it names a version.
pub fn entry_need<'a>(bucket: &'a str, key: &'a str, version_id: Option<&'a str>) -> Need<'a> {
    let row = actions::row_of(DELETE_OBJECTS.index());
    Need::of(row, Resource::Object(bucket, key), version_id)
}

/// Any DeleteObjects, for its row.
const DELETE_OBJECTS: Endpoint = Endpoint::DeleteObjects {
    bucket: String::new(),
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access_control::acl::Acl;
    use crate::access_control::anonymous;
    use crate::access_control::policy::context::NoRequest;

    const OWNER: &str = "OWNERKEY";
    const ALT: &str = "ALTKEY";

    fn bucket(acl: Option<&str>, policy: Option<&str>) -> BucketAccess {
        let id = owner::canonical_id(OWNER);
        BucketAccess {
            owner: OWNER.into(),
            acl: acl.map(|name| Arc::new(Acl::canned(name, &id, &id).unwrap())),
            policy: policy.map(|text| Arc::new(Policy::parse(text.as_bytes(), "b").unwrap())),
            block: PublicAccessBlock::default(),
            acls_disabled: false,
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
        access.decide(who, need(endpoint).unwrap(), &NoRequest)
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
    fn disabled_acls_grant_nothing_and_leave_the_owner_be() {
        let mut enforced = bucket(Some("public-read-write"), None);
        enforced.acls_disabled = true;
        assert_eq!(decide(&enforced, &anonymous(), &list()), Decision::Denied);
        assert_eq!(decide(&enforced, &anonymous(), &get("k")), Decision::Denied);
        assert_eq!(
            decide(&enforced, &Identity::new(OWNER), &get("k")),
            Decision::Owner
        );
        let public = Acl::canned("public-read", "x", "x").unwrap();
        let anyone = Requester { canonical_id: None };
        assert!(!enforced.object_acl_allows(Some(&public), anyone, Permission::Read));
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
            (read.actions, read.version_id),
            (&["GetObjectVersion"][..], Some("v1"))
        );
        let get_latest = get("k");
        let latest = need(&get_latest).unwrap();
        assert_eq!(
            (latest.actions, latest.version_id),
            (&["GetObject"][..], None)
        );
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
        assert_eq!(need(&delete).unwrap().actions, ["DeleteObjectVersion"]);
        let attributes = Endpoint::GetObjectAttributes {
            bucket: "b".into(),
            key: "k".into(),
            version_id: Some("v1".into()),
        };
        let read = need(&attributes).unwrap();
        assert_eq!(
            (read.actions, read.version_id),
            (
                &["GetObjectVersionAttributes", "GetObjectVersion"][..],
                Some("v1")
            )
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

    fn shared(actions: &str) -> BucketAccess {
        let policy = format!(
            r#"{{"Version":"2012-10-17","Statement":{{"Effect":"Allow",
            "Principal":{{"AWS":"ALTKEY"}},"Action":{actions},"Resource":"arn:aws:s3:::b/*"}}}}"#
        );
        bucket(None, Some(&policy))
    }

    #[test]
    fn attributes_need_the_attributes_action_and_the_read() {
        let latest = Endpoint::GetObjectAttributes {
            bucket: "b".into(),
            key: "k".into(),
            version_id: None,
        };
        let alt = Identity::new(ALT);
        let only_attributes = shared(r#""s3:GetObjectAttributes""#);
        assert_eq!(
            decide(&only_attributes, &alt, &latest),
            Decision::NeedsObjectAcl(Permission::Read),
            "s3:GetObjectAttributes alone does not let a key read attributes"
        );
        let both = shared(r#"["s3:GetObjectAttributes","s3:GetObject"]"#);
        assert_eq!(decide(&both, &alt, &latest), Decision::Granted);
        let deny_read = r#"{"Version":"2012-10-17","Statement":[
            {"Effect":"Allow","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::b/*"},
            {"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}]}"#;
        assert_eq!(
            decide(&bucket(None, Some(deny_read)), &alt, &latest),
            Decision::Denied,
            "a Deny of either action refuses"
        );
    }

    #[test]
    fn version_tagging_and_version_acls_have_their_own_actions() {
        let alt = Identity::new(ALT);
        let plain = shared(
            r#"["s3:GetObjectTagging","s3:PutObjectTagging","s3:DeleteObjectTagging","s3:PutObjectAcl","s3:GetObjectAcl"]"#,
        );
        let versioned = shared(
            r#"["s3:GetObjectVersionTagging","s3:PutObjectVersionTagging","s3:DeleteObjectVersionTagging","s3:PutObjectVersionAcl","s3:GetObjectVersionAcl"]"#,
        );
        let (b, k) = (String::from("b"), String::from("k"));
        for version_id in [None, Some(String::from("v1"))] {
            let endpoints = [
                Endpoint::GetObjectTagging {
                    bucket: b.clone(),
                    key: k.clone(),
                    version_id: version_id.clone(),
                },
                Endpoint::PutObjectTagging {
                    bucket: b.clone(),
                    key: k.clone(),
                    version_id: version_id.clone(),
                },
                Endpoint::DeleteObjectTagging {
                    bucket: b.clone(),
                    key: k.clone(),
                    version_id: version_id.clone(),
                },
                Endpoint::GetObjectAcl {
                    bucket: b.clone(),
                    key: k.clone(),
                    version_id: version_id.clone(),
                },
                Endpoint::PutObjectAcl {
                    bucket: b.clone(),
                    key: k.clone(),
                    version_id: version_id.clone(),
                },
            ];
            let (granting, not_granting) = match version_id {
                None => (&plain, &versioned),
                Some(_) => (&versioned, &plain),
            };
            for endpoint in &endpoints {
                assert_eq!(
                    decide(granting, &alt, endpoint),
                    Decision::Granted,
                    "{endpoint:?}"
                );
                assert_ne!(
                    decide(not_granting, &alt, endpoint),
                    Decision::Granted,
                    "{endpoint:?}"
                );
            }
        }
    }

    #[test]
    fn each_delete_objects_entry_is_decided_on_its_key_and_version() {
        let alt = Identity::new(ALT);
        let plain_deletes = r#"{"Version":"2012-10-17","Statement":{"Effect":"Allow",
            "Principal":{"AWS":"ALTKEY"},"Action":"s3:DeleteObject","Resource":"arn:aws:s3:::b/tmp/*"}}"#;
        let access = bucket(None, Some(plain_deletes));
        assert_eq!(
            access.decide(&alt, entry_need("b", "tmp/x", None), &NoRequest),
            Decision::Granted
        );
        assert_eq!(
            access.decide(&alt, entry_need("b", "tmp/x", Some("v1")), &NoRequest),
            Decision::Denied,
            "s3:DeleteObject does not delete a version for good"
        );
        assert_eq!(
            access.decide(&alt, entry_need("b", "keep", None), &NoRequest),
            Decision::Denied
        );
        let deny_versions = r#"{"Version":"2012-10-17","Statement":{"Effect":"Deny",
            "Principal":"*","Action":"s3:DeleteObjectVersion","Resource":"arn:aws:s3:::b/*"}}"#;
        let access = bucket(Some("public-read-write"), Some(deny_versions));
        let owner = Identity::new(OWNER);
        assert_eq!(
            access.decide(&owner, entry_need("b", "k", Some("v1")), &NoRequest),
            Decision::Denied,
            "a Deny of s3:DeleteObjectVersion binds the owner"
        );
        assert_eq!(
            access.decide(&owner, entry_need("b", "k", None), &NoRequest),
            Decision::Owner
        );
        let batch = Endpoint::DeleteObjects { bucket: "b".into() };
        assert!(need(&batch).is_none(), "decided per entry, not as a whole");
    }

    #[test]
    fn configuration_actions_are_the_iam_names_a_deny_names() {
        let deny_cors = r#"{"Version":"2012-10-17","Statement":{"Effect":"Deny",
            "Principal":"*","Action":"s3:PutBucketCORS","Resource":"arn:aws:s3:::b"}}"#;
        let access = bucket(None, Some(deny_cors));
        let owner = Identity::new(OWNER);
        for endpoint in [
            Endpoint::PutBucketCors { bucket: "b".into() },
            Endpoint::DeleteBucketCors { bucket: "b".into() },
        ] {
            assert_eq!(decide(&access, &owner, &endpoint), Decision::Denied);
        }
        let get = Endpoint::GetBucketCors { bucket: "b".into() };
        assert_eq!(decide(&access, &owner, &get), Decision::Owner);
    }

    #[test]
    fn a_policy_on_the_objects_tags_asks_for_them_and_only_then() {
        use crate::access_control::policy::context::RequestContext;
        use crate::client_address::TrustedProxies;

        let tagged = r#"{"Version":"2012-10-17","Statement":{"Effect":"Allow","Principal":{"AWS":"ALTKEY"},
            "Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*",
            "Condition":{"StringEquals":{"s3:ExistingObjectTag/env":"prod"}}}}"#;
        let access = bucket(None, Some(tagged));
        let request = http::Request::new(()).into_parts().0;
        let trusted = TrustedProxies::default();
        let context = RequestContext::new(&request, &trusted);
        let alt = Identity::new(ALT);
        let endpoint = get("k");
        let read = need(&endpoint).unwrap();
        assert_eq!(
            access.decide(&alt, read, &context),
            Decision::NeedsObjectTags
        );
        let prod = [("env".to_owned(), "prod".to_owned())];
        let with = |tags| access.decide(&alt, read, &context.with_existing_tags(tags));
        assert_eq!(with(&prod), Decision::Granted);
        assert_eq!(with(&[]), Decision::NeedsObjectAcl(Permission::Read));
        assert_eq!(
            access.decide(&Identity::new(OWNER), read, &context),
            Decision::Owner,
            "a statement naming another principal loads nothing"
        );
        assert_eq!(
            access.decide(&alt, need(&list()).unwrap(), &context),
            Decision::Denied,
            "nor does one for another action"
        );
        let deny = r#"{"Version":"2012-10-17","Statement":{"Effect":"Deny","Principal":"*",
            "Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*",
            "Condition":{"StringEquals":{"s3:ExistingObjectTag/env":"secret"}}}}"#;
        let access = bucket(None, Some(deny));
        let owner = Identity::new(OWNER);
        assert_eq!(
            access.decide(&owner, read, &context),
            Decision::NeedsObjectTags,
            "the owner's decision waits too: a Deny on the tags binds it"
        );
        let secret = [("env".to_owned(), "secret".to_owned())];
        let owner_with = |tags| access.decide(&owner, read, &context.with_existing_tags(tags));
        assert_eq!(owner_with(&secret), Decision::Denied);
        assert_eq!(owner_with(&prod), Decision::Owner);
    }
}
