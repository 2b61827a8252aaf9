//! The back-end conformance suite: every case takes a fresh, empty
//! `Storage` and the back end's [`Capabilities`], and states one guarantee
//! of the facade. The case list is [`suite!`]'s, written once; each back
//! end's test file runs every case with `conformance::suite!` (see
//! `embedded.rs`, `ozone.rs`). Where back ends legitimately differ (tag
//! order, multipart rules) the case adapts to the declared capability
//! instead of being left out. Block and chunk sizes should be small so
//! that the range cases cross block and chunk boundaries.

pub mod bucket_documents;
pub mod meta_entries;
pub mod multipart;
pub mod object_lock;
pub mod tags;
pub mod versions;

use std::collections::BTreeSet;
use std::ops::Range;

use bytes::Bytes;
use futures::TryStreamExt;
use storage_client::{
    BucketRef, BucketUsage, Credential, DeleteCondition, KeyInfo, ListQuery, MetaEntryChange,
    Namespace, NewObject, NewUpload, ObjectMeta, Owner, Result, Storage, StorageError, Versioning,
    WriteCondition, WriteIntent,
};

pub use bucket_documents::bucket_documents;
pub use meta_entries::meta_entries;
pub use multipart::{
    MultipartRules, listing_carries_what_was_stored, multipart_abort,
    multipart_checksums_survive_tagging, multipart_complete_rejects_bad_lists,
    multipart_completion_records_its_parts, multipart_conditional_complete_races_put,
    multipart_listing_pages, multipart_out_of_order, multipart_part_checksum_algorithm,
    multipart_part_replacement_and_gaps,
};
pub use object_lock::object_lock;
pub use tags::tags;
pub use versions::{version_listing_pages, versioning};

/// How a back end may differ from another and still be correct.
#[derive(Clone, Copy, Debug)]
pub struct Capabilities {
    /// Tags come back in the order given (Ozone keeps them in a hash map).
    pub tags_keep_order: bool,
    pub multipart: MultipartRules,
    /// The back end keeps object versions (Ozone does not: see the README).
    pub versioning: bool,
    /// The back end refuses a call naming an owner the bucket does not
    /// have (the embedded OM, inside each call's transaction; Ozone has no
    /// transaction to check it in, and acts under the name it is given).
    pub checks_owner: bool,
    /// The back end deletes on a condition, atomically (Ozone's OM cannot,
    /// and the call says `NotImplemented`).
    pub conditional_delete: bool,
    /// A listing begun after a delete has returned never shows the deleted
    /// key. Ozone's can, for a moment: its OM's ListKeys opens a RocksDB
    /// iterator, then asks the table cache of each key it yields whether a
    /// delete hides it; a delete flushed to RocksDB in between has left the
    /// cache by then, and the iterator's snapshot still holds the key
    /// (`OmMetadataManagerImpl.listKeys`). See the README's Ozone table.
    pub lists_deletes_at_once: bool,
}

/// Runs every case of the suite as one test each. `$open` is an async
/// expression giving `(guard, Storage)`, a fresh empty store per case (the
/// guard lives as long as the case); `$caps` the back end's
/// [`Capabilities`]; any attributes (such as `#[ignore = "..."]`) go on
/// every test.
macro_rules! suite {
    ($open:expr, $caps:expr $(, #[$attr:meta])*) => {
        conformance::suite!(@cases ($open) ($caps) ($(#[$attr])*)
            buckets_and_ownership
            a_bucket_changes_hands
            bucket_usage_counts_what_it_holds
            conditional_delete
            delete_objects_together
            put_get_overwrite_delete
            ranges
            empty_object
            long_and_unicode_keys
            listing_matches_model
            overwrite_is_atomic
            conditional_writes
            abort_leaves_nothing
            a_call_naming_another_owner_is_refused
            credentials_take_effect_at_once
            tags
            bucket_documents
            meta_entries
            multipart_out_of_order
            multipart_part_replacement_and_gaps
            multipart_complete_rejects_bad_lists
            multipart_completion_records_its_parts
            multipart_abort
            multipart_part_checksum_algorithm
            multipart_checksums_survive_tagging
            multipart_listing_pages
            multipart_conditional_complete_races_put
            listing_carries_what_was_stored
            versioning
            version_listing_pages
            object_lock
        );
    };
    (@cases ($open:expr) ($caps:expr) ($($attr:tt)*)) => {};
    (@cases ($open:expr) ($caps:expr) ($($attr:tt)*) $case:ident $($rest:ident)*) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        $($attr)*
        async fn $case() {
            let (_guard, storage) = $open.await;
            conformance::$case(&storage, &$caps).await;
        }
        conformance::suite!(@cases ($open) ($caps) ($($attr)*) $($rest)*);
    };
}
pub(crate) use suite;

pub fn alice() -> Owner {
    Owner::new("AKIDALICE")
}

pub fn bob() -> Owner {
    Owner::new("AKIDBOB")
}

/// Deterministic pseudo-random bytes (xorshift), different per seed.
pub fn data(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}

pub async fn put_with(
    s: &Storage,
    owner: &Owner,
    bucket: &str,
    key: &str,
    bytes: &[u8],
    condition: WriteCondition,
) -> Result<KeyInfo> {
    // Declared, as a PUT with a Content-Length is.
    let intent = WriteIntent {
        condition,
        size_hint: Some(bytes.len() as u64),
        ..WriteIntent::default()
    };
    let mut writer = s
        .create_object(BucketRef::new(owner, bucket).object(key), intent)
        .await?;
    // Uneven pieces, so chunking has to reassemble them.
    for piece in bytes.chunks(3001) {
        writer.write(Bytes::copy_from_slice(piece)).await?;
    }
    assert_eq!(writer.len(), bytes.len() as u64);
    writer
        .commit(NewObject {
            etag: format!(
                "etag-{}-{}",
                bytes.len(),
                bytes.first().copied().unwrap_or(0)
            ),
            ..Default::default()
        })
        .await
}

pub async fn put(s: &Storage, owner: &Owner, bucket: &str, key: &str, bytes: &[u8]) -> KeyInfo {
    put_with(s, owner, bucket, key, bytes, WriteCondition::None)
        .await
        .expect("put")
}

pub async fn read_range(
    s: &Storage,
    owner: &Owner,
    info: &KeyInfo,
    range: Range<u64>,
) -> Result<Vec<u8>> {
    let pieces: Vec<Bytes> = s.read(owner, info, range).await?.try_collect().await?;
    Ok(pieces.concat())
}

pub async fn get(s: &Storage, owner: &Owner, bucket: &str, key: &str) -> Result<Vec<u8>> {
    let info = s.lookup(BucketRef::new(owner, bucket).object(key)).await?;
    read_range(s, owner, &info, 0..info.size).await
}

fn assert_err<T: std::fmt::Debug>(
    result: Result<T>,
    expected: fn(&StorageError) -> bool,
    what: &str,
) {
    match result {
        Err(e) if expected(&e) => {}
        other => panic!("{what}: unexpected {other:?}"),
    }
}

pub async fn buckets_and_ownership(s: &Storage, caps: &Capabilities) {
    let (a, b) = (alice(), bob());
    s.create_bucket(BucketRef::new(&a, "zeta"), "")
        .await
        .unwrap();
    s.create_bucket(BucketRef::new(&a, "alpha"), "eu-west-1")
        .await
        .unwrap();
    s.create_bucket(BucketRef::new(&b, "bobs"), "")
        .await
        .unwrap();
    let names: Vec<String> = s
        .list_buckets(&a)
        .await
        .unwrap()
        .into_iter()
        .map(|b| b.name)
        .collect();
    assert_eq!(names, ["alpha", "zeta"]);
    let info = s.bucket_facts(&Namespace::Shared, "alpha").await.unwrap();
    assert_eq!(
        (info.owner.as_str(), info.region.as_str()),
        ("AKIDALICE", "eu-west-1")
    );
    assert_err(
        s.create_bucket(BucketRef::new(&a, "alpha"), "").await,
        |e| matches!(e, StorageError::BucketAlreadyOwnedByYou),
        "recreate own",
    );
    assert_err(
        s.create_bucket(BucketRef::new(&b, "alpha"), "").await,
        |e| matches!(e, StorageError::BucketAlreadyExists),
        "take other's name",
    );
    if caps.checks_owner {
        assert_err(
            s.delete_bucket(BucketRef::new(&b, "alpha")).await,
            |e| matches!(e, StorageError::AccessDenied),
            "delete naming another owner",
        );
    }
    assert_err(
        s.bucket_facts(&Namespace::Shared, "nope").await,
        |e| matches!(e, StorageError::NoSuchBucket),
        "head missing",
    );
    assert_err(
        s.delete_bucket(BucketRef::new(&a, "nope")).await,
        |e| matches!(e, StorageError::NoSuchBucket),
        "delete missing",
    );
    put(s, &a, "alpha", "k", b"x").await;
    assert_err(
        s.delete_bucket(BucketRef::new(&a, "alpha")).await,
        |e| matches!(e, StorageError::BucketNotEmpty),
        "delete non-empty",
    );
    s.delete_object(BucketRef::new(&a, "alpha").object("k"))
        .await
        .unwrap();
    s.delete_bucket(BucketRef::new(&a, "alpha")).await.unwrap();
    assert_err(
        s.bucket_facts(&Namespace::Shared, "alpha").await,
        |e| matches!(e, StorageError::NoSuchBucket),
        "head deleted",
    );
    let names: Vec<String> = s
        .list_buckets(&a)
        .await
        .unwrap()
        .into_iter()
        .map(|b| b.name)
        .collect();
    assert_eq!(names, ["zeta"]);
}

/// The admin's view: every bucket whoever owns it, and a bucket given to
/// another key only while it still belongs to the one named.
pub async fn a_bucket_changes_hands(s: &Storage, _: &Capabilities) {
    let (a, b) = (alice(), bob());
    s.create_bucket(BucketRef::new(&a, "handed"), "")
        .await
        .unwrap();
    s.create_bucket(BucketRef::new(&b, "kept"), "")
        .await
        .unwrap();
    let every: Vec<(String, String)> = s
        .all_buckets()
        .await
        .unwrap()
        .into_iter()
        .map(|b| (b.name, b.owner))
        .collect();
    assert_eq!(
        every,
        [
            ("handed".to_owned(), "AKIDALICE".to_owned()),
            ("kept".to_owned(), "AKIDBOB".to_owned())
        ]
    );
    put(s, &a, "handed", "k", b"x").await;
    let upload = s
        .create_multipart_upload(
            BucketRef::new(&a, "handed").object("big"),
            NewUpload::default(),
        )
        .await
        .unwrap()
        .upload_id;
    assert_err(
        s.set_bucket_owner(BucketRef::new(&b, "handed"), &a).await,
        |e| matches!(e, StorageError::PreconditionFailed),
        "set-owner naming the wrong current owner",
    );
    s.set_bucket_owner(BucketRef::new(&a, "handed"), &b)
        .await
        .unwrap();
    assert_eq!(
        s.bucket_facts(&Namespace::Shared, "handed")
            .await
            .unwrap()
            .owner,
        "AKIDBOB"
    );
    let bobs: Vec<String> = s
        .list_buckets(&b)
        .await
        .unwrap()
        .into_iter()
        .map(|b| b.name)
        .collect();
    assert_eq!(bobs, ["handed", "kept"]);
    assert!(s.list_buckets(&a).await.unwrap().is_empty());
    assert_eq!(get(s, &b, "handed", "k").await.unwrap(), b"x");
    // An upload begun before belongs to the bucket, so to its new owner.
    s.abort_multipart_upload(BucketRef::new(&b, "handed").object("big").upload(&upload))
        .await
        .unwrap();
    assert_err(
        s.set_bucket_owner(BucketRef::new(&a, "nope"), &b).await,
        |e| matches!(e, StorageError::NoSuchBucket),
        "set-owner of a missing bucket",
    );
}

/// A delete on a condition about the current object: refused unless it
/// holds, and never done unconditionally where it cannot be checked.
/// What a bucket holds, as its owner's listing would count it: the
/// latest version of each key, unless a delete marker, and the older
/// versions apart; an upload in progress is no object yet.
pub async fn bucket_usage_counts_what_it_holds(s: &Storage, caps: &Capabilities) {
    let a = alice();
    let bucket = BucketRef::new(&a, "b");
    assert_err(
        s.bucket_usage(bucket).await,
        |e| matches!(e, StorageError::NoSuchBucket),
        "a missing bucket",
    );
    s.create_bucket(bucket, "").await.unwrap();
    assert_eq!(
        s.bucket_usage(bucket).await.unwrap(),
        BucketUsage::default()
    );

    put(s, &a, "b", "k1", b"abc").await;
    put(s, &a, "b", "k2", b"hello").await;
    put(s, &a, "b", "k1", b"abcd").await;
    put(s, &a, "b", "dir/k3", b"").await;
    s.create_multipart_upload(bucket.object("pending"), NewUpload::default())
        .await
        .unwrap();
    let unversioned = BucketUsage {
        objects: 3,
        bytes: 9,
        ..BucketUsage::default()
    };
    assert_eq!(s.bucket_usage(bucket).await.unwrap(), unversioned);
    if caps.checks_owner {
        assert_err(
            s.bucket_usage(BucketRef::new(&bob(), "b")).await,
            |e| matches!(e, StorageError::AccessDenied),
            "a stranger's count",
        );
    }
    if !caps.versioning {
        return;
    }

    s.put_bucket_versioning(bucket, Versioning::Enabled)
        .await
        .unwrap();
    put(s, &a, "b", "k2", b"hello, world").await;
    s.delete_object_if(bucket.object("k1"), DeleteCondition::default())
        .await
        .unwrap();
    // k1's 4 bytes and k2's first 5 are noncurrent now; the marker on k1
    // counts as nothing.
    let versioned = BucketUsage {
        objects: 2,
        bytes: 12,
        noncurrent_versions: 2,
        noncurrent_bytes: 9,
    };
    assert_eq!(s.bucket_usage(bucket).await.unwrap(), versioned);
}

pub async fn conditional_delete(s: &Storage, caps: &Capabilities) {
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let written = put(s, &a, "b", "k", b"12345").await;
    let condition = |etag: &str, size: Option<u64>| DeleteCondition {
        etag: Some(etag.to_owned()),
        size,
        ..DeleteCondition::default()
    };
    if !caps.conditional_delete {
        assert_err(
            s.delete_object_if(
                BucketRef::new(&a, "b").object("k"),
                condition(&written.etag, None),
            )
            .await,
            |e| matches!(e, StorageError::NotImplemented(_)),
            "a condition the back end cannot check",
        );
        assert_eq!(get(s, &a, "b", "k").await.unwrap(), b"12345");
        return;
    }
    for (etag, size, what) in [
        ("other", None, "another ETag"),
        (written.etag.as_str(), Some(4), "another size"),
        ("*", Some(6), "any ETag, another size"),
    ] {
        assert_err(
            s.delete_object_if(BucketRef::new(&a, "b").object("k"), condition(etag, size))
                .await,
            |e| matches!(e, StorageError::PreconditionFailed),
            what,
        );
        assert_eq!(get(s, &a, "b", "k").await.unwrap(), b"12345", "{what}");
    }
    let modified_then = DeleteCondition {
        last_modified: Some(std::time::SystemTime::UNIX_EPOCH),
        ..DeleteCondition::default()
    };
    assert_err(
        s.delete_object_if(BucketRef::new(&a, "b").object("k"), modified_then)
            .await,
        |e| matches!(e, StorageError::PreconditionFailed),
        "another modification time",
    );
    let exact = DeleteCondition {
        last_modified: Some(written.last_modified),
        ..condition(&written.etag, Some(5))
    };
    s.delete_object_if(BucketRef::new(&a, "b").object("k"), exact)
        .await
        .unwrap();
    assert_err(
        s.lookup(BucketRef::new(&a, "b").object("k")).await,
        |e| matches!(e, StorageError::NoSuchKey),
        "deleted when the condition held",
    );
    assert_err(
        s.delete_object_if(BucketRef::new(&a, "b").object("k"), condition("*", None))
            .await,
        |e| matches!(e, StorageError::NoSuchKey),
        "a condition on a missing object",
    );
}

/// Many keys deleted in one call, each as an unconditional delete would
/// be, with an outcome per key in the order asked: a missing key and a
/// key named twice are deleted too, what an object carried (a metadata
/// entry, kept by Ozone as a record) goes with it, and a versioned
/// bucket gets a delete marker per key.
pub async fn delete_objects_together(s: &Storage, caps: &Capabilities) {
    let a = alice();
    let bucket = BucketRef::new(&a, "b");
    assert_err(
        s.delete_objects(bucket, vec!["k".into()]).await,
        |e| matches!(e, StorageError::NoSuchBucket),
        "a missing bucket",
    );
    s.create_bucket(bucket, "").await.unwrap();
    for key in ["k1", "k2", "dir/k3", "kept"] {
        put(s, &a, "b", key, key.as_bytes()).await;
    }
    let entry = MetaEntryChange::new("s3gw acl", Some("<AccessControlPolicy/>".into()));
    s.put_meta_entry(bucket.object("k1"), entry).await.unwrap();
    if caps.checks_owner {
        assert_err(
            s.delete_objects(BucketRef::new(&bob(), "b"), vec!["k1".into()])
                .await,
            |e| matches!(e, StorageError::AccessDenied),
            "a stranger's delete",
        );
        assert_eq!(get(s, &a, "b", "k1").await.unwrap(), b"k1");
    }

    let keys = ["k1", "missing", "dir/k3", "k2", "k1"]
        .map(String::from)
        .to_vec();
    let outcomes = s.delete_objects(bucket, keys.clone()).await.unwrap();
    assert_eq!(outcomes.len(), keys.len());
    for (key, outcome) in keys.iter().zip(&outcomes) {
        let deleted = outcome.as_ref().unwrap_or_else(|e| panic!("{key}: {e}"));
        assert!(!deleted.delete_marker, "{key}: {deleted:?}");
        assert_err(
            s.lookup(bucket.object(key)).await,
            |e| matches!(e, StorageError::NoSuchKey),
            key,
        );
    }
    assert_eq!(get(s, &a, "b", "kept").await.unwrap(), b"kept");
    put(s, &a, "b", "k1", b"again").await;
    let again = s.lookup(bucket.object("k1")).await.unwrap();
    assert!(again.meta.user.is_empty(), "{:?}", again.meta.user);

    if caps.versioning {
        s.put_bucket_versioning(bucket, Versioning::Enabled)
            .await
            .unwrap();
        let outcomes = s
            .delete_objects(bucket, vec!["k1".into(), "kept".into()])
            .await
            .unwrap();
        for outcome in outcomes {
            let deleted = outcome.unwrap();
            assert!(
                deleted.delete_marker && deleted.version_id.is_some(),
                "{deleted:?}"
            );
        }
        assert_eq!(s.bucket_usage(bucket).await.unwrap().noncurrent_versions, 2);
    }
}

pub async fn put_get_overwrite_delete(s: &Storage, _: &Capabilities) {
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let first = data(50_000, 1);
    let intent = WriteIntent {
        tags: vec![("t".into(), "1".into())],
        ..WriteIntent::default()
    };
    let mut writer = s
        .create_object(BucketRef::new(&a, "b").object("doc.txt"), intent)
        .await
        .unwrap();
    writer.write(Bytes::from(first.clone())).await.unwrap();
    let meta = ObjectMeta {
        content_type: Some("text/plain".into()),
        user: [("colour".to_string(), "blue".to_string())].into(),
        ..Default::default()
    };
    let committed = writer
        .commit(NewObject {
            etag: "abc".into(),
            meta: meta.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    let info = s
        .lookup(BucketRef::new(&a, "b").object("doc.txt"))
        .await
        .unwrap();
    assert_eq!(
        (info.size, info.etag.as_str(), info.owner.as_str()),
        (50_000, "abc", "AKIDALICE")
    );
    assert_eq!(info.meta, meta);
    assert_eq!(info.tags, committed.tags);
    assert_eq!(get(s, &a, "b", "doc.txt").await.unwrap(), first);

    let second = data(70_000, 2);
    put(s, &a, "b", "doc.txt", &second).await;
    assert_eq!(
        get(s, &a, "b", "doc.txt").await.unwrap(),
        second,
        "read-after-overwrite"
    );

    s.delete_object(BucketRef::new(&a, "b").object("doc.txt"))
        .await
        .unwrap();
    assert_err(
        s.lookup(BucketRef::new(&a, "b").object("doc.txt")).await,
        |e| matches!(e, StorageError::NoSuchKey),
        "read-after-delete",
    );
    s.delete_object(BucketRef::new(&a, "b").object("doc.txt"))
        .await
        .expect("delete is idempotent");
    assert_err(
        s.lookup(BucketRef::new(&a, "nobucket").object("doc.txt"))
            .await,
        |e| matches!(e, StorageError::NoSuchBucket),
        "missing bucket",
    );
    assert_err(
        s.create_object(
            BucketRef::new(&a, "nobucket").object("k"),
            WriteIntent::default(),
        )
        .await,
        |e| matches!(e, StorageError::NoSuchBucket),
        "put to missing bucket",
    );
}

pub async fn ranges(s: &Storage, _: &Capabilities) {
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    for (seed, len) in [(3u64, 1usize), (4, 4096), (5, 100_003), (6, 262_144)] {
        let bytes = data(len, seed);
        let info = put(s, &a, "b", "obj", &bytes).await;
        let n = len as u64;
        let mut cases = vec![0..1, n - 1..n, 0..n, n / 2..n / 2];
        for boundary in [1024u64, 4096, 16_384, 65_536, 131_072] {
            if boundary < n {
                cases.push(boundary - 1..boundary + 1);
                cases.push(boundary..n);
                cases.push(1..boundary);
            }
        }
        cases.push(n / 3..2 * n / 3);
        for range in cases {
            let got = read_range(s, &a, &info, range.clone()).await.unwrap();
            assert_eq!(
                got,
                bytes[range.start as usize..range.end as usize],
                "len {len} range {range:?}"
            );
        }
        assert_err(
            read_range(s, &a, &info, 0..n + 1).await,
            |e| matches!(e, StorageError::InvalidArgument(_)),
            "past the end",
        );
    }
}

pub async fn empty_object(s: &Storage, _: &Capabilities) {
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let info = put(s, &a, "b", "empty", b"").await;
    assert_eq!(info.size, 0);
    assert!(info.locations.is_empty());
    assert_eq!(get(s, &a, "b", "empty").await.unwrap(), b"");
    let listed = s
        .list_objects(
            BucketRef::new(&a, "b"),
            &ListQuery {
                max_keys: 10,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(listed.entries.len(), 1);
    assert_eq!(listed.entries[0].size, 0);
}

pub async fn long_and_unicode_keys(s: &Storage, _: &Capabilities) {
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let longest = "k".repeat(1024);
    put(s, &a, "b", &longest, b"long").await;
    assert_eq!(get(s, &a, "b", &longest).await.unwrap(), b"long");
    let unicode = "données/日本語/🦀 file.txt";
    put(s, &a, "b", unicode, b"uni").await;
    assert_eq!(get(s, &a, "b", unicode).await.unwrap(), b"uni");
    // 1023 ASCII bytes plus a 2-byte character is 1025 bytes.
    let too_long = format!("{}é", "k".repeat(1023));
    assert_err(
        s.create_object(
            BucketRef::new(&a, "b").object(&too_long),
            WriteIntent::default(),
        )
        .await,
        |e| matches!(e, StorageError::InvalidArgument(_)),
        "1025-byte key",
    );
    assert_err(
        s.create_object(BucketRef::new(&a, "b").object(""), WriteIntent::default())
            .await,
        |e| matches!(e, StorageError::InvalidArgument(_)),
        "empty key",
    );
    let page = s
        .list_objects(
            BucketRef::new(&a, "b"),
            &ListQuery {
                prefix: "données/".into(),
                max_keys: 10,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        page.entries
            .iter()
            .map(|e| e.key.as_str())
            .collect::<Vec<_>>(),
        [unicode]
    );
}

/// The listing a naive full scan gives: items (keys or common prefixes)
/// after `start_after`, in order.
fn model(
    keys: &BTreeSet<String>,
    prefix: &str,
    delimiter: Option<&str>,
    start_after: &str,
) -> Vec<String> {
    let mut items = BTreeSet::new();
    for key in keys.iter().filter(|k| k.starts_with(prefix)) {
        let item = match delimiter.and_then(|d| key[prefix.len()..].find(d).map(|at| (d, at))) {
            Some((d, at)) => format!("{}{}", &key[..prefix.len() + at], d),
            None => key.clone(),
        };
        if item.as_str() > start_after {
            items.insert(item);
        }
    }
    items.into_iter().collect()
}

pub async fn listing_matches_model(s: &Storage, _: &Capabilities) {
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let mut keys = BTreeSet::new();
    for dir in ["a", "a/b", "a/b/c", "b", "logs/2024", "logs/2025"] {
        for i in 0..12 {
            keys.insert(format!("{dir}/{i:02}"));
        }
    }
    for extra in ["a", "a-b", "a/", "ab", "logs", "logs/", "z", "é/x", "🦀"] {
        keys.insert(extra.to_string());
    }
    for key in &keys {
        put(s, &a, "b", key, b"").await;
    }
    for prefix in ["", "a", "a/", "a/b/", "logs/", "nothing"] {
        for delimiter in [None, Some("/"), Some("b/")] {
            for start_after in ["", "a/", "a/b/05", "logs/2024/", "m"] {
                let expected = model(&keys, prefix, delimiter, start_after);
                for max_keys in [1usize, 2, 5, 1000] {
                    let mut got = Vec::new();
                    let mut marker = start_after.to_string();
                    loop {
                        let query = ListQuery {
                            prefix: prefix.into(),
                            delimiter: delimiter.map(str::to_owned),
                            start_after: Some(marker.clone()).filter(|m| !m.is_empty()),
                            max_keys,
                        };
                        let page = s
                            .list_objects(BucketRef::new(&a, "b"), &query)
                            .await
                            .unwrap();
                        assert!(page.entries.len() + page.common_prefixes.len() <= max_keys);
                        let mut items: Vec<String> =
                            page.entries.iter().map(|e| e.key.clone()).collect();
                        items.extend(page.common_prefixes.iter().cloned());
                        items.sort();
                        got.extend(items);
                        if !page.is_truncated {
                            break;
                        }
                        assert!(got.len() <= expected.len(), "paging must make progress");
                        marker = page.next_marker.expect("a truncated page has a marker");
                    }
                    assert_eq!(
                        got, expected,
                        "prefix {prefix:?} delimiter {delimiter:?} after {start_after:?} max {max_keys}"
                    );
                }
            }
        }
    }
}

pub async fn overwrite_is_atomic(s: &Storage, _: &Capabilities) {
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let old = data(40_000, 7);
    put(s, &a, "b", "k", &old).await;
    let new = data(90_000, 8);
    let mut writer = s
        .create_object(BucketRef::new(&a, "b").object("k"), WriteIntent::default())
        .await
        .unwrap();
    writer
        .write(Bytes::from(new[..60_000].to_vec()))
        .await
        .unwrap();
    assert_eq!(
        get(s, &a, "b", "k").await.unwrap(),
        old,
        "half-written upload is invisible"
    );
    writer
        .write(Bytes::from(new[60_000..].to_vec()))
        .await
        .unwrap();
    assert_eq!(
        get(s, &a, "b", "k").await.unwrap(),
        old,
        "uncommitted upload is invisible"
    );
    writer.commit(NewObject::default()).await.unwrap();
    assert_eq!(get(s, &a, "b", "k").await.unwrap(), new);
}

pub async fn conditional_writes(s: &Storage, _: &Capabilities) {
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let one = data(30_000, 9);
    let two = data(30_000, 10);
    let if_absent = || WriteIntent {
        condition: WriteCondition::IfAbsent,
        ..WriteIntent::default()
    };
    let mut w1 = s
        .create_object(BucketRef::new(&a, "b").object("race"), if_absent())
        .await
        .unwrap();
    let mut w2 = s
        .create_object(BucketRef::new(&a, "b").object("race"), if_absent())
        .await
        .unwrap();
    w1.write(Bytes::from(one.clone())).await.unwrap();
    w2.write(Bytes::from(two.clone())).await.unwrap();
    let (r1, r2) = tokio::join!(
        w1.commit(NewObject::default()),
        w2.commit(NewObject::default())
    );
    let winner = match (&r1, &r2) {
        (Ok(_), Err(StorageError::PreconditionFailed)) => one,
        (Err(StorageError::PreconditionFailed), Ok(_)) => two,
        other => panic!("exactly one IfAbsent commit must win: {other:?}"),
    };
    assert_eq!(get(s, &a, "b", "race").await.unwrap(), winner);

    let current = s
        .lookup(BucketRef::new(&a, "b").object("race"))
        .await
        .unwrap()
        .etag;
    assert_err(
        put_with(
            s,
            &a,
            "b",
            "race",
            b"x",
            WriteCondition::IfEtag("other".into()),
        )
        .await,
        |e| matches!(e, StorageError::PreconditionFailed),
        "IfEtag mismatch",
    );
    assert_err(
        put_with(
            s,
            &a,
            "b",
            "new",
            b"x",
            WriteCondition::IfEtag(current.clone()),
        )
        .await,
        |e| matches!(e, StorageError::NoSuchKey),
        "IfEtag on a missing key",
    );
    put_with(
        s,
        &a,
        "b",
        "race",
        b"y",
        WriteCondition::IfEtag(format!("\"{current}\"")),
    )
    .await
    .expect("IfEtag match");
    assert_eq!(get(s, &a, "b", "race").await.unwrap(), b"y");
}

pub async fn abort_leaves_nothing(s: &Storage, _: &Capabilities) {
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let mut aborted = s
        .create_object(
            BucketRef::new(&a, "b").object("gone"),
            WriteIntent::default(),
        )
        .await
        .unwrap();
    aborted.write(Bytes::from(data(20_000, 11))).await.unwrap();
    aborted.abort().await;
    let mut dropped = s
        .create_object(
            BucketRef::new(&a, "b").object("dropped"),
            WriteIntent::default(),
        )
        .await
        .unwrap();
    dropped.write(Bytes::from(data(20_000, 12))).await.unwrap();
    drop(dropped);
    for key in ["gone", "dropped"] {
        assert_err(
            s.lookup(BucketRef::new(&a, "b").object(key)).await,
            |e| matches!(e, StorageError::NoSuchKey),
            key,
        );
    }
    let page = s
        .list_objects(
            BucketRef::new(&a, "b"),
            &ListQuery {
                max_keys: 10,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(page.entries.is_empty());
    s.delete_bucket(BucketRef::new(&a, "b"))
        .await
        .expect("open uploads do not keep a bucket busy");
}

pub async fn a_call_naming_another_owner_is_refused(s: &Storage, caps: &Capabilities) {
    if !caps.checks_owner {
        return;
    }
    let (a, b) = (alice(), bob());
    s.create_bucket(BucketRef::new(&a, "private"), "")
        .await
        .unwrap();
    put(s, &a, "private", "secret", b"mine").await;
    let denied = |e: &StorageError| matches!(e, StorageError::AccessDenied);
    assert_err(
        s.lookup(BucketRef::new(&b, "private").object("secret"))
            .await,
        denied,
        "lookup",
    );
    assert_err(
        s.lookup(BucketRef::new(&b, "private").object("missing"))
            .await,
        denied,
        "lookup of a missing key",
    );
    assert_err(
        s.create_object(
            BucketRef::new(&b, "private").object("k"),
            WriteIntent::default(),
        )
        .await,
        denied,
        "put",
    );
    assert_err(
        s.delete_object(BucketRef::new(&b, "private").object("secret"))
            .await,
        denied,
        "delete",
    );
    assert_err(
        s.list_objects(
            BucketRef::new(&b, "private"),
            &ListQuery {
                max_keys: 10,
                ..Default::default()
            },
        )
        .await,
        denied,
        "list",
    );
    // Alice's lookup was cached and coalesced: Bob still must not get it.
    s.lookup(BucketRef::new(&a, "private").object("secret"))
        .await
        .unwrap();
    assert_err(
        s.lookup(BucketRef::new(&b, "private").object("secret"))
            .await,
        denied,
        "lookup after owner's",
    );
    assert_eq!(get(s, &a, "private", "secret").await.unwrap(), b"mine");
}

/// As a key no other case acts as: deleting it revokes its secret in a
/// back end's own store (Ozone), where the others may be signing with it.
pub async fn credentials_take_effect_at_once(s: &Storage, _: &Capabilities) {
    let cred = Credential {
        name: "carol".into(),
        access_key: "AKIDCAROL".into(),
        secret_key: "s1".into(),
        is_root: false,
    };
    assert_eq!(s.credential("AKIDCAROL").await.unwrap(), None);
    s.put_credential(cred.clone()).await.unwrap();
    assert_eq!(
        s.credential("AKIDCAROL").await.unwrap(),
        Some(cred.clone()),
        "new key visible at once"
    );
    let rotated = Credential {
        secret_key: "s2".into(),
        ..cred
    };
    s.put_credential(rotated.clone()).await.unwrap();
    assert_eq!(
        s.credential("AKIDCAROL").await.unwrap(),
        Some(rotated),
        "rotated secret visible at once"
    );
    assert_eq!(s.list_credentials().await.unwrap().len(), 1);
    assert!(s.delete_credential("AKIDCAROL").await.unwrap());
    assert_eq!(
        s.credential("AKIDCAROL").await.unwrap(),
        None,
        "deleted key refused at once"
    );
    assert!(!s.delete_credential("AKIDCAROL").await.unwrap());
}
