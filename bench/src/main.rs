//! `s3-bench`: a warp-like S3 load generator for loopback benchmarks of
//! s3-gateway (and, for comparison, any other S3 server on this machine).
//!
//! `s3-bench <mode> --endpoint URL --access-key AK --secret-key SK` prepares
//! the objects the mode needs, runs the timed phase, deletes what it wrote
//! and prints ops/s, MiB/s and latency percentiles per operation.
//! `fill` writes objects that stay and `--existing` runs on them, for runs
//! over a large bucket; `presign` prints URLs for other load generators.

mod budget;
mod client;
mod mix;
mod pool;
mod progress;
mod report;
mod stats;
mod units;
mod workload;

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use reqwest::Method;

use crate::client::S3Client;
use crate::report::RunReport;
use crate::workload::{Mode, Plan, keyed_data, object_data, object_key};

/// The longest timed phase, also when only an operation count is given,
/// so the tool always stops by itself.
const MAX_DURATION: Duration = Duration::from_secs(3600);
/// Large enough for multipart runs, small enough to hold in memory once.
const MAX_OBJECT_SIZE: u64 = 1 << 30;
/// S3's smallest part size (all parts but the last).
const MIN_PART_SIZE: u64 = 5 << 20;
const MAX_PARTS: u64 = 10_000;
const MAX_CONCURRENCY: usize = 1024;
const MAX_OBJECTS: usize = 1_000_000;
/// Where the PUT URLs of `presign` point.
const PRESIGNED_PUT_PREFIX: &str = "s3-bench-presigned-put/";

#[derive(Parser)]
#[command(
    name = "s3-bench",
    version,
    about = "A warp-like S3 load generator (loopback only)"
)]
struct Cli {
    /// What the timed phase does
    #[arg(value_enum)]
    mode: Mode,
    /// S3 endpoint; must be a loopback http:// URL
    #[arg(long, default_value = "http://127.0.0.1:9878")]
    endpoint: String,
    #[arg(long, env = "AWS_ACCESS_KEY_ID", hide_env_values = true)]
    access_key: String,
    #[arg(long, env = "AWS_SECRET_ACCESS_KEY", hide_env_values = true)]
    secret_key: String,
    #[arg(long, default_value = "us-east-1")]
    region: String,
    /// Bucket to use; created if missing, and deleted afterwards only if
    /// this run created it [default: s3-bench-<random>]
    #[arg(long)]
    bucket: Option<String>,
    /// Parallel workers, each with its own connection
    #[arg(long, default_value_t = 20)]
    concurrency: usize,
    /// Length of the timed phase (e.g. 10s, 2m)
    #[arg(long, default_value = "10s", value_parser = units::parse_duration, conflicts_with = "ops")]
    duration: Duration,
    /// Run this many operations instead of a fixed time (at most one hour)
    #[arg(long)]
    ops: Option<u64>,
    /// Object size (e.g. 4KiB, 16MiB; KB/MB are powers of 1000)
    #[arg(long, default_value = "4KiB", value_parser = units::parse_size)]
    obj_size: u64,
    /// Objects prepared for get, stat, list, delete and mixed
    #[arg(long, default_value_t = 100)]
    objects: usize,
    /// Part size for the multipart mode
    #[arg(long, default_value = "5MiB", value_parser = units::parse_size)]
    multipart_part_size: u64,
    /// Key prefix of the run's objects; fill, presign and --existing need
    /// it [default: s3-bench-<random>/]
    #[arg(long)]
    prefix: Option<String>,
    /// The bucket and objects <prefix>obj-0 .. obj-<objects - 1> exist
    /// already (from fill, or files of a static server): nothing is
    /// prepared or created, and only delete and delete-many delete them.
    /// Only for get, stat, list, presign, delete and delete-many
    #[arg(long)]
    existing: bool,
    /// The first object index fill writes, to grow an earlier fill
    #[arg(long, default_value_t = 0)]
    first: usize,
    /// How long presigned URLs stay valid
    #[arg(long, default_value = "1h", value_parser = units::parse_duration)]
    expires: Duration,
    /// Redraw a progress line on stderr every second [default: when stderr
    /// is a terminal]
    #[arg(long)]
    progress: bool,
    /// Print the results as JSON instead of a table
    #[arg(long)]
    json: bool,
    /// Give every object bytes derived from its key alone and check every
    /// byte a GET returns (so --existing checks what fill --verify wrote)
    #[arg(long)]
    verify: bool,
}

impl Cli {
    fn validate(&self) -> Result<(), String> {
        if !(1..=MAX_CONCURRENCY).contains(&self.concurrency) {
            return Err(format!("--concurrency must be 1..={MAX_CONCURRENCY}"));
        }
        if self.duration.is_zero() || self.duration > MAX_DURATION {
            return Err("--duration must be more than 0 and at most 1h".into());
        }
        if self.ops == Some(0) {
            return Err("--ops must be at least 1".into());
        }
        if self.obj_size > MAX_OBJECT_SIZE {
            return Err("--obj-size must be at most 1GiB".into());
        }
        if !(1..=MAX_OBJECTS).contains(&self.objects) {
            return Err(format!("--objects must be 1..={MAX_OBJECTS}"));
        }
        let keeps_objects = self.existing || matches!(self.mode, Mode::Fill | Mode::Presign);
        if keeps_objects && (self.bucket.is_none() || self.prefix.is_none()) {
            return Err("fill, presign and --existing need --bucket and --prefix".into());
        }
        if self.existing && !self.mode.runs_on_existing() {
            return Err(
                "--existing is only for get, stat, list, presign, delete and delete-many".into(),
            );
        }
        if self.mode == Mode::Fill && self.first >= self.objects {
            return Err("--first must be below --objects".into());
        }
        if self.mode == Mode::Multipart {
            if self.multipart_part_size < MIN_PART_SIZE {
                return Err("--multipart-part-size must be at least 5MiB".into());
            }
            if self.obj_size.div_ceil(self.multipart_part_size) > MAX_PARTS {
                return Err(format!("an object may have at most {MAX_PARTS} parts"));
            }
        }
        Ok(())
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(e) = cli.validate() {
        eprintln!("s3-bench: {e}");
        return ExitCode::from(2);
    }
    let client = match S3Client::new(
        &cli.endpoint,
        &cli.region,
        &cli.access_key,
        &cli.secret_key,
        cli.concurrency,
    ) {
        Ok(client) => Arc::new(client),
        Err(e) => {
            eprintln!("s3-bench: {e}");
            return ExitCode::from(2);
        }
    };
    let bucket = cli
        .bucket
        .clone()
        .unwrap_or_else(|| format!("s3-bench-{:08x}", rand::random::<u32>()));
    let prefix = cli
        .prefix
        .clone()
        .unwrap_or_else(|| format!("s3-bench-{:08x}/", rand::random::<u32>()));
    if cli.mode == Mode::Presign {
        return presign(&client, &cli, &bucket, &prefix).await;
    }
    let plan = Plan {
        mode: cli.mode,
        bucket: bucket.clone(),
        concurrency: cli.concurrency,
        // A fill runs until every object is written.
        duration: if cli.ops.is_some() || cli.mode == Mode::Fill {
            MAX_DURATION
        } else {
            cli.duration
        },
        ops: cli.ops,
        object_size: cli.obj_size,
        objects: cli.objects,
        part_size: cli.multipart_part_size,
        prefix,
        existing: cli.existing,
        first: cli.first,
        show_progress: cli.progress || std::io::stderr().is_terminal(),
        verify: cli.verify,
    };
    let outcome = match workload::run(client, plan).await {
        Ok(outcome) => outcome,
        Err(e) => {
            eprintln!("s3-bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    let results = stats::summarize(outcome.by_op, outcome.elapsed);
    let written: u64 = results.iter().map(|row| row.ops).sum();
    let wanted = cli.objects.saturating_sub(cli.first) as u64;
    let incomplete = cli.mode == Mode::Fill && written < wanted;
    if incomplete {
        eprintln!("s3-bench: fill wrote {written} of {wanted} objects");
    }
    let failed = incomplete || results.iter().any(|row| row.errors > 0);
    let report = RunReport {
        mode: format!("{:?}", cli.mode).to_lowercase(),
        endpoint: cli.endpoint,
        bucket,
        concurrency: cli.concurrency,
        object_size: cli.obj_size,
        objects: cli.objects,
        seconds: outcome.elapsed.as_secs_f64(),
        wrong_bytes: cli.verify.then_some(outcome.wrong_bytes),
        results,
    };
    if cli.json {
        match serde_json::to_string_pretty(&report) {
            Ok(json) => println!("{json}"),
            Err(e) => {
                eprintln!("s3-bench: cannot encode the report: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        print!("{}", report.table());
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Prints `METHOD URL` lines for objects 0 .. --objects - 1: GET and HEAD
/// of <prefix>obj-<i>, and PUT of s3-bench-presigned-put/obj-<i> (outside
/// the prefix, so listings of it stay exact). Unless --existing, first
/// creates the bucket and writes the objects read; what it writes stays.
async fn presign(client: &S3Client, cli: &Cli, bucket: &str, prefix: &str) -> ExitCode {
    if !cli.existing {
        let written = async {
            client
                .create_bucket(bucket)
                .await
                .map_err(|e| format!("cannot create bucket {bucket}: {e}"))?;
            let data = object_data(cli.obj_size)?;
            for index in 0..cli.objects {
                let key = object_key(prefix, index);
                let body = if cli.verify {
                    keyed_data(&key, data.len())
                } else {
                    data.clone()
                };
                client
                    .put_object(bucket, &key, body)
                    .await
                    .map_err(|e| format!("cannot write {key}: {e}"))?;
            }
            Ok::<(), String>(())
        }
        .await;
        if let Err(e) = written {
            eprintln!("s3-bench: {e}");
            return ExitCode::FAILURE;
        }
    }
    for index in 0..cli.objects {
        let read_key = object_key(prefix, index);
        let write_key = object_key(PRESIGNED_PUT_PREFIX, index);
        for (method, key) in [
            (Method::GET, &read_key),
            (Method::HEAD, &read_key),
            (Method::PUT, &write_key),
        ] {
            match client.presigned_url(&method, bucket, key, cli.expires) {
                Ok(url) => println!("{method} {url}"),
                Err(e) => {
                    eprintln!("s3-bench: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    ExitCode::SUCCESS
}
