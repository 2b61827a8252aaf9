//! `s3-gateway admin check`: one signed S3 round trip through a running
//! gateway, for `helm test` and for smoke tests of an image: create a
//! scratch bucket, PUT an object, GET it back byte for byte, DELETE it, see
//! that it is gone, and delete the bucket. It needs only the gateway binary,
//! so the Helm chart's test pod runs the gateway's own image.

use rand::RngCore;
use reqwest::{Method, StatusCode};

use super::client::{AdminClient, ClientError};

/// Big enough to take more than one read on the way back, small enough
/// for any cluster.
const OBJECT_SIZE: usize = 256 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("{step} failed: {source}")]
    Request {
        step: &'static str,
        source: ClientError,
    },
    #[error("GET returned {got} bytes that differ from the {sent} bytes PUT")]
    Mismatch { sent: usize, got: usize },
    #[error("GET after DELETE still found the object")]
    NotDeleted,
}

/// Runs the round trip, printing one line per step; on a failure it still
/// tries to remove what it made.
pub async fn round_trip(client: &AdminClient) -> Result<(), CheckError> {
    let bucket = format!("s3gw-check-{:016x}", rand::random::<u64>());
    let bucket_path = format!("/{bucket}");
    let object_path = format!("/{bucket}/check-object");
    let mut data = vec![0u8; OBJECT_SIZE];
    rand::rng().fill_bytes(&mut data);

    step(client, "CreateBucket", Method::PUT, &bucket_path, &[]).await?;
    println!("created bucket {bucket}");
    let outcome = objects(client, &object_path, &data).await;
    if outcome.is_err() {
        let _ = client.send(Method::DELETE, &object_path, None, &[]).await;
    }
    let deleted = step(client, "DeleteBucket", Method::DELETE, &bucket_path, &[]).await;
    outcome?;
    deleted?;
    println!("deleted bucket {bucket}: the gateway answers signed S3 requests");
    Ok(())
}

async fn objects(client: &AdminClient, path: &str, data: &[u8]) -> Result<(), CheckError> {
    step(client, "PutObject", Method::PUT, path, data).await?;
    println!("PUT {} bytes", data.len());
    let read = step(client, "GetObject", Method::GET, path, &[]).await?;
    if read.as_ref() != data {
        return Err(CheckError::Mismatch {
            sent: data.len(),
            got: read.len(),
        });
    }
    println!("GET returned the same {} bytes", read.len());
    step(client, "DeleteObject", Method::DELETE, path, &[]).await?;
    match client.send(Method::GET, path, None, &[]).await {
        Err(ClientError::Refused { status, .. }) if status == StatusCode::NOT_FOUND => {
            println!("DELETE removed it (GET answers 404)");
            Ok(())
        }
        Ok(_) => Err(CheckError::NotDeleted),
        Err(source) => Err(CheckError::Request {
            step: "GetObject after DeleteObject",
            source,
        }),
    }
}

async fn step(
    client: &AdminClient,
    step: &'static str,
    method: Method,
    path: &str,
    body: &[u8],
) -> Result<bytes::Bytes, CheckError> {
    client
        .send(method, path, None, body)
        .await
        .map_err(|source| CheckError::Request { step, source })
}
