//! The SDK matrix scenarios driven by the Rust `aws-sdk-s3`: one JSON line per
//! scenario on stdout (see ../README.md). Arguments select scenarios; none runs all.

mod scenarios;
mod support;

use aws_sdk_s3::Client;
use scenarios::{Scenarios, make_client};
use std::process::ExitCode;
use support::{Endpoint, Fallible, Noise, Problem, Reporter, SCENARIOS};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let wanted: Vec<String> = std::env::args().skip(1).collect();
    if let Some(unknown) = wanted.iter().find(|w| !SCENARIOS.contains(&w.as_str())) {
        eprintln!(
            "unknown scenario {unknown}; known: {}",
            SCENARIOS.join(", ")
        );
        return ExitCode::from(2);
    }
    let wanted: Vec<&str> = if wanted.is_empty() {
        SCENARIOS.to_vec()
    } else {
        SCENARIOS
            .iter()
            .copied()
            .filter(|s| wanted.iter().any(|w| w == s))
            .collect()
    };
    let endpoint = match Endpoint::from_env() {
        Ok(endpoint) => endpoint,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let reporter = Reporter {
        version: aws_sdk_s3::meta::PKG_VERSION.to_owned(),
    };
    let client = make_client(&endpoint, true);
    let mut noise = Noise::from_clock();
    let prefix = format!("rust-{}", noise.hex_suffix());
    let mut scenarios = Scenarios {
        endpoint,
        client,
        prefix,
        noise,
    };

    let setup_error = if wanted.iter().any(|s| *s != "bucket") {
        let created = scenarios.create_bucket(scenarios.bucket()).await;
        created
            .err()
            .map(|problem| format!("CreateBucket {}: {}", scenarios.bucket(), problem.0))
    } else {
        None
    };
    for scenario in wanted {
        if let (Some(error), true) = (&setup_error, scenario != "bucket") {
            reporter.emit(scenario, false, &format!("setup failed: {error}"));
            continue;
        }
        match run(&mut scenarios, scenario).await {
            Ok(note) => reporter.emit(scenario, true, note.as_deref().unwrap_or_default()),
            Err(problem) => reporter.emit(scenario, false, &problem.0),
        }
    }
    remove_bucket(&scenarios.client, scenarios.bucket()).await;
    remove_bucket(&scenarios.client, &scenarios.spare_bucket()).await;
    ExitCode::SUCCESS
}

async fn run(scenarios: &mut Scenarios, name: &str) -> Fallible<Option<String>> {
    match name {
        "bucket" => scenarios.bucket_scenario().await,
        "object" => scenarios.object_scenario().await,
        "range" => scenarios.range_scenario().await,
        "list-v2-delimiter" => scenarios.list_scenario().await,
        "multipart" => scenarios.multipart_scenario().await,
        "copy" => scenarios.copy_scenario().await,
        "tagging" => scenarios.tagging_scenario().await,
        "presigned" => scenarios.presigned_scenario().await,
        "checksum-default" => scenarios.checksum_default_scenario().await,
        "checksum-off" => scenarios.checksum_off_scenario().await,
        other => support::fail(format!("no such scenario {other}")),
    }
}

/// Best-effort cleanup: delete every object and pending upload, then the bucket.
async fn remove_bucket(s3: &Client, bucket: &str) {
    if s3.head_bucket().bucket(bucket).send().await.is_err() {
        return;
    }
    let mut listing = s3.list_objects_v2().bucket(bucket).into_paginator().send();
    while let Some(page) = listing.next().await {
        match page {
            Ok(page) => {
                for key in page.contents().iter().filter_map(|o| o.key()) {
                    if let Err(error) = s3.delete_object().bucket(bucket).key(key).send().await {
                        eprintln!(
                            "rust: cleanup could not delete {bucket}/{key}: {}",
                            Problem::from(error).0
                        );
                    }
                }
            }
            Err(error) => {
                eprintln!(
                    "rust: cleanup listing of {bucket} failed: {}",
                    Problem::from(error).0
                );
                break;
            }
        }
    }
    match s3.list_multipart_uploads().bucket(bucket).send().await {
        Ok(uploads) => {
            for upload in uploads.uploads() {
                let aborted = s3
                    .abort_multipart_upload()
                    .bucket(bucket)
                    .key(upload.key().unwrap_or_default())
                    .upload_id(upload.upload_id().unwrap_or_default())
                    .send()
                    .await;
                if let Err(error) = aborted {
                    eprintln!(
                        "rust: cleanup could not abort an upload: {}",
                        Problem::from(error).0
                    );
                }
            }
        }
        Err(error) => eprintln!(
            "rust: cleanup of uploads in {bucket} failed: {}",
            Problem::from(error).0
        ),
    }
    if let Err(error) = s3.delete_bucket().bucket(bucket).send().await {
        eprintln!(
            "rust: cleanup could not delete bucket {bucket}: {}",
            Problem::from(error).0
        );
    }
}
