//! The one authorisation step before every operation: loads the bucket's
//! access rules (identity-free, cached by storage), decides for this
//! caller (see [`crate::access_control::decision`]) and names the identity the
//! back end is to act as: the caller itself when it owns the bucket, the
//! bucket's owner when an ACL or policy let a stranger in. A caller let in
//! by nothing keeps its own identity and so also meets storage's owner
//! check, unweakened.

use http::request::Parts;
use storage_client::{BucketDocument, Identity, StorageError};

use super::bucket_documents::load_parsed;
use super::copy_source::parse_copy_source;
use super::policy::{corrupt, public_access_block};
use crate::access_control::acl::{Acl, Permission, Requester};
use crate::access_control::decision::{self, BucketAccess, Decision, Grant, Need};
use crate::access_control::policy::{Policy, Resource};
use crate::access_control::{is_anonymous, object_acl, owner};
use crate::error::S3Error;
use crate::router::Endpoint;
use crate::state::AppState;

/// The identity to run `endpoint` as, or the caller's refusal.
pub(super) async fn authorise(
    state: &AppState,
    endpoint: &Endpoint,
    parts: &Parts,
    who: &Identity,
) -> Result<Identity, S3Error> {
    let Some(need) = decision::need(endpoint) else {
        return match endpoint {
            Endpoint::ListBuckets { .. } | Endpoint::CreateBucket { .. } if is_anonymous(who) => {
                Err(S3Error::access_denied())
            }
            _ => Ok(who.clone()),
        };
    };
    let acting = decide(state, who, need, expected_owner(parts, EXPECTED_OWNER)?).await?;
    if let Endpoint::CopyObject { .. } | Endpoint::UploadPartCopy { .. } = endpoint {
        let (bucket, key, version) = parse_copy_source(&parts.headers)?;
        let read = Need {
            action: match version {
                Some(_) => "GetObjectVersion",
                None => "GetObject",
            },
            resource: Resource::Object(&bucket, &key),
            grant: Grant::Object(Permission::Read),
            version_id: version.as_deref(),
        };
        // One identity reads the source and writes the copy, so both
        // buckets must be acted on as the same owner.
        let expected = expected_owner(parts, SOURCE_EXPECTED_OWNER)?;
        if decide(state, who, read, expected).await? != acting {
            return Err(S3Error::access_denied());
        }
    }
    Ok(acting)
}

/// The bucket's access rules. The ACL and public access block matter
/// only to callers other than the owner, so the owner's requests load
/// just the policy (whose Deny statements bind the owner too).
pub(super) async fn bucket_access(
    state: &AppState,
    bucket: &str,
    who: &Identity,
) -> Result<BucketAccess, S3Error> {
    let named = |err: StorageError| S3Error::from(err).naming(bucket, None);
    let facts = state.storage.bucket_facts(bucket).await.map_err(named)?;
    let policy = load_parsed(state, bucket, BucketDocument::Policy, |text| {
        Policy::parse(text.as_bytes(), bucket).map_err(corrupt)
    })
    .await?;
    let mut access = BucketAccess {
        owner: facts.owner,
        policy,
        ..BucketAccess::default()
    };
    if who.access_key != access.owner {
        access.acl = load_parsed(state, bucket, BucketDocument::Acl, |text| {
            Acl::from_stored(text.as_bytes())
        })
        .await?;
        access.block = public_access_block(state, bucket).await?;
    }
    Ok(access)
}

/// `x-amz-expected-bucket-owner`: the caller's guard against writing to or
/// reading from a bucket someone else owns (its value is the canonical id,
/// this gateway's account id).
const EXPECTED_OWNER: &str = "x-amz-expected-bucket-owner";
/// The same for a copy's source bucket.
const SOURCE_EXPECTED_OWNER: &str = "x-amz-source-expected-bucket-owner";

fn expected_owner<'a>(parts: &'a Parts, header: &'static str) -> Result<Option<&'a str>, S3Error> {
    parts
        .headers
        .get(header)
        .map(|value| {
            value.to_str().map_err(|_| {
                S3Error::invalid_argument("The expected bucket owner is not ASCII")
                    .with("ArgumentName", header)
            })
        })
        .transpose()
}

async fn decide(
    state: &AppState,
    who: &Identity,
    need: Need<'_>,
    expected_owner: Option<&str>,
) -> Result<Identity, S3Error> {
    let bucket = need.resource.bucket();
    let access = bucket_access(state, bucket, who).await?;
    if expected_owner.is_some_and(|expected| expected != owner::canonical_id(&access.owner)) {
        return Err(S3Error::access_denied());
    }
    let permission = match access.decide(who, need) {
        Decision::Owner => return Ok(who.clone()),
        Decision::Granted => return Ok(Identity::new(&access.owner)),
        Decision::Denied => return Err(S3Error::access_denied()),
        Decision::NeedsObjectAcl(permission) => permission,
    };
    let Resource::Object(bucket, key) = need.resource else {
        return Err(S3Error::access_denied());
    };
    let bucket_owner = Identity::new(&access.owner);
    let canonical = owner::of(who);
    let requester = Requester {
        canonical_id: canonical.as_deref(),
    };
    let version = state
        .storage
        .lookup_version(&bucket_owner, bucket, key, need.version_id)
        .await;
    match version {
        Ok(info) => {
            let acl = object_acl::stored(&info.meta)?;
            if access.object_acl_allows(acl.as_ref(), requester, permission) {
                Ok(bucket_owner)
            } else {
                Err(S3Error::access_denied())
            }
        }
        // S3 tells a missing key apart from a forbidden one only to a
        // caller that may list the bucket.
        Err(StorageError::NoSuchKey) => {
            let list = Need {
                action: "ListBucket",
                resource: Resource::Bucket(bucket),
                grant: Grant::Bucket(Permission::Read),
                version_id: None,
            };
            match access.decide(who, list) {
                Decision::Owner | Decision::Granted => {
                    Err(S3Error::from(StorageError::NoSuchKey).naming(bucket, Some(key)))
                }
                _ => Err(S3Error::access_denied()),
            }
        }
        Err(err) => Err(S3Error::from(err).naming(bucket, Some(key))),
    }
}
