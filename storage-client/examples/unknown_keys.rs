//! Times what an unknown access key costs, to pick the default of
//! `unknown_key_cache_ttl`: a load of every access key (what happens once
//! per TTL) against one back-end lookup per unknown key (TTL zero), with
//! 1000 stored credentials. On the embedded back end by default; on Ozone
//! when `OZONE_OM_ADDRESS` is set.
//! Run: `cargo run --release -p storage-client --example unknown_keys`

use std::time::{Duration, Instant};

use storage_client::{Credential, OzoneStorageConfig, RecordsKey, Storage, StorageConfig};

const CREDENTIALS: usize = 1000;
const TRIES: u32 = 50;

async fn open(ttl: Duration, dir: &std::path::Path, prefix: &str) -> Storage {
    match std::env::var("OZONE_OM_ADDRESS") {
        Ok(om) => Storage::open_ozone(OzoneStorageConfig {
            bucket_prefix: prefix.to_owned(),
            unknown_key_cache_ttl: ttl,
            records_key: Some(RecordsKey::new(
                b"unknown_keys example: a records key of 32+ bytes".to_vec(),
            )),
            ..OzoneStorageConfig::new(vec![om])
        })
        .await
        .expect("open Ozone"),
        Err(_) => Storage::open_embedded(StorageConfig {
            unknown_key_cache_ttl: ttl,
            ..StorageConfig::new(dir)
        })
        .await
        .expect("open the embedded back end"),
    }
}

/// Mean time of one lookup of a key that does not exist.
async fn unknown_lookup(storage: &Storage) -> Duration {
    let start = Instant::now();
    for i in 0..TRIES {
        let found = storage.credential(&format!("NOSUCHKEY{i}")).await;
        assert_eq!(found.expect("lookup"), None);
    }
    start.elapsed() / TRIES
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let prefix = format!("bench{}-", std::process::id());
    {
        let storage = open(Duration::ZERO, dir.path(), &prefix).await;
        for i in 0..CREDENTIALS {
            let access_key = format!("AKIDBENCH{i:06}");
            let cred = Credential {
                name: access_key.to_lowercase(),
                secret_key: format!("secret-{i}"),
                access_key,
                is_root: false,
            };
            storage.put_credential(cred).await.expect("put");
        }
    }
    // One back end open at a time (the embedded one locks its directory).
    // A TTL this short reloads the set on every lookup.
    let mut times = Vec::new();
    for ttl in [
        Duration::from_secs(3600),
        Duration::ZERO,
        Duration::from_nanos(1),
    ] {
        let storage = open(ttl, dir.path(), &prefix).await;
        storage.credential("WARMUP").await.expect("lookup");
        times.push(unknown_lookup(&storage).await);
    }
    println!(
        "{CREDENTIALS} credentials; per unknown key: set cached {:?}, back-end lookup {:?}, \
         set reloaded {:?}",
        times[0], times[1], times[2],
    );
    let cleanup = open(Duration::ZERO, dir.path(), &prefix).await;
    for i in 0..CREDENTIALS {
        cleanup
            .delete_credential(&format!("AKIDBENCH{i:06}"))
            .await
            .expect("delete");
    }
}
