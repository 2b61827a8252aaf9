//! S3 versioning: version ids on writes, versions read, tagged and deleted
//! by id, delete markers, the suspended `null` version, and
//! ListObjectVersions paging. A back end that keeps no versions
//! (`Capabilities::versioning` false) must refuse to enable them clearly
//! and still serve every object as its `null` version.

use storage_client::{
    BucketRef, Deleted, MetaEntryChange, NULL_VERSION_ID, Storage, StorageError, VersionEntry,
    VersionListQuery, Versioning,
};

use super::{Capabilities, alice, assert_err, bob, data, get, put, read_range};

async fn version_data(s: &Storage, key: &str, id: &str) -> Vec<u8> {
    let a = alice();
    let info = s
        .lookup_version(BucketRef::new(&a, "b").object(key), Some(id))
        .await
        .unwrap();
    assert_eq!(info.version_id.as_deref(), Some(id));
    read_range(s, &a, &info, 0..info.size).await.unwrap()
}

async fn all_versions(s: &Storage, prefix: &str) -> Vec<VersionEntry> {
    let query = VersionListQuery {
        prefix: prefix.into(),
        max_keys: 1000,
        ..VersionListQuery::default()
    };
    let page = s
        .list_versions(BucketRef::new(&alice(), "b"), &query)
        .await
        .unwrap();
    assert!(!page.is_truncated);
    page.entries
}

/// (key, version id, latest, marker) of each entry, for comparing.
fn summary(entries: &[VersionEntry]) -> Vec<(String, String, bool, bool)> {
    entries
        .iter()
        .map(|e| {
            (
                e.key.clone(),
                e.version_id.clone(),
                e.is_latest,
                e.delete_marker,
            )
        })
        .collect()
}

fn row(key: &str, id: &str, latest: bool, marker: bool) -> (String, String, bool, bool) {
    (key.into(), id.into(), latest, marker)
}

/// What a back end without versions answers.
async fn unversioned_only(s: &Storage) {
    let a = alice();
    // The object most steps act on: alice's "k" in "b".
    let object_k = BucketRef::new(&a, "b").object("k");
    assert_err(
        s.put_bucket_versioning(BucketRef::new(&a, "b"), Versioning::Enabled)
            .await,
        |e| matches!(e, StorageError::NotImplemented(_)),
        "enable versioning",
    );
    assert_eq!(
        s.bucket_versioning(BucketRef::new(&a, "b")).await.unwrap(),
        Versioning::Unversioned
    );
    put(s, &a, "b", "k", b"only").await;
    assert_eq!(
        summary(&all_versions(s, "").await),
        [row("k", NULL_VERSION_ID, true, false)]
    );
    let info = s.lookup_version(object_k, Some("null")).await.unwrap();
    assert_eq!(info.version_id, None);
    assert_err(
        s.lookup_version(object_k, Some("0000000000000001")).await,
        |e| matches!(e, StorageError::InvalidArgument(_)),
        "a version id an unversioned bucket cannot have",
    );
    s.delete_version(object_k, "null").await.unwrap();
    assert_err(
        s.lookup(object_k).await,
        |e| matches!(e, StorageError::NoSuchKey),
        "deleted",
    );
}

pub async fn versioning(s: &Storage, caps: &Capabilities) {
    let a = alice();
    // The object most steps act on: alice's "k" in "b".
    let object_k = BucketRef::new(&a, "b").object("k");
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    assert_eq!(
        s.bucket_versioning(BucketRef::new(&a, "b")).await.unwrap(),
        Versioning::Unversioned
    );
    if caps.checks_owner {
        assert_err(
            s.bucket_versioning(BucketRef::new(&bob(), "b")).await,
            |e| matches!(e, StorageError::AccessDenied),
            "another owner's versioning",
        );
    }
    if !caps.versioning {
        return unversioned_only(s).await;
    }
    // Written before versioning: the `null` version, and no id on it yet.
    let before = put(s, &a, "b", "k", &data(100, 0)).await;
    assert_eq!(before.version_id, None);
    if caps.checks_owner {
        assert_err(
            s.put_bucket_versioning(BucketRef::new(&bob(), "b"), Versioning::Enabled)
                .await,
            |e| matches!(e, StorageError::AccessDenied),
            "enable another owner's versioning",
        );
    }
    s.put_bucket_versioning(BucketRef::new(&a, "b"), Versioning::Enabled)
        .await
        .unwrap();
    assert_eq!(
        s.bucket_versioning(BucketRef::new(&a, "b")).await.unwrap(),
        Versioning::Enabled
    );
    assert_eq!(
        s.lookup(object_k).await.unwrap().version_id.as_deref(),
        Some(NULL_VERSION_ID)
    );

    // Each write is a new version; older ones stay readable by id.
    let v1 = put(s, &a, "b", "k", &data(20_000, 1))
        .await
        .version_id
        .unwrap();
    let v2 = put(s, &a, "b", "k", &data(300, 2))
        .await
        .version_id
        .unwrap();
    assert_ne!(v1, v2);
    assert_eq!(get(s, &a, "b", "k").await.unwrap(), data(300, 2));
    assert_eq!(version_data(s, "k", &v1).await, data(20_000, 1));
    assert_eq!(version_data(s, "k", NULL_VERSION_ID).await, data(100, 0));
    assert_eq!(
        summary(&all_versions(s, "").await),
        [
            row("k", &v2, true, false),
            row("k", &v1, false, false),
            row("k", NULL_VERSION_ID, false, false),
        ]
    );

    // A delete adds a marker: the key is gone from GET and ListObjects,
    // its versions are not.
    let marker = s.delete_object(object_k).await.unwrap();
    assert!(marker.delete_marker);
    let marker_id = marker.version_id.unwrap();
    match s.lookup(object_k).await {
        Err(StorageError::DeleteMarker {
            version_id,
            addressed: false,
        }) => assert_eq!(version_id, marker_id),
        other => panic!("latest is a marker: {other:?}"),
    }
    match s.lookup_version(object_k, Some(&marker_id)).await {
        Err(StorageError::DeleteMarker {
            addressed: true, ..
        }) => {}
        other => panic!("a marker by id: {other:?}"),
    }
    let listed = s
        .list_objects(
            BucketRef::new(&a, "b"),
            &storage_client::ListQuery {
                max_keys: 10,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(listed.entries.is_empty());
    assert_eq!(
        summary(&all_versions(s, "").await),
        [
            row("k", &marker_id, true, true),
            row("k", &v2, false, false),
            row("k", &v1, false, false),
            row("k", NULL_VERSION_ID, false, false),
        ]
    );

    // Deleting the marker brings the newest version back; deleting the
    // current version makes the one before it current.
    let removed = s.delete_version(object_k, &marker_id).await.unwrap();
    assert_eq!(
        removed,
        Deleted {
            version_id: Some(marker_id.clone()),
            delete_marker: true
        }
    );
    assert_eq!(get(s, &a, "b", "k").await.unwrap(), data(300, 2));
    s.delete_version(object_k, &v2).await.unwrap();
    let current = s.lookup(object_k).await.unwrap();
    assert_eq!(current.version_id.as_deref(), Some(v1.as_str()));
    // Deleting a version that is gone succeeds, as in S3.
    s.delete_version(object_k, &v2).await.unwrap();
    assert_err(
        s.lookup_version(object_k, Some(&v2)).await,
        |e| matches!(e, StorageError::NoSuchVersion),
        "a deleted version",
    );
    assert_err(
        s.lookup_version(object_k, Some("not-an-id")).await,
        |e| matches!(e, StorageError::InvalidArgument(_)),
        "a malformed version id",
    );

    // Tags belong to one version.
    let tags = vec![("t".to_owned(), "v".to_owned())];
    s.put_version_tags(object_k, Some(NULL_VERSION_ID), tags.clone())
        .await
        .unwrap();
    let null = s
        .lookup_version(object_k, Some(NULL_VERSION_ID))
        .await
        .unwrap();
    assert_eq!(null.tags, tags);
    assert!(s.lookup(object_k).await.unwrap().tags.is_empty());

    // So does a metadata entry (an object ACL): set on one version, the
    // latest keeps its own.
    let acl = Some("<AccessControlPolicy/>".to_owned());
    let change = |value| MetaEntryChange::new("s3gw acl", value);
    s.put_version_meta_entry(object_k, Some(NULL_VERSION_ID), change(acl.clone()))
        .await
        .unwrap();
    let null = s
        .lookup_version(object_k, Some(NULL_VERSION_ID))
        .await
        .unwrap();
    assert_eq!(null.meta.user.get("s3gw acl"), acl.as_ref());
    assert!(s.lookup(object_k).await.unwrap().meta.user.is_empty());
    if caps.checks_owner {
        assert_err(
            s.put_version_meta_entry(
                BucketRef::new(&bob(), "b").object("k"),
                Some(NULL_VERSION_ID),
                change(None),
            )
            .await,
            |e| matches!(e, StorageError::AccessDenied),
            "a stranger's change of a version's entry",
        );
    }
    let stale = MetaEntryChange {
        expected: Some(None),
        ..change(None)
    };
    assert_err(
        s.put_version_meta_entry(object_k, Some(NULL_VERSION_ID), stale)
            .await,
        |e| matches!(e, StorageError::PreconditionFailed),
        "a version's entry changed since",
    );

    // Suspended: writes replace the `null` version, others stay.
    s.put_bucket_versioning(BucketRef::new(&a, "b"), Versioning::Suspended)
        .await
        .unwrap();
    assert_eq!(
        s.bucket_versioning(BucketRef::new(&a, "b")).await.unwrap(),
        Versioning::Suspended
    );
    let suspended = put(s, &a, "b", "k", &data(50, 3)).await;
    assert_eq!(suspended.version_id.as_deref(), Some(NULL_VERSION_ID));
    assert_eq!(version_data(s, "k", NULL_VERSION_ID).await, data(50, 3));
    assert_eq!(
        summary(&all_versions(s, "").await),
        [
            row("k", NULL_VERSION_ID, true, false),
            row("k", &v1, false, false)
        ]
    );
    let marker = s.delete_object(object_k).await.unwrap();
    assert_eq!(marker.version_id.as_deref(), Some(NULL_VERSION_ID));
    assert_eq!(
        summary(&all_versions(s, "").await),
        [
            row("k", NULL_VERSION_ID, true, true),
            row("k", &v1, false, false)
        ]
    );

    // A bucket holding only versions and markers is not empty.
    assert_err(
        s.delete_bucket(BucketRef::new(&a, "b")).await,
        |e| matches!(e, StorageError::BucketNotEmpty),
        "delete a bucket with versions",
    );
    for id in [NULL_VERSION_ID, v1.as_str()] {
        s.delete_version(object_k, id).await.unwrap();
    }
    assert!(all_versions(s, "").await.is_empty());
    s.delete_bucket(BucketRef::new(&a, "b")).await.unwrap();
}

pub async fn version_listing_pages(s: &Storage, caps: &Capabilities) {
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    if caps.versioning {
        s.put_bucket_versioning(BucketRef::new(&a, "b"), Versioning::Enabled)
            .await
            .unwrap();
    }
    let keys = ["a", "a", "a", "d/x", "d/x", "d/y", "e", "ab"];
    for (seed, key) in keys.iter().enumerate() {
        put(s, &a, "b", key, &data(10, seed as u64)).await;
    }
    s.delete_object(BucketRef::new(&a, "b").object("e"))
        .await
        .unwrap();
    // Versions of `a`, `d/x` and `e` (whose delete marker counts, if kept).
    let expected = if caps.versioning {
        (3, 2, 2)
    } else {
        (1, 1, 0)
    };
    let mut everything = all_versions(s, "").await;
    if !caps.lists_deletes_at_once {
        // The back end may still list `e` for a moment; not for long.
        for _ in 0..100 {
            if everything.iter().filter(|v| v.key == "e").count() == expected.2 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            everything = all_versions(s, "").await;
        }
    }
    let per_key = |key: &str| everything.iter().filter(|e| e.key == key).count();
    assert_eq!((per_key("a"), per_key("d/x"), per_key("e")), expected);
    let keys: Vec<&str> = everything.iter().map(|e| e.key.as_str()).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "by key");
    // One latest version per key; `e`'s is its delete marker, if kept.
    let latest = everything.iter().filter(|e| e.is_latest).count();
    assert_eq!(latest, if caps.versioning { 5 } else { 4 });

    // Pages of every size, following the markers, list the same versions.
    for max_keys in [1, 2, 3] {
        let mut query = VersionListQuery {
            max_keys,
            ..VersionListQuery::default()
        };
        let mut paged = Vec::new();
        loop {
            let page = s
                .list_versions(BucketRef::new(&a, "b"), &query)
                .await
                .unwrap();
            assert!(page.entries.len() <= max_keys);
            paged.extend(page.entries);
            if !page.is_truncated {
                break;
            }
            query.key_marker = page.next_key_marker;
            query.version_id_marker = page.next_version_id_marker;
        }
        assert_eq!(summary(&paged), summary(&everything), "pages of {max_keys}");
    }

    // A delimiter folds `d/` into one common prefix.
    let query = VersionListQuery {
        delimiter: Some("/".into()),
        max_keys: 1000,
        ..VersionListQuery::default()
    };
    let page = s
        .list_versions(BucketRef::new(&a, "b"), &query)
        .await
        .unwrap();
    assert_eq!(page.common_prefixes, ["d/"]);
    assert!(page.entries.iter().all(|e| !e.key.starts_with("d/")));
    // And a prefix limits the listing to its keys.
    assert!(
        all_versions(s, "d/")
            .await
            .iter()
            .all(|e| e.key.starts_with("d/"))
    );
    assert_eq!(
        all_versions(s, "d/").await.len(),
        if caps.versioning { 3 } else { 2 }
    );
}
