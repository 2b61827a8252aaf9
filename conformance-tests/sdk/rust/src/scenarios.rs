//! The matrix scenarios against one working bucket (see ../../README.md).

use crate::support::{
    Endpoint, Fallible, Noise, check, check_same_bytes, crc32_base64, fail, multipart_etag,
    quoted_md5,
};
use aws_sdk_s3::Client;
use aws_sdk_s3::config::{
    BehaviorVersion, Credentials, Region, RequestChecksumCalculation, ResponseChecksumValidation,
};
use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_s3::presigning::{PresignedRequest, PresigningConfig};
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{
    BucketLocationConstraint, ChecksumMode, CompletedMultipartUpload, CompletedPart,
    CreateBucketConfiguration, Tag, Tagging,
};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

const PART_SIZE: usize = 5 * 1024 * 1024;
/// Larger than one aws-chunked chunk, so streaming uploads span several chunks and a trailer.
const CHECKSUM_BODY_SIZE: usize = 256 * 1024 + 123;
const TREE_KEYS: [&str; 7] = [
    "tree/a.txt",
    "tree/b.txt",
    "tree/c.txt",
    "tree/dir1/x.txt",
    "tree/dir1/y.txt",
    "tree/dir2/z.txt",
    "tree/dir3/w.txt",
];
/// ListObjectsV2 with prefix tree/, delimiter / and max-keys 2: (keys, common prefixes) per page.
const EXPECTED_TREE_PAGES: [(&[&str], &[&str]); 3] = [
    (&["tree/a.txt", "tree/b.txt"], &[]),
    (&["tree/c.txt"], &["tree/dir1/"]),
    (&[], &["tree/dir2/", "tree/dir3/"]),
];
const TAGS: [(&str, &str); 2] = [("project", "s3gw"), ("tier", "gold")];

pub fn make_client(endpoint: &Endpoint, checksums_by_default: bool) -> Client {
    let mut config = aws_sdk_s3::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .credentials_provider(Credentials::new(
            &endpoint.access_key,
            &endpoint.secret_key,
            None,
            None,
            "matrix-environment",
        ))
        .region(Region::new(endpoint.region.clone()))
        .endpoint_url(&endpoint.url)
        .force_path_style(true);
    if !checksums_by_default {
        config = config
            .request_checksum_calculation(RequestChecksumCalculation::WhenRequired)
            .response_checksum_validation(ResponseChecksumValidation::WhenRequired);
    }
    Client::from_conf(config.build())
}

type HttpResponse = aws_sdk_s3::config::http::HttpResponse;

fn status_of<E>(error: &SdkError<E, HttpResponse>) -> Option<u16> {
    error.raw_response().map(|r| r.status().as_u16())
}

fn expect_not_found<T, E: ProvideErrorMetadata>(
    result: Result<T, SdkError<E, HttpResponse>>,
    what: &str,
) -> Fallible<()> {
    match result {
        Ok(_) => fail(format!("{what}: still exists")),
        Err(error) if status_of(&error) == Some(404) => Ok(()),
        Err(error) => fail(format!(
            "{what}: expected 404, got {:?} {:?}",
            status_of(&error),
            error.code()
        )),
    }
}

pub struct Scenarios {
    pub endpoint: Endpoint,
    pub client: Client,
    pub prefix: String,
    pub noise: Noise,
}

impl Scenarios {
    pub fn bucket(&self) -> &str {
        &self.prefix
    }

    pub fn spare_bucket(&self) -> String {
        format!("{}-b", self.prefix)
    }

    /// us-east-1 is the one region where CreateBucket takes no LocationConstraint.
    pub async fn create_bucket(&self, name: &str) -> Fallible<()> {
        let region = self.endpoint.region.as_str();
        let config = (region != "us-east-1").then(|| {
            CreateBucketConfiguration::builder()
                .location_constraint(BucketLocationConstraint::from(region))
                .build()
        });
        self.client
            .create_bucket()
            .bucket(name)
            .set_create_bucket_configuration(config)
            .send()
            .await?;
        Ok(())
    }

    pub async fn bucket_scenario(&mut self) -> Fallible<Option<String>> {
        let name = self.spare_bucket();
        self.create_bucket(&name).await?;
        let s3 = &self.client;
        let probe = async {
            s3.head_bucket().bucket(&name).send().await?;
            let listed = s3.list_buckets().send().await?;
            let names: Vec<&str> = listed.buckets().iter().filter_map(|b| b.name()).collect();
            check(names.contains(&name.as_str()), || {
                format!("ListBuckets does not list {name}: {names:?}")
            })
        }
        .await;
        let deleted = s3.delete_bucket().bucket(&name).send().await;
        probe?;
        deleted?;
        expect_not_found(
            s3.head_bucket().bucket(&name).send().await,
            "HeadBucket after DeleteBucket",
        )?;
        Ok(None)
    }

    pub async fn object_scenario(&mut self) -> Fallible<Option<String>> {
        let key = "object/hello world.txt";
        let body = self.noise.bytes(64 * 1024 + 7);
        let s3 = &self.client;
        let put = s3
            .put_object()
            .bucket(self.bucket())
            .key(key)
            .body(ByteStream::from(body.clone()))
            .content_type("text/plain")
            .metadata("color", "blue")
            .send()
            .await?;
        let etag = put.e_tag().unwrap_or_default().to_owned();
        check(etag == quoted_md5(&body), || {
            format!("PutObject ETag {etag}, expected {}", quoted_md5(&body))
        })?;
        let blue = HashMap::from([("color".to_owned(), "blue".to_owned())]);
        let got = s3
            .get_object()
            .bucket(self.bucket())
            .key(key)
            .send()
            .await?;
        check(got.content_type() == Some("text/plain"), || {
            format!("GetObject Content-Type {:?}", got.content_type())
        })?;
        check(got.metadata() == Some(&blue), || {
            format!("GetObject metadata {:?}", got.metadata())
        })?;
        check(got.e_tag() == Some(etag.as_str()), || {
            format!("GetObject ETag {:?}", got.e_tag())
        })?;
        let data = got.body.collect().await?.into_bytes();
        check_same_bytes(&data, &body, "GetObject body")?;
        let head = s3
            .head_object()
            .bucket(self.bucket())
            .key(key)
            .send()
            .await?;
        check(
            head.content_length() == i64::try_from(body.len()).ok(),
            || format!("HeadObject Content-Length {:?}", head.content_length()),
        )?;
        check(head.e_tag() == Some(etag.as_str()), || {
            format!("HeadObject ETag {:?}", head.e_tag())
        })?;
        check(head.metadata() == Some(&blue), || {
            format!("HeadObject metadata {:?}", head.metadata())
        })?;
        s3.delete_object()
            .bucket(self.bucket())
            .key(key)
            .send()
            .await?;
        expect_not_found(
            s3.head_object().bucket(self.bucket()).key(key).send().await,
            "HeadObject after DeleteObject",
        )?;
        Ok(None)
    }

    pub async fn range_scenario(&mut self) -> Fallible<Option<String>> {
        let key = "range/data.bin";
        let body = self.noise.bytes(10_000);
        let s3 = &self.client;
        s3.put_object()
            .bucket(self.bucket())
            .key(key)
            .body(ByteStream::from(body.clone()))
            .send()
            .await?;
        let cases = [
            ("bytes=100-199", &body[100..200], "bytes 100-199/10000"),
            ("bytes=9950-", &body[9950..], "bytes 9950-9999/10000"),
            ("bytes=-50", &body[9950..], "bytes 9950-9999/10000"),
        ];
        for (range, expected, content_range) in cases {
            let got = s3
                .get_object()
                .bucket(self.bucket())
                .key(key)
                .range(range)
                .send()
                .await?;
            check(got.content_range() == Some(content_range), || {
                format!("Range {range}: Content-Range {:?}", got.content_range())
            })?;
            let data = got.body.collect().await?.into_bytes();
            check_same_bytes(&data, expected, &format!("Range {range}"))?;
        }
        Ok(None)
    }

    pub async fn list_scenario(&mut self) -> Fallible<Option<String>> {
        let s3 = &self.client;
        for key in TREE_KEYS {
            s3.put_object()
                .bucket(self.bucket())
                .key(key)
                .body(ByteStream::from(key.as_bytes().to_vec()))
                .send()
                .await?;
        }
        let mut pages: Vec<(Vec<String>, Vec<String>)> = Vec::new();
        let mut token: Option<String> = None;
        while pages.len() <= EXPECTED_TREE_PAGES.len() {
            let page = s3
                .list_objects_v2()
                .bucket(self.bucket())
                .prefix("tree/")
                .delimiter("/")
                .max_keys(2)
                .set_continuation_token(token.clone())
                .send()
                .await?;
            let keys: Vec<String> = page
                .contents()
                .iter()
                .filter_map(|o| o.key())
                .map(str::to_owned)
                .collect();
            let prefixes: Vec<String> = page
                .common_prefixes()
                .iter()
                .filter_map(|p| p.prefix())
                .map(str::to_owned)
                .collect();
            let entries = keys.len() + prefixes.len();
            pages.push((keys, prefixes));
            check(
                page.key_count().and_then(|n| usize::try_from(n).ok()) == Some(entries),
                || format!("page {}: KeyCount {:?}", pages.len(), page.key_count()),
            )?;
            if page.is_truncated() != Some(true) {
                break;
            }
            token = page.next_continuation_token().map(str::to_owned);
            check(token.is_some(), || {
                format!(
                    "page {} is truncated but has no NextContinuationToken",
                    pages.len()
                )
            })?;
        }
        let expected: Vec<(Vec<String>, Vec<String>)> = EXPECTED_TREE_PAGES
            .iter()
            .map(|(keys, prefixes)| {
                (
                    keys.iter().map(|k| (*k).to_owned()).collect(),
                    prefixes.iter().map(|p| (*p).to_owned()).collect(),
                )
            })
            .collect();
        check(pages == expected, || {
            format!("pages {pages:?}, expected {expected:?}")
        })?;
        Ok(None)
    }

    pub async fn multipart_scenario(&mut self) -> Fallible<Option<String>> {
        let key = "multipart/big.bin";
        let parts: Vec<Vec<u8>> = (0..3).map(|_| self.noise.bytes(PART_SIZE)).collect();
        let s3 = &self.client;
        let created = s3
            .create_multipart_upload()
            .bucket(self.bucket())
            .key(key)
            .send()
            .await?;
        let Some(upload_id) = created.upload_id().map(str::to_owned) else {
            return fail("CreateMultipartUpload returned no UploadId");
        };
        let uploaded = async {
            let mut completed = Vec::new();
            for (number, part) in (1..).zip(&parts) {
                let answer = s3
                    .upload_part()
                    .bucket(self.bucket())
                    .key(key)
                    .upload_id(&upload_id)
                    .part_number(number)
                    .body(ByteStream::from(part.clone()))
                    .send()
                    .await?;
                let etag = answer.e_tag().unwrap_or_default().to_owned();
                check(etag == quoted_md5(part), || {
                    format!("UploadPart {number} ETag {etag}")
                })?;
                completed.push(
                    CompletedPart::builder()
                        .part_number(number)
                        .e_tag(etag)
                        .build(),
                );
            }
            let done = s3
                .complete_multipart_upload()
                .bucket(self.bucket())
                .key(key)
                .upload_id(&upload_id)
                .multipart_upload(
                    CompletedMultipartUpload::builder()
                        .set_parts(Some(completed))
                        .build(),
                )
                .send()
                .await?;
            Fallible::Ok(done.e_tag().unwrap_or_default().to_owned())
        }
        .await;
        let etag = match uploaded {
            Ok(etag) => etag,
            Err(error) => {
                let aborted = s3
                    .abort_multipart_upload()
                    .bucket(self.bucket())
                    .key(key)
                    .upload_id(&upload_id)
                    .send()
                    .await;
                if let Err(abort_error) = aborted {
                    eprintln!("rust: abort of upload {upload_id} failed: {abort_error}");
                }
                return Err(error);
            }
        };
        check(etag.trim_matches('"').ends_with("-3"), || {
            format!("CompleteMultipartUpload ETag {etag} does not end in -3")
        })?;
        let expected_etag = multipart_etag(&parts);
        check(etag == expected_etag, || {
            format!("CompleteMultipartUpload ETag {etag}, expected {expected_etag}")
        })?;
        let got = s3
            .get_object()
            .bucket(self.bucket())
            .key(key)
            .send()
            .await?;
        check(got.e_tag() == Some(etag.as_str()), || {
            format!("GetObject ETag {:?}, expected {etag}", got.e_tag())
        })?;
        let data = got.body.collect().await?.into_bytes();
        check_same_bytes(&data, &parts.concat(), "GetObject of the completed upload")?;
        Ok(None)
    }

    pub async fn copy_scenario(&mut self) -> Fallible<Option<String>> {
        let (source, target) = ("copy/source.bin", "copy/target.bin");
        let body = self.noise.bytes(32 * 1024);
        let s3 = &self.client;
        let put = s3
            .put_object()
            .bucket(self.bucket())
            .key(source)
            .metadata("origin", "copy-test")
            .body(ByteStream::from(body.clone()))
            .send()
            .await?;
        let copied = s3
            .copy_object()
            .bucket(self.bucket())
            .key(target)
            .copy_source(format!("{}/{source}", self.bucket()))
            .send()
            .await?;
        let copied_etag = copied.copy_object_result().and_then(|r| r.e_tag());
        check(copied_etag == put.e_tag(), || {
            format!("CopyObject ETag {copied_etag:?}, source {:?}", put.e_tag())
        })?;
        let got = s3
            .get_object()
            .bucket(self.bucket())
            .key(target)
            .send()
            .await?;
        let origin = HashMap::from([("origin".to_owned(), "copy-test".to_owned())]);
        check(got.metadata() == Some(&origin), || {
            format!("copy metadata {:?}", got.metadata())
        })?;
        let data = got.body.collect().await?.into_bytes();
        check_same_bytes(&data, &body, "GetObject of the copy")?;
        Ok(None)
    }

    pub async fn tagging_scenario(&mut self) -> Fallible<Option<String>> {
        let key = "tagging/object.txt";
        let s3 = &self.client;
        s3.put_object()
            .bucket(self.bucket())
            .key(key)
            .body(ByteStream::from_static(b"tagged"))
            .send()
            .await?;
        let tags = TAGS
            .iter()
            .map(|(k, v)| Tag::builder().key(*k).value(*v).build())
            .collect::<Result<Vec<_>, _>>()?;
        let tagging = Tagging::builder().set_tag_set(Some(tags)).build()?;
        s3.put_object_tagging()
            .bucket(self.bucket())
            .key(key)
            .tagging(tagging)
            .send()
            .await?;
        let got = self.tags_of(key).await?;
        let got: HashMap<&str, &str> = got.iter().map(|t| (t.key(), t.value())).collect();
        let expected: HashMap<&str, &str> = TAGS.into_iter().collect();
        check(got == expected, || {
            format!("GetObjectTagging {got:?}, expected {expected:?}")
        })?;
        s3.delete_object_tagging()
            .bucket(self.bucket())
            .key(key)
            .send()
            .await?;
        let left = self.tags_of(key).await?;
        check(left.is_empty(), || {
            format!("GetObjectTagging after DeleteObjectTagging: {left:?}")
        })?;
        Ok(None)
    }

    /// GetObjectTagging's tag set for `key` in the working bucket.
    async fn tags_of(&self, key: &str) -> Fallible<Vec<Tag>> {
        let output = self
            .client
            .get_object_tagging()
            .bucket(self.bucket())
            .key(key)
            .send()
            .await?;
        Ok(output.tag_set)
    }

    pub async fn presigned_scenario(&mut self) -> Fallible<Option<String>> {
        let key = "presigned/file.bin";
        let body = self.noise.bytes(20 * 1024);
        let s3 = &self.client;
        let expiry = PresigningConfig::expires_in(Duration::from_secs(600))?;
        let put = s3
            .put_object()
            .bucket(self.bucket())
            .key(key)
            .presigned(expiry.clone())
            .await?;
        let upload = scratch_file(&format!("rust-presigned-{}.bin", self.prefix));
        std::fs::write(&upload, &body)?;
        let put_answer = curl(&put, &["--upload-file", &upload.display().to_string()]);
        let download = scratch_file(&format!("rust-presigned-{}.out", self.prefix));
        let get = s3
            .get_object()
            .bucket(self.bucket())
            .key(key)
            .presigned(expiry)
            .await?;
        let outcome = async {
            check_status("presigned PUT", put_answer?)?;
            check_status(
                "presigned GET",
                curl(&get, &["--output", &download.display().to_string()])?,
            )?;
            check_same_bytes(&std::fs::read(&download)?, &body, "presigned GET body")
        }
        .await;
        for file in [&upload, &download] {
            let _ = std::fs::remove_file(file);
        }
        outcome?;
        Ok(None)
    }

    pub async fn checksum_default_scenario(&mut self) -> Fallible<Option<String>> {
        let key = "checksum/default.bin";
        let body = self.noise.bytes(CHECKSUM_BODY_SIZE);
        let expected = crc32_base64(&body);
        let s3 = &self.client;
        let put = s3
            .put_object()
            .bucket(self.bucket())
            .key(key)
            .body(ByteStream::from(body.clone()))
            .send()
            .await?;
        check(put.checksum_crc32().is_none_or(|c| c == expected), || {
            format!(
                "PutObject ChecksumCRC32 {:?}, expected {expected}",
                put.checksum_crc32()
            )
        })?;
        let got = s3
            .get_object()
            .bucket(self.bucket())
            .key(key)
            .checksum_mode(ChecksumMode::Enabled)
            .send()
            .await?;
        check(got.checksum_crc32().is_none_or(|c| c == expected), || {
            format!(
                "GetObject ChecksumCRC32 {:?}, expected {expected}",
                got.checksum_crc32()
            )
        })?;
        let data = got.body.collect().await?.into_bytes();
        check_same_bytes(&data, &body, "GetObject body")?;
        Ok(None)
    }

    pub async fn checksum_off_scenario(&mut self) -> Fallible<Option<String>> {
        let key = "checksum/off.bin";
        let body = self.noise.bytes(CHECKSUM_BODY_SIZE);
        let s3 = make_client(&self.endpoint, false);
        let put = s3
            .put_object()
            .bucket(self.bucket())
            .key(key)
            .body(ByteStream::from(body.clone()))
            .send()
            .await?;
        check(put.e_tag() == Some(quoted_md5(&body).as_str()), || {
            format!(
                "PutObject ETag {:?}, expected {}",
                put.e_tag(),
                quoted_md5(&body)
            )
        })?;
        let got = s3
            .get_object()
            .bucket(self.bucket())
            .key(key)
            .send()
            .await?;
        let data = got.body.collect().await?.into_bytes();
        check_same_bytes(&data, &body, "GetObject body")?;
        Ok(None)
    }
}

fn scratch_file(name: &str) -> PathBuf {
    std::env::temp_dir().join(name)
}

/// Sends a presigned request with curl: Rust's standard library has no HTTP client.
fn curl(request: &PresignedRequest, extra: &[&str]) -> Fallible<(u16, String)> {
    let mut command = Command::new("curl");
    command.args([
        "--silent",
        "--show-error",
        "--write-out",
        "%{http_code}",
        "--request",
        request.method(),
    ]);
    for (name, value) in request.headers() {
        command.args(["--header", &format!("{name}: {value}")]);
    }
    command.args(extra).arg(request.uri());
    let output = command.output()?;
    let printed = String::from_utf8_lossy(&output.stdout).into_owned();
    // --write-out appends the status after any body that was not redirected to a file.
    let (text, status) = printed.split_at(printed.len().saturating_sub(3));
    match status.parse() {
        Ok(code) => Ok((code, text.to_owned())),
        Err(_) => fail(format!(
            "curl failed: {}",
            String::from_utf8_lossy(&output.stderr)
        )),
    }
}

fn check_status(what: &str, (status, text): (u16, String)) -> Fallible<()> {
    check(status == 200, || {
        format!(
            "{what}: HTTP {status}: {}",
            text.chars().take(300).collect::<String>()
        )
    })
}
