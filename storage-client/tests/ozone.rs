//! The conformance suite on a real Apache Ozone cluster, run when
//! `OZONE_OM_ADDRESS` names an OM's gRPC address (start one with
//! `conformance-tests/ozone/ozone-dev start`, then
//! see below).
//! Every case that needs the cluster is `#[ignore]`d, so a run without one
//! reports them as ignored, not passed:
//! `OZONE_OM_ADDRESS=127.0.0.1:8981 cargo test -p storage-client --test ozone -- --ignored`.
//!
//! Each case gets its own bucket-name prefix: the cluster is shared by
//! every case (and run), and that is how each sees a fresh, empty store.

mod conformance;
mod secure;

use std::time::Duration;

use bytes::Bytes;
use conformance::{Capabilities, MultipartRules};
use md5::{Digest, Md5};
use storage_client::{
    BucketDocument, ChecksumAlgorithm, ChecksumType, CompleteUpload, NewUpload, ObjectChecksum,
    OzoneStorageConfig, PartCommit, Storage, StorageError, WriteCondition,
};

/// The cluster's OM gRPC address, or every OM's (`OZONE_OM_ADDRESS`
/// comma-separated).
fn om_addresses() -> Vec<String> {
    std::env::var("OZONE_OM_ADDRESS")
        .ok()
        .filter(|a| !a.is_empty())
        .expect("set OZONE_OM_ADDRESS to the OM's gRPC address (HOST:PORT[,HOST:PORT...])")
        .split(',')
        .map(str::to_owned)
        .collect()
}

/// Small blocks and chunks (the dev cluster's blocks are 1 MiB; a writer
/// may seal a block early), so that small objects span several of each.
async fn open(addresses: Vec<String>) -> Storage {
    let prefix = format!("t{}-", &uuid::Uuid::new_v4().simple().to_string()[..10]);
    open_with_prefix(addresses, prefix).await
}

async fn open_with_prefix(addresses: Vec<String>, prefix: String) -> Storage {
    let config = OzoneStorageConfig {
        block_size: 64 * 1024,
        chunk_size: 16 * 1024,
        bytes_per_checksum: 4 * 1024,
        request_timeout: Duration::from_secs(30),
        ..config(addresses, prefix).await
    };
    Storage::open_ozone(config)
        .await
        .expect("open the Ozone back end")
}

/// The back end's defaults with `prefix`, and on a security-on cluster
/// the secrets to sign with (`secure`).
async fn config(addresses: Vec<String>, prefix: String) -> OzoneStorageConfig {
    let identities = [conformance::alice(), conformance::bob()].map(|who| who.access_key);
    let identities = identities.each_ref().map(String::as_str);
    let (system_secret, test_secrets) = secure::secrets(&addresses[0], &identities).await;
    OzoneStorageConfig {
        bucket_prefix: prefix,
        system_secret,
        test_secrets,
        ..OzoneStorageConfig::new(addresses)
    }
}

/// What Ozone does its own way: tags in a hash map (no order), and the
/// OM's multipart rules, S3's 5 MiB minimum part size and an object ETag it
/// names itself: the MD5 of the part ETags' text, concatenated, then `-N`
/// (S3 hashes the binary part MD5s instead).
const OZONE: Capabilities = Capabilities {
    tags_keep_order: false,
    multipart: MultipartRules {
        min_part_size: 5 * 1024 * 1024,
        object_etag: |parts, _| {
            let text: String = parts.iter().map(|p| p.etag.as_str()).collect();
            format!("{}-{}", hex::encode(Md5::digest(text)), parts.len())
        },
    },
    versioning: false,
    meta_entries: false,
};

conformance::suite!(
    async { ((), open(om_addresses()).await) },
    OZONE,
    #[ignore = "needs an Ozone cluster: set OZONE_OM_ADDRESS and run with --ignored"]
);

/// A system bucket that someone else owns makes the back end refuse to
/// start: the gateway would keep its secrets in a bucket its owner reads.
/// Here an S3 user of a gateway whose prefix ends in `s3gw-` takes the
/// name the next gateway's credentials bucket would have.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs an Ozone cluster: set OZONE_OM_ADDRESS and run with --ignored"]
async fn a_system_bucket_owned_by_someone_else_is_refused_at_open() {
    let prefix = format!("t{}-", &uuid::Uuid::new_v4().simple().to_string()[..10]);
    let squatter = open_with_prefix(om_addresses(), format!("{prefix}s3gw-")).await;
    squatter
        .create_bucket(&conformance::alice(), "credentials", "")
        .await
        .unwrap();
    let config = config(om_addresses(), prefix.clone()).await;
    match Storage::open_ozone(config).await {
        Err(storage_client::StorageError::InvalidArgument(message)) => {
            assert!(
                message.contains(&format!("s3v/{prefix}s3gw-credentials"))
                    && message.contains("AKIDALICE"),
                "{message}"
            );
        }
        Err(other) => panic!("expected InvalidArgument, got {other:?}"),
        Ok(_) => panic!("opened with a credentials bucket owned by AKIDALICE"),
    }
}

/// A completed multipart object's checksums live in a record of the
/// system bucket `s3gw-checksums` (Ozone has no place for them); deleting
/// the object deletes its record, which would otherwise stay forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs an Ozone cluster: set OZONE_OM_ADDRESS and run with --ignored"]
async fn a_deleted_objects_checksum_record_goes_with_it() {
    let prefix = format!("t{}-", &uuid::Uuid::new_v4().simple().to_string()[..10]);
    let s = open_with_prefix(om_addresses(), prefix.clone()).await;
    let a = conformance::alice();
    s.create_bucket(&a, "b", "").await.unwrap();
    let checksum = |value: &str, kind| ObjectChecksum {
        algorithm: ChecksumAlgorithm::Sha256,
        value: value.into(),
        kind,
    };
    let upload = NewUpload {
        checksum_algorithm: Some(ChecksumAlgorithm::Sha256),
        checksum_type: Some(ChecksumType::Composite),
        ..NewUpload::default()
    };
    let id = s
        .create_multipart_upload(&a, "b", "k", upload)
        .await
        .unwrap()
        .upload_id;
    let mut writer = s.create_part(&a, "b", "k", &id, 1, Some(5)).await.unwrap();
    writer.write(Bytes::from_static(b"bytes")).await.unwrap();
    let part = writer
        .commit_part(
            &id,
            1,
            PartCommit {
                etag: "etag-1".into(),
                checksum: Some(checksum("cGFydA==", ChecksumType::Composite)),
            },
        )
        .await
        .unwrap();
    let whole = checksum("d2hvbGU=-1", ChecksumType::Composite);
    let complete = CompleteUpload {
        parts: vec![(1, part.etag)],
        etag: String::new(),
        checksum: Some(whole.clone()),
        condition: WriteCondition::None,
    };
    s.complete_multipart_upload(&a, "b", "k", &id, complete)
        .await
        .unwrap();
    assert_eq!(s.lookup(&a, "b", "k").await.unwrap().checksum, Some(whole));

    let om = secure::om_client(om_addresses(), &[]).await;
    let (records, record) = (
        format!("{prefix}s3gw-checksums"),
        format!("object/{prefix}b/k"),
    );
    om.get_key_info(".s3gw", &records, &record, true)
        .await
        .expect("the completed object's checksum record");
    s.delete_object(&a, "b", "k").await.unwrap();
    assert!(matches!(
        om.get_key_info(".s3gw", &records, &record, true).await,
        Err(StorageError::NoSuchKey)
    ));
}

/// A bucket document is read and written with the bucket's facts the
/// facade holds: the OM is asked for the record only, not again for the
/// bucket (InfoBucket) it has just described.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs an Ozone cluster: set OZONE_OM_ADDRESS and run with --ignored"]
async fn bucket_documents_ask_the_om_for_no_bucket_it_has_described() {
    let s = open(om_addresses()).await;
    let a = conformance::alice();
    s.create_bucket(&a, "b", "").await.unwrap();
    s.bucket_facts("b").await.unwrap();
    let info_buckets = |s: &Storage| -> u64 {
        s.call_stats()
            .iter()
            .filter(|c| c.call == "InfoBucket")
            .map(|c| c.latency.count)
            .sum()
    };
    let before = info_buckets(&s);
    let cors = "<CORSConfiguration/>";
    s.put_bucket_document(&a, "b", BucketDocument::Cors, Some(cors.into()))
        .await
        .unwrap();
    let read = s.bucket_document("b", BucketDocument::Cors).await.unwrap();
    assert_eq!(read.as_deref(), Some(cors));
    assert_eq!(info_buckets(&s), before, "InfoBucket calls");
}

/// With no OM listening the back end refuses to start, as unavailable
/// (the gateway's 503), rather than hanging or failing later. Needs no cluster.
#[tokio::test]
async fn an_unreachable_om_is_unavailable_at_open() {
    // Port 9 (discard) is closed on a test machine: connections are refused.
    let config = OzoneStorageConfig {
        connect_timeout: Duration::from_secs(1),
        request_timeout: Duration::from_secs(1),
        ..OzoneStorageConfig::new(vec!["127.0.0.1:9".into()])
    };
    match Storage::open_ozone(config).await {
        Err(storage_client::StorageError::Unavailable(_)) => {}
        Err(other) => panic!("expected Unavailable, got {other:?}"),
        Ok(_) => panic!("opened without an OM"),
    }
}
