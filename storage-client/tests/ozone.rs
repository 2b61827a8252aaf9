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
    BucketDocument, BucketRef, ChecksumAlgorithm, ChecksumType, CompleteUpload, MetaEntryChange,
    Namespace, NewUpload, ObjectChecksum, OzoneStorageConfig, PartCommit, PartNumber, Storage,
    StorageError, WriteCondition,
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
    open_with_prefix(addresses, fresh_prefix()).await
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
    let identities = [conformance::alice(), conformance::bob()].map(|owner| owner.access_key);
    let identities = identities.each_ref().map(String::as_str);
    let (system_secret, test_secrets) = secure::secrets(&addresses.join(","), &identities).await;
    OzoneStorageConfig {
        bucket_prefix: prefix,
        system_secret,
        records_key: Some(secure::records_key()),
        tls: secure::tls(),
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
    checks_owner: false,
    conditional_delete: false,
    lists_deletes_at_once: false,
};

conformance::suite!(
    async { ((), open(om_addresses()).await) },
    OZONE,
    #[ignore = "needs an Ozone cluster: set OZONE_OM_ADDRESS and run with --ignored"]
);

/// The gateway's records volume (Ozone's ACLs are off on the dev
/// cluster, so any Ozone user can write there; the seal is what counts).
const RECORDS_VOLUME: &str = "s3gw-records";

fn fresh_prefix() -> String {
    format!("t{}-", &uuid::Uuid::new_v4().simple().to_string()[..10])
}

/// A records bucket that someone else owns makes the back end refuse to
/// start: the gateway would keep its secrets in a bucket its owner reads.
/// Here an Ozone user takes the name of the next gateway's credentials
/// bucket in the records volume (where ACLs are off, anyone can).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs an Ozone cluster: set OZONE_OM_ADDRESS and run with --ignored"]
async fn a_records_bucket_owned_by_someone_else_is_refused_at_open() {
    // The first open makes the records volume.
    open(om_addresses()).await;
    let prefix = fresh_prefix();
    let alice = conformance::alice().access_key;
    let om = secure::om_client(om_addresses(), &[]).await;
    om.create_bucket(
        &alice,
        &format!("{RECORDS_VOLUME}/{prefix}s3gw-credentials"),
        "",
    )
    .await
    .unwrap();
    let config = config(om_addresses(), prefix.clone()).await;
    match Storage::open_ozone(config).await {
        Err(StorageError::InvalidArgument(message)) => {
            assert!(
                message.contains(&format!("{RECORDS_VOLUME}/{prefix}s3gw-credentials"))
                    && message.contains(&alice),
                "{message}"
            );
        }
        Err(other) => panic!("expected InvalidArgument, got {other:?}"),
        Ok(_) => panic!("opened with a credentials bucket owned by {alice}"),
    }
}

/// A records bucket whose ACLs grant anyone but the gateway anything makes
/// the back end refuse to start, naming the grant and the fix.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs an Ozone cluster: set OZONE_OM_ADDRESS and run with --ignored"]
async fn a_records_bucket_open_to_others_is_refused_at_open() {
    use storage_client::test_support::proto::hadoop::ozone::{
        OzoneAclInfo, ozone_acl_info::OzoneAclScope, ozone_acl_info::OzoneAclType,
        ozone_obj::ObjectType,
    };
    let prefix = fresh_prefix();
    open_with_prefix(om_addresses(), prefix.clone()).await;
    let bucket = format!("{RECORDS_VOLUME}/{prefix}s3gw-bucket-documents");
    let (_, mut acls) = secure::om_client(om_addresses(), &[])
        .await
        .bucket_acls(".s3gw", &bucket)
        .await
        .unwrap();
    acls.push(OzoneAclInfo {
        r#type: OzoneAclType::World as i32,
        name: String::new(),
        rights: vec![0b1001], // READ, LIST
        acl_scope: OzoneAclScope::Access as i32,
    });
    let om = secure::om_client(om_addresses(), &[]).await;
    om.set_acls(".s3gw", ObjectType::Bucket, &format!("/{bucket}"), acls)
        .await
        .unwrap();
    match Storage::open_ozone(config(om_addresses(), prefix).await).await {
        Err(StorageError::InvalidArgument(message)) => {
            assert!(message.contains("grants others access"), "{message}");
            // The OM names a WORLD entry WORLD.
            assert!(
                message.contains("world:") && message.contains(":0x9"),
                "{message}"
            );
            assert!(message.contains("ozone sh bucket setacl"), "{message}");
        }
        Err(other) => panic!("expected InvalidArgument, got {other:?}"),
        Ok(_) => panic!("opened with a documents bucket anyone may read"),
    }
}

/// The records volume is the gateway's, owner-only, and no credential
/// record in it holds a secret in the clear.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs an Ozone cluster: set OZONE_OM_ADDRESS and run with --ignored"]
async fn records_live_owner_only_outside_s3v_with_no_clear_secret() {
    let prefix = fresh_prefix();
    let s = open_with_prefix(om_addresses(), prefix.clone()).await;
    let cred = storage_client::Credential {
        name: "root".into(),
        access_key: "AKIDRECORDSROOT00001".into(),
        secret_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
        is_root: true,
    };
    s.put_credential(cred.clone()).await.unwrap();
    let om = secure::om_client(om_addresses(), &[]).await;
    let (owner, acls) = om.volume_acls(".s3gw", RECORDS_VOLUME).await.unwrap();
    assert_eq!(owner, ".s3gw");
    assert!(acls.iter().all(|acl| acl.name == ".s3gw"), "{acls:?}");
    let bucket = format!("{RECORDS_VOLUME}/{prefix}s3gw-credentials");
    let record = om
        .get_key_info(".s3gw", &bucket, &cred.access_key, true)
        .await
        .expect("the credential record");
    assert!(
        record
            .metadata
            .values()
            .all(|v| !v.contains("wJalrXUtnFEMI")),
        "{:?}",
        record.metadata.keys()
    );
    assert!(
        record
            .metadata
            .get("s3gw-root")
            .is_some_and(|v| v == "true")
    );
    // Nothing of the gateway's in s3v.
    assert!(matches!(
        om.info_bucket(".s3gw", &format!("{prefix}s3gw-credentials"))
            .await,
        Err(StorageError::NoSuchBucket)
    ));
}

/// Where Ozone's ACLs are off any Ozone user can write records; the
/// gateway refuses every record it did not seal: a forged root credential
/// (clear secret, `s3gw-root: true`, a made-up MAC), a real record copied
/// to another access key, a record with one field changed, a forged bucket
/// document and an altered checksum record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs an Ozone cluster: set OZONE_OM_ADDRESS and run with --ignored"]
async fn forged_moved_or_altered_records_are_refused() {
    use storage_client::test_support::KeyExpectation;
    let prefix = fresh_prefix();
    let s = open_with_prefix(om_addresses(), prefix.clone()).await;
    let alice = conformance::alice();
    let writer = alice.access_key.clone();
    let om = secure::om_client(om_addresses(), &[]).await;
    let bucket = |name: &str| format!("{RECORDS_VOLUME}/{prefix}{name}");
    let forge = |bucket: String, key: String, fields: Vec<(String, String)>| {
        let (om, writer) = (&om, &writer);
        async move {
            let open = om
                .create_key(writer, &bucket, &key, 0, &[], &KeyExpectation::Anything)
                .await
                .expect("an Ozone user writes into the records bucket (ACLs off)");
            om.commit_key(writer, &open, &[], "", &fields)
                .await
                .unwrap();
        }
    };
    let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect()
    };
    let metadata_of = |bucket: String, key: String| {
        let om = &om;
        async move {
            let found = om.get_key_info(".s3gw", &bucket, &key, true).await.unwrap();
            found
                .metadata
                .into_iter()
                .filter(|(n, _)| n.starts_with("s3gw-"))
                .collect::<Vec<_>>()
        }
    };

    // A forged root credential, in the old format and with a made-up MAC.
    forge(
        bucket("s3gw-credentials"),
        "AKIDFORGEDROOT000001".into(),
        pairs(&[
            ("s3gw-name", "forged"),
            ("s3gw-secret", "her-own-secret-000000000000000000000000"),
            (
                "s3gw-sealed-secret",
                "her-own-secret-000000000000000000000000",
            ),
            ("s3gw-root", "true"),
            ("s3gw-mac", &"00".repeat(32)),
        ]),
    )
    .await;
    assert_eq!(s.credential("AKIDFORGEDROOT000001").await.unwrap(), None);

    // A real credential copied to another access key, and one made root.
    let real = storage_client::Credential {
        name: "user".into(),
        access_key: "AKIDREALUSER00000001".into(),
        secret_key: "a-real-secret-of-forty-characters-000000".into(),
        is_root: false,
    };
    s.put_credential(real.clone()).await.unwrap();
    let sealed = metadata_of(bucket("s3gw-credentials"), real.access_key.clone()).await;
    forge(
        bucket("s3gw-credentials"),
        "AKIDMOVEDUSER0000001".into(),
        sealed.clone(),
    )
    .await;
    assert_eq!(s.credential("AKIDMOVEDUSER0000001").await.unwrap(), None);
    let promoted = sealed
        .iter()
        .map(|(n, v)| {
            let v = if n == "s3gw-root" { "true" } else { v.as_str() };
            (n.clone(), v.to_owned())
        })
        .collect();
    forge(
        bucket("s3gw-credentials"),
        real.access_key.clone(),
        promoted,
    )
    .await;
    // A fresh facade: nothing cached from the write above.
    let fresh = open_with_prefix(om_addresses(), prefix.clone()).await;
    assert_eq!(fresh.credential(&real.access_key).await.unwrap(), None);

    // A forged CORS document for a bucket of alice's, dated right.
    fresh
        .create_bucket(BucketRef::new(&alice, "b"), "")
        .await
        .unwrap();
    let facts = fresh.bucket_facts(&Namespace::Shared, "b").await.unwrap();
    let created = facts
        .created
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
        .to_string();
    forge(
        bucket("s3gw-bucket-documents"),
        "b/cors".into(),
        pairs(&[
            ("s3gw-document", "<CORSConfiguration/>"),
            ("s3gw-bucket-created", &created),
            ("s3gw-mac", &"00".repeat(32)),
        ]),
    )
    .await;
    let again = open_with_prefix(om_addresses(), prefix.clone()).await;
    assert_eq!(
        again
            .bucket_document(&Namespace::Shared, "b", BucketDocument::Cors)
            .await
            .unwrap(),
        None
    );

    // An upload's checksum record altered: the upload has no algorithm.
    let upload = NewUpload {
        checksum_algorithm: Some(ChecksumAlgorithm::Sha256),
        checksum_type: Some(ChecksumType::Composite),
        ..NewUpload::default()
    };
    let id = again
        .create_multipart_upload(BucketRef::new(&alice, "b").object("k"), upload)
        .await
        .unwrap()
        .upload_id;
    let record = format!("upload/{id}");
    let altered = metadata_of(bucket("s3gw-checksums"), record.clone())
        .await
        .into_iter()
        .map(|(n, v)| {
            let v = if n == "s3gw-checksum-algorithm" {
                "CRC32".to_owned()
            } else {
                v
            };
            (n, v)
        })
        .collect();
    forge(bucket("s3gw-checksums"), record, altered).await;
    let last = open_with_prefix(om_addresses(), prefix).await;
    let info = last
        .multipart_upload(BucketRef::new(&alice, "b").object("k").upload(&id))
        .await
        .unwrap();
    assert_eq!(info.checksum_algorithm, None);
}

/// A completed multipart object's checksums live in a record of the
/// system bucket `s3gw-checksums` (Ozone has no place for them), as does
/// a metadata entry changed after the write; deleting the object deletes
/// its records, which would otherwise stay forever, whether it goes alone
/// or among others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs an Ozone cluster: set OZONE_OM_ADDRESS and run with --ignored"]
async fn a_deleted_objects_records_go_with_it() {
    let prefix = fresh_prefix();
    let s = open_with_prefix(om_addresses(), prefix.clone()).await;
    let a = conformance::alice();
    let bucket = BucketRef::new(&a, "b");
    s.create_bucket(bucket, "").await.unwrap();
    for key in ["k", "k2"] {
        let whole = complete_with_a_checksum(&s, bucket, key).await;
        assert_eq!(
            s.lookup(bucket.object(key)).await.unwrap().checksum,
            Some(whole)
        );
    }
    for key in ["a-first", "m", "zzz"] {
        conformance::put(&s, &a, "b", key, b"x").await;
    }
    let acl = MetaEntryChange::new("s3gw acl", Some("<AccessControlPolicy/>".into()));
    s.put_meta_entry(bucket.object("m"), acl.clone())
        .await
        .unwrap();
    s.put_meta_entry(bucket.object("zzz"), acl).await.unwrap();

    let om = secure::om_client(om_addresses(), &[]).await;
    let records = format!("{RECORDS_VOLUME}/{prefix}s3gw-checksums");
    let exists = |record: String| {
        let (om, records) = (&om, &records);
        async move {
            match om.get_key_info(".s3gw", records, &record, true).await {
                Ok(_) => true,
                Err(StorageError::NoSuchKey) => false,
                Err(e) => panic!("{record}: {e}"),
            }
        }
    };
    let checksums = |key: &str| format!("object/{prefix}b/{key}");
    let entries = |key: &str| format!("entries/{prefix}b/{key}");
    for record in [
        checksums("k"),
        checksums("k2"),
        entries("m"),
        entries("zzz"),
    ] {
        assert!(exists(record.clone()).await, "{record} before the deletes");
    }

    s.delete_object(bucket.object("k")).await.unwrap();
    assert!(!exists(checksums("k")).await, "deleted alone");
    let outcomes = s
        .delete_objects(bucket, ["a-first", "k2", "m"].map(String::from).to_vec())
        .await
        .unwrap();
    assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
    assert!(!exists(checksums("k2")).await, "deleted among others");
    assert!(!exists(entries("m")).await, "deleted among others");
    assert!(
        exists(entries("zzz")).await,
        "a key not deleted keeps its record"
    );
}

/// Completes a one-part multipart upload of `key` with a composite SHA-256
/// checksum, which Ozone keeps no place for; returns the object's.
async fn complete_with_a_checksum(s: &Storage, bucket: BucketRef<'_>, key: &str) -> ObjectChecksum {
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
        .create_multipart_upload(bucket.object(key), upload)
        .await
        .unwrap()
        .upload_id;
    let mut writer = s
        .create_part(
            bucket.object(key).upload(&id),
            PartNumber::new(1).unwrap(),
            Some(5),
        )
        .await
        .unwrap();
    writer.write(Bytes::from_static(b"bytes")).await.unwrap();
    let part = writer
        .commit_part(
            &id,
            PartNumber::new(1).unwrap(),
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
    s.complete_multipart_upload(bucket.object(key).upload(&id), complete)
        .await
        .unwrap();
    whole
}

/// A bucket document is read and written with the bucket's facts the
/// facade holds: the OM is asked for the record only, not again for the
/// bucket (InfoBucket) it has just described.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs an Ozone cluster: set OZONE_OM_ADDRESS and run with --ignored"]
async fn bucket_documents_ask_the_om_for_no_bucket_it_has_described() {
    let s = open(om_addresses()).await;
    let a = conformance::alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    s.bucket_facts(&Namespace::Shared, "b").await.unwrap();
    let info_buckets = |s: &Storage| -> u64 {
        s.call_stats()
            .iter()
            .filter(|c| c.call == "InfoBucket")
            .map(|c| c.latency.count)
            .sum()
    };
    let before = info_buckets(&s);
    let cors = "<CORSConfiguration/>";
    s.put_bucket_document(
        BucketRef::new(&a, "b"),
        BucketDocument::Cors,
        Some(cors.into()),
    )
    .await
    .unwrap();
    let read = s
        .bucket_document(&Namespace::Shared, "b", BucketDocument::Cors)
        .await
        .unwrap();
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
        records_key: Some(secure::records_key()),
        ..OzoneStorageConfig::new(vec!["127.0.0.1:9".into()])
    };
    match Storage::open_ozone(config).await {
        Err(storage_client::StorageError::Unavailable(_)) => {}
        Err(other) => panic!("expected Unavailable, got {other:?}"),
        Ok(_) => panic!("opened without an OM"),
    }
}
