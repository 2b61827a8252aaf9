//! Where an object's ACL lives: one entry of its user metadata under a
//! name no request can produce (metadata names come from header names,
//! which cannot hold a space), so it is never shown as user metadata and
//! travels with the object on both back ends. An object without the entry
//! has never had an ACL set: it is `private` to the bucket owner.

use storage_client::ObjectMeta;

use super::acl::Acl;
use crate::error::S3Error;

/// The metadata entry holding the ACL's stored XML.
pub const ENTRY: &str = "s3gw acl";

/// The object's stored ACL, if any.
pub fn stored(meta: &ObjectMeta) -> Result<Option<Acl>, S3Error> {
    meta.user
        .get(ENTRY)
        .map(|text| Acl::from_stored(text.as_bytes()))
        .transpose()
}

/// Replaces the ACL recorded in `meta` (a copy's source ACL is never
/// kept: S3 gives a copy the ACL its request names, else `private`).
/// `private` to `bucket_owner` (its canonical id) is what no entry means,
/// so it is not stored; `private` to another owner (the writer, under
/// [`super::object_ownership`]) is.
pub fn record(meta: &mut ObjectMeta, acl: Option<&Acl>, bucket_owner: &str) -> Result<(), S3Error> {
    meta.user.remove(ENTRY);
    if let Some(acl) = acl.filter(|acl| **acl != Acl::private(bucket_owner)) {
        meta.user.insert(ENTRY.to_owned(), acl.to_xml()?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_cannot_come_from_a_header_and_private_is_not_stored() {
        assert!(http::HeaderName::from_bytes(format!("x-amz-meta-{ENTRY}").as_bytes()).is_err());
        let owner = "a".repeat(64);
        let mut meta = ObjectMeta::default();
        record(&mut meta, Some(&Acl::private(&owner)), &owner).unwrap();
        assert!(meta.user.is_empty());
        let public = Acl::canned("public-read", &owner, &owner).unwrap();
        record(&mut meta, Some(&public), &owner).unwrap();
        assert_eq!(stored(&meta).unwrap(), Some(public));
        let writers = Acl::private(&"b".repeat(64));
        record(&mut meta, Some(&writers), &owner).unwrap();
        assert_eq!(stored(&meta).unwrap(), Some(writers));
        record(&mut meta, None, &owner).unwrap();
        assert_eq!(stored(&meta).unwrap(), None);
    }
}
