//! Upgrades: a store written by an earlier build opens and reads back
//! whole. Each fixture is the data directory of a gateway built from the
//! commit tagged `store-format-N`, with what it held read back through S3
//! by that build (`tests/fixtures/make-store-fixture` wrote both).

use std::collections::BTreeSet;
use std::path::Path;

use futures::TryStreamExt;
use md5::{Digest, Md5};
use serde_json::Value;
use storage_client::{
    BucketDocument, BucketRef, Namespace, Owner, Storage, StorageConfig, UploadListQuery,
    VersionListQuery,
};

const DEFAULT_CONTENT_TYPE: &str = "binary/octet-stream";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_a_store_of_format_1() {
    let dir = reads_back("store-format-1").await;
    // Opening it moved it to the current format (2 added a table and
    // changed no record), so an older build now refuses it.
    let db = redb::Database::open(dir.path().join("data/om.redb")).unwrap();
    let txn = db.begin_read().unwrap();
    let format = txn.open_table(FORMAT).unwrap().get("store").unwrap();
    assert_eq!(format.map(|f| f.value()), Some(2));
}

/// The table and row where `om.redb` records its store format.
const FORMAT: redb::TableDefinition<&str, u64> = redb::TableDefinition::new("format");

/// A store a later build wrote is refused with one clear line, never
/// misread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refuses_a_store_of_a_later_format() {
    let dir = unpack("store-format-1");
    let data = dir.path().join("data");
    {
        let db = redb::Database::create(data.join("om.redb")).unwrap();
        let txn = db.begin_write().unwrap();
        txn.open_table(FORMAT).unwrap().insert("store", 99).unwrap();
        txn.commit().unwrap();
    }
    let refused = Storage::open_embedded(StorageConfig::new(&data))
        .await
        .err()
        .expect("a later format is refused");
    let message = refused.to_string();
    assert!(
        message.contains("store format 99, written by a later s3-gateway"),
        "{message}"
    );
    assert!(!message.contains('\n'), "{message}");
}

/// The fixture's data directory, unpacked into a new temporary directory.
fn unpack(fixture: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let unpacked = std::process::Command::new("tar")
        .arg("xzf")
        .arg(fixtures().join(format!("{fixture}.tar.gz")))
        .arg("-C")
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(unpacked.success(), "tar xzf {fixture}.tar.gz");
    dir
}

fn fixtures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The bucket document kinds the build that wrote store-format-1 had,
/// every one of which its fixture holds.
const FORMAT_1_DOCUMENTS: [BucketDocument; 6] = [
    BucketDocument::Acl,
    BucketDocument::Policy,
    BucketDocument::PublicAccessBlock,
    BucketDocument::Cors,
    BucketDocument::Lifecycle,
    BucketDocument::Tagging,
];

/// Reads the fixture back whole; returns its directory, the store closed.
async fn reads_back(fixture: &str) -> tempfile::TempDir {
    let dir = unpack(fixture);
    let text = std::fs::read_to_string(fixtures().join(format!("{fixture}.json"))).unwrap();
    let manifest: Value = serde_json::from_str(&text).unwrap();
    let storage = Storage::open_embedded(StorageConfig::new(dir.path().join("data")))
        .await
        .unwrap();

    for bucket in manifest["buckets"].as_array().unwrap() {
        let name = bucket["name"].as_str().unwrap();
        let owner = Owner::new(bucket["owner"].as_str().unwrap());
        assert_eq!(
            storage
                .bucket_facts(&Namespace::Shared, name)
                .await
                .unwrap()
                .owner,
            owner.access_key
        );
        for object in bucket["objects"].as_array().unwrap() {
            check_object(&storage, &owner, name, object).await;
        }
        check_delete_markers(&storage, &owner, name, bucket).await;
        check_uploads(&storage, &owner, name, bucket).await;
    }
    for credential in manifest["credentials"].as_array().unwrap() {
        let access_key = credential["access_key"].as_str().unwrap();
        let stored = storage.credential(access_key).await.unwrap().unwrap();
        assert_eq!(stored.name, credential["name"].as_str().unwrap());
        assert_eq!(stored.is_root, credential["is_root"].as_bool().unwrap());
        assert!(!stored.secret_key.is_empty());
    }
    // Every kind the fixture's build had reads back; a kind added since
    // (ownership controls, encryption) is simply absent from such a store.
    for kind in BucketDocument::ALL {
        let document = storage
            .bucket_document(&Namespace::Shared, "documents", kind)
            .await
            .unwrap();
        assert_eq!(
            document.is_some(),
            FORMAT_1_DOCUMENTS.contains(&kind),
            "{} of bucket documents",
            kind.stored_name()
        );
    }
    let policy = storage
        .bucket_document(&Namespace::Shared, "documents", BucketDocument::Policy)
        .await
        .unwrap()
        .unwrap();
    let policy: Value = serde_json::from_str(&policy).unwrap();
    assert_eq!(policy, manifest["documents"]["policy"]);
    drop(storage);
    dir
}

async fn check_object(storage: &Storage, owner: &Owner, bucket: &str, object: &Value) {
    let key = object["key"].as_str().unwrap();
    let version = object["version_id"].as_str().unwrap();
    let info = storage
        .lookup_version(BucketRef::new(owner, bucket).object(key), Some(version))
        .await
        .unwrap();
    let what = format!("{bucket}/{key} version {version}");
    assert_eq!(info.size, object["size"].as_u64().unwrap(), "{what}");
    assert_eq!(info.etag, object["etag"].as_str().unwrap(), "{what}");
    let text = |field: &str| object[field].as_str().map(str::to_owned);
    assert_eq!(
        Some(
            info.meta
                .content_type
                .clone()
                .unwrap_or_else(|| DEFAULT_CONTENT_TYPE.into())
        ),
        text("content_type"),
        "{what}"
    );
    assert_eq!(info.meta.cache_control, text("cache_control"), "{what}");
    assert_eq!(
        info.meta.content_disposition,
        text("content_disposition"),
        "{what}"
    );
    for (name, value) in object["metadata"].as_object().unwrap() {
        assert_eq!(
            info.meta.user.get(name).map(String::as_str),
            value.as_str(),
            "{what}: x-amz-meta-{name}"
        );
    }
    let tags: BTreeSet<(String, String)> = info.tags.iter().cloned().collect();
    let expected: BTreeSet<(String, String)> = object["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| {
            let text = |i: usize| pair[i].as_str().unwrap().to_owned();
            (text(0), text(1))
        })
        .collect();
    assert_eq!(tags, expected, "{what}");
    match object["checksum"].as_array() {
        Some(pair) => {
            let checksum = info.checksum.as_ref().expect("a checksum");
            assert!(
                checksum
                    .algorithm
                    .name()
                    .eq_ignore_ascii_case(pair[0].as_str().unwrap()),
                "{what}"
            );
            assert_eq!(checksum.value, pair[1].as_str().unwrap(), "{what}");
        }
        None => assert_eq!(info.checksum, None, "{what}"),
    }
    let bytes: Vec<u8> = storage
        .read(owner, &info, 0..info.size)
        .await
        .unwrap()
        .try_fold(Vec::new(), |mut all, chunk| async move {
            all.extend_from_slice(&chunk);
            Ok(all)
        })
        .await
        .unwrap();
    assert_eq!(
        hex::encode(Md5::digest(&bytes)),
        object["md5"].as_str().unwrap(),
        "{what}"
    );
}

async fn check_delete_markers(storage: &Storage, owner: &Owner, bucket: &str, manifest: &Value) {
    let query = VersionListQuery {
        max_keys: 1000,
        ..VersionListQuery::default()
    };
    let listed = storage
        .list_versions(BucketRef::new(owner, bucket), &query)
        .await
        .unwrap();
    let markers: BTreeSet<(String, String, bool)> = listed
        .entries
        .iter()
        .filter(|e| e.delete_marker)
        .map(|e| (e.key.clone(), e.version_id.clone(), e.is_latest))
        .collect();
    let expected: BTreeSet<(String, String, bool)> = manifest["delete_markers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["key"].as_str().unwrap().to_owned(),
                m["version_id"].as_str().unwrap().to_owned(),
                m["is_latest"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(markers, expected, "delete markers of {bucket}");
    let versions = listed.entries.iter().filter(|e| !e.delete_marker).count();
    assert_eq!(
        versions,
        manifest["objects"].as_array().unwrap().len(),
        "versions of {bucket}"
    );
}

async fn check_uploads(storage: &Storage, owner: &Owner, bucket: &str, manifest: &Value) {
    let query = UploadListQuery {
        max_uploads: 1000,
        ..UploadListQuery::default()
    };
    let listed = storage
        .list_multipart_uploads(BucketRef::new(owner, bucket), &query)
        .await
        .unwrap();
    let expected = manifest["uploads"].as_array().unwrap();
    assert_eq!(listed.uploads.len(), expected.len(), "uploads of {bucket}");
    for upload in expected {
        let (key, id) = (
            upload["key"].as_str().unwrap(),
            upload["upload_id"].as_str().unwrap(),
        );
        assert!(
            listed
                .uploads
                .iter()
                .any(|u| u.key == key && u.upload_id == id)
        );
        let parts = storage
            .all_parts(BucketRef::new(owner, bucket).object(key).upload(id))
            .await
            .unwrap();
        let parts: Vec<(u64, String, u64)> = parts
            .into_iter()
            .map(|p| (u64::from(p.number), p.etag, p.size))
            .collect();
        let wanted: Vec<(u64, String, u64)> = upload["parts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p[0].as_u64().unwrap(),
                    p[1].as_str().unwrap().to_owned(),
                    p[2].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(parts, wanted, "parts of {bucket}/{key}");
    }
}
