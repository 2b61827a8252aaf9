//! Put/Get/DeleteBucketOwnershipControls, the `x-amz-object-ownership` a
//! CreateBucket names, and the bucket's setting as the ACL operations
//! read it (see [`crate::access_control::object_ownership`]).

use axum::response::Response;
use http::request::Parts;
use http::{HeaderMap, StatusCode};
use storage_client::{BucketDocument, Namespace, Owner};

use super::bucket_documents::{self, corrupt, load_parsed};
use super::empty_response;
use crate::access_control::acl::Acl;
use crate::access_control::object_ownership::{HEADER, ObjectOwnership};
use crate::auth::Payload;
use crate::error::{Code, S3Error, S3Result};
use crate::state::AppState;

/// One rule in XML is a few hundred bytes.
const MAX_OWNERSHIP_CONTROLS_BODY: usize = 16 * 1024;

pub async fn put_bucket_ownership_controls(
    state: &AppState,
    owner: &Owner,
    parts: &Parts,
    bucket: &str,
    payload: &mut Payload,
) -> S3Result<Response> {
    let body = bucket_documents::read_body(parts, payload, MAX_OWNERSHIP_CONTROLS_BODY).await?;
    let ownership = ObjectOwnership::from_xml(&body)?;
    if !ownership.acls_enabled() {
        // Only a `private` bucket ACL is never stored (see store_bucket_acl).
        let bucket_acl =
            bucket_documents::load(state, &owner.namespace, bucket, BucketDocument::Acl).await?;
        if bucket_acl.is_some() {
            return Err(acl_with_enforced_ownership());
        }
    }
    store(state, owner, bucket, ownership).await?;
    Ok(empty_response(StatusCode::OK))
}

pub async fn get_bucket_ownership_controls(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
) -> S3Result<Response> {
    bucket_documents::get(
        state,
        owner,
        bucket,
        BucketDocument::OwnershipControls,
        || {
            S3Error::new(
                Code::OwnershipControlsNotFoundError,
                "The bucket ownership controls were not found",
            )
            .with("BucketName", bucket)
        },
    )
    .await
}

pub async fn delete_bucket_ownership_controls(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
) -> S3Result<Response> {
    bucket_documents::delete(state, owner, bucket, BucketDocument::OwnershipControls).await
}

/// The setting a CreateBucket names, checked before the bucket exists:
/// with BucketOwnerEnforced, any bucket ACL but `private` is refused, as
/// AWS refuses it (`requested_acl` is what the request asks, if anything).
pub fn ownership_at_creation(
    headers: &HeaderMap,
    requested_acl: Option<&Acl>,
) -> S3Result<Option<ObjectOwnership>> {
    let Some(value) = headers.get(HEADER) else {
        return Ok(None);
    };
    let ownership = value
        .to_str()
        .ok()
        .and_then(|name| ObjectOwnership::from_name(name.trim()))
        .ok_or_else(|| {
            S3Error::invalid_argument("Invalid x-amz-object-ownership header")
                .with("ArgumentName", HEADER)
        })?;
    if !ownership.acls_enabled()
        && requested_acl.is_some_and(|acl| *acl != Acl::private(&acl.owner))
    {
        return Err(acl_with_enforced_ownership());
    }
    Ok(Some(ownership))
}

/// Stores the setting (a new bucket's, or a PutBucketOwnershipControls').
pub async fn store(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
    ownership: ObjectOwnership,
) -> S3Result<()> {
    let document = Some(ownership.to_xml()?);
    bucket_documents::store(
        state,
        owner,
        bucket,
        BucketDocument::OwnershipControls,
        document,
    )
    .await
}

/// The bucket's setting; `None` when it has none.
pub async fn ownership(
    state: &AppState,
    namespace: &Namespace,
    bucket: &str,
) -> S3Result<Option<ObjectOwnership>> {
    let parsed = load_parsed(
        state,
        namespace,
        bucket,
        BucketDocument::OwnershipControls,
        |text| ObjectOwnership::from_xml(text.as_bytes()).map_err(corrupt),
    )
    .await?;
    Ok(parsed.map(|ownership| *ownership))
}

/// Refuses to set `acl` where ACLs are disabled, unless it is the one ACL
/// such a bucket has anyway, as AWS decides it: a canned ACL (`canned`,
/// the request's `x-amz-acl`) must be `bucket-owner-full-control` (even
/// `private` is refused), grants or an XML body must amount to the bucket
/// owner's full control alone.
pub fn check_acl_allowed(
    ownership: Option<ObjectOwnership>,
    acl: &Acl,
    canned: Option<&str>,
    bucket_owner: &str,
) -> S3Result<()> {
    let disabled = ownership.is_some_and(|ownership| !ownership.acls_enabled());
    let owners_full_control = match canned {
        Some(name) => name == "bucket-owner-full-control",
        None => *acl == Acl::private(bucket_owner),
    };
    if disabled && !owners_full_control {
        return Err(S3Error::new(
            Code::AccessControlListNotSupported,
            "The bucket does not allow ACLs",
        ));
    }
    Ok(())
}

fn acl_with_enforced_ownership() -> S3Error {
    S3Error::new(
        Code::InvalidBucketAclWithObjectOwnership,
        "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::test_headers as headers;

    #[test]
    fn the_creation_header_is_checked_with_the_acl() {
        let owner = "a".repeat(64);
        assert_eq!(ownership_at_creation(&headers(&[]), None).unwrap(), None);
        let enforced = headers(&[(HEADER, "BucketOwnerEnforced")]);
        assert_eq!(
            ownership_at_creation(&enforced, Some(&Acl::private(&owner))).unwrap(),
            Some(ObjectOwnership::BucketOwnerEnforced)
        );
        let public = Acl::canned("public-read", &owner, &owner).unwrap();
        let err = ownership_at_creation(&enforced, Some(&public)).unwrap_err();
        assert_eq!(
            (err.code, err.status.as_u16()),
            ("InvalidBucketAclWithObjectOwnership", 400)
        );
        let writer = headers(&[(HEADER, "ObjectWriter")]);
        assert!(ownership_at_creation(&writer, Some(&public)).is_ok());
        let err = ownership_at_creation(&headers(&[(HEADER, "Nobody")]), None).unwrap_err();
        assert_eq!((err.code, err.status.as_u16()), ("InvalidArgument", 400));
    }

    #[test]
    fn only_the_bucket_owners_full_control_is_set_where_acls_are_disabled() {
        let (owner, other) = ("a".repeat(64), "b".repeat(64));
        let enforced = Some(ObjectOwnership::BucketOwnerEnforced);
        let canned = |name| Acl::canned(name, &owner, &owner).unwrap();
        let handed_over = canned("bucket-owner-full-control");
        let allowed = check_acl_allowed(
            enforced,
            &handed_over,
            Some("bucket-owner-full-control"),
            &owner,
        );
        assert!(allowed.is_ok());
        // Grants (or a body) naming the owner's full control alone.
        assert!(check_acl_allowed(enforced, &Acl::private(&owner), None, &owner).is_ok());
        for (refused, name) in [
            (canned("public-read"), Some("public-read")),
            // AWS refuses even `private` on such a bucket.
            (canned("private"), Some("private")),
            (Acl::private(&other), None),
        ] {
            let err = check_acl_allowed(enforced, &refused, name, &owner).unwrap_err();
            assert_eq!(
                (err.code, err.status.as_u16()),
                ("AccessControlListNotSupported", 400)
            );
        }
        let public = canned("public-read");
        assert!(check_acl_allowed(None, &public, Some("public-read"), &owner).is_ok());
        let writer = Some(ObjectOwnership::ObjectWriter);
        assert!(check_acl_allowed(writer, &public, Some("public-read"), &owner).is_ok());
    }
}
