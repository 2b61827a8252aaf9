//! One user metadata entry of a committed object, set and removed on its
//! own (the gateway keeps object ACLs there), by the bucket owner only,
//! without touching the data; kept by tagging, gone with an overwrite
//! (Ozone's OM cannot change a committed key's metadata: the back end
//! keeps the change as a record of the object as written).

use storage_client::{BucketRef, MetaEntryChange, Storage, StorageError, Tags};

use super::{Capabilities, alice, assert_err, bob, get, put};

pub async fn meta_entries(s: &Storage, caps: &Capabilities) {
    let (a, b) = (alice(), bob());
    // The object most steps act on: alice's "k" in "b".
    let object_k = BucketRef::new(&a, "b").object("k");
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    put(s, &a, "b", "k", b"data").await;
    let before = s.lookup(object_k).await.unwrap();
    let entry = || Some("<AccessControlPolicy/>".to_owned());
    let change = |value| MetaEntryChange::new("s3gw acl", value);
    s.put_meta_entry(object_k, change(entry())).await.unwrap();
    let after = s.lookup(object_k).await.unwrap();
    assert_eq!(after.meta.user.get("s3gw acl"), entry().as_ref());
    assert_eq!(
        (after.etag.as_str(), after.last_modified, after.size),
        (before.etag.as_str(), before.last_modified, before.size)
    );
    assert_eq!(get(s, &a, "b", "k").await.unwrap(), b"data");

    if caps.checks_owner {
        assert_err(
            s.put_meta_entry(BucketRef::new(&b, "b").object("k"), change(None))
                .await,
            |e| matches!(e, StorageError::AccessDenied),
            "a stranger's change",
        );
    }
    assert_err(
        s.put_meta_entry(BucketRef::new(&a, "b").object("missing"), change(entry()))
            .await,
        |e| matches!(e, StorageError::NoSuchKey),
        "a missing key",
    );

    // A change expecting what the entry no longer holds writes nothing.
    let stale = MetaEntryChange {
        expected: Some(None),
        ..change(Some("<stale/>".to_owned()))
    };
    assert_err(
        s.put_meta_entry(object_k, stale).await,
        |e| matches!(e, StorageError::PreconditionFailed),
        "a change expecting an absent entry",
    );
    let current = MetaEntryChange {
        expected: Some(entry()),
        ..change(None)
    };
    s.put_meta_entry(object_k, current).await.unwrap();
    assert!(s.lookup(object_k).await.unwrap().meta.user.is_empty());
    let absent = MetaEntryChange {
        expected: Some(None),
        ..change(entry())
    };
    s.put_meta_entry(object_k, absent).await.unwrap();
    assert_eq!(
        s.lookup(object_k).await.unwrap().meta.user.get("s3gw acl"),
        entry().as_ref()
    );

    // Tagging keeps the object, so the entry; an overwrite is another object.
    let tags: Tags = vec![("t".to_owned(), "v".to_owned())];
    s.put_tags(object_k, tags).await.unwrap();
    assert_eq!(
        s.lookup(object_k).await.unwrap().meta.user.get("s3gw acl"),
        entry().as_ref()
    );
    put(s, &a, "b", "k", b"data").await;
    assert!(s.lookup(object_k).await.unwrap().meta.user.is_empty());
    // A change expecting the entry the earlier object had writes nothing.
    let decided_on_the_old = MetaEntryChange {
        expected: Some(entry()),
        ..change(None)
    };
    assert_err(
        s.put_meta_entry(object_k, decided_on_the_old).await,
        |e| matches!(e, StorageError::PreconditionFailed),
        "a change decided on the object written over",
    );
}
