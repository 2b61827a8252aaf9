//! aws-sdk-s3 against s3-gateway: upload, download, list, presign, multipart.
//!
//!   AWS_ENDPOINT_URL=http://127.0.0.1:9878 AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... cargo run
//!
//! (Cargo.toml: `aws-sdk-s3 = { version = "1", features = ["behavior-version-latest"] }` and
//! `tokio = { version = "1", features = ["macros", "rt"] }`.)

use std::io::{Read, Write};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_sdk_s3::Client;
use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_s3::presigning::PresigningConfig;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{CompletedMultipartUpload, CompletedPart};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn env(name: &str, fallback: &str) -> String {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| fallback.to_owned())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let endpoint = env("AWS_ENDPOINT_URL", "http://127.0.0.1:9878");
    let config = aws_sdk_s3::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .credentials_provider(Credentials::new(
            env("AWS_ACCESS_KEY_ID", ""),
            env("AWS_SECRET_ACCESS_KEY", ""),
            None,
            None,
            "environment",
        ))
        .region(Region::new(env("AWS_REGION", "us-east-1")))
        .endpoint_url(&endpoint)
        .force_path_style(true) // http://host/bucket/key works without wildcard DNS
        .build();
    let s3 = Client::from_conf(config);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH)?.subsec_nanos();
    let bucket = format!("example-rust-{nanos:08x}");
    s3.create_bucket().bucket(&bucket).send().await?;

    // Upload and download.
    let hello = ByteStream::from_static(b"hello, s3-gateway");
    s3.put_object()
        .bucket(&bucket)
        .key("hello.txt")
        .body(hello)
        .send()
        .await?;
    let got = s3
        .get_object()
        .bucket(&bucket)
        .key("hello.txt")
        .send()
        .await?;
    assert_eq!(
        got.body.collect().await?.into_bytes().as_ref(),
        b"hello, s3-gateway"
    );

    // List.
    let listed = s3.list_objects_v2().bucket(&bucket).send().await?;
    let keys: Vec<&str> = listed.contents().iter().filter_map(|o| o.key()).collect();
    assert_eq!(keys, ["hello.txt"]);

    // A presigned URL: anyone holding it may GET the object for an hour.
    let presigned = s3
        .get_object()
        .bucket(&bucket)
        .key("hello.txt")
        .presigned(PresigningConfig::expires_in(Duration::from_secs(3600))?)
        .await?;
    assert!(http_get(presigned.uri())?.ends_with(b"\r\n\r\nhello, s3-gateway"));

    // Multipart: parts of at least 5 MiB, but the last.
    let parts = [vec![b'a'; 5 * 1024 * 1024], vec![b'b'; 1024]];
    let upload = s3
        .create_multipart_upload()
        .bucket(&bucket)
        .key("big.bin")
        .send()
        .await?;
    let upload_id = upload.upload_id().unwrap_or_default();
    let mut done = Vec::new();
    for (number, body) in (1..).zip(parts) {
        let part = s3
            .upload_part()
            .bucket(&bucket)
            .key("big.bin")
            .upload_id(upload_id)
            .part_number(number)
            .body(ByteStream::from(body))
            .send()
            .await?;
        done.push(
            CompletedPart::builder()
                .part_number(number)
                .set_e_tag(part.e_tag)
                .build(),
        );
    }
    s3.complete_multipart_upload()
        .bucket(&bucket)
        .key("big.bin")
        .upload_id(upload_id)
        .multipart_upload(
            CompletedMultipartUpload::builder()
                .set_parts(Some(done))
                .build(),
        )
        .send()
        .await?;
    let head = s3
        .head_object()
        .bucket(&bucket)
        .key("big.bin")
        .send()
        .await?;
    assert_eq!(head.content_length(), Some(5 * 1024 * 1024 + 1024));

    // Clean up.
    for key in ["hello.txt", "big.bin"] {
        s3.delete_object().bucket(&bucket).key(key).send().await?;
    }
    s3.delete_bucket().bucket(&bucket).send().await?;
    println!("ok");
    Ok(())
}

/// A plain HTTP/1.0 GET of an `http://` URL (any HTTP client does; this
/// keeps the example's dependencies to the SDK).
fn http_get(url: &str) -> Result<Vec<u8>> {
    let rest = url.strip_prefix("http://").ok_or("an http:// URL")?;
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = std::net::TcpStream::connect(host)?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n")?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer)?;
    Ok(answer)
}
