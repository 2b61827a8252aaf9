//! The one authorisation step before every operation: loads the bucket's
//! access rules (identity-free, cached by storage), decides for this
//! caller (see [`crate::access_control::decision`], and
//! [`crate::access_control::actions`] for what each operation needs) and
//! returns the decision as a value, [`Authorised`]: the owner of the
//! bucket it judged, which is all storage is told (the name it acts
//! under, and a precondition it checks, never who asked), and what the
//! decision judged. An object operation
//! takes its [`ObjectVersion`] from it: when the decision had to look the
//! version up to read its ACL, the operation acts on exactly that record
//! and never looks the key up again, so the version served is the version
//! judged.

use http::request::Parts;
use storage_client::{BucketDocument, BucketRef, KeyInfo, ObjectRef, Owner, StorageError};

use crate::access_control::Identity;

use super::bucket_documents::{corrupt, load_parsed, public_access_block};
use super::copy_source::parse_copy_source;
use crate::access_control::acl::{Acl, Requester};
use crate::access_control::actions::{self, On};
use crate::access_control::decision::{self, BucketAccess, Decision, Need};
use crate::access_control::policy::context::{Context, ListingOf, NoRequest, RequestContext};
use crate::access_control::policy::{Policy, Resource};
use crate::access_control::public_access::PublicAccessBlock;
use crate::access_control::{is_anonymous, object_acl, owner};
use crate::error::S3Error;
use crate::router::Endpoint;
use crate::state::AppState;

/// What [`authorise_request`] decided, for the operation to act on.
pub(super) struct Authorised {
    /// The owner of the bucket the decision judged: the only name
    /// storage is given (see [`Owner`]).
    owner: Owner,
    /// The object version whose own ACL granted the request: the decision
    /// looked it up, and the operation acts on exactly this record.
    judged: Option<Box<KeyInfo>>,
    /// For an operation decided per entry (DeleteObjects): the caller,
    /// whose entries are each decided on the bucket's rules.
    caller: Option<Identity>,
    /// The request's bucket as the decision loaded it, for the operation
    /// to use rather than load again.
    bucket: Option<BucketContext>,
    /// Whether the caller may be told that an object or version is not
    /// there (it may list the bucket); otherwise its absence is refused
    /// as a private object would be. `None`: the caller is the owner and
    /// the policy has no condition, asked only when something is missing
    /// (so the owner's requests pay nothing for it).
    may_list: Option<bool>,
    /// Whether the request asked to bypass GOVERNANCE retention and the
    /// caller is allowed `s3:BypassGovernanceRetention` on its object.
    bypass_governance: bool,
    /// Which of a version's lock headers a GET or HEAD may show.
    lock_headers: LockHeaders,
}

/// Which lock headers GET and HEAD show: AWS shows a version's retention
/// only to a caller allowed `s3:GetObjectRetention` on it, its legal hold
/// only with `s3:GetObjectLegalHold` (the owner, unless a policy denies
/// it; others by a policy only).
#[derive(Clone, Copy, Default)]
pub(super) struct LockHeaders {
    pub retention: bool,
    pub legal_hold: bool,
}

/// What one request loaded of its bucket, once: its facts and parsed
/// documents (see [`bucket_access`]).
pub(super) struct BucketContext {
    access: BucketAccess,
    /// Whether the ACL and public access block were loaded too (they
    /// are for every caller but the owner).
    complete: bool,
    /// The caller's canonical id (`None`: anonymous): who writes, for
    /// the object ownership a write gets.
    caller: Option<String>,
}

impl BucketContext {
    fn new(access: BucketAccess, who: &Identity) -> Self {
        let complete = who.access_key != access.owner;
        let caller = owner::of(who);
        Self {
            access,
            complete,
            caller,
        }
    }

    /// The caller's canonical id; `None` for an anonymous caller.
    pub(super) fn caller(&self) -> Option<&str> {
        self.caller.as_deref()
    }

    /// The bucket's parsed policy.
    pub(super) fn policy(&self) -> Option<&Policy> {
        self.access.policy.as_deref()
    }

    /// The bucket's public access block: the one the decision loaded, or
    /// (for the owner, whose decision needs none) loaded now.
    pub(super) async fn public_access_block(
        &self,
        state: &AppState,
        bucket: BucketRef<'_>,
    ) -> Result<PublicAccessBlock, S3Error> {
        match self.complete {
            true => Ok(self.access.block),
            false => public_access_block(state, &bucket.owner.namespace, bucket.name).await,
        }
    }
}

impl Authorised {
    /// No decision on any bucket: the caller acts on its own buckets only
    /// (ListBuckets, CreateBucket), or is the anonymous caller of an
    /// operation that carries its own proof (a CORS preflight, a form
    /// upload's policy), which owns nothing.
    pub(super) fn own(who: &Identity) -> Self {
        Self {
            owner: who.owner(),
            judged: None,
            caller: None,
            bucket: None,
            may_list: Some(true),
            bypass_governance: false,
            lock_headers: LockHeaders::default(),
        }
    }

    /// A decision for `who` on `access`: it names the bucket's owner,
    /// whoever was let in.
    fn with(
        judged: Option<Box<KeyInfo>>,
        access: BucketAccess,
        who: &Identity,
        may_list: Option<bool>,
    ) -> Self {
        Self {
            owner: bucket_owner(&access, who),
            judged,
            caller: None,
            bucket: Some(BucketContext::new(access, who)),
            may_list,
            bypass_governance: false,
            lock_headers: LockHeaders::default(),
        }
    }

    /// The request's bucket as the decision loaded it (`None` for
    /// requests decided on no bucket).
    pub(super) fn bucket(&self) -> Option<&BucketContext> {
        self.bucket.as_ref()
    }

    /// The owner of the bucket judged, for storage.
    pub(super) fn owner(&self) -> &Owner {
        &self.owner
    }

    /// Whether GOVERNANCE retention gives way to this request: it asked
    /// to bypass it and the caller may.
    pub(super) fn bypasses_governance(&self) -> bool {
        self.bypass_governance
    }

    /// The capability on the object version the request names (`None`:
    /// the latest), carrying the record the decision judged, if it judged
    /// one.
    pub(super) fn object<'a>(
        &'a mut self,
        bucket: &'a str,
        key: &'a str,
        version_id: Option<&'a str>,
    ) -> ObjectVersion<'a> {
        ObjectVersion {
            object: BucketRef::new(&self.owner, bucket).object(key),
            version_id,
            judged: self.judged.take(),
            context: self.bucket.as_ref(),
            may_list: self.may_list,
            lock_headers: self.lock_headers,
        }
    }

    /// The per-entry decisions of a DeleteObjects, in its request's
    /// `context`.
    pub(super) fn entries<'a>(&'a self, context: &'a dyn Context) -> Option<Entries<'a>> {
        Some(Entries {
            who: self.caller.as_ref()?,
            access: &self.bucket.as_ref()?.access,
            context,
        })
    }
}

/// The right to act on one object version, as authorised.
pub(super) struct ObjectVersion<'a> {
    object: ObjectRef<'a>,
    version_id: Option<&'a str>,
    judged: Option<Box<KeyInfo>>,
    context: Option<&'a BucketContext>,
    may_list: Option<bool>,
    lock_headers: LockHeaders,
}

impl<'a> ObjectVersion<'a> {
    /// Which of the version's lock headers the caller may be shown.
    pub(super) fn lock_headers(&self) -> LockHeaders {
        self.lock_headers
    }

    /// The owner of the object's bucket, for storage.
    pub(super) fn owner(&self) -> &'a Owner {
        self.object.owner()
    }

    pub(super) fn bucket(&self) -> &'a str {
        self.object.bucket.name
    }

    pub(super) fn key(&self) -> &'a str {
        self.object.key
    }

    /// The object as storage names it: with its bucket's owner judged.
    pub(super) fn object_ref(&self) -> ObjectRef<'a> {
        self.object
    }

    /// The object's bucket as the decision loaded it.
    pub(super) fn bucket_context(&self) -> Option<&'a BucketContext> {
        self.context
    }

    /// The version to act on: the record the decision judged (no second
    /// lookup, so nothing written since can take its place), or, when the
    /// decision did not depend on the version (the owner, a policy or
    /// bucket ACL grant), the version the request names, looked up now.
    /// A caller let in by a policy or bucket ACL but not allowed to list
    /// the bucket learns nothing of what is not there: `403`, as S3
    /// answers it (a delete marker the request names by id stays `405`).
    pub(super) async fn resolve(self, state: &AppState) -> Result<KeyInfo, S3Error> {
        if let Some(info) = self.judged {
            return Ok(*info);
        }
        state
            .storage
            .lookup_version(self.object, self.version_id)
            .await
            .map_err(|err| {
                let may_list = || match (self.may_list, self.context) {
                    (Some(may), _) => may,
                    // `None` is the owner's decision under a policy with
                    // no condition (so no request context): ask as the owner.
                    (None, Some(context)) => {
                        let owner = Identity::new(&context.access.owner);
                        may_list(
                            &context.access,
                            &owner,
                            (self.bucket(), self.key()),
                            &NoRequest,
                        )
                    }
                    (None, None) => true,
                };
                match is_absence(&err, false) && !may_list() {
                    true => S3Error::access_denied(),
                    false => S3Error::from(err).naming(self.bucket(), Some(self.key())),
                }
            })
    }

    /// What user metadata entry `name` held in the record the decision
    /// judged (`Some(None)`: nothing), for a write to require it still
    /// does; `None` when the decision did not depend on the record.
    pub(super) fn judged_entry(&self, name: &str) -> Option<Option<String>> {
        let info = self.judged.as_ref()?;
        Some(info.meta.user.get(name).cloned())
    }

    /// The version a write to this object's record is to change: the one
    /// judged (by its id; `None` when its bucket keeps no versions), else
    /// the one the request names (`None`: the latest).
    pub(super) fn version_to_write(&self) -> Option<&str> {
        match &self.judged {
            Some(info) => info.version_id.as_deref(),
            None => self.version_id,
        }
    }
}

/// The caller and the bucket's rules, for deciding each entry of a
/// DeleteObjects on its own key and version.
pub(super) struct Entries<'a> {
    who: &'a Identity,
    access: &'a BucketAccess,
    context: &'a dyn Context,
}

impl Entries<'_> {
    /// Whether the caller may delete `key` (the version `version_id`
    /// names, for good, or the latest): `AccessDenied` for that entry
    /// alone otherwise.
    pub(super) fn decide(
        &self,
        bucket: &str,
        key: &str,
        version_id: Option<&str>,
    ) -> Result<(), S3Error> {
        let need = decision::entry_need(bucket, key, version_id);
        match self.access.decide(self.who, need, self.context) {
            Decision::Owner | Decision::Granted => Ok(()),
            // (A delete carries no object tags: never NeedsObjectTags.)
            Decision::Denied | Decision::NeedsObjectAcl(_) | Decision::NeedsObjectTags => {
                Err(S3Error::access_denied())
            }
        }
    }

    /// Whether the caller may bypass GOVERNANCE retention on `key`.
    pub(super) fn may_bypass_governance(&self, bucket: &str, key: &str) -> bool {
        may_bypass_governance(self.access, self.who, bucket, key, self.context)
    }
}

/// Whether the request asks to bypass GOVERNANCE retention
/// (`x-amz-bypass-governance-retention: true`); whether it may is the
/// caller's `s3:BypassGovernanceRetention`.
pub(super) fn asks_to_bypass_governance(parts: &Parts) -> bool {
    parts
        .headers
        .get("x-amz-bypass-governance-retention")
        .is_some_and(|value| value.as_bytes().eq_ignore_ascii_case(b"true"))
}

/// Whether `who` is allowed `s3:BypassGovernanceRetention` on the object
/// (the owner, unless a policy denies it; others by a policy only).
fn may_bypass_governance(
    access: &BucketAccess,
    who: &Identity,
    bucket: &str,
    key: &str,
    context: &dyn Context,
) -> bool {
    allowed(
        access,
        who,
        &actions::BYPASS_GOVERNANCE_RETENTION,
        bucket,
        key,
        context,
    )
}

/// Whether `who` is allowed `action` (a policy-only one) on the object.
fn allowed(
    access: &BucketAccess,
    who: &Identity,
    action: &'static actions::Row,
    bucket: &str,
    key: &str,
    context: &dyn Context,
) -> bool {
    let need = Need::of(action, Resource::Object(bucket, key), None);
    matches!(
        access.decide(who, need, context),
        Decision::Owner | Decision::Granted
    )
}

/// The owner storage is to act under for `endpoint`, or the caller's
/// refusal (for the callers that need no more of the decision: a
/// browser form upload, whose `context` is its form's).
pub(super) async fn authorise(
    state: &AppState,
    endpoint: &Endpoint,
    parts: &Parts,
    who: &Identity,
    context: &RequestContext<'_>,
) -> Result<Owner, S3Error> {
    Ok(authorise_in(state, endpoint, parts, who, context)
        .await?
        .owner)
}

/// The decision for `endpoint` by `who`, or the caller's refusal.
pub(super) async fn authorise_request(
    state: &AppState,
    endpoint: &Endpoint,
    parts: &Parts,
    who: &Identity,
) -> Result<Authorised, S3Error> {
    // Borrows only: a policy's conditions read the request when they ask.
    let context = RequestContext::new(parts, &state.trusted_proxies);
    authorise_in(state, endpoint, parts, who, &context).await
}

async fn authorise_in(
    state: &AppState,
    endpoint: &Endpoint,
    parts: &Parts,
    who: &Identity,
    context: &RequestContext<'_>,
) -> Result<Authorised, S3Error> {
    let row = actions::row_of(endpoint.index());
    if row.on == On::Entries
        && let Some(bucket) = endpoint.bucket()
    {
        let access = bucket_access(state, bucket, who).await?;
        check_expected_owner(&access, expected_owner(parts, EXPECTED_OWNER)?)?;
        // Each entry is decided before it is acted on (`Entries::decide`).
        return Ok(Authorised {
            owner: bucket_owner(&access, who),
            judged: None,
            caller: Some(who.clone()),
            bucket: Some(BucketContext::new(access, who)),
            may_list: Some(true),
            bypass_governance: false,
            lock_headers: LockHeaders::default(),
        });
    }
    let Some(need) = decision::need(endpoint) else {
        return match endpoint {
            Endpoint::ListBuckets { .. } | Endpoint::CreateBucket { .. } if is_anonymous(who) => {
                Err(S3Error::access_denied())
            }
            _ => Ok(Authorised::own(who)),
        };
    };
    let need = match Acl::requested(&parts.headers) {
        true => need.setting_acl(row),
        false => need,
    };
    let expected = expected_owner(parts, EXPECTED_OWNER)?;
    let mut authorised = decide(state, who, need, expected, context).await?;
    if asks_to_bypass_governance(parts)
        && let (Some(bucket), Some(key)) = (endpoint.bucket(), endpoint.key())
        && let Some(loaded) = &authorised.bucket
    {
        authorised.bypass_governance =
            may_bypass_governance(&loaded.access, who, bucket, key, context);
    }
    if let Endpoint::GetObject { bucket, key, .. } | Endpoint::HeadObject { bucket, key, .. } =
        endpoint
        && let Some(loaded) = &authorised.bucket
    {
        let may = |action| allowed(&loaded.access, who, action, bucket, key, context);
        authorised.lock_headers = LockHeaders {
            retention: may(&actions::GET_OBJECT_RETENTION),
            legal_hold: may(&actions::GET_OBJECT_LEGAL_HOLD),
        };
    }
    if let Endpoint::CopyObject { .. } | Endpoint::UploadPartCopy { .. } = endpoint {
        let (bucket, key, version) = parse_copy_source(&parts.headers)?;
        let read = Need::of(
            &actions::COPY_SOURCE,
            Resource::Object(&bucket, &key),
            version.as_deref(),
        );
        // Storage reads the source and writes the copy under one name,
        // so both buckets must have the same owner.
        let expected = expected_owner(parts, SOURCE_EXPECTED_OWNER)?;
        // (The source bucket's context is not the request's: dropped.)
        if decide(state, who, read, expected, context).await?.owner != authorised.owner {
            return Err(S3Error::access_denied());
        }
    }
    Ok(authorised)
}

/// The owner of the bucket `access` was loaded for on `who`'s request:
/// found in `who`'s namespace (see [`bucket_access`]), so in it too.
fn bucket_owner(access: &BucketAccess, who: &Identity) -> Owner {
    Owner::in_namespace(&access.owner, who.namespace.clone())
}

/// The bucket's access rules. The ACL, object ownership and public access
/// block matter only to callers other than the owner, so the owner's
/// requests load just the policy (whose Deny statements bind the owner
/// too); where object ownership disables ACLs, the ACL is not loaded.
pub(super) async fn bucket_access(
    state: &AppState,
    bucket: &str,
    who: &Identity,
) -> Result<BucketAccess, S3Error> {
    let named = |err: StorageError| S3Error::from(err).naming(bucket, None);
    // A bucket name means the bucket of the caller's namespace: a tenant's
    // key never reaches another's.
    let namespace = &who.namespace;
    let facts = state
        .storage
        .bucket_facts(namespace, bucket)
        .await
        .map_err(named)?;
    let policy = load_parsed(state, namespace, bucket, BucketDocument::Policy, |text| {
        Policy::parse(text.as_bytes(), bucket).map_err(corrupt)
    })
    .await?;
    let mut access = BucketAccess {
        owner: facts.owner,
        policy,
        ..BucketAccess::default()
    };
    if who.access_key != access.owner {
        let ownership = super::ownership_controls::ownership(state, namespace, bucket).await?;
        access.acls_disabled = ownership.is_some_and(|ownership| !ownership.acls_enabled());
        if !access.acls_disabled {
            access.acl = load_parsed(state, namespace, bucket, BucketDocument::Acl, |text| {
                Acl::from_stored(text.as_bytes())
            })
            .await?;
        }
        access.block = public_access_block(state, namespace, bucket).await?;
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

fn check_expected_owner(access: &BucketAccess, expected: Option<&str>) -> Result<(), S3Error> {
    if expected.is_some_and(|expected| expected != owner::canonical_id(&access.owner)) {
        return Err(S3Error::access_denied());
    }
    Ok(())
}

async fn decide(
    state: &AppState,
    who: &Identity,
    need: Need<'_>,
    expected_owner: Option<&str>,
    context: &RequestContext<'_>,
) -> Result<Authorised, S3Error> {
    let bucket = need.resource.bucket();
    let access = bucket_access(state, bucket, who).await?;
    check_expected_owner(&access, expected_owner)?;
    let mut decision = access.decide(who, need, context);
    // The version whose tags the policy read: the one the operation acts on.
    let mut looked_up = None;
    if decision == Decision::NeedsObjectTags {
        let Resource::Object(bucket, key) = need.resource else {
            return Err(S3Error::access_denied());
        };
        let bucket_owner = bucket_owner(&access, who);
        let version = state
            .storage
            .lookup_version(
                BucketRef::new(&bucket_owner, bucket).object(key),
                need.version_id,
            )
            .await;
        let version = match version {
            // No object, no tags: its tag keys are absent.
            Err(err) if !is_absence(&err, true) => {
                return Err(S3Error::from(err).naming(bucket, Some(key)));
            }
            found_or_absent => found_or_absent,
        };
        let tags = version.as_ref().map_or(&[][..], |info| &info.tags[..]);
        decision = access.decide(who, need, &context.with_existing_tags(tags));
        looked_up = Some(version);
    }
    // The key a listing would show: whether the caller may learn it is absent.
    let listed_key = match need.resource {
        Resource::Object(_, key) => key,
        _ => "",
    };
    let permission = match decision {
        Decision::Owner => {
            // A condition may make listing depend on the request, which
            // only this request's context can tell: asked now.
            let conditional = access.policy.as_ref().is_some_and(|p| p.has_conditions());
            let may_list =
                conditional.then(|| may_list(&access, who, (bucket, listed_key), context));
            let judged = looked_up.and_then(Result::ok).map(Box::new);
            return Ok(Authorised::with(judged, access, who, may_list));
        }
        Decision::Granted => {
            let may_list = Some(may_list(&access, who, (bucket, listed_key), context));
            let judged = looked_up.and_then(Result::ok).map(Box::new);
            return Ok(Authorised::with(judged, access, who, may_list));
        }
        Decision::Denied | Decision::NeedsObjectTags => return Err(S3Error::access_denied()),
        Decision::NeedsObjectAcl(permission) => permission,
    };
    let Resource::Object(bucket, key) = need.resource else {
        return Err(S3Error::access_denied());
    };
    let bucket_owner = bucket_owner(&access, who);
    let canonical = owner::of(who);
    let requester = Requester {
        canonical_id: canonical.as_deref(),
    };
    let version = match looked_up {
        Some(version) => version,
        None => {
            state
                .storage
                .lookup_version(
                    BucketRef::new(&bucket_owner, bucket).object(key),
                    need.version_id,
                )
                .await
        }
    };
    match version {
        Ok(info) => {
            let acl = object_acl::stored(&info.meta)?;
            if access.object_acl_allows(acl.as_ref(), requester, permission) {
                let judged = Some(Box::new(info));
                Ok(Authorised::with(judged, access, who, Some(false)))
            } else {
                Err(S3Error::access_denied())
            }
        }
        // Nothing there, so no ACL that could grant anything: S3 tells
        // that apart from a forbidden object only to a caller that may
        // list the bucket.
        Err(err) if is_absence(&err, true) => {
            match may_list(&access, who, (bucket, key), context) {
                true => Err(S3Error::from(err).naming(bucket, Some(key))),
                false => Err(S3Error::access_denied()),
            }
        }
        Err(err) => Err(S3Error::from(err).naming(bucket, Some(key))),
    }
}

/// Whether `who` may list `bucket` (a policy or bucket ACL decision, no
/// lookup) where the listing would show `key`: with the key as the
/// listing's `s3:prefix` ([`ListingOf`]).
fn may_list(
    access: &BucketAccess,
    who: &Identity,
    (bucket, key): (&str, &str),
    context: &dyn Context,
) -> bool {
    let list = Need::of(&actions::LIST_BUCKET, Resource::Bucket(bucket), None);
    let listing = ListingOf {
        key,
        request: context,
    };
    matches!(
        access.decide(who, list, &listing),
        Decision::Owner | Decision::Granted
    )
}

/// Whether a lookup found nothing to act on: no such key or version, or a
/// delete marker where the latest version should be (or, with
/// `addressed`, also one the request named by its id).
fn is_absence(err: &StorageError, addressed: bool) -> bool {
    match err {
        StorageError::NoSuchKey | StorageError::NoSuchVersion => true,
        StorageError::DeleteMarker {
            addressed: named, ..
        } => addressed || !named,
        _ => false,
    }
}
