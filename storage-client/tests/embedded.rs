//! The conformance suite on the embedded back end, plus what only a local
//! store can show: restart, on-disk corruption and reclaimed files.

mod conformance;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use conformance::{
    Capabilities, MultipartRules, alice, data, get, multipart::upload_part, put, read_range,
};
use storage_client::{
    BlockId, BucketRef, CompleteUpload, Credential, NewUpload, Storage, StorageConfig,
    StorageError, Versioning, WriteCondition, WriteIntent,
};
use tempfile::TempDir;

/// The DN's own tests: every object goes to the DN, none is kept with its key.
fn dn_config(dir: &Path) -> StorageConfig {
    StorageConfig {
        object_with_key_max: 0,
        ..config(dir)
    }
}

/// Tiny sizes so that small test objects span many chunks and blocks.
fn config(dir: &Path) -> StorageConfig {
    StorageConfig {
        block_size: 16 * 1024,
        chunk_size: 4 * 1024,
        // Several blocks of one upload in flight at once, as on Ozone.
        blocks_in_flight: 3,
        bytes_per_checksum: 1024,
        read_buffer: 3 * 1024,
        reclaim_grace: Duration::ZERO,
        ..StorageConfig::new(dir)
    }
}

/// The embedded back end keeps tags in order and takes parts of any size.
const EMBEDDED: Capabilities = Capabilities {
    tags_keep_order: true,
    multipart: MultipartRules::NONE,
    versioning: true,
    checks_owner: true,
    conditional_delete: true,
    lists_deletes_at_once: true,
};

async fn open() -> (TempDir, Storage) {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::open_embedded(config(dir.path())).await.unwrap();
    (dir, storage)
}

conformance::suite!(open(), EMBEDDED);

fn block_file(dir: &Path, block: BlockId) -> PathBuf {
    dir.join("containers")
        .join(block.container.to_string())
        .join(format!("{}.block", block.local))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_keeps_everything() {
    let dir = tempfile::tempdir().unwrap();
    let a = alice();
    let bytes = data(50_000, 21);
    let before = {
        let s = Storage::open_embedded(config(dir.path())).await.unwrap();
        s.put_credential(Credential {
            name: "alice".into(),
            access_key: a.access_key.clone(),
            secret_key: "secret".into(),
            is_root: true,
        })
        .await
        .unwrap();
        s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
        put(&s, &a, "b", "kept", &bytes).await;
        let mut unfinished = s
            .create_object(
                BucketRef::new(&a, "b").object("unfinished"),
                WriteIntent::default(),
            )
            .await
            .unwrap();
        unfinished
            .write(Bytes::from(data(20_000, 22)))
            .await
            .unwrap();
        let info = s
            .lookup(BucketRef::new(&a, "b").object("kept"))
            .await
            .unwrap();
        // Dropped without commit, as a crash would leave it.
        drop(unfinished);
        info
    };
    let s = Storage::open_embedded(config(dir.path())).await.unwrap();
    assert_eq!(
        s.credential(&a.access_key)
            .await
            .unwrap()
            .unwrap()
            .secret_key,
        "secret"
    );
    assert_eq!(s.list_buckets(&a).await.unwrap().len(), 1);
    assert_eq!(get(&s, &a, "b", "kept").await.unwrap(), bytes);
    // Token secret keys are persisted: a token issued before the restart still works.
    assert_eq!(
        read_range(&s, &a, &before, 0..100).await.unwrap(),
        bytes[..100]
    );
    assert!(matches!(
        s.lookup(BucketRef::new(&a, "b").object("unfinished")).await,
        Err(StorageError::NoSuchKey)
    ));
    // The previous process's open upload was queued for reclamation at start.
    let stats = s.reclaim_now().await.unwrap();
    // The upload had filled its first block; its tail was only buffered.
    assert_eq!(stats.deleted_blocks, 1, "{stats:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flipped_bit_on_disk_is_corrupt() {
    let (dir, s) = open().await;
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let info = put(&s, &a, "b", "k", &data(40_000, 23)).await;
    let path = block_file(dir.path(), info.locations[1].block);
    let mut raw = std::fs::read(&path).unwrap();
    raw[5000] ^= 0x10;
    std::fs::write(&path, raw).unwrap();
    // Whole object, and a range that only touches the damaged window.
    let block_two = info.locations[1].offset;
    for range in [0..info.size, block_two + 5000..block_two + 5001] {
        match read_range(&s, &a, &info, range.clone()).await {
            Err(StorageError::Corrupt(_)) => {}
            other => panic!("range {range:?}: expected Corrupt, got {other:?}"),
        }
    }
    // Windows away from the damage still read.
    assert_eq!(read_range(&s, &a, &info, 0..100).await.unwrap().len(), 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_block_file_is_corrupt() {
    let (dir, s) = open().await;
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let info = put(&s, &a, "b", "k", &data(10_000, 24)).await;
    let path = block_file(dir.path(), info.locations[0].block);
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(9_000).unwrap();
    assert!(matches!(
        read_range(&s, &a, &info, 0..info.size).await,
        Err(StorageError::Corrupt(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tampered_token_is_refused_by_the_block_role() {
    let dir = tempfile::tempdir().unwrap();
    let s = Storage::open_embedded(dn_config(dir.path())).await.unwrap();
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let mut info = put(&s, &a, "b", "k", &data(1000, 25)).await;
    let token = info.locations[0].token.as_mut().unwrap();
    token.password[0] ^= 1;
    assert!(matches!(
        read_range(&s, &a, &info, 0..10).await,
        Err(StorageError::TokenRefused(_))
    ));
    info.locations[0].token = None;
    assert!(matches!(
        read_range(&s, &a, &info, 0..10).await,
        Err(StorageError::TokenRefused(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reclamation_removes_replaced_and_deleted_blocks() {
    let (dir, s) = open().await;
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let old = put(&s, &a, "b", "k", &data(40_000, 26)).await;
    let new = put(&s, &a, "b", "k", &data(20_000, 27)).await;
    let files = |info: &storage_client::KeyInfo| -> Vec<PathBuf> {
        info.locations
            .iter()
            .map(|l| block_file(dir.path(), l.block))
            .collect()
    };
    assert!(
        files(&old).iter().all(|f| f.exists()),
        "nothing is deleted before reclamation"
    );
    s.reclaim_now().await.unwrap();
    assert!(
        files(&old).iter().all(|f| !f.exists()),
        "replaced blocks are gone"
    );
    assert!(files(&new).iter().all(|f| f.exists()), "live blocks stay");

    let mut aborted = s
        .create_object(
            BucketRef::new(&a, "b").object("aborted"),
            WriteIntent::default(),
        )
        .await
        .unwrap();
    aborted.write(Bytes::from(data(20_000, 28))).await.unwrap();
    aborted.abort().await;
    s.delete_object(BucketRef::new(&a, "b").object("k"))
        .await
        .unwrap();
    let stats = s.reclaim_now().await.unwrap();
    assert!(
        files(&new).iter().all(|f| !f.exists()),
        "deleted blocks are gone"
    );
    // One block of the aborted upload (its tail was never flushed), plus the deleted object's.
    assert_eq!(stats.deleted_blocks, 1 + files(&new).len(), "{stats:?}");
    let leftover = walk(&dir.path().join("containers"));
    assert!(leftover.is_empty(), "no block files remain: {leftover:?}");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[tokio::test]
async fn rejects_inconsistent_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let bad = StorageConfig {
        chunk_size: 3000,
        ..config(dir.path())
    };
    assert!(matches!(
        Storage::open_embedded(bad).await,
        Err(StorageError::InvalidArgument(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replaced_blocks_stay_readable_during_the_grace_period() {
    let dir = tempfile::tempdir().unwrap();
    let with_grace = StorageConfig {
        reclaim_grace: Duration::from_secs(3600),
        ..config(dir.path())
    };
    let s = Storage::open_embedded(with_grace).await.unwrap();
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let bytes = data(40_000, 29);
    put(&s, &a, "b", "k", &bytes).await;
    // A GET looked the object up, then the object was replaced.
    let looked_up = s.lookup(BucketRef::new(&a, "b").object("k")).await.unwrap();
    put(&s, &a, "b", "k", b"new").await;
    let stats = s.reclaim_now().await.unwrap();
    assert_eq!(stats.deleted_blocks, 0);
    assert_eq!(
        read_range(&s, &a, &looked_up, 0..looked_up.size)
            .await
            .unwrap(),
        bytes
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multipart_completion_reuses_part_blocks_and_reclaims_the_rest() {
    let (dir, s) = open().await;
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let id = s
        .create_multipart_upload(
            BucketRef::new(&a, "b").object("k"),
            storage_client::NewUpload::default(),
        )
        .await
        .unwrap()
        .upload_id;
    let p1 = upload_part(&s, &a, "k", &id, 1, &data(20_000, 1))
        .await
        .unwrap();
    upload_part(&s, &a, "k", &id, 2, &data(20_000, 2))
        .await
        .unwrap();
    let p2 = upload_part(&s, &a, "k", &id, 2, &data(5_000, 3))
        .await
        .unwrap();
    upload_part(&s, &a, "k", &id, 3, &data(1_000, 4))
        .await
        .unwrap();
    // The replaced part 2 spanned two 16 KiB blocks.
    assert_eq!(s.reclaim_now().await.unwrap().deleted_blocks, 2);

    let before: BTreeSet<PathBuf> = walk(&dir.path().join("containers")).into_iter().collect();
    let complete = storage_client::CompleteUpload {
        parts: vec![(1, p1.etag), (2, p2.etag)],
        etag: "e-2".into(),
        ..Default::default()
    };
    let info = s
        .complete_multipart_upload(BucketRef::new(&a, "b").object("k").upload(&id), complete)
        .await
        .unwrap();
    let after: BTreeSet<PathBuf> = walk(&dir.path().join("containers")).into_iter().collect();
    assert_eq!(before, after, "completing writes no block");
    // Part 3 was not chosen: its one block goes.
    assert_eq!(s.reclaim_now().await.unwrap().deleted_blocks, 1);
    let live: Vec<PathBuf> = info
        .locations
        .iter()
        .map(|l| block_file(dir.path(), l.block))
        .collect();
    assert!(live.iter().all(|f| f.exists()));
    assert_eq!(
        get(&s, &a, "b", "k").await.unwrap(),
        [data(20_000, 1), data(5_000, 3)].concat()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoned_multipart_uploads_expire() {
    let dir = tempfile::tempdir().unwrap();
    let config = StorageConfig {
        multipart_upload_expiry: Duration::ZERO,
        ..config(dir.path())
    };
    let s = Storage::open_embedded(config).await.unwrap();
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let id = s
        .create_multipart_upload(
            BucketRef::new(&a, "b").object("k"),
            storage_client::NewUpload::default(),
        )
        .await
        .unwrap()
        .upload_id;
    upload_part(&s, &a, "k", &id, 1, &data(20_000, 1))
        .await
        .unwrap();
    // Expiry compares whole milliseconds: make sure one has passed.
    tokio::time::sleep(Duration::from_millis(2)).await;
    let stats = s.reclaim_now().await.unwrap();
    assert_eq!((stats.expired_uploads, stats.deleted_blocks), (1, 2));
    assert!(matches!(
        s.multipart_upload(BucketRef::new(&a, "b").object("k").upload(&id))
            .await,
        Err(StorageError::NoSuchUpload)
    ));
    assert!(walk(&dir.path().join("containers")).is_empty());
}

/// Allocations are committed without an fsync, so a crash can erase an
/// upload's open key and the block-id counter while its files stay on disk.
/// Such files carry ids at or past the counter; start-up removes them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocks_of_allocations_lost_in_a_crash_are_removed_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let a = alice();
    let bytes = data(10_000, 29);
    let kept = {
        let s = Storage::open_embedded(config(dir.path())).await.unwrap();
        s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
        put(&s, &a, "b", "kept", &bytes).await
    };
    let kept_block = kept.locations[0].block;
    let source = block_file(dir.path(), kept_block);
    // What the crash left: one block past the counter in the container in
    // use, and one in a container never committed to.
    let leaked = [
        BlockId {
            container: kept_block.container,
            local: kept_block.local + 100,
        },
        BlockId {
            container: kept_block.container + 1,
            local: kept_block.local + 20_000,
        },
    ];
    for block in leaked {
        let file = block_file(dir.path(), block);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::copy(&source, &file).unwrap();
        std::fs::copy(source.with_extension("crc"), file.with_extension("crc")).unwrap();
    }
    let s = Storage::open_embedded(config(dir.path())).await.unwrap();
    for block in leaked {
        let file = block_file(dir.path(), block);
        assert!(!file.exists(), "{file:?} was not removed");
        assert!(!file.with_extension("crc").exists());
    }
    assert!(source.exists() && source.with_extension("crc").exists());
    assert_eq!(get(&s, &a, "b", "kept").await.unwrap(), bytes);
    // Uploads go on as before.
    put(&s, &a, "b", "next", &data(5_000, 30)).await;
    assert_eq!(get(&s, &a, "b", "next").await.unwrap(), data(5_000, 30));
}

/// Concurrent commits share group commits; each still gets its own outcome.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_conditional_puts_have_one_winner_per_key() {
    let (_dir, s) = open().await;
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let s = std::sync::Arc::new(s);
    let mut tasks = Vec::new();
    for i in 0..24u8 {
        let (s, a) = (std::sync::Arc::clone(&s), a.clone());
        tasks.push(tokio::spawn(async move {
            // Half race for one key, half write keys of their own.
            let key = if i % 2 == 0 {
                "contended".to_owned()
            } else {
                format!("own-{i}")
            };
            let intent = WriteIntent {
                condition: storage_client::WriteCondition::IfAbsent,
                ..WriteIntent::default()
            };
            let mut w = s
                .create_object(BucketRef::new(&a, "b").object(&key), intent)
                .await
                .unwrap();
            w.write(Bytes::from(data(100, u64::from(i)))).await.unwrap();
            let obj = storage_client::NewObject {
                etag: format!("e{i}"),
                meta: Default::default(),
                checksum: None,
            };
            (i, w.commit(obj).await)
        }));
    }
    let mut winners = Vec::new();
    for task in tasks {
        let (i, outcome) = task.await.unwrap();
        match outcome {
            Ok(_) => winners.push(i),
            Err(StorageError::PreconditionFailed) if i % 2 == 0 => {}
            Err(e) => panic!("writer {i}: {e}"),
        }
    }
    let contended: Vec<u8> = winners.iter().copied().filter(|i| i % 2 == 0).collect();
    assert_eq!(contended.len(), 1, "{winners:?}");
    assert_eq!(winners.len(), 13);
    let got = get(&s, &a, "b", "contended").await.unwrap();
    assert_eq!(got, data(100, u64::from(contended[0])));
    for i in (1..24u8).step_by(2) {
        assert_eq!(
            get(&s, &a, "b", &format!("own-{i}")).await.unwrap(),
            data(100, u64::from(i))
        );
    }
}

/// A version's blocks stay on disk while the version exists, through a
/// restart, and are reclaimed only once that version itself is deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn versions_keep_their_blocks_until_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let a = alice();
    let (old, new) = (data(40_000, 31), data(100, 32));
    let (old_info, marker) = {
        let s = Storage::open_embedded(config(dir.path())).await.unwrap();
        s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
        s.put_bucket_versioning(BucketRef::new(&a, "b"), Versioning::Enabled)
            .await
            .unwrap();
        let old_info = put(&s, &a, "b", "k", &old).await;
        put(&s, &a, "b", "k", &new).await;
        let marker = s
            .delete_object(BucketRef::new(&a, "b").object("k"))
            .await
            .unwrap();
        // Neither the overwrite nor the marker freed anything.
        assert_eq!(s.reclaim_now().await.unwrap().deleted_blocks, 0);
        (old_info, marker.version_id.unwrap())
    };
    let s = Storage::open_embedded(config(dir.path())).await.unwrap();
    assert_eq!(
        s.bucket_versioning(BucketRef::new(&a, "b")).await.unwrap(),
        Versioning::Enabled
    );
    assert!(matches!(
        s.lookup(BucketRef::new(&a, "b").object("k")).await,
        Err(StorageError::DeleteMarker { .. })
    ));
    let old_id = old_info.version_id.clone().unwrap();
    let reread = s
        .lookup_version(BucketRef::new(&a, "b").object("k"), Some(&old_id))
        .await
        .unwrap();
    assert_eq!(
        read_range(&s, &a, &reread, 0..reread.size).await.unwrap(),
        old
    );
    for location in &old_info.locations {
        assert!(block_file(dir.path(), location.block).exists());
    }
    s.delete_version(BucketRef::new(&a, "b").object("k"), &marker)
        .await
        .unwrap();
    assert_eq!(get(&s, &a, "b", "k").await.unwrap(), new);
    s.delete_version(BucketRef::new(&a, "b").object("k"), &old_id)
        .await
        .unwrap();
    let stats = s.reclaim_now().await.unwrap();
    assert_eq!(stats.deleted_blocks, old_info.locations.len(), "{stats:?}");
    for location in &old_info.locations {
        assert!(!block_file(dir.path(), location.block).exists());
    }
    assert_eq!(get(&s, &a, "b", "k").await.unwrap(), new);
}

/// Objects smaller than a chunk are one block written in one piece: the DN
/// keeps it in its small-block store, not in files, and reads, restarts
/// and reclamation treat it as any block.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_blocks_live_in_the_dn_store_and_are_reclaimed() {
    let dir = tempfile::tempdir().unwrap();
    let a = alice();
    let (small, other) = (data(1000, 31), data(3000, 32));
    let before = {
        let s = Storage::open_embedded(dn_config(dir.path())).await.unwrap();
        s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
        let info = put(&s, &a, "b", "small", &small).await;
        put(&s, &a, "b", "other", &other).await;
        assert!(
            walk(&dir.path().join("containers")).is_empty(),
            "no block files"
        );
        let usage = s.small_block_usage().unwrap();
        assert_eq!((usage.blocks, usage.bytes), (2, 4000));
        info
    };
    let s = Storage::open_embedded(dn_config(dir.path())).await.unwrap();
    assert_eq!(get(&s, &a, "b", "small").await.unwrap(), small);
    assert_eq!(
        read_range(&s, &a, &before, 100..1000).await.unwrap(),
        small[100..]
    );
    // Larger objects still go to files; the setting off keeps all in files.
    put(&s, &a, "b", "large", &data(20_000, 33)).await;
    assert!(!walk(&dir.path().join("containers")).is_empty());
    put(&s, &a, "b", "small", b"replaced").await;
    s.delete_object(BucketRef::new(&a, "b").object("other"))
        .await
        .unwrap();
    assert_eq!(s.reclaim_now().await.unwrap().deleted_blocks, 2);
    let usage = s.small_block_usage().unwrap();
    assert_eq!((usage.blocks, usage.bytes), (1, 8));
    assert_eq!(get(&s, &a, "b", "small").await.unwrap(), b"replaced");
    drop(s);

    let off = StorageConfig {
        small_block_max: 0,
        ..dn_config(dir.path())
    };
    let s = Storage::open_embedded(off).await.unwrap();
    let files = walk(&dir.path().join("containers")).len();
    let info = put(&s, &a, "b", "in-files", &small).await;
    assert_eq!(walk(&dir.path().join("containers")).len(), files + 2);
    assert_eq!(s.small_block_usage().unwrap().blocks, 1);
    assert_eq!(read_range(&s, &a, &info, 0..1000).await.unwrap(), small);
    // What was stored while the setting was on still reads.
    assert_eq!(get(&s, &a, "b", "small").await.unwrap(), b"replaced");
}

/// Flips one bit at `at` in every copy of `bytes` in the database file at
/// `path`; returns how many copies it found.
fn flip_bit_in(path: &std::path::Path, bytes: &[u8], at: usize) -> usize {
    let mut raw = std::fs::read(path).unwrap();
    let mut flipped = 0;
    for start in 0..raw.len().saturating_sub(bytes.len()) {
        if raw[start..start + bytes.len()] == *bytes {
            raw[start + at] ^= 0x10;
            flipped += 1;
        }
    }
    std::fs::write(path, raw).unwrap();
    flipped
}

/// A bit flipped on disk inside the small-block store is an error on read,
/// never wrong bytes, as in a block file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flipped_bit_in_the_small_block_store_is_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let a = alice();
    let bytes = data(2000, 34);
    let info = {
        let s = Storage::open_embedded(dn_config(dir.path())).await.unwrap();
        s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
        put(&s, &a, "b", "k", &bytes).await
    };
    // Byte 1500: in the second 1 KiB checksum window.
    let flipped = flip_bit_in(&dir.path().join("dn.redb"), &bytes, 1500);
    assert!(flipped > 0, "the block's bytes are in dn.redb");
    let s = Storage::open_embedded(dn_config(dir.path())).await.unwrap();
    for range in [0..info.size, 1500..1501] {
        match read_range(&s, &a, &info, range.clone()).await {
            Err(StorageError::Corrupt(_)) => {}
            other => panic!("range {range:?}: expected Corrupt, got {other:?}"),
        }
    }
}

/// A crash between the DN's commit and the OM's can leave a small block
/// whose allocation was never made durable; start-up removes it, as it
/// removes such block files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_blocks_of_allocations_lost_in_a_crash_are_removed_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let a = alice();
    let kept = data(1000, 35);
    {
        let s = Storage::open_embedded(dn_config(dir.path())).await.unwrap();
        s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
        put(&s, &a, "b", "kept", &kept).await;
    }
    // The OM as it was before the lost upload; the DN as after it.
    let om = dir.path().join("om.redb");
    let saved = std::fs::read(&om).unwrap();
    {
        let s = Storage::open_embedded(dn_config(dir.path())).await.unwrap();
        put(&s, &a, "b", "lost", &data(1000, 36)).await;
        assert_eq!(s.small_block_usage().unwrap().blocks, 2);
    }
    std::fs::write(&om, saved).unwrap();
    let s = Storage::open_embedded(dn_config(dir.path())).await.unwrap();
    let usage = s.small_block_usage().unwrap();
    assert_eq!((usage.blocks, usage.bytes), (1, 1000));
    assert_eq!(get(&s, &a, "b", "kept").await.unwrap(), kept);
    assert!(matches!(
        s.lookup(BucketRef::new(&a, "b").object("lost")).await,
        Err(StorageError::NoSuchKey)
    ));
    put(&s, &a, "b", "next", &data(500, 37)).await;
    assert_eq!(get(&s, &a, "b", "next").await.unwrap(), data(500, 37));
}

/// An object of at most `object_with_key_max` bytes is kept with its key in
/// `om.redb`: no block file, no DN row, the bytes in its lookup; freed in
/// the transaction that frees it (overwrite, delete, a version deleted),
/// and still read after a restart with the setting turned off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_objects_are_kept_with_their_key_and_freed_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let a = alice();
    let object = |key| BucketRef::new(&a, "b").object(key);
    let (small, larger) = (data(1000, 41), data(3000, 42));
    let kept = StorageConfig {
        object_with_key_max: 2000,
        ..config(dir.path())
    };
    {
        let s = Storage::open_embedded(kept.clone()).await.unwrap();
        s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
        let info = put(&s, &a, "b", "small", &small).await;
        let with_key = info.locations[0].bytes_with_key.as_ref();
        assert_eq!(with_key.map(|d| d.0.as_ref()), Some(&small[..]));
        // Over the setting: a DN row (the small-block store) as before.
        let info = put(&s, &a, "b", "larger", &larger).await;
        assert!(info.locations[0].bytes_with_key.is_none());
        assert!(walk(&dir.path().join("containers")).is_empty());
        let usage = s.small_block_usage().unwrap();
        assert_eq!((usage.blocks, usage.bytes), (2, 4000));
        let found = s.lookup(object("small")).await.unwrap();
        assert!(found.locations[0].bytes_with_key.is_some());
        // Its bytes come with the lookup: no DN read, so no READ token.
        assert!(found.locations[0].token.is_none());
        assert_eq!(
            read_range(&s, &a, &found, 100..900).await.unwrap(),
            small[100..900]
        );
        let larger_found = s.lookup(object("larger")).await.unwrap();
        assert!(larger_found.locations[0].bytes_with_key.is_none());
        assert!(larger_found.locations[0].token.is_some());
        // A part is a block whatever its size: completing moves blocks.
        let id = s
            .create_multipart_upload(object("multi"), NewUpload::default())
            .await
            .unwrap()
            .upload_id;
        let part = upload_part(&s, &a, "multi", &id, 1, &small).await.unwrap();
        let complete = CompleteUpload {
            parts: vec![(1, part.etag)],
            etag: "multi-1".into(),
            checksum: None,
            condition: WriteCondition::None,
        };
        let done = s
            .complete_multipart_upload(object("multi").upload(&id), complete)
            .await
            .unwrap();
        assert!(done.locations[0].bytes_with_key.is_none());
        assert_eq!(get(&s, &a, "b", "multi").await.unwrap(), small);
        // Freed with the transactions that free them, not by the reclaimer.
        put(&s, &a, "b", "gone", b"replaced").await;
        put(&s, &a, "b", "gone", b"again").await;
        s.delete_object(object("gone")).await.unwrap();
        let usage = s.small_block_usage().unwrap();
        assert_eq!(
            (usage.blocks, usage.bytes),
            (3, 5000),
            "small, larger, the part"
        );
        assert_eq!(s.reclaim_now().await.unwrap().deleted_blocks, 0);
    }
    let off = StorageConfig {
        object_with_key_max: 0,
        ..kept.clone()
    };
    let s = Storage::open_embedded(off).await.unwrap();
    assert_eq!(get(&s, &a, "b", "small").await.unwrap(), small);
    s.put_bucket_versioning(BucketRef::new(&a, "b"), Versioning::Enabled)
        .await
        .unwrap();
    drop(s);
    let s = Storage::open_embedded(kept).await.unwrap();
    // Versioned: the overwritten object stays kept, as a version.
    let first = put(&s, &a, "b", "v", b"first").await;
    put(&s, &a, "b", "v", b"second").await;
    let old = s
        .lookup_version(object("v"), first.version_id.as_deref())
        .await
        .unwrap();
    assert_eq!(read_range(&s, &a, &old, 0..5).await.unwrap(), b"first");
    let usage = s.small_block_usage().unwrap();
    assert_eq!(usage.blocks, 5, "small, larger, the part, two versions");
    s.delete_version(object("v"), first.version_id.as_deref().unwrap())
        .await
        .unwrap();
    let usage = s.small_block_usage().unwrap();
    assert_eq!((usage.blocks, usage.bytes), (4, 5006));
    assert_eq!(s.reclaim_now().await.unwrap().deleted_blocks, 0);
    assert_eq!(get(&s, &a, "b", "v").await.unwrap(), b"second");
}

/// A bit flipped in a kept object's row is an error on read, never wrong
/// bytes, as in the DN's stores.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flipped_bit_in_an_object_kept_with_its_key_is_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let a = alice();
    let bytes = data(2000, 43);
    {
        let s = Storage::open_embedded(config(dir.path())).await.unwrap();
        s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
        put(&s, &a, "b", "k", &bytes).await;
    }
    let flipped = flip_bit_in(&dir.path().join("om.redb"), &bytes, 1500);
    assert!(flipped > 0, "the object's bytes are in om.redb");
    let s = Storage::open_embedded(config(dir.path())).await.unwrap();
    match s.lookup(BucketRef::new(&a, "b").object("k")).await {
        Err(StorageError::Corrupt(_)) => {}
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

/// An object declared small enough to be kept with its key is written by
/// one metadata commit, with no open key: it still gets its own block id,
/// a refused commit leaves nothing behind, and one that turns out larger
/// than declared is opened and written to blocks as any other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_small_object_is_one_commit_and_leaves_nothing_when_refused() {
    let (_dir, s) = open().await;
    let a = alice();
    let object = |key| BucketRef::new(&a, "b").object(key);
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let write = |key, declared: u64, bytes: Vec<u8>, condition| {
        let s = &s;
        async move {
            let intent = WriteIntent {
                condition,
                size_hint: Some(declared),
                ..WriteIntent::default()
            };
            let mut writer = s.create_object(object(key), intent).await?;
            writer.write(Bytes::from(bytes)).await?;
            writer.commit(Default::default()).await
        }
    };
    let one = write("one", 100, data(100, 51), WriteCondition::None)
        .await
        .unwrap();
    let two = write("two", 100, data(100, 52), WriteCondition::None)
        .await
        .unwrap();
    assert_ne!(one.locations[0].block, two.locations[0].block);
    assert_eq!(get(&s, &a, "b", "one").await.unwrap(), data(100, 51));
    let empty = write("empty", 0, Vec::new(), WriteCondition::None)
        .await
        .unwrap();
    assert!(empty.locations.is_empty());
    assert_eq!(get(&s, &a, "b", "empty").await.unwrap(), b"");
    let usage = s.small_block_usage().unwrap();

    let refused = write("one", 100, data(100, 53), WriteCondition::IfAbsent).await;
    assert!(matches!(refused, Err(StorageError::PreconditionFailed)));
    assert_eq!(s.small_block_usage().unwrap(), usage);
    assert_eq!(get(&s, &a, "b", "one").await.unwrap(), data(100, 51));
    let nowhere = s
        .create_object(
            BucketRef::new(&a, "none").object("k"),
            WriteIntent {
                size_hint: Some(1),
                ..WriteIntent::default()
            },
        )
        .await;
    let refused = match nowhere {
        Ok(mut writer) => {
            writer.write(Bytes::from_static(b"x")).await.unwrap();
            writer.commit(Default::default()).await.err()
        }
        Err(e) => Some(e),
    };
    assert!(matches!(refused, Some(StorageError::NoSuchBucket)));

    // Declared small, written large: opened and kept in blocks.
    let large = write("large", 10, data(40_000, 54), WriteCondition::None)
        .await
        .unwrap();
    assert!(large.locations.len() > 1);
    assert_eq!(get(&s, &a, "b", "large").await.unwrap(), data(40_000, 54));
    assert_eq!(s.reclaim_now().await.unwrap().deleted_blocks, 0);
}
