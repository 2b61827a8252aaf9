//! The storage side of a 1 KiB GET and PUT, one stage at a time: block
//! token issue and check, the embedded metadata lookup, the embedded block
//! read, and a whole durable PUT. Run with
//! `cargo bench -p storage-client --bench hot_path`; numbers in BENCHMARKS.md.

use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use futures::StreamExt;
use storage_client::fuzzing::{self as token, Access, AccessMode, KeyRing, SecretKey};
use storage_client::{
    BlockId, BucketRef, KeyInfo, NewObject, Owner, Storage, StorageConfig, WriteIntent,
};

fn main() {
    divan::main();
}

const BUCKET: &str = "bench";
const KEY: &str = "dir/object-1KiB";

fn now_ms() -> u64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

fn block() -> BlockId {
    BlockId {
        container: 1,
        local: 4711,
    }
}

fn key_ring() -> (SecretKey, KeyRing) {
    let secret = SecretKey::generate(now_ms(), now_ms() + 3_600_000);
    let ring = KeyRing::default();
    ring.replace(vec![secret.clone()]);
    (secret, ring)
}

#[divan::bench]
fn token_issue(bencher: divan::Bencher) {
    let (secret, _) = key_ring();
    let expiry = now_ms() + 600_000;
    bencher.bench(|| token::issue(&secret, "owner", block(), &[AccessMode::Read], 1024, expiry));
}

#[divan::bench]
fn token_verify(bencher: divan::Bencher) {
    let (secret, ring) = key_ring();
    let issued = token::issue(
        &secret,
        "owner",
        block(),
        &[AccessMode::Read],
        1024,
        now_ms() + 600_000,
    );
    let access = Access {
        block: block(),
        mode: AccessMode::Read,
        end: 1024,
    };
    let now = now_ms();
    bencher.bench(|| token::verify(&ring, Some(&issued), access, now).expect("valid"));
}

/// An embedded store in a temporary directory holding one 1 KiB object.
struct Embedded {
    _dir: tempfile::TempDir,
    runtime: tokio::runtime::Runtime,
    storage: Storage,
    owner: Owner,
}

impl Embedded {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let owner = Owner::new("bench");
        let storage = runtime.block_on(async {
            let storage = Storage::open_embedded(StorageConfig::new(dir.path()))
                .await
                .expect("opens");
            storage
                .create_bucket(BucketRef::new(&owner, BUCKET), "us-east-1")
                .await
                .expect("bucket");
            storage
        });
        let embedded = Self {
            _dir: dir,
            runtime,
            storage,
            owner,
        };
        embedded.put(KEY);
        embedded
    }

    fn put(&self, key: &str) -> KeyInfo {
        self.runtime.block_on(async {
            let mut writer = self
                .storage
                .create_object(
                    BucketRef::new(&self.owner, BUCKET).object(key),
                    WriteIntent::default(),
                )
                .await
                .expect("opens the key");
            writer
                .write(Bytes::from(vec![7u8; 1024]))
                .await
                .expect("writes");
            writer
                .commit(NewObject {
                    etag: "0123456789abcdef0123456789abcdef".into(),
                    ..NewObject::default()
                })
                .await
                .expect("commits")
        })
    }
}

#[divan::bench]
fn embedded_lookup(bencher: divan::Bencher) {
    let store = Embedded::new();
    bencher.bench(|| {
        store
            .runtime
            .block_on(
                store
                    .storage
                    .lookup(BucketRef::new(&store.owner, BUCKET).object(KEY)),
            )
            .expect("found")
    });
}

/// The block read of a 1 KiB GET: token check, open, read, CRC check.
#[divan::bench]
fn embedded_read_1kib(bencher: divan::Bencher) {
    let store = Embedded::new();
    let info = store
        .runtime
        .block_on(
            store
                .storage
                .lookup(BucketRef::new(&store.owner, BUCKET).object(KEY)),
        )
        .expect("found");
    bencher.bench(|| {
        store.runtime.block_on(async {
            let mut stream = store
                .storage
                .read(&store.owner, &info, 0..info.size)
                .await
                .expect("opens");
            let mut read = 0;
            while let Some(piece) = stream.next().await {
                read += piece.expect("reads").len();
            }
            assert_eq!(read, 1024);
        });
    });
}

/// A whole durable 1 KiB PUT (open, write, fsyncs, commit), one at a time:
/// the floor under PUT latency at concurrency 1.
#[divan::bench(sample_count = 30, sample_size = 1)]
fn embedded_put_1kib(bencher: divan::Bencher) {
    let store = Embedded::new();
    let mut index = 0u64;
    bencher.bench_local(|| {
        index += 1;
        store.put(&format!("put/{index}"))
    });
}
