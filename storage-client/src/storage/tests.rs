//! Each write is seen by the next read, with every cache keeping what it
//! loads (lookups too, which by default are only shared while in flight):
//! the cache decorator ([`crate::cache::CachedMetadata`]) tells the cache
//! of every write, on the embedded back end.

use std::path::Path;
use std::time::Duration;

use bytes::Bytes;

use crate::{
    BucketDocument, BucketRef, CompleteUpload, Credential, KeyInfo, MetaEntryChange, NewObject,
    NewUpload, ObjectRef, Owner, PartCommit, PartNumber, Storage, StorageConfig, StorageError,
    Versioning, WriteIntent,
};

async fn open(dir: &Path) -> Storage {
    let kept = Duration::from_secs(600);
    let config = StorageConfig {
        metadata_cache_ttl: kept,
        key_cache_ttl: kept,
        ..StorageConfig::new(dir)
    };
    Storage::open_embedded(config).await.unwrap()
}

async fn put(s: &Storage, object: ObjectRef<'_>, etag: &str) -> KeyInfo {
    let mut writer = s
        .create_object(object, WriteIntent::default())
        .await
        .unwrap();
    writer.write(Bytes::from_static(b"data")).await.unwrap();
    let object = NewObject {
        etag: etag.into(),
        ..Default::default()
    };
    writer.commit(object).await.unwrap()
}

async fn etag(s: &Storage, object: ObjectRef<'_>) -> String {
    s.lookup(object).await.unwrap().etag
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn object_writes_reach_the_next_lookup() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let alice = Owner::new("AKIDALICE");
    let bucket = BucketRef::new(&alice, "b");
    let k = bucket.object("k");
    s.create_bucket(bucket, "").await.unwrap();

    put(&s, k, "one").await;
    assert_eq!(etag(&s, k).await, "one");
    put(&s, k, "two").await;
    assert_eq!(etag(&s, k).await, "two");

    let tags = vec![("t".to_owned(), "v".to_owned())];
    s.put_tags(k, tags.clone()).await.unwrap();
    assert_eq!(s.lookup(k).await.unwrap().tags, tags);
    let change = MetaEntryChange::new("m", Some("v".into()));
    s.put_meta_entry(k, change).await.unwrap();
    let meta = s.lookup(k).await.unwrap().meta;
    assert_eq!(meta.user.get("m").map(String::as_str), Some("v"));

    s.delete_object(k).await.unwrap();
    assert!(matches!(s.lookup(k).await, Err(StorageError::NoSuchKey)));

    let upload_id = s
        .create_multipart_upload(k, NewUpload::default())
        .await
        .unwrap()
        .upload_id;
    let upload = k.upload(&upload_id);
    let number = PartNumber::new(1).unwrap();
    let mut part = s.create_part(upload, number, None).await.unwrap();
    part.write(Bytes::from_static(b"part")).await.unwrap();
    let commit = PartCommit {
        etag: "p1".into(),
        checksum: None,
    };
    part.commit_part(&upload_id, number, commit).await.unwrap();
    let complete = CompleteUpload {
        parts: vec![(1, "p1".into())],
        etag: "multipart".into(),
        checksum: None,
        condition: Default::default(),
    };
    s.complete_multipart_upload(upload, complete).await.unwrap();
    assert_eq!(etag(&s, k).await, "multipart");

    s.put_bucket_versioning(bucket, Versioning::Enabled)
        .await
        .unwrap();
    let older = put(&s, k, "older").await.version_id.unwrap();
    let newer = put(&s, k, "newer").await.version_id.unwrap();
    assert_eq!(etag(&s, k).await, "newer");
    s.put_version_tags(k, Some(&newer), tags.clone())
        .await
        .unwrap();
    assert_eq!(s.lookup(k).await.unwrap().tags, tags);
    let change = MetaEntryChange::new("m", Some("w".into()));
    s.put_version_meta_entry(k, Some(&newer), change)
        .await
        .unwrap();
    let meta = s.lookup(k).await.unwrap().meta;
    assert_eq!(meta.user.get("m").map(String::as_str), Some("w"));
    s.delete_version(k, &newer).await.unwrap();
    let latest = s.lookup(k).await.unwrap();
    assert_eq!(
        (latest.etag.as_str(), latest.version_id),
        ("older", Some(older))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bucket_and_credential_writes_reach_the_next_read() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path()).await;
    let (alice, bob) = (Owner::new("AKIDALICE"), Owner::new("AKIDBOB"));
    let shared = Default::default();

    let credential = Credential {
        name: "alice".into(),
        access_key: alice.access_key.clone(),
        secret_key: "secret".into(),
        is_root: false,
    };
    assert_eq!(s.credential("AKIDALICE").await.unwrap(), None);
    s.put_credential(credential.clone()).await.unwrap();
    assert_eq!(s.credential("AKIDALICE").await.unwrap(), Some(credential));
    assert!(s.delete_credential("AKIDALICE").await.unwrap());
    assert_eq!(s.credential("AKIDALICE").await.unwrap(), None);

    let owner_of = async |s: &Storage| s.bucket_facts(&shared, "b").await.map(|b| b.owner);
    assert!(matches!(
        owner_of(&s).await,
        Err(StorageError::NoSuchBucket)
    ));
    s.create_bucket(BucketRef::new(&alice, "b"), "")
        .await
        .unwrap();
    assert_eq!(owner_of(&s).await.unwrap(), "AKIDALICE");
    s.set_bucket_owner(BucketRef::new(&alice, "b"), &bob)
        .await
        .unwrap();
    assert_eq!(owner_of(&s).await.unwrap(), "AKIDBOB");

    let policy = async |s: &Storage| {
        let document = s.bucket_document(&shared, "b", BucketDocument::Policy);
        document
            .await
            .map(|found| found.map(|text| text.to_string()))
    };
    assert_eq!(policy(&s).await.unwrap(), None);
    let document = Some("{}".to_owned());
    let bucket = BucketRef::new(&bob, "b");
    s.put_bucket_document(bucket, BucketDocument::Policy, document.clone())
        .await
        .unwrap();
    assert_eq!(policy(&s).await.unwrap(), document);

    s.delete_bucket(bucket).await.unwrap();
    assert!(matches!(
        owner_of(&s).await,
        Err(StorageError::NoSuchBucket)
    ));
    assert!(matches!(policy(&s).await, Err(StorageError::NoSuchBucket)));
}
