//! Object tags: stored with the object, replaced or removed on their own
//! without touching the data, and gone with an overwrite.

use bytes::Bytes;
use storage_client::{BucketRef, NewObject, Storage, StorageError, WriteIntent};

use super::{Capabilities, alice, assert_err, bob, get, put};

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// A tag set as a test can compare it: as is where the back end keeps the
/// order given, else sorted (Ozone keeps tags in a hash map: no order).
fn comparable(tags: &[(String, String)], order_kept: bool) -> Vec<(String, String)> {
    let mut tags = tags.to_vec();
    if !order_kept {
        tags.sort();
    }
    tags
}

pub async fn tags(s: &Storage, caps: &Capabilities) {
    let order_kept = caps.tags_keep_order;
    let a = alice();
    // The object most steps act on: alice's "k" in "b".
    let object_k = BucketRef::new(&a, "b").object("k");
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();

    // Tags given at commit come back (in the order they were given where
    // the back end keeps it).
    let given = pairs(&[("z", "last"), ("a", "")]);
    let intent = WriteIntent {
        tags: given.clone(),
        ..WriteIntent::default()
    };
    let mut writer = s.create_object(object_k, intent).await.unwrap();
    writer.write(Bytes::from_static(b"tagged")).await.unwrap();
    let committed = writer
        .commit(NewObject {
            etag: "e1".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(committed.tags, given);
    let before = s.lookup(object_k).await.unwrap();
    assert_eq!(
        comparable(&before.tags, order_kept),
        comparable(&given, order_kept)
    );

    // Replacing the tag set keeps the data, ETag and Last-Modified, and the
    // next lookup sees it at once.
    let replacement = pairs(&[("color", "blue"), ("ünï", "çødé")]);
    s.put_tags(object_k, replacement.clone()).await.unwrap();
    let after = s.lookup(object_k).await.unwrap();
    assert_eq!(
        comparable(&after.tags, order_kept),
        comparable(&replacement, order_kept)
    );
    assert_eq!(after.etag, before.etag);
    assert_eq!(after.last_modified, before.last_modified);
    assert_eq!(after.size, before.size);
    assert_eq!(get(s, &a, "b", "k").await.unwrap(), b"tagged");

    s.delete_tags(object_k).await.unwrap();
    assert!(s.lookup(object_k).await.unwrap().tags.is_empty());
    // Removing tags from an untagged object is not an error.
    s.delete_tags(object_k).await.unwrap();

    // An overwrite carries its own tags (here none), not the old ones.
    s.put_tags(object_k, pairs(&[("old", "1")])).await.unwrap();
    put(s, &a, "b", "k", b"new").await;
    assert!(s.lookup(object_k).await.unwrap().tags.is_empty());

    let no_key = |e: &StorageError| matches!(e, StorageError::NoSuchKey);
    assert_err(
        s.put_tags(
            BucketRef::new(&a, "b").object("missing"),
            pairs(&[("t", "1")]),
        )
        .await,
        no_key,
        "tagging a missing key",
    );
    assert_err(
        s.delete_tags(BucketRef::new(&a, "b").object("missing"))
            .await,
        no_key,
        "untagging a missing key",
    );
    assert_err(
        s.put_tags(BucketRef::new(&a, "nobucket").object("k"), Vec::new())
            .await,
        |e| matches!(e, StorageError::NoSuchBucket),
        "tagging in a missing bucket",
    );
    if caps.checks_owner {
        let denied = |e: &StorageError| matches!(e, StorageError::AccessDenied);
        assert_err(
            s.put_tags(
                BucketRef::new(&bob(), "b").object("k"),
                pairs(&[("t", "1")]),
            )
            .await,
            denied,
            "tagging naming another owner",
        );
        assert_err(
            s.delete_tags(BucketRef::new(&bob(), "b").object("k")).await,
            denied,
            "untagging naming another owner",
        );
    }
    assert!(s.lookup(object_k).await.unwrap().tags.is_empty());
}
