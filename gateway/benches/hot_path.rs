//! The gateway's own stages of a request: SigV4 verification (header and
//! presigned, signing key cached as in steady state) and the encoding of a
//! ListObjectsV2 page. Run with `cargo bench -p s3-gateway --bench hot_path`;
//! numbers in BENCHMARKS.md.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::body::Body;
use http::request::Parts;
use s3_gateway::auth::{CredentialSource, Verifier};
use s3_gateway::error::S3Error;
use s3_gateway::xml::{self, ListBucketResultV2, Object};
use storage_client::Credential;

fn main() {
    divan::main();
}

// The "GET Object" and "Query String Authentication" examples of the AWS
// SigV4 documentation.
const ACCESS_KEY: &str = "AKIAIOSFODNN7EXAMPLE";
const SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
/// 2013-05-24T00:00:00Z, when the examples were signed.
const SIGNED_AT: u64 = 1_369_353_600;

struct OneKey(HashMap<String, Credential>);

impl CredentialSource for OneKey {
    fn credential<'a>(
        &'a self,
        access_key: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<Option<Credential>, S3Error>> + Send + 'a>> {
        let found = self.0.get(access_key).cloned();
        Box::pin(async move { Ok(found) })
    }
}

fn verifier() -> Verifier {
    let credential = Credential {
        name: "bench".into(),
        access_key: ACCESS_KEY.into(),
        secret_key: SECRET.into(),
        is_root: false,
    };
    let source = OneKey(HashMap::from([(ACCESS_KEY.to_owned(), credential)]));
    Verifier::new(Arc::new(source), "us-east-1")
}

fn parts(target: &str, headers: &[(&str, &str)]) -> Parts {
    let mut builder = http::Request::builder().method("GET").uri(target);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(()).expect("a request").into_parts().0
}

fn bench_auth(bencher: divan::Bencher, request: Parts) {
    let verifier = verifier();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(SIGNED_AT);
    // Warm the signing-key cache, as every request after a day's first.
    runtime
        .block_on(verifier.authenticate_at(&request, Body::empty(), now))
        .map_err(|e| e.code)
        .expect("the example verifies");
    bencher.bench_local(|| {
        runtime
            .block_on(verifier.authenticate_at(&request, Body::empty(), now))
            .map(|authenticated| authenticated.is_root)
            .map_err(|e| e.code)
            .expect("verifies")
    });
}

#[divan::bench]
fn sigv4_header_get(bencher: divan::Bencher) {
    let authorization = format!(
        "AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/20130524/us-east-1/s3/aws4_request,\
         SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,\
         Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
    );
    let request = parts(
        "/test.txt",
        &[
            ("host", "examplebucket.s3.amazonaws.com"),
            ("range", "bytes=0-9"),
            ("x-amz-content-sha256", EMPTY_SHA256),
            ("x-amz-date", "20130524T000000Z"),
            ("authorization", &authorization),
        ],
    );
    bench_auth(bencher, request);
}

#[divan::bench]
fn sigv4_presigned_get(bencher: divan::Bencher) {
    let request = parts(
        "/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256\
         &X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request\
         &X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host\
         &X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404",
        &[("host", "examplebucket.s3.amazonaws.com")],
    );
    bench_auth(bencher, request);
}

/// A full ListObjectsV2 page: 1000 keys of a typical shape.
#[divan::bench]
fn list_v2_page_1000_keys(bencher: divan::Bencher) {
    let contents: Vec<Object> = (0..1000)
        .map(|i| Object {
            key: format!("logs/2026/11/30/host-{:04}/part-{i:06}.json", i % 37),
            last_modified: "2026-11-30T12:00:00.000Z".into(),
            etag: Some("\"0123456789abcdef0123456789abcdef\"".into()),
            size: 1024 + i,
            owner: None,
            storage_class: "STANDARD",
        })
        .collect();
    let page = ListBucketResultV2 {
        xmlns: "http://s3.amazonaws.com/doc/2006-03-01/",
        name: "bench".into(),
        prefix: "logs/".into(),
        delimiter: None,
        max_keys: 1000,
        encoding_type: None,
        key_count: contents.len(),
        is_truncated: true,
        continuation_token: None,
        next_continuation_token: Some("bG9ncy8yMDI2LzExLzMw".into()),
        start_after: None,
        contents,
        common_prefixes: Vec::new(),
    };
    bencher.bench(|| {
        xml::to_xml("ListBucketResult", &page)
            .map_err(|e| e.code)
            .expect("encodes")
            .len()
    });
}
