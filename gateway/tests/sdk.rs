//! End to end in process: the real router and the embedded store behind a
//! loopback listener, driven by the Rust aws-sdk-s3 as an application
//! would drive it (its default signing, aws-chunked uploads with trailing
//! checksums, its error parsing). Each test starts its own gateway on a
//! fresh store, so the whole file runs in seconds: the quick loop for S3
//! behaviour. The pytest suites in `conformance-tests/` stay the proof
//! with real clients against the released binary.

use std::path::Path;

use aws_sdk_s3::Client;
use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_s3::error::ProvideErrorMetadata;
use aws_sdk_s3::presigning::PresigningConfig;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{
    BucketVersioningStatus, ChecksumAlgorithm, CompletedMultipartUpload, CompletedPart, Delete,
    ObjectIdentifier, ServerSideEncryption, ServerSideEncryptionByDefault,
    ServerSideEncryptionConfiguration, ServerSideEncryptionRule, Tag, Tagging,
    VersioningConfiguration,
};
use aws_smithy_http_client::tls::{Provider, rustls_provider::CryptoMode};
use s3_gateway::config::Config;
use s3_gateway::credentials_file::KeyEntry;
use s3_gateway::server::Gateway;
use tempfile::TempDir;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

const ACCESS_KEY: &str = "SDKTESTACCESSKEY0001";
const SECRET_KEY: &str = "sdktestsecretkeysdktestsecretkey00000001";

/// A gateway on its own store, and a client of its root key.
struct Served {
    s3: Client,
    endpoint: String,
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
    _store: TempDir,
}

impl Served {
    async fn start() -> Self {
        let store = tempfile::tempdir().expect("temp dir");
        let gateway = Gateway::open(&config(store.path()))
            .await
            .expect("gateway starts");
        let endpoint = gateway.endpoint();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(gateway.serve(async {
            let _ = stopped.await;
        }));
        Self {
            s3: client(&endpoint),
            endpoint,
            stop,
            task,
            _store: store,
        }
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        self.task.await.expect("server task ends cleanly");
    }
}

fn config(data_dir: &Path) -> Config {
    Config {
        root_key: Some(KeyEntry {
            name: "root".into(),
            access_key: ACCESS_KEY.into(),
            secret_key: SECRET_KEY.into(),
            root: true,
        }),
        ..Config::for_tests(data_dir)
    }
}

fn client(endpoint: &str) -> Client {
    let http = aws_smithy_http_client::Builder::new()
        .tls_provider(Provider::Rustls(CryptoMode::Ring))
        .build_https();
    let config = aws_sdk_s3::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .endpoint_url(endpoint)
        .force_path_style(true)
        .credentials_provider(Credentials::new(ACCESS_KEY, SECRET_KEY, None, None, "test"))
        .http_client(http)
        .build();
    Client::from_conf(config)
}

async fn body_of(output: aws_sdk_s3::operation::get_object::GetObjectOutput) -> Vec<u8> {
    output
        .body
        .collect()
        .await
        .expect("body")
        .into_bytes()
        .to_vec()
}

/// A payload that is not all one byte, so an offset mistake shows.
fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 % 251) as u8).collect()
}

#[tokio::test]
async fn objects_round_trip_with_ranges_metadata_and_listing() {
    let served = Served::start().await;
    let s3 = &served.s3;
    s3.create_bucket()
        .bucket("bkt")
        .send()
        .await
        .expect("create");

    let data = payload(300_000);
    let put = s3
        .put_object()
        .bucket("bkt")
        .key("dir/a b+c")
        .metadata("colour", "blue")
        .content_type("application/x-test")
        .body(ByteStream::from(data.clone()))
        .send()
        .await
        .expect("put");
    let etag = put.e_tag().expect("etag").to_owned();

    let got = s3
        .get_object()
        .bucket("bkt")
        .key("dir/a b+c")
        .send()
        .await
        .expect("get");
    assert_eq!(got.e_tag(), Some(etag.as_str()));
    assert_eq!(got.content_type(), Some("application/x-test"));
    assert_eq!(
        got.metadata()
            .and_then(|m| m.get("colour"))
            .map(String::as_str),
        Some("blue")
    );
    assert_eq!(body_of(got).await, data);

    let range = s3
        .get_object()
        .bucket("bkt")
        .key("dir/a b+c")
        .range("bytes=1000-1999")
        .send()
        .await
        .expect("range");
    assert_eq!(range.content_range(), Some("bytes 1000-1999/300000"));
    assert_eq!(body_of(range).await, data[1000..2000]);

    let head = s3
        .head_object()
        .bucket("bkt")
        .key("dir/a b+c")
        .send()
        .await
        .expect("head");
    assert_eq!(head.content_length(), Some(300_000));

    s3.put_object()
        .bucket("bkt")
        .key("top")
        .body(ByteStream::from_static(b"x"))
        .send()
        .await
        .expect("put");
    let listed = s3
        .list_objects_v2()
        .bucket("bkt")
        .delimiter("/")
        .send()
        .await
        .expect("list");
    let keys: Vec<_> = listed.contents().iter().filter_map(|o| o.key()).collect();
    let prefixes: Vec<_> = listed
        .common_prefixes()
        .iter()
        .filter_map(|p| p.prefix())
        .collect();
    assert_eq!(keys, ["top"]);
    assert_eq!(prefixes, ["dir/"]);

    s3.delete_object()
        .bucket("bkt")
        .key("top")
        .send()
        .await
        .expect("delete");
    let missing = s3
        .get_object()
        .bucket("bkt")
        .key("top")
        .send()
        .await
        .expect_err("deleted");
    assert_eq!(missing.into_service_error().code(), Some("NoSuchKey"));
    served.stop().await;
}

#[tokio::test]
async fn sdk_checksums_are_verified_and_returned() {
    let served = Served::start().await;
    let s3 = &served.s3;
    s3.create_bucket()
        .bucket("bkt")
        .send()
        .await
        .expect("create");
    for algorithm in [
        ChecksumAlgorithm::Crc32,
        ChecksumAlgorithm::Crc32C,
        ChecksumAlgorithm::Sha256,
    ] {
        let key = format!("k-{algorithm}");
        let put = s3
            .put_object()
            .bucket("bkt")
            .key(&key)
            .checksum_algorithm(algorithm.clone())
            .body(ByteStream::from(payload(70_000)))
            .send()
            .await
            .expect("put with a trailing checksum");
        let sent = [
            put.checksum_crc32(),
            put.checksum_crc32_c(),
            put.checksum_sha256(),
        ];
        assert!(sent.iter().any(Option::is_some), "{algorithm}: no checksum");
        let head = s3
            .head_object()
            .bucket("bkt")
            .key(&key)
            .checksum_mode(aws_sdk_s3::types::ChecksumMode::Enabled)
            .send()
            .await
            .expect("head");
        let stored = [
            head.checksum_crc32(),
            head.checksum_crc32_c(),
            head.checksum_sha256(),
        ];
        assert_eq!(stored, sent, "{algorithm}");
    }
    served.stop().await;
}

#[tokio::test]
async fn multipart_uploads_complete_and_abort() {
    let served = Served::start().await;
    let s3 = &served.s3;
    s3.create_bucket()
        .bucket("bkt")
        .send()
        .await
        .expect("create");
    let upload = s3
        .create_multipart_upload()
        .bucket("bkt")
        .key("big")
        .send()
        .await
        .expect("create upload");
    let id = upload.upload_id().expect("upload id");
    let parts = [payload(5 * 1024 * 1024), payload(1234)];
    let mut completed = Vec::new();
    for (number, part) in (1..).zip(&parts) {
        let uploaded = s3
            .upload_part()
            .bucket("bkt")
            .key("big")
            .upload_id(id)
            .part_number(number)
            .body(ByteStream::from(part.clone()))
            .send()
            .await
            .expect("part");
        completed.push(
            CompletedPart::builder()
                .part_number(number)
                .e_tag(uploaded.e_tag().expect("part etag"))
                .build(),
        );
    }
    let done = s3
        .complete_multipart_upload()
        .bucket("bkt")
        .key("big")
        .upload_id(id)
        .multipart_upload(
            CompletedMultipartUpload::builder()
                .set_parts(Some(completed))
                .build(),
        )
        .send()
        .await
        .expect("complete");
    assert!(done.e_tag().expect("etag").ends_with("-2\""));
    let got = s3
        .get_object()
        .bucket("bkt")
        .key("big")
        .send()
        .await
        .expect("get");
    assert_eq!(body_of(got).await, parts.concat());

    let abandoned = s3
        .create_multipart_upload()
        .bucket("bkt")
        .key("gone")
        .send()
        .await
        .expect("create upload");
    let abandoned = abandoned.upload_id().expect("upload id");
    s3.abort_multipart_upload()
        .bucket("bkt")
        .key("gone")
        .upload_id(abandoned)
        .send()
        .await
        .expect("abort");
    let error = s3
        .list_parts()
        .bucket("bkt")
        .key("gone")
        .upload_id(abandoned)
        .send()
        .await
        .expect_err("aborted");
    assert_eq!(error.into_service_error().code(), Some("NoSuchUpload"));
    served.stop().await;
}

#[tokio::test]
async fn versions_tags_copies_and_batch_deletes() {
    let served = Served::start().await;
    let s3 = &served.s3;
    s3.create_bucket()
        .bucket("bkt")
        .send()
        .await
        .expect("create");
    s3.put_bucket_versioning()
        .bucket("bkt")
        .versioning_configuration(
            VersioningConfiguration::builder()
                .status(BucketVersioningStatus::Enabled)
                .build(),
        )
        .send()
        .await
        .expect("versioning");
    let first = s3
        .put_object()
        .bucket("bkt")
        .key("k")
        .body(ByteStream::from_static(b"one"))
        .send()
        .await
        .expect("put");
    s3.put_object()
        .bucket("bkt")
        .key("k")
        .body(ByteStream::from_static(b"two"))
        .send()
        .await
        .expect("put");
    let first = first.version_id().expect("version id");

    // Tags go on the version named, not on the current one.
    s3.put_object_tagging()
        .bucket("bkt")
        .key("k")
        .version_id(first)
        .tagging(
            Tagging::builder()
                .tag_set(Tag::builder().key("t").value("v").build().expect("tag"))
                .build()
                .expect("tagging"),
        )
        .send()
        .await
        .expect("tag");
    let tagged = s3
        .get_object_tagging()
        .bucket("bkt")
        .key("k")
        .version_id(first)
        .send()
        .await
        .expect("tags");
    assert_eq!(tagged.tag_set().len(), 1);
    let current = s3
        .get_object_tagging()
        .bucket("bkt")
        .key("k")
        .send()
        .await
        .expect("tags");
    assert!(current.tag_set().is_empty());

    let old = s3
        .get_object()
        .bucket("bkt")
        .key("k")
        .version_id(first)
        .send()
        .await
        .expect("old version");
    assert_eq!(body_of(old).await, b"one");

    s3.copy_object()
        .bucket("bkt")
        .key("copy")
        .copy_source(format!("bkt/k?versionId={first}"))
        .send()
        .await
        .expect("copy");
    let copy = s3
        .get_object()
        .bucket("bkt")
        .key("copy")
        .send()
        .await
        .expect("copy");
    assert_eq!(body_of(copy).await, b"one");

    let deleted = s3
        .delete_objects()
        .bucket("bkt")
        .delete(
            Delete::builder()
                .objects(ObjectIdentifier::builder().key("copy").build().expect("id"))
                .objects(
                    ObjectIdentifier::builder()
                        .key("k")
                        .version_id(first)
                        .build()
                        .expect("id"),
                )
                .build()
                .expect("delete"),
        )
        .send()
        .await
        .expect("batch delete");
    assert_eq!(deleted.deleted().len(), 2);
    assert!(deleted.errors().is_empty());
    let versions = s3
        .list_object_versions()
        .bucket("bkt")
        .prefix("k")
        .send()
        .await
        .expect("versions");
    assert_eq!(versions.versions().len(), 1, "only the second version left");
    served.stop().await;
}

#[tokio::test]
async fn presigned_urls_work_and_bad_signatures_do_not() {
    let served = Served::start().await;
    let s3 = &served.s3;
    s3.create_bucket()
        .bucket("bkt")
        .send()
        .await
        .expect("create");
    s3.put_object()
        .bucket("bkt")
        .key("shared")
        .body(ByteStream::from_static(b"shared bytes"))
        .send()
        .await
        .expect("put");
    let presigned = s3
        .get_object()
        .bucket("bkt")
        .key("shared")
        .presigned(
            PresigningConfig::expires_in(std::time::Duration::from_secs(300)).expect("expiry"),
        )
        .await
        .expect("presign");
    let http = reqwest::Client::new();
    let answer = http.get(presigned.uri()).send().await.expect("get");
    assert_eq!(answer.status(), 200);
    assert_eq!(
        answer.bytes().await.expect("body").as_ref(),
        b"shared bytes"
    );

    let tampered = presigned.uri().replace("shared", "shareD");
    let answer = http.get(&tampered).send().await.expect("get");
    assert_eq!(answer.status(), 403);

    let wrong_secret = Client::from_conf(
        s3.config()
            .to_builder()
            .credentials_provider(Credentials::new(ACCESS_KEY, "wrong", None, None, "test"))
            .build(),
    );
    let error = wrong_secret
        .list_buckets()
        .send()
        .await
        .expect_err("wrong secret");
    assert_eq!(
        error.into_service_error().code(),
        Some("SignatureDoesNotMatch")
    );
    let anonymous = reqwest::get(format!("{}/bkt/shared", served.endpoint))
        .await
        .expect("get");
    assert_eq!(anonymous.status(), 403);
    served.stop().await;
}

#[tokio::test]
async fn conditional_requests_answer_as_s3() {
    let served = Served::start().await;
    let s3 = &served.s3;
    s3.create_bucket()
        .bucket("bkt")
        .send()
        .await
        .expect("create");
    let put = s3
        .put_object()
        .bucket("bkt")
        .key("k")
        .body(ByteStream::from_static(b"v1"))
        .send()
        .await
        .expect("put");
    let etag = put.e_tag().expect("etag");

    let failed = s3
        .get_object()
        .bucket("bkt")
        .key("k")
        .if_match("\"not-it\"")
        .send()
        .await
        .expect_err("if-match fails");
    assert_eq!(
        failed.raw_response().map(|r| r.status().as_u16()),
        Some(412)
    );

    let not_modified = s3
        .get_object()
        .bucket("bkt")
        .key("k")
        .if_none_match(etag)
        .send()
        .await
        .expect_err("not modified");
    assert_eq!(
        not_modified.raw_response().map(|r| r.status().as_u16()),
        Some(304)
    );

    // A create-only PUT does not overwrite.
    let exists = s3
        .put_object()
        .bucket("bkt")
        .key("k")
        .if_none_match("*")
        .body(ByteStream::from_static(b"v2"))
        .send()
        .await
        .expect_err("exists");
    assert_eq!(
        exists.into_service_error().code(),
        Some("PreconditionFailed")
    );
    let got = s3
        .get_object()
        .bucket("bkt")
        .key("k")
        .send()
        .await
        .expect("get");
    assert_eq!(body_of(got).await, b"v1");
    served.stop().await;
}

/// SSE-S3 under the keyring the embedded back end generates, and a
/// bucket's default encryption, as the SDK sends and parses them.
#[tokio::test]
async fn sse_s3_and_bucket_default_encryption() {
    let served = Served::start().await;
    let s3 = &served.s3;
    s3.create_bucket()
        .bucket("enc")
        .send()
        .await
        .expect("create");
    let data = payload(200_000);
    let put = s3
        .put_object()
        .bucket("enc")
        .key("asked")
        .server_side_encryption(ServerSideEncryption::Aes256)
        .body(ByteStream::from(data.clone()))
        .send()
        .await
        .expect("put");
    assert_eq!(
        put.server_side_encryption(),
        Some(&ServerSideEncryption::Aes256)
    );
    let got = s3
        .get_object()
        .bucket("enc")
        .key("asked")
        .range("bytes=65530-131080")
        .send()
        .await
        .expect("get");
    assert_eq!(
        got.server_side_encryption(),
        Some(&ServerSideEncryption::Aes256)
    );
    assert_eq!(body_of(got).await, &data[65530..=131080]);

    let missing = s3
        .get_bucket_encryption()
        .bucket("enc")
        .send()
        .await
        .expect_err("none set");
    assert_eq!(
        missing.code(),
        Some("ServerSideEncryptionConfigurationNotFoundError")
    );
    let rule = ServerSideEncryptionRule::builder()
        .apply_server_side_encryption_by_default(
            ServerSideEncryptionByDefault::builder()
                .sse_algorithm(ServerSideEncryption::Aes256)
                .build()
                .expect("default"),
        )
        .build();
    s3.put_bucket_encryption()
        .bucket("enc")
        .server_side_encryption_configuration(
            ServerSideEncryptionConfiguration::builder()
                .rules(rule)
                .build()
                .expect("configuration"),
        )
        .send()
        .await
        .expect("put encryption");
    let stored = s3
        .get_bucket_encryption()
        .bucket("enc")
        .send()
        .await
        .expect("get encryption");
    let rules = stored
        .server_side_encryption_configuration()
        .expect("configuration")
        .rules();
    assert_eq!(
        rules[0]
            .apply_server_side_encryption_by_default()
            .map(|by_default| by_default.sse_algorithm()),
        Some(&ServerSideEncryption::Aes256)
    );
    let by_default = s3
        .put_object()
        .bucket("enc")
        .key("by-default")
        .body(ByteStream::from_static(b"default"))
        .send()
        .await
        .expect("put");
    assert_eq!(
        by_default.server_side_encryption(),
        Some(&ServerSideEncryption::Aes256)
    );
    let head = s3
        .head_object()
        .bucket("enc")
        .key("by-default")
        .send()
        .await
        .expect("head");
    assert_eq!(
        head.server_side_encryption(),
        Some(&ServerSideEncryption::Aes256)
    );
    assert_eq!(head.content_length(), Some(7));
    s3.delete_bucket_encryption()
        .bucket("enc")
        .send()
        .await
        .expect("delete encryption");
    served.stop().await;
}
