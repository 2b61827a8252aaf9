//! The Ozone OM and datanode clients against a real Ozone cluster.
//!
//! Every test is `#[ignore]`d (a run without a cluster lists them as
//! ignored); run them against one started with
//! `conformance-tests/ozone/ozone-dev start`:
//! `OZONE_OM_ADDRESS=127.0.0.1:8981 cargo test -p storage-client --test ozone_live -- --ignored`.
//! On the ha profile set `OZONE_OM_ADDRESS` to all three OMs (what
//! `ozone-dev --profile ha env` prints), `OZONE_REPLICATION=3`, and
//! `OZONE_DEV_PROFILE=ha` for the launcher the tests run. Objects are written
//! with Ozone's own shell (`ozone-dev sh key put`), so these tests also show
//! that we read what Ozone's Java client wrote.
//!
//! The write tests go the other way: keys and parts written through the
//! production back end are read back with our datanode client and through Ozone's
//! own S3 gateway (`ozone-dev start --with-s3g`; `OZONE_S3G_ADDRESS`,
//! default 127.0.0.1:29878, reached with `curl --aws-sigv4`), whose Java
//! client verifies the chunk checksums.

mod secure;

use std::ops::Range;
use std::path::PathBuf;
use std::process::Command;

use futures::{StreamExt, TryStreamExt};
use storage_client::test_support::{
    Datanode, DnClient, KeyExpectation, OmClient, OzoneBlock, OzoneKey, RatisClient, Replicated,
};
use storage_client::{
    BucketRef, CompleteUpload, NewObject, NewUpload, ObjectMeta, ObjectWriter, Owner,
    OzoneStorageConfig, PartCommit, PartNumber, Storage, StorageError, WriteIntent,
};

const ACCESS_ID: &str = "s3gw-live-test";

/// The dev cluster's block size (`ozone.scm.block.size`) and the size of
/// the chunks its Java writers cut (`ozone.client.stream.buffer.size`).
const BLOCK: u64 = 1024 * 1024;
const CHUNK: u64 = 256 * 1024;

/// `OZONE_OM_ADDRESS`: the OM's gRPC address, or every OM's, comma-separated.
fn om_addresses() -> Vec<String> {
    std::env::var("OZONE_OM_ADDRESS")
        .expect("set OZONE_OM_ADDRESS to the OM's gRPC address")
        .split(',')
        .map(str::to_owned)
        .collect()
}

/// On a security-on cluster, signing as the system identity and
/// [`ACCESS_ID`] (`secure`).
async fn om() -> OmClient {
    secure::om_client(om_addresses(), &[ACCESS_ID]).await
}

/// The replicas every block has: `OZONE_REPLICATION` (the dev cluster's
/// default profile keeps 1, the ha profile 3).
fn replication() -> usize {
    std::env::var("OZONE_REPLICATION")
        .map_or(1, |n| n.parse().expect("OZONE_REPLICATION is a number"))
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
#[ignore = "needs an Ozone cluster: set OZONE_OM_ADDRESS and run with --ignored"]
async fn bucket_lifecycle() {
    let om = om().await;
    let name = unique_bucket("life");
    om.create_bucket(ACCESS_ID, &name, "").await.unwrap();
    assert!(matches!(
        om.create_bucket(ACCESS_ID, &name, "").await,
        Err(StorageError::BucketAlreadyExists)
    ));

    let info = om.info_bucket(ACCESS_ID, &name).await.unwrap();
    assert_eq!(info.name, name);
    assert_eq!(info.owner, ACCESS_ID);

    let listed = om
        .list_buckets(ACCESS_ID, "s3v", "life-", "", 1000)
        .await
        .unwrap();
    assert!(listed.iter().any(|b| b.name == name), "{listed:?}");
    let after = om
        .list_buckets(ACCESS_ID, "s3v", "life-", &name, 1000)
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
#[ignore = "needs an Ozone cluster: set OZONE_OM_ADDRESS and run with --ignored"]
async fn reads_a_multi_block_key_written_by_ozone() {
    if secure::tls().is_some() {
        eprintln!("skipped: Ozone's shell cannot write on the TLS dev profile (ozone/README.md)");
        return;
    }
    let om = om().await;
    let bucket = unique_bucket("read");
    om.create_bucket(ACCESS_ID, &bucket, "").await.unwrap();
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

    let dn = DnClient::new(secure::dn_config());
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
#[ignore = "needs an Ozone cluster: set OZONE_OM_ADDRESS and run with --ignored"]
async fn reads_a_small_block_in_one_call_thousands_of_times_on_one_connection() {
    if secure::tls().is_some() {
        eprintln!("skipped: Ozone's shell cannot write on the TLS dev profile (ozone/README.md)");
        return;
    }
    let om = om().await;
    let bucket = unique_bucket("small-read");
    om.create_bucket(ACCESS_ID, &bucket, "").await.unwrap();
    // One chunk, not a whole checksum window: read with GetSmallFile.
    let data = pattern(40_001);
    ozone_put(&bucket, "small.bin", &data);
    let key = om
        .get_key_info(ACCESS_ID, &bucket, "small.bin", false)
        .await
        .unwrap();
    let dn = DnClient::new(secure::dn_config());
    for range in [0..40_001, 0..1, 16_383..16_385, 40_000..40_001, 100..30_000] {
        let got = read_object(&dn, &key, range.clone()).await;
        assert!(
            got == data[range.start as usize..range.end as usize],
            "range {range:?}"
        );
    }
    // Thousands of reads at once on one client (one connection) all succeed.
    let reads = futures::stream::iter(0..4000)
        .map(|_| async {
            dn.read(&key.blocks[0], 0..10)
                .await?
                .try_collect::<Vec<_>>()
                .await
        })
        .buffer_unordered(32);
    let failed: Vec<_> = reads
        .filter_map(|read| async move { read.err() })
        .collect()
        .await;
    assert!(
        failed.is_empty(),
        "{} of 4000 reads failed: {:?}",
        failed.len(),
        failed.first()
    );
    om.delete_key(ACCESS_ID, &bucket, "small.bin")
        .await
        .unwrap();
    om.delete_bucket(ACCESS_ID, &bucket).await.unwrap();
}

#[tokio::test]
#[ignore = "needs an Ozone cluster: set OZONE_OM_ADDRESS and run with --ignored"]
async fn writes_metadata_lists_tags_and_deletes() {
    let om = om().await;
    let bucket = unique_bucket("meta");
    om.create_bucket(ACCESS_ID, &bucket, "").await.unwrap();

    // An empty object needs no datanode write: CreateKey then CommitKey.
    let etag = "d41d8cd98f00b204e9800998ecf8427e";
    for key in ["a/empty", "a/second", "b/third"] {
        let tags = [("team".to_owned(), "storage".to_owned())];
        let open = om
            .create_key(ACCESS_ID, &bucket, key, 0, &tags, &KeyExpectation::Anything)
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
#[ignore = "needs an Ozone cluster: set OZONE_OM_ADDRESS and run with --ignored"]
async fn allocates_blocks_for_an_open_key() {
    let om = om().await;
    let bucket = unique_bucket("alloc");
    om.create_bucket(ACCESS_ID, &bucket, "").await.unwrap();
    let open = om
        .create_key(
            ACCESS_ID,
            &bucket,
            "k",
            BLOCK,
            &[],
            &KeyExpectation::Anything,
        )
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
#[ignore = "needs an Ozone cluster: set OZONE_OM_ADDRESS and run with --ignored"]
async fn issues_and_revokes_s3_secrets() {
    let om = om().await;
    let access_id = format!(
        "S3GWLIVE{}",
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    );
    let secret = om.issue_s3_secret(&access_id).await.unwrap();
    assert!(secret.len() >= 32, "{secret}");
    // Ozone hands a secret out once: the id is now known, and not reissued.
    assert!(om.issue_s3_secret(&access_id).await.is_err());
    om.revoke_s3_secret(&access_id).await.unwrap();
    let again = om.issue_s3_secret(&access_id).await.unwrap();
    assert_ne!(again, secret);
    om.revoke_s3_secret(&access_id).await.unwrap();
    // Revoking is idempotent (with security on, a revocation must be
    // signed with the secret it revokes).
    if !secure::enabled() {
        om.revoke_s3_secret(&access_id).await.unwrap();
    }
}

#[tokio::test]
#[ignore = "needs an Ozone cluster: set OZONE_OM_ADDRESS and run with --ignored"]
async fn reports_missing_buckets_and_keys() {
    let om = om().await;
    let bucket = unique_bucket("none");
    assert!(matches!(
        om.info_bucket(ACCESS_ID, &bucket).await,
        Err(StorageError::NoSuchBucket)
    ));
    assert!(matches!(
        om.get_key_info(ACCESS_ID, &bucket, "k", false).await,
        Err(StorageError::NoSuchBucket)
    ));
    om.create_bucket(ACCESS_ID, &bucket, "").await.unwrap();
    assert!(matches!(
        om.get_key_info(ACCESS_ID, &bucket, "k", false).await,
        Err(StorageError::NoSuchKey)
    ));
    om.delete_bucket(ACCESS_ID, &bucket).await.unwrap();
}

#[tokio::test]
#[ignore = "needs an Ozone cluster: set OZONE_OM_ADDRESS and run with --ignored"]
async fn fails_over_past_an_unreachable_om() {
    // Port 1 refuses connections: the client moves on to the real OM.
    let mut addresses = vec!["127.0.0.1:1".to_owned()];
    addresses.extend(om_addresses());
    let om = secure::om_client(addresses, &[ACCESS_ID]).await;
    let bucket = unique_bucket("failover");
    om.create_bucket(ACCESS_ID, &bucket, "").await.unwrap();
    assert_eq!(
        om.info_bucket(ACCESS_ID, &bucket).await.unwrap().name,
        bucket
    );
    om.delete_bucket(ACCESS_ID, &bucket).await.unwrap();
}

#[tokio::test]
#[ignore = "needs an Ozone cluster: set OZONE_OM_ADDRESS and run with --ignored"]
async fn runs_a_multipart_upload() {
    let om = om().await;
    let bucket = unique_bucket("mpu");
    om.create_bucket(ACCESS_ID, &bucket, "").await.unwrap();
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
        om.complete_multipart(
            ACCESS_ID,
            &bucket,
            "big",
            &upload,
            &[(1, "0".repeat(32))],
            &KeyExpectation::Anything
        )
        .await,
        Err(StorageError::InvalidPart(_))
    ));
    let object_etag = om
        .complete_multipart(
            ACCESS_ID,
            &bucket,
            "big",
            &upload,
            &[(1, etag.to_owned())],
            &KeyExpectation::Anything,
        )
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

// ---- writes through the storage facade ----

/// The production back end over the dev cluster, writing chunks the size
/// its Java writers cut. The block size is left at its default (256 MiB):
/// the writer must follow the cluster's 1 MiB blocks by itself. Bucket
/// names are not prefixed, so Ozone's S3 gateway sees the same buckets.
async fn storage() -> Storage {
    let (system_secret, test_secrets) =
        secure::secrets(&om_addresses().join(","), &[ACCESS_ID]).await;
    let config = OzoneStorageConfig {
        chunk_size: CHUNK as usize,
        system_secret,
        records_key: Some(secure::records_key()),
        tls: secure::tls(),
        test_secrets,
        ..OzoneStorageConfig::new(om_addresses())
    };
    Storage::open_ozone(config).await.unwrap()
}

/// Writes `data` in uneven pieces.
async fn write_all(writer: &mut ObjectWriter, data: &[u8]) {
    for piece in data.chunks(100_003) {
        writer
            .write(bytes::Bytes::copy_from_slice(piece))
            .await
            .unwrap();
    }
}

fn md5_hex(data: &[u8]) -> String {
    use md5::Digest;
    hex::encode(md5::Md5::digest(data))
}

/// A request to Ozone's own S3 gateway (`OZONE_S3G_ADDRESS`, by default
/// the dev cluster's 127.0.0.1:29878), signed with SigV4 by curl; with
/// security off it takes any access key and secret. Returns the response
/// headers and body. With security on it checks signatures against the
/// OM's secrets: the one `secure` made for [`ACCESS_ID`].
fn ozone_s3g(method: &str, bucket: &str, key: &str) -> (String, Vec<u8>) {
    let address =
        std::env::var("OZONE_S3G_ADDRESS").unwrap_or_else(|_| "127.0.0.1:29878".to_owned());
    let dir = tempfile::tempdir().unwrap();
    let headers = dir.path().join("headers");
    let data = dir.path().join("body");
    let secret = secure::secret_of(ACCESS_ID).unwrap_or_else(|| "any-secret".into());
    let mut curl = Command::new("curl");
    curl.args([
        "-sS",
        "--fail-with-body",
        "--aws-sigv4",
        "aws:amz:us-east-1:s3",
    ])
    .args(["--user", &format!("{ACCESS_ID}:{secret}")])
    .args(["-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"])
    .arg("-D")
    .arg(&headers)
    .arg("-o")
    .arg(&data);
    if method == "HEAD" {
        curl.arg("-I");
    }
    let status = curl
        .arg(format!("http://{address}/{bucket}/{key}"))
        .status()
        .expect("run curl");
    assert!(
        status.success(),
        "{method} /{bucket}/{key} through Ozone's S3 gateway: {status}"
    );
    (
        std::fs::read_to_string(headers).unwrap(),
        std::fs::read(data).unwrap_or_default(),
    )
}

/// The value of response header `name` (case-insensitive).
fn header<'a>(headers: &'a str, name: &str) -> Option<&'a str> {
    headers.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim().eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

/// Checks `key` against `data` three ways: the OM's view, our datanode
/// reads, and Ozone's own S3 gateway (bytes, ETag, user metadata; not on
/// a TLS cluster, where it does not run here).
async fn check_object(om: &OmClient, bucket: &str, key: &str, data: &[u8], etag: &str) {
    let info = om
        .get_key_info(ACCESS_ID, bucket, key, false)
        .await
        .unwrap();
    assert_eq!(info.size, data.len() as u64, "{key}");
    assert_eq!(info.etag(), Some(etag), "{key}");
    assert!(
        info.blocks.iter().all(|b| b.commit_sequence_id > 0),
        "{key}: {:?}",
        info.blocks
    );
    let dn = DnClient::new(secure::dn_config());
    assert!(
        read_object(&dn, &info, 0..data.len() as u64).await == data,
        "{key}: datanode read differs"
    );
    if secure::tls().is_some() {
        // Ozone's own S3 gateway does not run on the TLS dev profile (its
        // Java client cannot check the datanodes' certificates there).
        return;
    }

    let (headers, got) = ozone_s3g("GET", bucket, key);
    assert!(
        got == data,
        "{key}: S3 gateway GET differs ({} bytes)",
        got.len()
    );
    let (headers_head, _) = ozone_s3g("HEAD", bucket, key);
    for headers in [&headers, &headers_head] {
        assert_eq!(
            header(headers, "ETag"),
            Some(format!("\"{etag}\"").as_str()),
            "{key}: {headers}"
        );
        assert_eq!(
            header(headers, "Content-Length"),
            Some(data.len().to_string().as_str()),
            "{key}: {headers}"
        );
    }
}

/// Once a write is acknowledged every replica serves it: the writer waits
/// for ALL_COMMITTED (falling back to a majority only when a member lags),
/// so no read that lands on a follower finds the block missing or behind.
#[tokio::test]
#[ignore = "needs an Ozone cluster: set OZONE_OM_ADDRESS and run with --ignored"]
async fn every_replica_serves_a_block_once_its_write_is_acknowledged() {
    let om = om().await;
    let storage = storage().await;
    let owner = Owner::new(ACCESS_ID);
    let bucket = unique_bucket("replicas");
    storage
        .create_bucket(BucketRef::new(&owner, &bucket), "")
        .await
        .unwrap();
    let data = pattern(3_500_000);
    let mut writer = storage
        .create_object(
            BucketRef::new(&owner, &bucket).object("spread"),
            WriteIntent::default(),
        )
        .await
        .unwrap();
    write_all(&mut writer, &data).await;
    let object = NewObject {
        etag: md5_hex(&data),
        meta: ObjectMeta::default(),
        checksum: None,
    };
    writer.commit(object).await.unwrap();

    let info = om
        .get_key_info(ACCESS_ID, &bucket, "spread", false)
        .await
        .unwrap();
    assert_eq!(info.blocks.len(), 4);
    let dn = DnClient::new(secure::dn_config());
    for block in &info.blocks {
        assert_eq!(block.datanodes.len(), replication(), "{block:?}");
        let want = &data[block.offset as usize..(block.offset + block.length) as usize];
        for replica in &block.datanodes {
            // The same block, with this one replica to read from.
            let only_here = OzoneBlock {
                datanodes: vec![replica.clone()],
                ..block.clone()
            };
            let pieces: Vec<_> = dn
                .read(&only_here, 0..block.length)
                .await
                .unwrap_or_else(|e| panic!("{} cannot serve {:?}: {e}", replica.address, block.id))
                .try_collect()
                .await
                .unwrap();
            assert!(
                pieces.concat() == want,
                "{} serves other bytes for {:?}",
                replica.address,
                block.id
            );
        }
    }
    storage
        .delete_object(BucketRef::new(&owner, &bucket).object("spread"))
        .await
        .unwrap();
    storage
        .delete_bucket(BucketRef::new(&owner, &bucket))
        .await
        .unwrap();
}

#[tokio::test]
#[ignore = "needs an Ozone cluster: set OZONE_OM_ADDRESS and run with --ignored"]
async fn writes_keys_that_ozone_reads() {
    let om = om().await;
    let storage = storage().await;
    let owner = Owner::new(ACCESS_ID);
    let bucket = unique_bucket("ratis");
    storage
        .create_bucket(BucketRef::new(&owner, &bucket), "")
        .await
        .unwrap();
    // Ozone stores user metadata without the `x-amz-meta-` prefix; its S3
    // gateway adds the prefix back on every name but `ETag`.
    let mut meta = ObjectMeta::default();
    meta.user.insert("origin".into(), "ratis".into());
    // (key, size, size hint, blocks): without a hint every block is an
    // AllocateBlock; with it CreateKey hands them all out.
    let cases = [
        ("empty", 0, None, 0),
        ("one-byte", 1, Some(1), 1),
        ("multi-chunk", 300_000, Some(300_000), 1),
        ("multi-block", 3_500_000, Some(3_500_000), 4),
        ("allocated/multi-block", 3_500_000, None, 4),
        ("block-sized", BLOCK as usize, Some(BLOCK), 1),
        ("hint-too-small", 2_500_000, Some(10), 3),
    ];
    for (key, size, size_hint, blocks) in cases {
        let data = pattern(size);
        let intent = WriteIntent {
            size_hint,
            ..WriteIntent::default()
        };
        let mut writer = storage
            .create_object(BucketRef::new(&owner, &bucket).object(key), intent)
            .await
            .unwrap();
        write_all(&mut writer, &data).await;
        let object = NewObject {
            etag: md5_hex(&data),
            meta: meta.clone(),
            checksum: None,
        };
        let written = writer.commit(object).await.unwrap();
        assert_eq!(written.size, size as u64);
        assert_eq!(
            written.locations.len(),
            blocks,
            "{key}: {:?}",
            written.locations
        );
        assert!(written.locations.iter().all(|b| b.length <= BLOCK));
        check_object(&om, &bucket, key, &data, &written.etag).await;
    }
    if secure::tls().is_none() {
        let (headers, _) = ozone_s3g("HEAD", &bucket, "multi-chunk");
        assert_eq!(
            header(&headers, "x-amz-meta-origin"),
            Some("ratis"),
            "{headers}"
        );
    }

    for (key, ..) in cases {
        storage
            .delete_object(BucketRef::new(&owner, &bucket).object(key))
            .await
            .unwrap();
    }
    storage
        .delete_bucket(BucketRef::new(&owner, &bucket))
        .await
        .unwrap();
}

#[tokio::test]
#[ignore = "needs an Ozone cluster: set OZONE_OM_ADDRESS and run with --ignored"]
async fn writes_a_multipart_upload_that_ozone_reads() {
    let om = om().await;
    let storage = storage().await;
    let owner = Owner::new(ACCESS_ID);
    let bucket = unique_bucket("ratis-mpu");
    storage
        .create_bucket(BucketRef::new(&owner, &bucket), "")
        .await
        .unwrap();
    let upload = storage
        .create_multipart_upload(
            BucketRef::new(&owner, &bucket).object("joined"),
            NewUpload::default(),
        )
        .await
        .unwrap()
        .upload_id;
    // Every part but the last must reach S3's 5 MiB minimum.
    let first = pattern(5 * BLOCK as usize + 3);
    let second: Vec<u8> = pattern(300_001).into_iter().map(|b| b ^ 0x5a).collect();
    let mut parts = Vec::new();
    for (number, data) in [(1, &first), (2, &second)] {
        let mut writer = storage
            .create_part(
                BucketRef::new(&owner, &bucket)
                    .object("joined")
                    .upload(&upload),
                PartNumber::new(number).unwrap(),
                None,
            )
            .await
            .unwrap();
        write_all(&mut writer, data).await;
        let commit = PartCommit {
            etag: md5_hex(data),
            checksum: None,
        };
        let written = writer
            .commit_part(&upload, PartNumber::new(number).unwrap(), commit)
            .await
            .unwrap();
        assert_eq!(written.size, data.len() as u64);
        parts.push((number, written.etag));
    }
    let listed = om
        .list_parts(ACCESS_ID, &bucket, "joined", &upload, 0, 10)
        .await
        .unwrap();
    let sizes: Vec<_> = listed.parts.iter().map(|p| (p.number, p.size)).collect();
    assert_eq!(sizes, [(1, first.len() as u64), (2, second.len() as u64)]);

    let complete = CompleteUpload {
        parts,
        ..CompleteUpload::default()
    };
    let info = storage
        .complete_multipart_upload(
            BucketRef::new(&owner, &bucket)
                .object("joined")
                .upload(&upload),
            complete,
        )
        .await
        .unwrap();
    assert!(info.etag.ends_with("-2"), "{}", info.etag);
    let whole = [first, second].concat();
    check_object(&om, &bucket, "joined", &whole, &info.etag).await;

    storage
        .delete_object(BucketRef::new(&owner, &bucket).object("joined"))
        .await
        .unwrap();
    storage
        .delete_bucket(BucketRef::new(&owner, &bucket))
        .await
        .unwrap();
}

#[tokio::test]
#[ignore = "needs an Ozone cluster: set OZONE_OM_ADDRESS and run with --ignored"]
async fn writes_a_block_chunk_by_chunk_and_watches_it() {
    let om = om().await;
    let bucket = unique_bucket("ratis-low");
    om.create_bucket(ACCESS_ID, &bucket, "").await.unwrap();
    let open = om
        .create_key(ACCESS_ID, &bucket, "k", 10, &[], &KeyExpectation::Anything)
        .await
        .unwrap();
    let block = open.blocks[0].clone();
    let pipeline = block.pipeline.clone().expect("a Ratis pipeline");
    assert_eq!(block.length, BLOCK, "the OM sizes blocks at the block size");

    let ratis = RatisClient::new(secure::ratis_config());
    let data = pattern(10);
    let chunk = |n: u64, range: Range<usize>| chunk_of(&block, n, range);
    let first = ratis
        .write_chunk(
            &block,
            chunk(1, 0..4),
            bytes::Bytes::copy_from_slice(&data[..4]),
        )
        .await
        .unwrap();
    let second = ratis
        .write_chunk(
            &block,
            chunk(2, 4..10),
            bytes::Bytes::copy_from_slice(&data[4..]),
        )
        .await
        .unwrap();
    assert!(second > first, "log indexes {first} then {second}");
    let committed = ratis
        .put_block(&block, vec![chunk(1, 0..4), chunk(2, 4..10)], true)
        .await
        .unwrap();
    assert_eq!(committed.length, 10);
    assert!(committed.log_index > second);
    assert!(committed.commit_sequence_id > 0);
    // One member: every index the leader committed is all-committed.
    assert_eq!(
        ratis.watch(&pipeline, committed.log_index).await.unwrap(),
        Replicated::AllCommitted
    );

    // A member that cannot be reached is skipped for the next one (the
    // call keeps its id, so a resend could not apply twice).
    let other_block = om.allocate_block(ACCESS_ID, &open).await.unwrap();
    let mut detour = other_block.clone();
    if let Some(p) = detour.pipeline.as_mut() {
        let leader = p.members[0].uuid.clone();
        p.members.insert(
            0,
            Datanode {
                uuid: leader,
                address: "127.0.0.1:1".into(),
            },
        );
    }
    ratis
        .write_chunk(
            &detour,
            chunk_of(&other_block, 1, 0..4),
            bytes::Bytes::copy_from_slice(&data[..4]),
        )
        .await
        .unwrap();

    // A group the datanode does not serve fails, and does not hang.
    let mut stranger = other_block.clone();
    if let Some(p) = stranger.pipeline.as_mut() {
        p.id = uuid::Uuid::new_v4();
    }
    let refused = ratis
        .write_chunk(
            &stranger,
            chunk_of(&other_block, 2, 4..10),
            bytes::Bytes::copy_from_slice(&data[4..]),
        )
        .await;
    assert!(
        matches!(&refused, Err(StorageError::Unavailable(m)) if m.contains("GroupMismatchException")),
        "{refused:?}"
    );

    let written = storage_client::test_support::OzoneBlock {
        length: 10,
        commit_sequence_id: committed.commit_sequence_id,
        ..block
    };
    om.commit_key(ACCESS_ID, &open, &[written], &md5_hex(&data), &[])
        .await
        .unwrap();
    let key = om
        .get_key_info(ACCESS_ID, &bucket, "k", false)
        .await
        .unwrap();
    assert_eq!(
        key.blocks[0].commit_sequence_id,
        committed.commit_sequence_id
    );
    let dn = DnClient::new(secure::dn_config());
    assert_eq!(read_object(&dn, &key, 0..10).await, data);
    assert_eq!(read_object(&dn, &key, 3..7).await, &data[3..7]);

    om.delete_key(ACCESS_ID, &bucket, "k").await.unwrap();
    om.delete_bucket(ACCESS_ID, &bucket).await.unwrap();
}

/// An unchecksummed chunk of `block` (the reader then skips verification).
fn chunk_of(
    block: &storage_client::test_support::OzoneBlock,
    n: u64,
    range: Range<usize>,
) -> storage_client::test_support::proto::hadoop::hdds::datanode::ChunkInfo {
    use storage_client::test_support::proto::hadoop::hdds::datanode::{
        ChecksumData, ChecksumType, ChunkInfo,
    };
    ChunkInfo {
        chunk_name: format!("{}_chunk_{n}", block.id.local),
        offset: range.start as u64,
        len: range.len() as u64,
        metadata: Vec::new(),
        checksum_data: ChecksumData {
            r#type: ChecksumType::None as i32,
            bytes_per_checksum: 0,
            checksums: Vec::new(),
        },
    }
}
