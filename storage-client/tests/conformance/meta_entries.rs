//! One user metadata entry of a committed object, set and removed on its
//! own (the gateway keeps object ACLs there), by the bucket owner only,
//! without touching the data. A back end that cannot change a committed
//! key's metadata (Ozone) says so with `NotImplemented`.

use storage_client::{Storage, StorageError};

use super::{Capabilities, alice, assert_err, bob, get, put};

pub async fn meta_entries(s: &Storage, caps: &Capabilities) {
    let (a, b) = (alice(), bob());
    s.create_bucket(&a, "b", "").await.unwrap();
    let before = put(s, &a, "b", "k", b"data").await;
    let entry = || Some("<AccessControlPolicy/>".to_owned());
    let set = s.put_meta_entry(&a, "b", "k", "s3gw acl", entry()).await;
    if !caps.meta_entries {
        assert!(
            matches!(set, Err(StorageError::NotImplemented(_))),
            "{set:?}"
        );
        return;
    }
    set.unwrap();
    let after = s.lookup(&a, "b", "k").await.unwrap();
    assert_eq!(after.meta.user.get("s3gw acl"), entry().as_ref());
    assert_eq!(
        (after.etag.as_str(), after.last_modified, after.size),
        (before.etag.as_str(), before.last_modified, before.size)
    );
    assert_eq!(get(s, &a, "b", "k").await.unwrap(), b"data");

    assert_err(
        s.put_meta_entry(&b, "b", "k", "s3gw acl", None).await,
        |e| matches!(e, StorageError::AccessDenied),
        "a stranger's change",
    );
    assert_err(
        s.put_meta_entry(&a, "b", "missing", "s3gw acl", entry())
            .await,
        |e| matches!(e, StorageError::NoSuchKey),
        "a missing key",
    );
    s.put_meta_entry(&a, "b", "k", "s3gw acl", None)
        .await
        .unwrap();
    assert!(s.lookup(&a, "b", "k").await.unwrap().meta.user.is_empty());
}
