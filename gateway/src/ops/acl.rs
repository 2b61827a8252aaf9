//! GetBucketAcl, PutBucketAcl, GetObjectAcl, PutObjectAcl, and the ACL a
//! CreateBucket names. The caller was authorised before (see
//! [`super::authorise`]); `owner` is the owner of the bucket it judged.

use axum::response::Response;
use http::request::Parts;
use http::{HeaderMap, StatusCode};
use storage_client::{BucketDocument, BucketRef, MetaEntryChange, ObjectMeta, Owner, StorageError};

use super::authorise::{BucketContext, ObjectVersion};
use super::body::read_to_end;
use super::bucket_documents::public_access_block;
use super::bucket_documents::{self, document_response};
use super::empty_response;
use super::ownership_controls;
use crate::access_control::acl::Acl;
use crate::access_control::object_ownership::{ObjectOwnership, owner_of_new_object};
use crate::access_control::{object_acl, owner};
use crate::auth::Payload;
use crate::error::{Code, S3Error};
use crate::state::AppState;

/// An AccessControlPolicy with a hundred grants is a few tens of KiB.
const MAX_ACL_BYTES: usize = 64 * 1024;

pub async fn get_bucket_acl(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
) -> Result<Response, S3Error> {
    let owner_id = owner::canonical_id(&owner.access_key);
    let acl =
        match bucket_documents::load(state, &owner.namespace, bucket, BucketDocument::Acl).await? {
            Some(text) => Acl::from_stored(text.as_bytes())?,
            None => Acl::private(&owner_id),
        };
    acl_response(&acl)
}

pub async fn put_bucket_acl(
    state: &AppState,
    owner: &Owner,
    context: Option<&BucketContext>,
    parts: &Parts,
    bucket: &str,
    payload: &mut Payload,
) -> Result<Response, S3Error> {
    let owner_id = owner::canonical_id(&owner.access_key);
    let owners = (owner_id.as_str(), owner_id.as_str());
    let target = BucketRef::new(owner, bucket);
    let acl = requested_acl(state, owners, context, &parts.headers, target, payload).await?;
    store_bucket_acl(state, owner, bucket, Some(acl)).await?;
    Ok(empty_response(StatusCode::OK))
}

/// The ACL a CreateBucket asks for, checked before the bucket exists.
pub fn bucket_acl_at_creation(owner: &Owner, headers: &HeaderMap) -> Result<Option<Acl>, S3Error> {
    let owner_id = owner::canonical_id(&owner.access_key);
    Acl::from_headers(headers, &owner_id, &owner_id)
}

/// Stores the bucket's ACL; `private` (or `None`) removes the document.
pub async fn store_bucket_acl(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
    acl: Option<Acl>,
) -> Result<(), S3Error> {
    let document = match acl {
        Some(acl) if acl != Acl::private(&acl.owner) => Some(acl.to_xml()?),
        _ => None,
    };
    bucket_documents::store(state, owner, bucket, BucketDocument::Acl, document).await
}

/// The ACL of the version the request names (the latest without one):
/// the very record the decision judged, when it read its ACL.
pub async fn get_object_acl(
    state: &AppState,
    object: ObjectVersion<'_>,
) -> Result<Response, S3Error> {
    let bucket_owner = owner::canonical_id(&object.owner().access_key);
    let ownership =
        ownership_controls::ownership(state, &object.owner().namespace, object.bucket()).await?;
    let info = object.resolve(state).await?;
    let acl = match object_acl::stored(&info.meta)? {
        // Where ACLs are disabled the bucket owner owns every object,
        // whatever ACL it was written with before.
        Some(acl) if ownership.is_none_or(ObjectOwnership::acls_enabled) => acl,
        _ => Acl::private(&bucket_owner),
    };
    acl_response(&acl)
}

/// Replaces the ACL of the version the request names (the latest without
/// one), or of the very version whose ACL granted the request, and then
/// only while that ACL is still the one judged: a record written or an ACL
/// changed in between (in a bucket that keeps no versions, an overwrite
/// replaces the record judged) is not changed under a grant it never
/// made, `409 OperationAborted`, as S3 answers a conflicting concurrent
/// change; a retry is decided afresh.
pub async fn put_object_acl(
    state: &AppState,
    object: ObjectVersion<'_>,
    parts: &Parts,
    payload: &mut Payload,
) -> Result<Response, S3Error> {
    let (bucket, key) = (object.bucket(), object.key());
    let context = object.bucket_context();
    let bucket_owner = owner::canonical_id(&object.owner().access_key);
    let object_owner = object_owner(state, &object, &bucket_owner).await?;
    let owners = (object_owner.as_str(), bucket_owner.as_str());
    let target = object.object_ref().bucket;
    let acl = requested_acl(state, owners, context, &parts.headers, target, payload).await?;
    let mut meta = ObjectMeta::default();
    object_acl::record(&mut meta, Some(&acl), &bucket_owner)?;
    let change = MetaEntryChange {
        expected: object.judged_entry(object_acl::ENTRY),
        ..MetaEntryChange::new(object_acl::ENTRY, meta.user.remove(object_acl::ENTRY))
    };
    state
        .storage
        .put_version_meta_entry(object.object_ref(), object.version_to_write(), change)
        .await
        .map_err(|err| match err {
            StorageError::PreconditionFailed => S3Error::new(
                Code::OperationAborted,
                "the object's ACL changed while this request was decided; try again",
            ),
            err => S3Error::from(err),
        })
        .map_err(|err| err.naming(bucket, Some(key)))?;
    Ok(empty_response(StatusCode::OK))
}

/// Records in `meta` the ACL an object write (PutObject, CopyObject,
/// CreateMultipartUpload) asks for, in place of any it carried; a public
/// one is refused under BlockPublicAcls (read from `context`, the
/// bucket as the request's decision loaded it, when there is one).
pub async fn record_object_acl(
    state: &AppState,
    owner: &Owner,
    context: Option<&BucketContext>,
    headers: &HeaderMap,
    bucket: &str,
    meta: &mut ObjectMeta,
) -> Result<(), S3Error> {
    let bucket_owner = owner::canonical_id(&owner.access_key);
    let ownership = ownership_controls::ownership(state, &owner.namespace, bucket).await?;
    let writer = context.and_then(BucketContext::caller);
    let canned = headers.get("x-amz-acl").and_then(|v| v.to_str().ok());
    let object_owner = owner_of_new_object(ownership, writer, &bucket_owner, canned);
    let acl = Acl::from_headers(headers, object_owner, &bucket_owner)?;
    if let Some(acl) = &acl {
        ownership_controls::check_acl_allowed(ownership, acl, canned, &bucket_owner)?;
        let target = BucketRef::new(owner, bucket);
        check_public_acls_allowed(state, context, target, acl).await?;
    }
    // An object someone else owns is theirs even when `private`.
    let acl = acl.or_else(|| (object_owner != bucket_owner).then(|| Acl::private(object_owner)));
    object_acl::record(meta, acl.as_ref(), &bucket_owner)
}

/// The canonical id of the owner of the version a PutObjectAcl changes:
/// its stored ACL's owner (the writer, under ObjectWriter ownership), else
/// the bucket owner. The record the decision judged when there is one, else
/// the version looked up.
async fn object_owner(
    state: &AppState,
    object: &ObjectVersion<'_>,
    bucket_owner: &str,
) -> Result<String, S3Error> {
    let entry = match object.judged_entry(object_acl::ENTRY) {
        Some(entry) => entry,
        None => {
            let (bucket, key) = (object.bucket(), object.key());
            let info = state
                .storage
                .lookup_version(object.object_ref(), object.version_to_write())
                .await
                .map_err(|err| S3Error::from(err).naming(bucket, Some(key)))?;
            info.meta.user.get(object_acl::ENTRY).cloned()
        }
    };
    match entry {
        Some(text) => Ok(Acl::from_stored(text.as_bytes())?.owner),
        None => Ok(bucket_owner.to_owned()),
    }
}

/// The ACL of a PutBucketAcl/PutObjectAcl: from its headers, else from its
/// AccessControlPolicy body (one of the two is required), owned by
/// `owner_id` in a bucket owned by `bucket_owner` (canonical ids: a
/// bucket's ACL is its owner's, an object's its owner's); refused where object
/// ownership disables ACLs, and a public one under BlockPublicAcls.
async fn requested_acl(
    state: &AppState,
    (owner_id, bucket_owner): (&str, &str),
    context: Option<&BucketContext>,
    headers: &HeaderMap,
    bucket: BucketRef<'_>,
    payload: &mut Payload,
) -> Result<Acl, S3Error> {
    let body = read_to_end(payload, MAX_ACL_BYTES).await?;
    let from_headers = Acl::from_headers(headers, owner_id, bucket_owner)?;
    let has_body = !body.iter().all(u8::is_ascii_whitespace);
    let acl = match (from_headers, has_body) {
        (Some(_), true) => Err(S3Error::new(
            Code::UnexpectedContent,
            "This request does not support content when an ACL is set by headers",
        )),
        (Some(acl), false) => Ok(acl),
        (None, true) => Acl::from_xml(&body, owner_id),
        (None, false) => Err(S3Error::new(
            Code::MissingSecurityHeader,
            "Your request was missing a required header: x-amz-acl, x-amz-grant-* or an AccessControlPolicy body",
        )),
    }?;
    let ownership =
        ownership_controls::ownership(state, &bucket.owner.namespace, bucket.name).await?;
    let canned = headers.get("x-amz-acl").and_then(|v| v.to_str().ok());
    ownership_controls::check_acl_allowed(ownership, &acl, canned, bucket_owner)?;
    check_public_acls_allowed(state, context, bucket, &acl).await?;
    Ok(acl)
}

/// BlockPublicAcls: a public ACL is refused, whoever sets it. The block
/// is the request's (`context`), loaded at most once, when there is one.
async fn check_public_acls_allowed(
    state: &AppState,
    context: Option<&BucketContext>,
    bucket: BucketRef<'_>,
    acl: &Acl,
) -> Result<(), S3Error> {
    if !acl.is_public() {
        return Ok(());
    }
    let block = match context {
        Some(context) => context.public_access_block(state, bucket).await?,
        None => public_access_block(state, &bucket.owner.namespace, bucket.name).await?,
    };
    if block.block_public_acls {
        return Err(S3Error::access_denied());
    }
    Ok(())
}

fn acl_response(acl: &Acl) -> Result<Response, S3Error> {
    Ok(document_response(acl.to_xml()?, "application/xml"))
}
