//! Times the embedded back end writing and reading one 64 MiB object with
//! several chunk sizes and read buffers, to pick the defaults in
//! `StorageConfig`. Run: `cargo run --release -p storage-client --example chunk_size [dir]`
//! (the directory decides which disk is measured; default: a temp dir).

use std::time::Instant;

use bytes::Bytes;
use futures::TryStreamExt;
use storage_client::{BucketRef, NewObject, Owner, Storage, StorageConfig, WriteIntent};

const OBJECT: usize = 64 * 1024 * 1024;
/// Size of the pieces the gateway hands to `write` (a typical HTTP body frame).
const PIECE: usize = 64 * 1024;

/// Runs per configuration; the median is reported, as the machine is shared.
const RUNS: usize = 5;

fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn mib_per_s(bytes: usize, seconds: f64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0) / seconds
}

#[tokio::main]
async fn main() -> storage_client::Result<()> {
    let base = std::env::args().nth(1).map(std::path::PathBuf::from);
    let payload: Vec<Bytes> = (0..OBJECT / PIECE)
        .map(|i| Bytes::from(vec![(i % 251) as u8; PIECE]))
        .collect();
    let owner = Owner::new("bench");
    println!("| chunk | read buffer | write MiB/s | read MiB/s |");
    println!("|---|---|---|---|");
    for chunk in [64 * 1024, 256 * 1024, 1024 * 1024, 4 * 1024 * 1024] {
        for read_buffer in [64 * 1024, 256 * 1024, 1024 * 1024] {
            let mut writes = Vec::new();
            let mut reads = Vec::new();
            for _ in 0..RUNS {
                let dir = match &base {
                    Some(base) => tempfile::tempdir_in(base)?,
                    None => tempfile::tempdir()?,
                };
                let storage = Storage::open_embedded(StorageConfig {
                    chunk_size: chunk,
                    read_buffer,
                    ..StorageConfig::new(dir.path())
                })
                .await?;
                storage
                    .create_bucket(BucketRef::new(&owner, "bench"), "")
                    .await?;

                let started = Instant::now();
                let mut writer = storage
                    .create_object(
                        BucketRef::new(&owner, "bench").object("object"),
                        WriteIntent::default(),
                    )
                    .await?;
                for piece in &payload {
                    writer.write(piece.clone()).await?;
                }
                writer.commit(NewObject::default()).await?;
                let write = started.elapsed().as_secs_f64();

                let started = Instant::now();
                let info = storage
                    .lookup(BucketRef::new(&owner, "bench").object("object"))
                    .await?;
                let mut stream = storage.read(&owner, &info, 0..info.size).await?;
                let mut total = 0;
                while let Some(piece) = stream.try_next().await? {
                    total += piece.len();
                }
                assert_eq!(total, OBJECT);
                reads.push(mib_per_s(OBJECT, started.elapsed().as_secs_f64()));
                writes.push(mib_per_s(OBJECT, write));
            }
            println!(
                "| {} KiB | {} KiB | {:.0} | {:.0} |",
                chunk / 1024,
                read_buffer / 1024,
                median(&mut writes),
                median(&mut reads)
            );
        }
    }
    Ok(())
}
