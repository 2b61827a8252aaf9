//! One benchmark run: create the bucket, prepare the objects the mode reads,
//! run the timed phase with N workers, then delete everything it wrote.
//! A run can instead use objects that already exist (`--existing`: written
//! by an earlier `fill`, or files of a static web server), and `fill`
//! writes objects that stay, for runs over a large bucket.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::StreamExt;
use rand::RngCore;

use crate::budget::Budget;
use crate::client::{RequestError, S3Client};
use crate::mix::{self, Op};
use crate::pool::ObjectPool;
use crate::progress::Progress;
use crate::report::ErrorLog;
use crate::stats::Samples;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// GET prepared objects
    Get,
    /// PUT new objects
    Put,
    /// HEAD prepared objects
    Stat,
    /// ListObjectsV2 pages over the prepared objects
    List,
    /// DELETE prepared objects, one request each, until none are left
    Delete,
    /// DeleteObjects of up to 1000 prepared objects each (what `aws s3 rm
    /// --recursive` and rclone send), until none are left
    DeleteMany,
    /// GET 45 / HEAD 30 / PUT 15 / DELETE 10 over prepared objects
    Mixed,
    /// Whole multipart uploads: create, parts, complete
    Multipart,
    /// PUT objects <prefix>obj-<first> .. obj-<objects - 1> and keep them
    Fill,
    /// Print presigned GET, HEAD and PUT URLs, one object each of the
    /// --objects (PUT them first unless --existing), for other load
    /// generators
    Presign,
}

impl Mode {
    fn needs_objects(self) -> bool {
        !matches!(self, Mode::Put | Mode::Multipart | Mode::Fill)
    }

    /// Modes that can run on objects that exist: they read them, or
    /// delete them (what a `fill` wrote for it).
    pub fn runs_on_existing(self) -> bool {
        matches!(
            self,
            Mode::Get | Mode::Stat | Mode::List | Mode::Presign | Mode::Delete | Mode::DeleteMany
        )
    }
}

/// Keys per DeleteObjects request: S3's most.
const DELETE_MANY_KEYS: usize = 1000;

/// The key of the `index`-th prepared object.
pub fn object_key(prefix: &str, index: usize) -> String {
    format!("{prefix}obj-{index}")
}

pub struct Plan {
    pub mode: Mode,
    pub bucket: String,
    pub concurrency: usize,
    pub duration: Duration,
    pub ops: Option<u64>,
    pub object_size: u64,
    pub objects: usize,
    pub part_size: u64,
    pub prefix: String,
    /// The bucket and objects obj-0 .. obj-<objects - 1> exist already.
    pub existing: bool,
    /// The first index `fill` writes.
    pub first: usize,
    pub show_progress: bool,
    /// Compare every byte read with the bytes written.
    pub verify: bool,
}

pub struct Outcome {
    pub by_op: BTreeMap<&'static str, Samples>,
    pub elapsed: Duration,
    /// GETs that answered bytes other than those written (with `verify`).
    pub wrong_bytes: u64,
}

/// What the workers share.
struct Context {
    client: Arc<S3Client>,
    bucket: String,
    /// Every key of this run starts with it, so runs never collide.
    prefix: String,
    data: Bytes,
    verify: bool,
    wrong_bytes: AtomicU64,
    part_size: u64,
    objects: usize,
    pool: ObjectPool,
    /// Keys of failed PUTs: they may have landed, so they are deleted at
    /// the end, but never read (one failure is counted once, not again as
    /// a 404 on every later read).
    unconfirmed: Mutex<Vec<String>>,
    errors: ErrorLog,
    /// The next index `fill` writes.
    next_index: AtomicU64,
    progress: Arc<Progress>,
}

/// Random bytes of the object size, the body of every PUT.
pub fn object_data(size: u64) -> Result<Bytes, String> {
    let mut data = vec![0u8; usize::try_from(size).map_err(|e| e.to_string())?];
    rand::rng().fill_bytes(&mut data);
    Ok(Bytes::from(data))
}

pub async fn run(client: Arc<S3Client>, plan: Plan) -> Result<Outcome, String> {
    if plan.mode == Mode::Presign {
        return Err("presign has no timed phase".into());
    }
    let created_bucket = if plan.existing {
        false
    } else {
        client
            .create_bucket(&plan.bucket)
            .await
            .map_err(|e| format!("cannot create bucket {}: {e}", plan.bucket))?
    };
    let context = Arc::new(Context {
        client,
        bucket: plan.bucket.clone(),
        prefix: plan.prefix.clone(),
        data: object_data(plan.object_size)?,
        verify: plan.verify,
        wrong_bytes: AtomicU64::new(0),
        part_size: plan.part_size,
        objects: plan.objects,
        pool: ObjectPool::default(),
        unconfirmed: Mutex::default(),
        errors: ErrorLog::default(),
        next_index: AtomicU64::new(plan.first as u64),
        progress: Arc::default(),
    });

    let prepared = if plan.existing {
        for index in 0..plan.objects {
            context.pool.insert(object_key(&context.prefix, index));
        }
        Ok(())
    } else if plan.mode.needs_objects() {
        prepare(&context, plan.objects, plan.concurrency).await
    } else {
        Ok(())
    };
    let ops = match plan.mode {
        Mode::Fill => Some(plan.objects.saturating_sub(plan.first) as u64),
        _ => plan.ops,
    };
    let outcome = match prepared {
        Ok(()) => {
            // The deadline counts from here, not from before the preparation.
            let budget = Arc::new(Budget::new(plan.duration, ops));
            let ticker = plan.show_progress.then(|| context.progress.show(ops));
            let outcome = timed_phase(&context, budget, plan.mode, plan.concurrency).await;
            if let Some(ticker) = ticker {
                ticker.stop();
            }
            if matches!(plan.mode, Mode::Delete | Mode::DeleteMany) && context.pool.is_empty() {
                eprintln!(
                    "note: all {} objects were deleted before the time was up; \
                     prepare more with --objects",
                    plan.objects
                );
            }
            Ok(outcome)
        }
        Err(e) => Err(e),
    };
    // What exists already, and what `fill` wrote, stays.
    if !plan.existing && plan.mode != Mode::Fill {
        cleanup(&context, plan.concurrency, created_bucket).await;
    }
    outcome
}

async fn prepare(context: &Context, objects: usize, concurrency: usize) -> Result<(), String> {
    eprintln!(
        "preparing {objects} objects of {} ...",
        crate::units::format_size(context.data.len() as u64)
    );
    let failures = AtomicU64::new(0);
    futures::stream::iter(0..objects)
        .for_each_concurrent(concurrency, |index| {
            let failures = &failures;
            async move {
                let key = object_key(&context.prefix, index);
                match context
                    .client
                    .put_object(&context.bucket, &key, context.body(&key))
                    .await
                {
                    Ok(()) => context.pool.insert(key),
                    Err(e) => {
                        context.errors.report("PUT", &key, &e);
                        failures.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        })
        .await;
    match failures.into_inner() {
        0 => Ok(()),
        failed => Err(format!(
            "{failed} of {objects} objects could not be prepared"
        )),
    }
}

/// Runs the workers on the runtime's threads and merges what they saw.
async fn timed_phase(
    context: &Arc<Context>,
    budget: Arc<Budget>,
    mode: Mode,
    concurrency: usize,
) -> Outcome {
    let start = Instant::now();
    let workers: Vec<_> = (0..concurrency)
        .map(|id| tokio::spawn(worker(Arc::clone(context), Arc::clone(&budget), mode, id)))
        .collect();
    let mut by_op: BTreeMap<&'static str, Samples> = BTreeMap::new();
    for worker in workers {
        match worker.await {
            Ok(seen) => {
                for (op, samples) in seen {
                    by_op.entry(op).or_default().merge(samples);
                }
            }
            Err(e) => eprintln!("error: a worker failed: {e}"),
        }
    }
    Outcome {
        by_op,
        elapsed: start.elapsed(),
        wrong_bytes: context.wrong_bytes.load(Ordering::Relaxed),
    }
}

impl Context {
    /// The body written under `key`; with `verify`, bytes derived from the
    /// key alone (see `keyed_data`).
    fn body(&self, key: &str) -> Bytes {
        if self.verify {
            keyed_data(key, self.data.len())
        } else {
            self.data.clone()
        }
    }
}

/// The bytes `--verify` stores under `key`: the key itself, then a stream
/// seeded by the key's hash. They depend on nothing else, so a GET answered
/// with another object's bytes shows, and a later `--existing --verify` run
/// checks what an earlier `fill --verify` wrote.
pub fn keyed_data(key: &str, size: usize) -> Bytes {
    // FNV-1a of the key seeds SplitMix64: both fixed here, so the bytes
    // never change with a dependency's version.
    let mut state = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    let mut data = Vec::with_capacity(size + 8);
    data.extend_from_slice(&key.as_bytes()[..key.len().min(size)]);
    while data.len() < size {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        data.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    data.truncate(size);
    Bytes::from(data)
}

async fn worker(
    context: Arc<Context>,
    budget: Arc<Budget>,
    mode: Mode,
    id: usize,
) -> BTreeMap<&'static str, Samples> {
    let mut seen: BTreeMap<&'static str, Samples> = BTreeMap::new();
    let mut sequence = 0u64;
    let mut listing = Listing::default();
    while budget.claim() {
        sequence += 1;
        let fresh_key = || format!("{}w{id}-{sequence}", context.prefix);
        let (op, key, start, result) = match mode {
            Mode::List => {
                let start = Instant::now();
                let result = listing.next_page(&context).await;
                ("LIST", String::new(), start, result)
            }
            Mode::Fill => {
                let index = context.next_index.fetch_add(1, Ordering::Relaxed);
                let key = object_key(&context.prefix, index as usize);
                let start = Instant::now();
                let result = object_op(&context, Op::Put, &key).await;
                (Op::Put.name(), key, start, result)
            }
            Mode::Multipart => {
                let key = fresh_key();
                let start = Instant::now();
                let result = multipart_upload(&context, &key).await;
                context.pool.insert(key.clone());
                ("MULTIPART", key, start, result)
            }
            Mode::Delete => {
                let Some(key) = context.pool.take_unleased(rand::random::<u32>() as usize) else {
                    break;
                };
                let start = Instant::now();
                let result = object_op(&context, Op::Delete, &key).await;
                (Op::Delete.name(), key, start, result)
            }
            Mode::DeleteMany => {
                let hint = rand::random::<u32>() as usize;
                let keys: Vec<String> = std::iter::from_fn(|| context.pool.take_unleased(hint))
                    .take(DELETE_MANY_KEYS)
                    .collect();
                let Some(first) = keys.first().cloned() else {
                    break;
                };
                let start = Instant::now();
                let result = context.client.delete_objects(&context.bucket, &keys).await;
                ("DELETE_MANY", first, start, result)
            }
            Mode::Get | Mode::Put | Mode::Stat | Mode::Mixed | Mode::Presign => {
                let wanted = match mode {
                    // Presign never gets here: run() refuses it.
                    Mode::Get | Mode::Presign => Op::Get,
                    Mode::Stat => Op::Head,
                    Mode::Put => Op::Put,
                    _ => mix::pick(rand::random_range(0..100)),
                };
                let hint = rand::random::<u32>() as usize;
                match wanted {
                    Op::Get | Op::Head => match context.pool.lease(hint) {
                        Some(lease) => {
                            let start = Instant::now();
                            let result = object_op(&context, wanted, lease.key()).await;
                            (wanted.name(), lease.key().to_string(), start, result)
                        }
                        None => put_new(&context, fresh_key()).await,
                    },
                    Op::Delete => match context.pool.take_unleased(hint) {
                        Some(key) => {
                            let start = Instant::now();
                            let result = object_op(&context, Op::Delete, &key).await;
                            (Op::Delete.name(), key, start, result)
                        }
                        None => put_new(&context, fresh_key()).await,
                    },
                    Op::Put => put_new(&context, fresh_key()).await,
                }
            }
        };
        let latency = start.elapsed();
        context.progress.record(result.is_ok());
        let samples = seen.entry(op).or_default();
        match result {
            Ok(bytes) => samples.record_success(latency, bytes),
            Err(e) => {
                samples.record_error();
                if matches!(e, RequestError::WrongBytes { .. }) {
                    context.wrong_bytes.fetch_add(1, Ordering::Relaxed);
                }
                context.errors.report(op, &key, &e);
            }
        }
    }
    seen
}

type Step = (&'static str, String, Instant, Result<u64, RequestError>);

/// PUTs a new object and adds it to the pool, where it is read and cleaned
/// up afterwards; a failed PUT's key is only cleaned up.
async fn put_new(context: &Context, key: String) -> Step {
    let start = Instant::now();
    let result = object_op(context, Op::Put, &key).await;
    if result.is_ok() {
        context.pool.insert(key.clone());
    } else {
        context
            .unconfirmed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(key.clone());
    }
    (Op::Put.name(), key, start, result)
}

/// One object request; returns the object bytes it moved.
async fn object_op(context: &Context, op: Op, key: &str) -> Result<u64, RequestError> {
    let client = &context.client;
    let bucket = &context.bucket;
    let size = context.data.len() as u64;
    match op {
        Op::Get => {
            let expected = context.verify.then(|| context.body(key));
            let read = client.get_object(bucket, key, expected.as_deref()).await?;
            expect_size(read, size)?;
            Ok(read)
        }
        Op::Head => {
            expect_size(client.head_object(bucket, key).await?, size)?;
            Ok(0)
        }
        Op::Put => {
            client.put_object(bucket, key, context.body(key)).await?;
            Ok(size)
        }
        Op::Delete => {
            client.delete_object(bucket, key).await?;
            Ok(0)
        }
    }
}

fn expect_size(actual: u64, expected: u64) -> Result<(), RequestError> {
    if actual == expected {
        Ok(())
    } else {
        Err(RequestError::Unexpected(format!(
            "object has {actual} bytes, expected {expected}"
        )))
    }
}

/// A worker's position in a repeated full listing of the run's objects.
#[derive(Default)]
struct Listing {
    token: Option<String>,
    keys_so_far: usize,
}

impl Listing {
    /// Fetches the next page; at the end of each full listing, checks that
    /// every prepared object was listed once.
    async fn next_page(&mut self, context: &Context) -> Result<u64, RequestError> {
        let token = self.token.take();
        let page = context
            .client
            .list_page(&context.bucket, &context.prefix, token.as_deref())
            .await?;
        self.keys_so_far += page.keys;
        self.token = page.next_token;
        if self.token.is_none() {
            let listed = std::mem::take(&mut self.keys_so_far);
            if listed != context.objects {
                return Err(RequestError::Unexpected(format!(
                    "listing returned {listed} keys, expected {}",
                    context.objects
                )));
            }
        }
        Ok(0)
    }
}

async fn multipart_upload(context: &Context, key: &str) -> Result<u64, RequestError> {
    let client = &context.client;
    let bucket = &context.bucket;
    let upload_id = client.create_multipart(bucket, key).await?;
    let uploaded = async {
        let mut etags = Vec::new();
        for (index, range) in part_ranges(context.data.len(), context.part_size).enumerate() {
            let number = u32::try_from(index + 1).unwrap_or(u32::MAX);
            let part = context.data.slice(range);
            etags.push(
                client
                    .upload_part(bucket, key, &upload_id, number, part)
                    .await?,
            );
        }
        client
            .complete_multipart(bucket, key, &upload_id, &etags)
            .await
    }
    .await;
    if uploaded.is_err() {
        // Best effort: the failure is already being reported.
        let _ = client.abort_multipart(bucket, key, &upload_id).await;
    }
    uploaded.map(|()| context.data.len() as u64)
}

/// The byte ranges of the parts of an object; the last may be shorter.
/// A zero part size is treated as one byte so the iterator always ends.
pub fn part_ranges(object_size: usize, part_size: u64) -> impl Iterator<Item = Range<usize>> {
    let part = usize::try_from(part_size).unwrap_or(usize::MAX).max(1);
    (0..object_size.div_ceil(part).max(1))
        .map(move |index| index * part..((index + 1).saturating_mul(part)).min(object_size))
}

/// Deletes every object the run left and the bucket if the run created it.
async fn cleanup(context: &Context, concurrency: usize, created_bucket: bool) {
    let mut keys = context.pool.drain();
    keys.append(
        &mut context
            .unconfirmed
            .lock()
            .unwrap_or_else(|e| e.into_inner()),
    );
    if !keys.is_empty() {
        eprintln!("cleaning up {} objects ...", keys.len());
    }
    let errors = ErrorLog::default();
    futures::stream::iter(keys)
        .for_each_concurrent(concurrency, |key| {
            let errors = &errors;
            async move {
                if let Err(e) = context.client.delete_object(&context.bucket, &key).await {
                    errors.report("cleanup DELETE", &key, &e);
                }
            }
        })
        .await;
    if created_bucket && let Err(e) = context.client.delete_bucket(&context.bucket).await {
        eprintln!("warning: cannot delete bucket {}: {e}", context.bucket);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_cover_the_object_exactly() {
        let bounds = |size, part| -> Vec<(usize, usize)> {
            part_ranges(size, part).map(|r| (r.start, r.end)).collect()
        };
        assert_eq!(bounds(12, 5), [(0, 5), (5, 10), (10, 12)]);
        assert_eq!(bounds(10, 5), [(0, 5), (5, 10)]);
        assert_eq!(bounds(3, 5), [(0, 3)]);
        assert_eq!(bounds(0, 5), [(0, 0)]);
    }

    #[test]
    fn only_writing_modes_skip_preparation() {
        assert!(!Mode::Put.needs_objects());
        assert!(!Mode::Multipart.needs_objects());
        assert!(!Mode::Fill.needs_objects());
        for mode in [Mode::Get, Mode::Stat, Mode::List, Mode::Delete, Mode::Mixed] {
            assert!(mode.needs_objects(), "{mode:?}");
        }
    }

    #[test]
    fn reading_and_deleting_modes_run_on_existing_objects() {
        for mode in [
            Mode::Get,
            Mode::Stat,
            Mode::List,
            Mode::Presign,
            Mode::Delete,
            Mode::DeleteMany,
        ] {
            assert!(mode.runs_on_existing(), "{mode:?}");
        }
        for mode in [Mode::Put, Mode::Mixed, Mode::Multipart, Mode::Fill] {
            assert!(!mode.runs_on_existing(), "{mode:?}");
        }
    }

    #[test]
    fn verified_bytes_depend_on_the_key_alone() {
        let first = keyed_data("p/obj-7", 1024);
        assert_eq!(first.len(), 1024);
        assert!(first.starts_with(b"p/obj-7"));
        assert_eq!(first, keyed_data("p/obj-7", 1024), "same key, same bytes");
        let other = keyed_data("p/obj-8", 1024);
        assert_ne!(first[7..], other[7..], "the tail differs too");
        assert_eq!(keyed_data("p/obj-7", 3), &b"p/o"[..]);
        assert!(keyed_data("p/obj-7", 0).is_empty());
    }

    #[test]
    fn fill_and_existing_runs_agree_on_key_names() {
        assert_eq!(object_key("p/", 7), "p/obj-7");
    }
}
