//! What a facade call acts on, named once: a bucket as the gateway judged
//! it, an object in it, an upload of that object, a part number, a tag
//! set.
//!
//! The references borrow: the gateway holds the owner it judged and the
//! names the request carried, so naming an object costs no allocation on
//! the hot path (GET, HEAD, PUT), and they are `Copy` so one value can be
//! passed to each call of a request.

use std::borrow::Cow;

use crate::{Namespace, Owner, Result, StorageError};

/// S3's part numbers run from 1 to this.
pub const MAX_PART_NUMBER: u16 = 10_000;

/// A bucket together with the [`Owner`] the gateway's decision judged for
/// it: every bucket-scoped call takes this one value, so an owner never
/// travels apart from the bucket it was judged for. Whatever else comes to
/// scope a bucket's name (a tenant's volume, say) is added here, and no
/// call site changes shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BucketRef<'a> {
    pub owner: &'a Owner,
    pub name: &'a str,
}

impl<'a> BucketRef<'a> {
    pub fn new(owner: &'a Owner, name: &'a str) -> Self {
        Self { owner, name }
    }

    /// The object under `key` in this bucket.
    pub fn object(self, key: &'a str) -> ObjectRef<'a> {
        ObjectRef { bucket: self, key }
    }

    /// The name the back end keeps this bucket under (see [`bucket_path`]).
    pub(crate) fn path(self) -> Cow<'a, str> {
        bucket_path(&self.owner.namespace, self.name)
    }
}

/// The name a back end keeps the bucket `name` of `namespace` under: the
/// S3 name in the shared namespace, `volume/name` in a tenant's, so every
/// cache and record keyed by it keeps tenants apart. A `/` in the S3 name
/// (no bucket has one, but a request may name one) is escaped, so the
/// only `/` in a path is the one after a tenant's volume.
pub(crate) fn bucket_path<'a>(namespace: &Namespace, name: &'a str) -> Cow<'a, str> {
    let name = match name.contains('/') {
        true => Cow::Owned(name.replace('/', "%2F")),
        false => Cow::Borrowed(name),
    };
    match namespace {
        Namespace::Shared => name,
        Namespace::Tenant(volume) => Cow::Owned(format!("{volume}/{name}")),
    }
}

/// One object: its bucket (with the owner judged) and its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectRef<'a> {
    pub bucket: BucketRef<'a>,
    pub key: &'a str,
}

impl<'a> ObjectRef<'a> {
    /// The owner judged for the object's bucket.
    pub fn owner(self) -> &'a Owner {
        self.bucket.owner
    }

    /// The multipart upload `upload_id` of this object.
    pub fn upload(self, upload_id: &'a str) -> UploadRef<'a> {
        UploadRef {
            object: self,
            upload_id,
        }
    }
}

/// One object's name, owned: what an open key carries and the lookup
/// cache is keyed by. Callers of the facade name an object with
/// [`ObjectRef`], which borrows and carries the owner judged.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ObjectName {
    pub bucket: String,
    pub key: String,
}

impl ObjectName {
    pub(crate) fn new(bucket: &str, key: &str) -> Self {
        Self {
            bucket: bucket.to_owned(),
            key: key.to_owned(),
        }
    }
}

impl From<ObjectRef<'_>> for ObjectName {
    fn from(object: ObjectRef<'_>) -> Self {
        Self::new(&object.bucket.path(), object.key)
    }
}

/// One multipart upload of one object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UploadRef<'a> {
    pub object: ObjectRef<'a>,
    pub upload_id: &'a str,
}

/// A part number S3 allows: 1 to [`MAX_PART_NUMBER`]. Made only by
/// [`PartNumber::new`], so a call that takes one need not check it again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PartNumber(u16);

impl PartNumber {
    /// `InvalidArgument` outside 1 to [`MAX_PART_NUMBER`].
    pub fn new(number: u16) -> Result<Self> {
        if (1..=MAX_PART_NUMBER).contains(&number) {
            Ok(Self(number))
        } else {
            Err(StorageError::InvalidArgument(format!(
                "part number {number} is not between 1 and {MAX_PART_NUMBER}"
            )))
        }
    }

    pub fn get(self) -> u16 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn part_numbers_are_those_s3_allows() {
        assert_eq!(PartNumber::new(1).unwrap().get(), 1);
        assert_eq!(PartNumber::new(10_000).unwrap().get(), 10_000);
        for refused in [0, 10_001, u16::MAX] {
            assert!(matches!(
                PartNumber::new(refused),
                Err(StorageError::InvalidArgument(_))
            ));
        }
    }

    #[test]
    fn a_tenants_bucket_is_kept_under_its_volume_and_no_name_can_pose_as_one() {
        let shared = Owner::new("AK");
        let tenant = Owner::in_namespace("t$u", Namespace::Tenant("t".into()));
        assert!(matches!(
            BucketRef::new(&shared, "b").path(),
            Cow::Borrowed("b")
        ));
        assert_eq!(BucketRef::new(&tenant, "b").path(), "t/b");
        assert_eq!(BucketRef::new(&shared, "t/b").path(), "t%2Fb");
        assert_eq!(BucketRef::new(&tenant, "x/b").path(), "t/x%2Fb");
    }

    #[test]
    fn references_nest_without_copying_names() {
        let owner = Owner::new("AK");
        let upload = BucketRef::new(&owner, "b").object("k").upload("u");
        assert_eq!(upload.object.owner(), &owner);
        assert_eq!(upload.object.bucket.name, "b");
        assert_eq!((upload.object.key, upload.upload_id), ("k", "u"));
    }
}
