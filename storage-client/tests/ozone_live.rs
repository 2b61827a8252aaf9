//! The Ozone OM and datanode clients against a real Ozone cluster.
//!
//! Runs only when `OZONE_OM_ADDRESS` names an OM gRPC endpoint, e.g. after
//! `conformance-tests/ozone/ozone-dev start`:
//! `OZONE_OM_ADDRESS=127.0.0.1:8981 cargo test -p storage-client --test ozone_live`.
//! Without it every test returns at once with a note. Objects are written
//! with Ozone's own shell (`ozone-dev sh key put`), so these tests also show
//! that we read what Ozone's Java client wrote.

use std::ops::Range;
use std::path::PathBuf;
use std::process::Command;

use futures::TryStreamExt;
use storage_client::StorageError;
use storage_client::ozone::dn_client::{DnClient, DnConfig};
use storage_client::ozone::om_client::{OmClient, OmConfig, SecretAnswer};
use storage_client::ozone::{Datanode, OzoneKey};

const ACCESS_ID: &str = "s3gw-live-test";

/// The dev cluster's block size (`ozone.scm.block.size`) and the size of
/// the chunks its Java writers cut (`ozone.client.stream.buffer.size`).
const BLOCK: u64 = 1024 * 1024;
const CHUNK: u64 = 256 * 1024;

fn om() -> Option<OmClient> {
    let Ok(addresses) = std::env::var("OZONE_OM_ADDRESS") else {
        eprintln!("OZONE_OM_ADDRESS is not set: skipping the live Ozone test");
        return None;
    };
    let config = OmConfig::new(addresses.split(',').map(str::to_owned).collect());
    Some(OmClient::new(&config).expect("valid OM addresses"))
}

fn unique_bucket(purpose: &str) -> String {
    format!(
        "{purpose}-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    )
}

/// Deterministic bytes that differ at every offset of interest.
fn pattern(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_be_bytes()[0] ^ (i as u8))
        .collect()
}

/// Writes `data` as `s3v/<bucket>/<key>` with Ozone's own shell.
fn ozone_put(bucket: &str, key: &str, data: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data");
    std::fs::write(&file, data).unwrap();
    let launcher = std::env::var_os("OZONE_DEV").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../conformance-tests/ozone/ozone-dev"),
        PathBuf::from,
    );
    let status = Command::new(launcher)
        .args(["sh", "key", "put", &format!("/s3v/{bucket}/{key}")])
        .arg(&file)
        .status()
        .expect("run ozone-dev sh key put");
    assert!(status.success(), "ozone sh key put failed: {status}");
}

/// Bytes `range` of the object, read block by block from the datanodes.
async fn read_object(dn: &DnClient, key: &OzoneKey, range: Range<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    for block in &key.blocks {
        let block_range = block.offset..block.offset + block.length;
        let start = range.start.max(block_range.start);
        let end = range.end.min(block_range.end);
        if start >= end {
            continue;
        }
        let pieces: Vec<_> = dn
            .read(block, start - block.offset..end - block.offset)
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        out.extend(pieces.iter().flat_map(|p| p.iter().copied()));
    }
    out
}

#[tokio::test]
async fn bucket_lifecycle() {
    let Some(om) = om() else { return };
    let name = unique_bucket("life");
    om.create_bucket(ACCESS_ID, &name).await.unwrap();
    assert!(matches!(
        om.create_bucket(ACCESS_ID, &name).await,
        Err(StorageError::BucketAlreadyExists)
    ));

    let info = om.info_bucket(ACCESS_ID, &name).await.unwrap();
    assert_eq!(info.name, name);
    assert_eq!(info.owner, ACCESS_ID);

    let listed = om.list_buckets(ACCESS_ID, "life-", "", 1000).await.unwrap();
    assert!(listed.iter().any(|b| b.name == name), "{listed:?}");
    let after = om
        .list_buckets(ACCESS_ID, "life-", &name, 1000)
        .await
        .unwrap();
    assert!(after.iter().all(|b| b.name > name), "{after:?}");

    om.delete_bucket(ACCESS_ID, &name).await.unwrap();
    assert!(matches!(
        om.info_bucket(ACCESS_ID, &name).await,
        Err(StorageError::NoSuchBucket)
    ));
    assert!(matches!(
        om.delete_bucket(ACCESS_ID, &name).await,
        Err(StorageError::NoSuchBucket)
    ));
}

#[tokio::test]
async fn reads_a_multi_block_key_written_by_ozone() {
    let Some(om) = om() else { return };
    let bucket = unique_bucket("read");
    om.create_bucket(ACCESS_ID, &bucket).await.unwrap();
    // 2.6 blocks, the last chunk short and not a whole checksum window.
    let data = pattern((2 * BLOCK + 600_001) as usize);
    ozone_put(&bucket, "dir/object.bin", &data);

    let key = om
        .get_key_info(ACCESS_ID, &bucket, "dir/object.bin", false)
        .await
        .unwrap();
    assert_eq!(key.size, data.len() as u64);
    assert_eq!(key.blocks.len(), 3, "{:?}", key.blocks);
    assert!(key.blocks.iter().all(|b| !b.datanodes.is_empty()));
    assert_eq!(
        key.blocks.iter().map(|b| b.length).sum::<u64>(),
        data.len() as u64
    );

    let dn = DnClient::new(DnConfig::default());
    let size = data.len() as u64;
    assert!(
        read_object(&dn, &key, 0..size).await == data,
        "whole object differs"
    );
    let ranges = [
        0..1,
        5..17,
        CHUNK - 100..CHUNK + 100,
        BLOCK - 1..BLOCK + 1,
        BLOCK - 5000..2 * BLOCK + 7,
        16_383..16_385,
        size - 3..size,
        2 * BLOCK..size,
    ];
    for range in ranges {
        let got = read_object(&dn, &key, range.clone()).await;
        let want = &data[range.start as usize..range.end as usize];
        assert!(
            got == want,
            "range {range:?} differs: got {} bytes {:?}, want {:?}",
            got.len(),
            &got[..got.len().min(8)],
            &want[..want.len().min(8)]
        );
    }

    // A replica that cannot be reached is skipped for the next one.
    let mut detour = key.clone();
    detour.blocks[0].datanodes.insert(
        0,
        Datanode {
            uuid: "00000000-0000-0000-0000-000000000000".into(),
            address: "127.0.0.1:1".into(),
        },
    );
    assert!(read_object(&dn, &detour, 10..BLOCK + 10).await == data[10..(BLOCK + 10) as usize]);

    // A replica behind the block's commit sequence id refuses it.
    let mut ahead = key.blocks[0].clone();
    ahead.commit_sequence_id += 1_000_000;
    let refused = dn.read(&ahead, 0..10).await.err();
    assert!(
        matches!(&refused, Some(StorageError::Unavailable(m)) if m.contains("UNKNOWN_BCSID")),
        "{refused:?}"
    );

    let head = om
        .get_key_info(ACCESS_ID, &bucket, "dir/object.bin", true)
        .await
        .unwrap();
    assert_eq!(head.size, size);

    let (listed, truncated) = om
        .list_keys(ACCESS_ID, &bucket, "dir/", "", 10)
        .await
        .unwrap();
    assert!(!truncated);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].key, "dir/object.bin");
    assert_eq!(listed[0].size, size);

    assert!(matches!(
        om.delete_bucket(ACCESS_ID, &bucket).await,
        Err(StorageError::BucketNotEmpty)
    ));
    om.delete_key(ACCESS_ID, &bucket, "dir/object.bin")
        .await
        .unwrap();
    om.delete_bucket(ACCESS_ID, &bucket).await.unwrap();
}

#[tokio::test]
async fn writes_metadata_lists_tags_and_deletes() {
    let Some(om) = om() else { return };
    let bucket = unique_bucket("meta");
    om.create_bucket(ACCESS_ID, &bucket).await.unwrap();

    // An empty object needs no datanode write: CreateKey then CommitKey.
    let etag = "d41d8cd98f00b204e9800998ecf8427e";
    for key in ["a/empty", "a/second", "b/third"] {
        let tags = [("team".to_owned(), "storage".to_owned())];
        let open = om
            .create_key(ACCESS_ID, &bucket, key, 0, &tags)
            .await
            .unwrap();
        assert!(open.blocks.is_empty());
        let meta = [("x-amz-meta-color".to_owned(), "blue".to_owned())];
        om.commit_key(ACCESS_ID, &open, &[], etag, &meta)
            .await
            .unwrap();
    }

    let key = om
        .get_key_info(ACCESS_ID, &bucket, "a/empty", true)
        .await
        .unwrap();
    assert_eq!(key.size, 0);
    assert_eq!(key.etag(), Some(etag));
    assert_eq!(
        key.metadata.get("x-amz-meta-color").map(String::as_str),
        Some("blue")
    );
    assert_eq!(key.tags, vec![("team".to_owned(), "storage".to_owned())]);
    assert_eq!(key.owner, ACCESS_ID);

    let (page, truncated) = om.list_keys(ACCESS_ID, &bucket, "a/", "", 1).await.unwrap();
    assert!(truncated);
    assert_eq!(page.len(), 1);
    assert_eq!(page[0].key, "a/empty");
    assert_eq!(page[0].etag, etag);
    let (rest, truncated) = om
        .list_keys(ACCESS_ID, &bucket, "a/", "a/empty", 10)
        .await
        .unwrap();
    assert!(!truncated);
    assert_eq!(
        rest.iter().map(|e| e.key.as_str()).collect::<Vec<_>>(),
        ["a/second"]
    );

    let tags = vec![
        ("k1".to_owned(), "v1".to_owned()),
        ("k2".to_owned(), String::new()),
    ];
    om.put_tags(ACCESS_ID, &bucket, "a/empty", &tags)
        .await
        .unwrap();
    let mut got = om.get_tags(ACCESS_ID, &bucket, "a/empty").await.unwrap();
    got.sort();
    assert_eq!(got, tags);
    om.delete_tags(ACCESS_ID, &bucket, "a/empty").await.unwrap();
    assert!(
        om.get_tags(ACCESS_ID, &bucket, "a/empty")
            .await
            .unwrap()
            .is_empty()
    );

    om.delete_key(ACCESS_ID, &bucket, "a/empty").await.unwrap();
    assert!(matches!(
        om.get_key_info(ACCESS_ID, &bucket, "a/empty", true).await,
        Err(StorageError::NoSuchKey)
    ));
    assert!(matches!(
        om.delete_key(ACCESS_ID, &bucket, "a/empty").await,
        Err(StorageError::NoSuchKey)
    ));

    let keys = [
        "a/second".to_owned(),
        "b/third".to_owned(),
        "never".to_owned(),
    ];
    let undeleted = om.delete_keys(ACCESS_ID, &bucket, &keys).await.unwrap();
    assert!(undeleted.is_empty(), "{undeleted:?}");
    let (left, _) = om.list_keys(ACCESS_ID, &bucket, "", "", 10).await.unwrap();
    assert!(left.is_empty(), "{left:?}");
    om.delete_bucket(ACCESS_ID, &bucket).await.unwrap();
}

#[tokio::test]
async fn allocates_blocks_for_an_open_key() {
    let Some(om) = om() else { return };
    let bucket = unique_bucket("alloc");
    om.create_bucket(ACCESS_ID, &bucket).await.unwrap();
    let open = om
        .create_key(ACCESS_ID, &bucket, "k", BLOCK, &[])
        .await
        .unwrap();
    assert_eq!(open.blocks.len(), 1, "a size hint pre-allocates a block");
    let more = om.allocate_block(ACCESS_ID, &open).await.unwrap();
    assert_ne!(more.id, open.blocks[0].id);
    assert!(!more.datanodes.is_empty());
    assert!(more.datanodes.iter().all(|d| !d.uuid.is_empty()));
    // Nothing was written, so the key commits empty and the blocks are dropped.
    om.commit_key(
        ACCESS_ID,
        &open,
        &[],
        "d41d8cd98f00b204e9800998ecf8427e",
        &[],
    )
    .await
    .unwrap();
    om.delete_key(ACCESS_ID, &bucket, "k").await.unwrap();
    om.delete_bucket(ACCESS_ID, &bucket).await.unwrap();
}

#[tokio::test]
async fn reports_missing_buckets_and_keys() {
    let Some(om) = om() else { return };
    let bucket = unique_bucket("none");
    assert!(matches!(
        om.info_bucket(ACCESS_ID, &bucket).await,
        Err(StorageError::NoSuchBucket)
    ));
    assert!(matches!(
        om.get_key_info(ACCESS_ID, &bucket, "k", false).await,
        Err(StorageError::NoSuchBucket)
    ));
    om.create_bucket(ACCESS_ID, &bucket).await.unwrap();
    assert!(matches!(
        om.get_key_info(ACCESS_ID, &bucket, "k", false).await,
        Err(StorageError::NoSuchKey)
    ));
    om.delete_bucket(ACCESS_ID, &bucket).await.unwrap();
}

#[tokio::test]
async fn generates_an_s3_secret_once() {
    let Some(om) = om() else { return };
    let access = format!("live-{}", uuid::Uuid::new_v4().simple());
    assert_eq!(
        om.get_s3_secret(&access, false).await.unwrap(),
        SecretAnswer::Unknown
    );
    let SecretAnswer::Secret(secret) = om.get_s3_secret(&access, true).await.unwrap() else {
        panic!("no secret generated");
    };
    assert_eq!(secret.len(), 64, "{secret}");
    assert!(secret.bytes().all(|b| b.is_ascii_hexdigit()));
    // Ozone hands a secret out only in the answer that creates it.
    for create in [false, true] {
        assert_eq!(
            om.get_s3_secret(&access, create).await.unwrap(),
            SecretAnswer::AlreadyIssued
        );
    }
}

#[tokio::test]
async fn fails_over_past_an_unreachable_om() {
    let Ok(address) = std::env::var("OZONE_OM_ADDRESS") else {
        eprintln!("OZONE_OM_ADDRESS is not set: skipping the live Ozone test");
        return;
    };
    // Port 1 refuses connections: the client moves on to the real OM.
    let mut addresses = vec!["127.0.0.1:1".to_owned()];
    addresses.extend(address.split(',').map(str::to_owned));
    let om = OmClient::new(&OmConfig::new(addresses)).unwrap();
    let bucket = unique_bucket("failover");
    om.create_bucket(ACCESS_ID, &bucket).await.unwrap();
    // Later calls go straight to the OM that answered.
    assert_eq!(
        om.info_bucket(ACCESS_ID, &bucket).await.unwrap().name,
        bucket
    );
    om.delete_bucket(ACCESS_ID, &bucket).await.unwrap();
}

#[tokio::test]
async fn runs_a_multipart_upload() {
    let Some(om) = om() else { return };
    let bucket = unique_bucket("mpu");
    om.create_bucket(ACCESS_ID, &bucket).await.unwrap();
    let meta = [("x-amz-meta-kind".to_owned(), "parts".to_owned())];
    let upload = om
        .initiate_multipart(ACCESS_ID, &bucket, "big", &meta, &[])
        .await
        .unwrap();
    let doomed = om
        .initiate_multipart(ACCESS_ID, &bucket, "doomed", &[], &[])
        .await
        .unwrap();

    let uploads = om
        .list_uploads(ACCESS_ID, &bucket, "", "", "", 100)
        .await
        .unwrap();
    let mut listed: Vec<_> = uploads
        .uploads
        .iter()
        .map(|u| (u.key.as_str(), u.upload_id.as_str()))
        .collect();
    listed.sort();
    assert_eq!(
        listed,
        [("big", upload.as_str()), ("doomed", doomed.as_str())]
    );

    // A single empty part: S3 allows the last part to be small.
    let etag = "d41d8cd98f00b204e9800998ecf8427e";
    let open = om
        .create_part(ACCESS_ID, &bucket, "big", &upload, 1, 0)
        .await
        .unwrap();
    let name = om.commit_part(ACCESS_ID, &open, &[], etag).await.unwrap();
    assert!(!name.is_empty());

    let page = om
        .list_parts(ACCESS_ID, &bucket, "big", &upload, 0, 100)
        .await
        .unwrap();
    assert!(!page.is_truncated);
    assert_eq!(page.parts.len(), 1);
    assert_eq!(page.parts[0].number, 1);
    assert_eq!(page.parts[0].size, 0);
    assert_eq!(page.parts[0].etag.as_deref(), Some(etag));

    assert!(matches!(
        om.complete_multipart(ACCESS_ID, &bucket, "big", &upload, &[(1, "0".repeat(32))])
            .await,
        Err(StorageError::InvalidPart(_))
    ));
    let object_etag = om
        .complete_multipart(ACCESS_ID, &bucket, "big", &upload, &[(1, etag.to_owned())])
        .await
        .unwrap();
    assert!(object_etag.ends_with("-1"), "{object_etag}");
    let key = om
        .get_key_info(ACCESS_ID, &bucket, "big", true)
        .await
        .unwrap();
    assert_eq!(key.etag(), Some(object_etag.as_str()));
    assert_eq!(
        key.metadata.get("x-amz-meta-kind").map(String::as_str),
        Some("parts")
    );

    om.abort_multipart(ACCESS_ID, &bucket, "doomed", &doomed)
        .await
        .unwrap();
    assert!(matches!(
        om.abort_multipart(ACCESS_ID, &bucket, "doomed", &doomed)
            .await,
        Err(StorageError::NoSuchUpload)
    ));
    let left = om
        .list_uploads(ACCESS_ID, &bucket, "", "", "", 100)
        .await
        .unwrap();
    assert!(left.uploads.is_empty(), "{left:?}");

    om.delete_key(ACCESS_ID, &bucket, "big").await.unwrap();
    om.delete_bucket(ACCESS_ID, &bucket).await.unwrap();
}
